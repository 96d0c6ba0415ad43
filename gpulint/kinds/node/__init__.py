"""A live node, as `gpulint doctor` probes it: not a file kind, the facts its checks judge."""

from gpulint.registry import Kind

KIND = Kind("node", precedence=0, families=("gpulint.kinds.node.checks",), shared="never")
