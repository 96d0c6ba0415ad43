"""Dockerfiles and Containerfiles."""

from gpulint.kinds.dockerfile import recognise
from gpulint.registry import Kind

KIND = Kind("dockerfile", precedence=10, by_name=recognise.by_name, wants=recognise.wants,
            by_content=recognise.by_content, parse="gpulint.kinds.dockerfile.parse:parse",
            families=("gpulint.kinds.dockerfile.checks", "gpulint.kinds.dockerfile.installs",
                      "gpulint.kinds.dockerfile.multistage", "gpulint.kinds.dockerfile.visible",
                      "gpulint.kinds.dockerfile.arguments"),
            shared="if-mapped")
