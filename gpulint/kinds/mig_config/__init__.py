"""mig-parted's MIG partition config (what the GPU Operator's MIG manager applies): on its
own, in a ConfigMap's `data` or in the GPU Operator chart's `migManager.config.data`."""

from gpulint.kinds.mig_config import recognise
from gpulint.registry import Kind

KIND = Kind("mig-config", precedence=44, wants=recognise.wants,
            by_content=recognise.by_content, parse="gpulint.kinds.mig_config.parse:parse",
            families=("gpulint.kinds.mig_config.checks",), shared="always", templated=True)
