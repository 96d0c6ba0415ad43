"""The systemd units that start dockerd and containerd, and their drop-ins: the daemon
flags they set join the node's daemon.json and config.toml in `crossfile/`."""

from gpulint.kinds.systemd import recognise
from gpulint.registry import Kind

KIND = Kind("systemd", precedence=75, by_name=recognise.by_name, by_folder=recognise.by_folder, wants=recognise.wants,
            by_content=recognise.by_content, parse="gpulint.kinds.systemd.parse:parse",
            families=("gpulint.kinds.systemd.checks",), suppressions=True)
