"""The systemd units of dockerd and containerd and their drop-ins: `docker.service`,
`containerd.service` and the `*.conf` drop-ins in `docker.service.d/` and
`containerd.service.d/` by name; any other `.service` or `.conf` file by a `[Service]`
section whose `ExecStart=` runs dockerd or containerd; and the environment files their
units read (`/etc/default/docker`, `/etc/sysconfig/containerd` ...) by name and folder."""

from __future__ import annotations

import re

from gpulint.regex import lazy

UNITS = ("docker.service", "containerd.service")
_SERVICE = lazy(r"^[ \t]*\[Service\][ \t]*$", re.MULTILINE)
_DAEMON_START = lazy(r"^[ \t]*ExecStart[ \t]*=[ \t]*[-@:+!]*[^ \t\n]*/?(dockerd|containerd)([ \t]|\\?$)", re.MULTILINE)


def by_name(lower: str) -> bool:
    return lower in UNITS


# the folders Debian and Red Hat packages keep a daemon's environment file in, and its names
ENV_FOLDERS = ("default", "sysconfig")
# (Red Hat's docker package also reads `docker-storage`, which docker-storage-setup writes,
# and `docker-network`)
ENV_NAMES = ("docker", "docker-storage", "docker-network", "containerd")


_DROP_IN_FOLDERS = tuple(u + ".d" for u in UNITS)


def by_folder(folder: str, lower: str) -> bool:
    return (folder in _DROP_IN_FOLDERS and lower.endswith(".conf")) \
        or (folder in ENV_FOLDERS and lower in ENV_NAMES)


def wants(lower: str) -> bool:
    return lower.endswith((".service", ".conf"))


def by_content(lower: str, text: str) -> bool | None:
    if not wants(lower):
        return None
    return True if _SERVICE.search(text) and _DAEMON_START.search(text) else None
