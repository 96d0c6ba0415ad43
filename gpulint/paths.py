"""How a path is shown in findings: relative to the current folder, with `/`; and the
repository a path belongs to."""

from __future__ import annotations

import os
from pathlib import Path


def display_path(path: Path | str) -> str:
    # os.path alone: a run shows every file it reads, and a Path per call costs as much again
    name = os.fspath(path)
    if os.sep == "/" and name and type(name) is str:
        # the usual paths, what relpath gives for them without its two abspath calls and the
        # split and join of every part: one relative to the current folder that does not
        # climb out of it (relpath's answer is its normal form), and an absolute one under it
        shown = os.path.normpath(name)
        if not shown.startswith("/"):
            if shown != ".." and not shown.startswith("../"):
                # the path itself where it is written so (as a folder walked gives them): the
                # document shares the string its source holds
                return name if shown == name else shown
        else:
            here = os.getcwd()
            if here != "/":
                if shown.startswith(here + "/"):
                    return shown[len(here) + 1:]
                # outside the current folder (a tree in a temporary folder): relpath's
                # answer from the parts the two paths share, without its abspath calls
                mine = shown.split("/")
                parts = here.split("/")
                common = 0
                for a, b in zip(parts, mine):
                    if a != b:
                        break
                    common += 1
                if common < len(mine) and shown != "/":
                    return "/".join([".."] * (len(parts) - common) + mine[common:])
    try:
        shown = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return Path(path).as_posix()
    return shown if os.sep == "/" else shown.replace(os.sep, "/")


def inside(path: str, folder: str) -> bool:
    """Whether the absolute `path` is `folder` or lies under it."""
    return (path.rstrip(os.sep) + os.sep).startswith(folder.rstrip(os.sep) + os.sep)


def folders_up(path: Path | str):
    """The folder holding `path` (the path itself when it is a folder), then its parents."""
    start = Path(os.path.abspath(path))
    if not start.is_dir():
        start = start.parent
    yield start
    yield from start.parents


def repository_root(path: Path | str) -> Path | None:
    """The nearest folder at or above `path` holding `.git` (a folder, or a worktree's file)."""
    return next((folder for folder in folders_up(path) if (folder / ".git").exists()), None)
