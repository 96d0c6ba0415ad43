"""Docker's daemon.json."""

from gpulint.kinds.daemon_json import recognise
from gpulint.registry import Kind

KIND = Kind("daemon-json", precedence=60, by_name=recognise.by_name, wants=recognise.wants,
            by_content=recognise.by_content, parse="gpulint.kinds.daemon_json.parse:parse",
            families=("gpulint.kinds.daemon_json.checks",), suppressions=False)
