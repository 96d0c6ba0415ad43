"""The project's context, remembered between runs.

A pre-commit call names only the changed files, yet their cross-file checks consult the
files of the whole project that other files' checks read (node configs, RuntimeClasses,
mapped Dockerfiles ...). Reading and parsing all of them on every commit costs more than
linting the changed files, so the parsed ones are kept in gpulint's cache folder, one index
per project, keyed by gpulint's version and the settings: each file under its absolute path
with its size and modification time, and its kind and pickled document, or None where other
files' checks do not consult it. A run walks the project, stats the files whose names may
make them consulted, reads again only those whose size or time changed, and unpickles a
document only when a check asks for its kind.

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
from gpulint.resources import cache_dir, prune
from gpulint.run.config import Settings
from gpulint.run.engine import Source, context_document, never_shared
from gpulint.run.projectwalk import project_files
from gpulint.stored import Stored

# bumped when what an entry holds changes shape
FORMAT = 5
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


def _wanted(mapped: set[str]):
    """Whether a file's name may make it one that other files' checks consult (read for
    its content only then): the others are neither stat'ed nor remembered. A file whose
    name gives a kind shared by no property of its text, and not this file (a Dockerfile no
    image mapping names), is one of the others."""
    def wanted(name: str, folder: str) -> bool:
        kind = kinds.kind_by_name(name, os.path.basename(folder))
        if kind is not None:
            return not never_shared(kind, os.path.join(folder, name), mapped)
        return "." not in name or kinds.may_need_content(name)

    return wanted


def _load(path: Path, stamp: str) -> tuple[dict, dict, object]:
    """(the files, the folder listings, where the pickled documents are read from) an index
    holds; empty when there is none that reads. The documents follow the listing in the same
    file, read only when a check asks for their kind, from the file as opened here (a run
    that renames another index into place meanwhile changes nothing read)."""
    try:
        handle = open(path, "rb")
    except OSError:
        return {}, {}, None
    try:
        saved = pickle.load(handle)
    except Exception:  # torn, or pickled by another gpulint: built afresh
        handle.close()
        return {}, {}, None
    # the documents' bytes must all be there: a file cut short is rebuilt, not read from
    if not isinstance(saved, tuple) or len(saved) != 4 or saved[0] != stamp \
            or not isinstance(saved[1], dict) or not isinstance(saved[2], dict) \
            or os.fstat(handle.fileno()).st_size != handle.tell() + saved[3]:
        handle.close()
        return {}, {}, None
    return saved[1], saved[2], (handle, handle.tell())


def _save(path: Path, stamp: str, entries: dict, folders: dict, stored: dict[str, Stored]) -> None:
    """The index: the files, each consulted one with the offset and length of its pickled
    document past the listing, the folder listings, then the documents."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        blobs, placed, offset = [], {}, 0
        for absolute, (size, mtime, held) in entries.items():
            if held is not None:
                blob = stored[absolute].blob
                blobs.append(blob)
                held = (held[0], offset, len(blob))
                offset += len(blob)
            placed[absolute] = (size, mtime, held)
        with open(tmp, "wb") as handle:
            pickle.dump((stamp, placed, folders, offset), handle, protocol=pickle.HIGHEST_PROTOCOL)
            handle.writelines(blobs)
        os.replace(tmp, path)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        try:
            os.unlink(tmp)
        except (OSError, UnboundLocalError):
            pass
        return
    prune("index-")


def project_context(root: Path, settings: Settings, leave_out: set[str], remember: bool = True) -> list[Stored]:
    """The files of the project under `root` that other files' checks consult, the files
    whose absolute paths are in `leave_out` (the linted ones) excepted: what
    `engine.context_document` gives for each file the walk finds, through the index when
    `remember`, each unpickled only when a check asks for its kind."""
    mapped = mapped_paths(settings)
    top = os.path.abspath(root)
    stamp = _stamp(top, settings)
    where = index_path(top, settings)
    old, known, documents = _load(where, stamp) if remember else ({}, {}, None)
    # absolute path -> (size, modification time, (kind, offset, length) or None)
    entries: dict[str, tuple[int, int, tuple[str, int, int] | None]] = {}
    stored: dict[str, Stored] = {}
    changed = False
    settled = time.time_ns() - FRESH_NS
    folders: dict = {}
    for absolute in project_files(top, settings.excludes, _wanted(mapped), base=settings.base,
                                  gitignore=settings.respect_gitignore, known=known, listed=folders,
                                  settled=settled):
        try:
            info = os.stat(absolute)
        except OSError:
            continue
        known_file = old.get(absolute)
        if known_file is not None and known_file[0] == info.st_size and known_file[1] == info.st_mtime_ns:
            entries[absolute] = known_file
            if known_file[2] is not None:
                kind, offset, length = known_file[2]
                stored[absolute] = Stored(absolute, kind, at=(documents[0], documents[1] + offset, length))
            continue
        changed = True
        # a file written just now may be written again within the same tick of the file
        # system's clock, at the same size: it is read again next time rather than trusted
        size = -1 if info.st_mtime_ns > settled else info.st_size
        doc = context_document(Source(Path(absolute)), mapped)
        if doc is not None:
            stored[absolute] = Stored(absolute, doc.kind, doc=doc)
        entries[absolute] = (size, info.st_mtime_ns, (doc.kind, 0, 0) if doc is not None else None)
    if remember and (changed or len(entries) != len(old) or folders != known):
        _save(where, stamp, entries, folders, stored)
    return [held for absolute, held in stored.items() if absolute not in leave_out]
