"""Walking a whole project for the files other files' checks may consult (the project's
index, `run/index`), cheaper than `discover.walk`: excluded folders are left before they are
listed, a file whose name is not wanted is neither matched against the patterns nor
resolved, only symbolic links are resolved, and a folder whose modification time is the one
an earlier walk saw is not listed again (adding, removing or renaming an entry changes it).
The files are those `discover.walk` finds, in its order, each reached once as there."""

from __future__ import annotations

import os
from pathlib import Path

from gpulint.run.discover import is_folder
from gpulint.run.ignore import Excludes, GitIgnores

# a folder listing: (modification time, or -1 where it may change again within the same tick
# of the file system's clock; the ignore files read from the folder and their times; the
# wanted files as (name, whether a symbolic link); the sub-folders walked)
Listing = tuple


class _Stale(Exception):
    """An ignore file changed, or appeared or went: remembered verdicts may be wrong."""


def project_files(root: str, patterns: tuple[str, ...], wanted, *, base: Path | None, gitignore: bool,
                  known: dict[str, Listing], listed: dict[str, Listing], settled: int) -> list[str]:
    """The absolute paths of the files under the folder `root` that `wanted(name, absolute
    folder)` accepts, excluded and git-ignored ones left out. `known` holds the listings of
    an earlier walk; `listed` receives this one's. A folder modified after `settled` (ns) is
    listed again next time."""
    try:
        return _walk(root, patterns, wanted, base, gitignore, known, listed, settled)
    except _Stale:
        listed.clear()
        return _walk(root, patterns, wanted, base, gitignore, {}, listed, settled)


def _walk(root, patterns, wanted, base, gitignore, known, listed, settled) -> list[str]:
    excludes = Excludes(patterns, base or Path.cwd())
    ignores = GitIgnores() if gitignore else None
    top = os.path.abspath(root)
    anchor = excludes.anchor(top)

    def left_out(path: str, is_dir: bool, ignoring: bool) -> bool:
        return excludes.matches(path, is_dir, anchor) or (ignoring and ignores.ignored(path, is_dir))

    def listing(folder: str, mtime: int) -> Listing:
        with os.scandir(folder) as found:
            entries = sorted(found, key=lambda e: e.name)
        names = {e.name for e in entries}
        marks = _marks(folder, names, top if folder == top else None) if gitignore else ()
        ignoring = ignores is not None and ignores.apply_in(folder, ".gitignore" in names, ".git" in names)
        files, folders = [], []
        for entry in entries:
            if is_folder(entry):
                if not entry.is_symlink() and not left_out(entry.path, True, ignoring):
                    folders.append(entry.name)
            elif wanted(entry.name, folder) and not left_out(entry.path, False, ignoring):
                files.append((entry.name, entry.is_symlink()))
        return (-1 if mtime > settled else mtime, marks, tuple(files), tuple(folders))

    out: list[str] = []
    links = False
    # (folder, its real path): a folder reached is no symbolic link (they are not descended,
    # as in os.walk), so its real path is its parent's and its name
    stack = [(top, os.path.realpath(top))]
    while stack:
        folder, real = stack.pop()
        try:
            mtime = os.stat(folder).st_mtime_ns
            old = known.get(folder)
            if old is not None and old[0] == mtime:
                if any(_mtime(path) != when for path, when in old[1]):
                    raise _Stale
                now = old
            else:
                now = listing(folder, mtime)
                if old is not None and old[1] != now[1]:
                    raise _Stale
        except OSError:
            continue
        listed[folder] = now
        prefix = folder + os.sep
        for name, link in now[2]:
            out.append((prefix + name, real, link))
            links = links or link
        stack.extend((prefix + name, real + os.sep + name) for name in reversed(now[3]))
    if not links:  # no two paths reach the same file
        return [path for path, _, _ in out]
    seen: set[str] = set()
    kept = []
    for path, real, link in out:  # the first path a file is reached by
        key = os.path.realpath(path) if link else os.path.join(real, os.path.basename(path))
        if key not in seen:
            seen.add(key)
            kept.append(path)
    return kept


def _marks(folder: str, names: set[str], top: str | None) -> tuple:
    """(path, modification time) of the ignore files read for `folder`'s entries from
    `folder` itself (and, for the walk's top, from the folders above it up to the repository's
    root): a change to one makes the remembered listings untrustworthy."""
    found = []
    if ".gitignore" in names:
        found.append(os.path.join(folder, ".gitignore"))
    if ".git" in names:
        found.append(os.path.join(folder, ".git", "info", "exclude"))
    elif top is not None:
        above = os.path.dirname(folder)
        while True:
            for name in (".gitignore", os.path.join(".git", "info", "exclude")):
                if os.path.exists(os.path.join(above, name)):
                    found.append(os.path.join(above, name))
            if os.path.exists(os.path.join(above, ".git")) or os.path.dirname(above) == above:
                break
            above = os.path.dirname(above)
    return tuple((path, _mtime(path)) for path in found)


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None
