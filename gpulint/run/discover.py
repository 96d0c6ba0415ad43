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
            candidates = []
            anchor = excludes.anchor(top)
            for dirpath, dirnames, filenames in os.walk(root):
                absdir = os.path.abspath(dirpath)
                # the ignore files are asked about a folder's entries only where one applies
                ignoring = ignores is not None and ignores.apply_in(absdir, ".gitignore" in filenames)
                dirnames[:] = sorted(d for d in dirnames
                                     if not left_out(os.path.join(absdir, d), True, anchor, ignoring=ignoring))
                candidates.extend(os.path.join(dirpath, f) for f in sorted(filenames)
                                  if not left_out(os.path.join(absdir, f), False, anchor, ignoring=ignoring))
        elif os.path.lexists(root):  # a file, or a FIFO, device, dangling symlink or loop
            if force_exclude and left_out(top, False, excludes.base, walked=False):
                continue
            candidates = [root]
            if named is not None:
                named.add(top)
        else:
            raise FileNotFoundError(raw)
        real_dirs: dict[str, str] = {}  # a folder's real path, resolved once for its files
        for path in candidates:
            key = _real(path, real_dirs)
            if key not in seen:
                seen.add(key)
                found.append(path)
    return found


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

