"""The project's context, remembered between runs.

A pre-commit call names only the changed files, yet their cross-file checks consult the
files of the whole project that other files' checks read (node configs, RuntimeClasses,
mapped Dockerfiles ...). Reading and parsing all of them on every commit costs more than
linting the changed files, so the parsed ones are kept in gpulint's cache folder, one index
per project, keyed by gpulint's version and the settings: each file under its absolute path
with its size and modification time, and its parsed document, or None where other files'
checks do not consult it. A run walks the project, stats the files whose names may make
them one of gpulint's kinds, and reads again only those whose size or time changed.

An index that does not read (corrupt, written by another gpulint) is rebuilt; it is written
to a temporary file and renamed, so concurrent runs never leave a torn one.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import time
from pathlib import Path

from gpulint import __version__, kinds
from gpulint.crossfile.imagemap import mapped_paths
from gpulint.model import Document
from gpulint.paths import display_path
from gpulint.resources import cache_dir, prune
from gpulint.run.config import Settings
from gpulint.run.discover import walk
from gpulint.run.engine import Source, context_document

# bumped when what an entry holds changes shape
FORMAT = 1
# files modified more recently than this are not remembered as read (see project_context)
FRESH_NS = 2_000_000_000


def _stamp(root: str, settings: Settings) -> str:
    """What an index is valid for: gpulint, the project, and the settings that decide which
    files are read and how (excludes, the image mappings that make a Dockerfile shared ...)."""
    fields = [(name, getattr(settings, name)) for name in settings._fields]
    return repr((FORMAT, __version__, root, fields))


def index_path(root: str, settings: Settings) -> Path:
    key = hashlib.sha256(_stamp(root, settings).encode()).hexdigest()[:32]
    return cache_dir() / f"index-{key}.pickle"


def _candidate(path: str) -> bool:
    """Whether a file's name may make it one of gpulint's kinds (read for its content only
    then): the others are neither stat'ed nor remembered."""
    name = os.path.basename(path)
    return "." not in name or kinds.may_need_content(name) \
        or kinds.kind_by_name(name, os.path.basename(os.path.dirname(path))) is not None


def _load(path: Path, stamp: str) -> dict:
    try:
        with open(path, "rb") as handle:
            saved = pickle.load(handle)
    except Exception:  # missing, torn, or pickled by another gpulint: built afresh
        return {}
    if not isinstance(saved, tuple) or len(saved) != 2 or saved[0] != stamp or not isinstance(saved[1], dict):
        return {}
    return saved[1]


def _save(path: Path, stamp: str, entries: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as handle:
            pickle.dump((stamp, entries), handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        try:
            os.unlink(tmp)
        except (OSError, UnboundLocalError):
            pass
        return
    prune("index-")


def project_context(root: Path, settings: Settings, leave_out: set[str], remember: bool = True) -> list[Document]:
    """The parsed documents of the project under `root` that other files' checks consult,
    the files whose absolute paths are in `leave_out` (the linted ones) excepted; what
    `engine.context_document` gives for each file `walk` finds, through the index when
    `remember`."""
    mapped = mapped_paths(settings)
    top = os.path.abspath(root)
    stamp = _stamp(top, settings)
    where = index_path(top, settings)
    old = _load(where, stamp) if remember else {}
    entries: dict[str, tuple[int, int, Document | None]] = {}
    changed = False
    settled = time.time_ns() - FRESH_NS
    for path in walk([str(root)], settings.excludes, base=settings.base, gitignore=settings.respect_gitignore):
        absolute = os.path.abspath(path)
        if not _candidate(absolute):
            continue
        try:
            info = os.stat(absolute)
        except OSError:
            continue
        known = old.get(absolute)
        if known is not None and known[0] == info.st_size and known[1] == info.st_mtime_ns:
            entries[absolute] = known
            continue
        changed = True
        # a file written just now may be written again within the same tick of the file
        # system's clock, at the same size: it is read again next time rather than trusted
        size = -1 if info.st_mtime_ns > settled else info.st_size
        entries[absolute] = (size, info.st_mtime_ns, context_document(Source(path), mapped))
    if remember and (changed or len(entries) != len(old)):
        _save(where, stamp, entries)
    out = []
    for absolute, (_, _, doc) in entries.items():
        if doc is not None and absolute not in leave_out:
            doc.path = display_path(absolute)  # the index may come from a run in another folder
            out.append(doc)
    return out
