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
to a temporary file and renamed, so concurrent runs never leave a torn one, and where a few
documents changed they are appended to it with a new listing (`stored.write_index`).

A call pre-commit makes, inside a git work tree, reads the project as staged and asks git
what changed instead of walking it (`run/tracked`), in an index of its own; where git cannot
answer, the project is walked.
"""

from __future__ import annotations

import binascii
import os
import time
from pathlib import Path

from gpulint import __version__, kinds
from gpulint.crossfile.imagemap import mapped_paths
from gpulint.resources import cache_dir, prune
from gpulint.run import tracked
from gpulint.run.config import Settings
from gpulint.run.engine import Source, context_document, never_shared
from gpulint.run.ignore import Excludes, GitIgnores
from gpulint.stored import Stored, read_index, write_index

# bumped when what an entry holds changes shape
FORMAT = 9
# files modified more recently than this are not remembered as read (see project_context)
FRESH_NS = 2_000_000_000


def _stamp(root: str, settings: Settings) -> str:
    """What an index is valid for: gpulint, the project, and the settings that decide which
    files are read and how (excludes, the image mappings that make a Dockerfile shared ...)."""
    fields = [(name, getattr(settings, name)) for name in settings._fields]
    return repr((FORMAT, __version__, root, fields))


def index_path(root: str, settings: Settings, mode: str = "walk") -> Path:
    """Where the index of the project at `root` is kept. The name is a checksum of what the
    index is valid for (no cryptographic hash: importing hashlib costs every run); the stamp
    inside the file is what is checked."""
    stamp = _stamp(root, settings).encode()
    key = f"{binascii.crc32(stamp):08x}{binascii.crc32(stamp[::-1]):08x}"
    return cache_dir() / f"index-{mode}-{key}"


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


def _admitted(top: str, settings: Settings, mapped: set[str]):
    """Whether a tracked file, by its path under `top` (with /), is one the walk would find
    and may be consulted: its name wanted, and neither it nor a folder above it excluded or
    git-ignored. The patterns are compiled when first asked (a warm call asks nothing)."""
    wanted = _wanted(mapped)
    made: list = []

    def admitted(rel: str) -> bool:
        absolute = os.path.join(top, *rel.split("/"))
        folder, name = os.path.split(absolute)
        if not wanted(name, folder):
            return False
        if not made:
            excludes = Excludes(settings.excludes, settings.base or Path.cwd())
            made.extend((excludes, excludes.anchor(top), GitIgnores() if settings.respect_gitignore else None))
        excludes, anchor, ignores = made
        return not excludes.matches(absolute, False, anchor, walked=False) \
            and not (ignores is not None and ignores.ignored(absolute, False, walked=False))

    return admitted


def _load(path: Path, stamp: str) -> tuple[dict, dict, object]:
    """(the files, the folder listings, the open index file the pickled documents are read
    from) an index holds; empty when there is none that reads. The documents are read only
    when a check asks for their kind, from the file as opened here (a run that renames
    another index into place meanwhile changes nothing read)."""
    header, documents = read_index(path)
    if header is None or len(header) != 4 or header[:2] != ("walk", stamp) \
            or not isinstance(header[2], dict) or not isinstance(header[3], dict):
        if documents is not None:
            documents.close()
        return {}, {}, None
    return header[2], header[3], documents


def _save(path: Path, stamp: str, entries: dict, folders: dict, stored: dict[str, Stored], documents) -> None:
    """The index: the files, each consulted one with the offset and length of its pickled
    document, and the folder listings."""
    consulted = [absolute for absolute, (_, _, held) in entries.items() if held is not None]

    def header(places: list[int]) -> tuple:
        placed, at = {}, iter(places)
        for absolute, (size, mtime, held) in entries.items():
            if held is not None:
                held = (held[0], next(at), next(at))
            placed[absolute] = (size, mtime, held)
        return ("walk", stamp, placed, folders)

    try:
        write_index(path, header, [stored[absolute] for absolute in consulted], documents)
    except Exception:  # noqa: BLE001 - a document that does not pickle: the index is only a cache
        return
    prune("index-")


def project_context(root: Path, settings: Settings, leave_out: set[str], remember: bool = True) -> list:
    """The files of the project under `root` that other files' checks consult, the files
    whose absolute paths are in `leave_out` (the linted ones) excepted: what
    `engine.context_document` gives for each file the walk finds, through the index when
    `remember`, each unpickled only when a check asks for its kind."""
    mapped = mapped_paths(settings)
    top = os.path.abspath(root)
    stamp = _stamp(top, settings)
    if tracked.wanted():  # pre-commit: the files as staged, what changed told by git
        try:
            return tracked.tracked_context(top, stamp, index_path(top, settings, "git"), mapped,
                                           _admitted(top, settings, mapped), remember, leave_out)
        except tracked.GitFailed:
            pass
    # imported here: a call pre-commit makes walks nothing
    from gpulint.run.projectwalk import project_files

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
                stored[absolute] = Stored(absolute, kind, at=(documents, offset, length))
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
        _save(where, stamp, entries, folders, stored, documents)
    return [held for absolute, held in stored.items() if absolute not in leave_out]
