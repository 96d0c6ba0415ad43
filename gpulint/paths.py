"""How a path is shown in findings: relative to the current folder, with `/`."""

from __future__ import annotations

import os
from pathlib import Path


def _rel(path: Path) -> str:
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive on Windows
        return path.as_posix()


def display_path(path: Path | str) -> str:
    return _rel(Path(path))
