"""Docker Compose files."""

from gpulint.kinds.compose import recognise
from gpulint.registry import Kind

KIND = Kind("compose", precedence=90, by_name=recognise.by_name, wants=recognise.wants,
            by_content=recognise.by_content, parse="gpulint.kinds.compose.parse:parse",
            families=("gpulint.kinds.compose.checks", "gpulint.kinds.compose.capabilities"), shared="never", block_strings=True)
