"""Where a report places its paths: relative to the repository that holds the linted files
(SARIF's `%SRCROOT%`, GitHub's workspace), so a CI step that runs in a `working-directory:`
still points at the right files.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from gpulint.paths import repository_root

BASE = "%SRCROOT%"


def _quote(path: str) -> str:
    return quote(path.replace(os.sep, "/"), safe="/.-_~")


class ReportRoot:
    """Where each reported path lies: relative to the root the report names (the repository
    holding the linted files), or, for a file outside it, an absolute file URI."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.base_uri = root.as_uri().rstrip("/") + "/"

    def relative(self, path: str) -> str | None:
        try:
            rel = os.path.relpath(os.path.abspath(path), self.root)
        except ValueError:  # another drive on Windows
            return None
        return None if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel

    def location(self, path: str) -> dict:
        rel = self.relative(path)
        if rel is None:
            return {"uri": Path(os.path.abspath(path)).as_uri()}
        return {"uri": _quote(rel), "uriBaseId": BASE}

    def key(self, path: str) -> str:
        """The path fingerprints see: the same whatever folder gpulint ran in."""
        rel = self.relative(path)
        return rel.replace(os.sep, "/") if rel is not None else path


def report_root(result, findings) -> Path:
    """The repository holding every linted file; else the one holding the current folder;
    else the current folder."""
    cache: dict[str, Path | None] = {}

    def root_of(path: str) -> Path | None:
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in cache:
            cache[folder] = repository_root(folder)
        return cache[folder]

    paths = {d.abspath for d in result.documents} | {f.path for f in findings}
    roots = {root_of(p) for p in paths}
    if len(roots) == 1 and None not in roots:
        return roots.pop()
    here = Path.cwd()
    return repository_root(here) or here
