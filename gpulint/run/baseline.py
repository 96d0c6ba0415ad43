"""A baseline for adopting gpulint on a repository that already has findings.

`--baseline-write FILE` records today's findings; `--baseline FILE` reports only
the ones not in it. Each entry is the rule and a fingerprint made of the file (as
seen from the baseline's folder), the trimmed text of the line and an occurrence
index: a finding keeps its entry when lines above it move, when gpulint rewords
its message or updates its data, and loses it when its own line changes.
"""

from __future__ import annotations

import json
import os
from collections import Counter

from gpulint import __version__
from gpulint.report.fingerprint import OWN, fingerprints, line_text_of

VERSION = 1


class BaselineError(Exception):
    pass


def _entries(result, path: str) -> list[dict]:
    folder = os.path.dirname(os.path.abspath(path))

    def path_of(f) -> str:
        return os.path.relpath(os.path.abspath(f.path), folder).replace(os.sep, "/")

    active = result.active
    prints = fingerprints(active, line_text_of(result), path_of)
    return [{"code": f.code, "path": path_of(f), "fingerprint": p[OWN]} for f, p in zip(active, prints)]


def write(path: str, result) -> int:
    entries = sorted(_entries(result, path), key=lambda e: (e["path"], e["code"], e["fingerprint"]))
    payload = {"version": VERSION, "tool": {"name": "gpulint", "version": __version__},
               "findings": entries}
    try:
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(payload, indent=2) + "\n")
    except OSError as exc:
        raise BaselineError(f"--baseline-write {path}: {exc.strerror or exc}") from None
    return len(entries)


def _load(path: str) -> Counter:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as exc:
        raise BaselineError(f"--baseline {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise BaselineError(f"--baseline {path}: not a gpulint baseline ({exc})") from None
    if not isinstance(data, dict) or data.get("version") != VERSION or \
            not isinstance(data.get("findings"), list) or \
            not all(isinstance(e, dict) and {"code", "fingerprint"} <= set(e) for e in data["findings"]):
        raise BaselineError(f"--baseline {path}: not a gpulint baseline (version {VERSION}); "
                            f"write one with --baseline-write")
    return Counter((e["code"], e["fingerprint"]) for e in data["findings"])


def apply(path: str, result) -> int:
    """Leave out of `result` the findings the baseline knows; returns how many."""
    known = _load(path)
    active = result.active
    gone = set()
    for f, entry in zip(active, _entries(result, path)):
        key = (entry["code"], entry["fingerprint"])
        if known[key] > 0:
            known[key] -= 1
            gone.add(id(f))
    result.findings = [f for f in result.findings if id(f) not in gone]
    result.baselined += len(gone)
    return len(gone)
