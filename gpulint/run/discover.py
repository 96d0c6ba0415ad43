"""Walking paths: every file under the paths named, excluded and git-ignored ones left
out. What kind each one is, the kinds' registry says (`gpulint.kinds`)."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_EXCLUDES = (".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build")


def may_be_script(path: str) -> bool:
    """A file without an extension that starts with a shell shebang (read 64 bytes)."""
    if "." in os.path.basename(path) or not os.path.isfile(path):  # opening a FIFO would block
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
    except OSError:
        return False
    return head.startswith(b"#!") and b"sh" in head.split(b"\n", 1)[0]


def walk(paths: list[str], patterns: tuple[str, ...], *, base: Path | None = None,
         gitignore: bool = True, force_exclude: bool = False,
         named: set[str] | None = None) -> list[str]:
    """Every file under `paths`, excluded and git-ignored ones left out, in a stable order;
    a file reached twice (a symlink and its target, a folder named inside another) once,
    under the first path it was reached by.

    A file named on the command line is linted even when a pattern or .gitignore
    matches it, unless `force_exclude` (pre-commit names files one by one); so is a
    FIFO, device, dangling symlink or symlink loop named there (the engine reports it as
    not checked); a path that is nothing raises FileNotFoundError. `named` collects the
    absolute paths of the files named.
    """
    from gpulint.run.ignore import Excludes, GitIgnores

    excludes = Excludes(patterns, base or Path.cwd())
    ignores = GitIgnores() if gitignore else None

    def left_out(path: str, is_dir: bool, anchor: str, walked: bool = True, ignoring: bool = True) -> bool:
        return excludes.matches(path, is_dir, anchor, walked) or (
            ignoring and ignores is not None and ignores.ignored(path, is_dir, walked))

    # paths as strings, in the form a Path gives them: a run holds one per file
    found: list[str] = []
    seen: set[str] = set()
    for raw in paths:
        root = os.fspath(Path(raw))
        top = os.path.abspath(root)
        if os.path.isdir(root):
            anchor = excludes.anchor(top)
            candidates = _listed(root, top, anchor, left_out, ignores)
        elif os.path.lexists(root):  # a file, or a FIFO, device, dangling symlink or loop
            if force_exclude and left_out(top, False, excludes.base, walked=False):
                continue
            candidates = [(root, _real(root, {}))]
            if named is not None:
                named.add(top)
        else:
            raise FileNotFoundError(raw)
        for path, key in candidates:
            if key not in seen:
                seen.add(key)
                found.append(path)
    return found


def _listed(root: str, top: str, anchor: str, left_out, ignores) -> list[tuple[str, str]]:
    """(path, real path) of each file under the folder `root` (absolute: `top`), as os.walk
    lists them from the top down (a folder's files by name, then its folders by name; a
    symbolic link to a folder is not followed), from one `scandir` per folder: whether an
    entry is a folder or a link comes with the listing, so a folder's real path is its
    parent's and its name, and only links are resolved."""
    out: list[tuple[str, str]] = []
    stack = [(root, top, os.path.realpath(root))]
    while stack:
        folder, absolute, real = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:  # unreadable or gone: os.walk passes it over too
            continue
        files, folders = [], []
        for entry in entries:
            (folders if is_folder(entry) else files).append(entry)
        # the ignore files are asked about a folder's entries only where one applies
        ignoring = ignores is not None and ignores.apply_in(
            absolute, any(e.name == ".gitignore" for e in files), any(e.name == ".git" for e in entries))
        for entry in sorted(files, key=_name):
            name = entry.name
            if not left_out(_joined(absolute, name), False, anchor, ignoring=ignoring):
                path = _joined(folder, name)
                out.append((path, os.path.realpath(path) if entry.is_symlink() else _joined(real, name)))
        below = [(_joined(folder, e.name), _joined(absolute, e.name), _joined(real, e.name))
                 for e in sorted(folders, key=_name)
                 if not e.is_symlink() and not left_out(_joined(absolute, e.name), True, anchor, ignoring=ignoring)]
        stack.extend(reversed(below))
    return out


def is_folder(entry: os.DirEntry) -> bool:
    """Whether a listed entry is a folder (or a link to one); one that cannot be told is not."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _name(entry: os.DirEntry) -> str:
    return entry.name


def _joined(folder: str, name: str) -> str:
    """os.path.join of a folder and an entry's name (no separator in it): what the walk does
    for every entry"""
    return folder + name if folder.endswith(os.sep) else folder + os.sep + name


def _real(path: str, real_dirs: dict[str, str]) -> str:
    """`os.path.realpath(path)`, resolving each folder once: a file that is no symbolic link
    is its real folder's entry of the same name."""
    text = os.fspath(path)
    if os.path.islink(text):
        return os.path.realpath(text)
    folder, name = os.path.split(text)
    return os.path.join(_real_dir(folder, real_dirs), name)


def _real_dir(folder: str, real_dirs: dict[str, str]) -> str:
    """`os.path.realpath(folder)`, from its parent's where the parent's is known and the
    folder is no symbolic link: one `lstat` per folder, not one per folder of its path."""
    found = real_dirs.get(folder)
    if found is None:
        parent, name = os.path.split(folder)
        if name in ("", ".", "..") or not parent or parent == folder or os.path.islink(folder):
            found = os.path.realpath(folder or ".")
        else:
            found = os.path.join(_real_dir(parent, real_dirs), name)
        real_dirs[folder] = found
    return found

