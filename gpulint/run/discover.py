"""Walking paths: every file under the paths named, excluded and git-ignored ones left
out. What kind each one is, the kinds' registry says (`gpulint.kinds`)."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_EXCLUDES = (".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build")


def may_be_script(path: Path) -> bool:
    """A file without an extension that starts with a shell shebang (read 64 bytes)."""
    if "." in path.name or not path.is_file():  # opening a FIFO would block
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
    except OSError:
        return False
    return head.startswith(b"#!") and b"sh" in head.split(b"\n", 1)[0]


def walk(paths: list[str], patterns: tuple[str, ...], *, base: Path | None = None,
         gitignore: bool = True, force_exclude: bool = False,
         named: set[str] | None = None) -> list[Path]:
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

    def left_out(path: str, is_dir: bool, anchor: str, walked: bool = True) -> bool:
        return excludes.matches(path, is_dir, anchor, walked) or (
            ignores is not None and ignores.ignored(path, is_dir, walked))

    found: list[Path] = []
    seen: set[str] = set()
    for raw in paths:
        root = Path(raw)
        top = os.path.abspath(root)
        if root.is_dir():
            candidates = []
            anchor = excludes.anchor(top)
            for dirpath, dirnames, filenames in os.walk(root):
                absdir = os.path.abspath(dirpath)
                dirnames[:] = sorted(d for d in dirnames
                                     if not left_out(os.path.join(absdir, d), True, anchor))
                candidates.extend(Path(dirpath, f) for f in sorted(filenames)
                                  if not left_out(os.path.join(absdir, f), False, anchor))
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


def _real(path: Path, real_dirs: dict[str, str]) -> str:
    """`os.path.realpath(path)`, resolving each folder once: a file that is no symbolic link
    is its real folder's entry of the same name."""
    text = os.fspath(path)
    if os.path.islink(text):
        return os.path.realpath(text)
    folder, name = os.path.split(text)
    if folder not in real_dirs:
        real_dirs[folder] = os.path.realpath(folder or ".")
    return os.path.join(real_dirs[folder], name)


def project_files(root: str, patterns: tuple[str, ...], wanted, *, base: Path | None = None,
                  gitignore: bool = True):
    """(absolute path, os.DirEntry) of each file under the folder `root` that
    `wanted(name, absolute folder)` accepts, excluded and git-ignored ones left out, in `walk`'s
    order and reached once as there. Cheaper than `walk` for a whole repository: excluded
    folders are left before they are listed, a file whose name is not wanted is neither
    matched against the patterns nor resolved, and only symbolic links are resolved."""
    from gpulint.run.ignore import Excludes, GitIgnores

    excludes = Excludes(patterns, base or Path.cwd())
    ignores = GitIgnores() if gitignore else None
    top = os.path.abspath(root)
    anchor = excludes.anchor(top)

    def left_out(path: str, is_dir: bool, ignoring: bool) -> bool:
        return excludes.matches(path, is_dir, anchor) or (ignoring and ignores.ignored(path, is_dir))

    seen: set[str] = set()
    # (folder, its real path): a folder reached is no symbolic link (they are not descended,
    # as in os.walk), so its real path is its parent's and its name
    stack = [(top, os.path.realpath(top))]
    while stack:
        folder, real = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        ignoring = ignores is not None and ignores.apply_in(folder, any(e.name == ".gitignore" for e in entries))
        below = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if not entry.is_symlink() and not left_out(entry.path, True, ignoring):
                    below.append((entry.path, os.path.join(real, entry.name)))
                continue
            if not wanted(entry.name, folder) or left_out(entry.path, False, ignoring):
                continue
            key = os.path.realpath(entry.path) if entry.is_symlink() else os.path.join(real, entry.name)
            if key not in seen:
                seen.add(key)
                yield entry.path, entry
        stack.extend(reversed(below))
