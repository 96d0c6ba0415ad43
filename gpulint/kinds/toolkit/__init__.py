"""The NVIDIA Container Toolkit's config.toml and CDI specs."""

from gpulint.kinds.toolkit import recognise
from gpulint.registry import Kind

_CHECKS = ("gpulint.kinds.toolkit.checks", "gpulint.kinds.toolkit.swarm")
TOOLKIT = Kind("nvidia-toolkit", precedence=20, wants=recognise.toolkit_wants,
               by_content=recognise.toolkit_by_content, parse="gpulint.kinds.toolkit.parse:parse_toolkit",
               families=_CHECKS, templated=True, suppressions=False, block_strings=True)
CDI = Kind("cdi", precedence=40, wants=recognise.cdi_wants, by_content=recognise.cdi_by_content,
           parse="gpulint.kinds.toolkit.parse:parse_cdi", families=_CHECKS, shared="in-doctor",
           suppressions=False)
