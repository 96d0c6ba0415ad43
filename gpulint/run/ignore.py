"""Which walked paths to leave out: `exclude` patterns and git's ignore files.

Both use gitignore semantics (gitignore(5)): `*`, `?`, `[...]` within one path
segment, `**` across segments, `!` to re-include, a trailing `/` for folders
only, and a pattern with a `/` before its end anchored to its base folder while
one without matches a name at any depth. The last matching pattern decides.
Translating patterns to regular expressions here costs far less at start-up than
importing a library for it.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from gpulint.regex import lazy

_IN_BRACKETS = lazy(r"[\\\[&~|]")


@functools.lru_cache(maxsize=None)
def _segment(glob: str) -> str:
    """A regular expression for one gitignore glob without `**`."""
    out, i = [], 0
    while i < len(glob):
        ch = glob[i]
        if ch == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            # a `]` first in the brackets (after a `!` or `^`) is one of its characters
            end = glob.find("]", (i + 3 if glob[i + 1:i + 2] in ("!", "^") else i + 2))
            if end == -1:
                out.append(re.escape(ch))
            else:
                body = glob[i + 1:end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                # inside the brackets `[`, `&`, `~` and `|` are characters like any other
                # (for Python's expressions, a nested set or a set operation to come)
                out.append("[" + _IN_BRACKETS.sub(r"\\\g<0>", body) + "]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


class Pattern:
    __slots__ = ("negated", "dir_only", "regex")

    def __init__(self, negated: bool, dir_only: bool, regex: re.Pattern) -> None:
        self.negated, self.dir_only, self.regex = negated, dir_only, regex


def compile_pattern(line: str) -> Pattern | None:
    """One line of a gitignore file (or one exclude pattern); None for blanks and comments."""
    line = line.rstrip("\n\r")
    if not line.lstrip() or line.startswith("#"):
        return None
    if not line.endswith("\\ "):
        line = line.rstrip(" ")
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    elif line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    parts = line.split("/")
    regex = ""
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            regex += ".*" if last else "(?:.*/)?"
        else:
            regex += _segment(part) + ("" if last else "/")
    if not anchored:
        regex = "(?:.*/)?" + regex
    try:
        return Pattern(negated, dir_only, re.compile(regex + r"\Z", re.DOTALL))
    except re.error:  # brackets git cannot read either: the line matches nothing
        return None


class Rules:
    """The patterns of one folder (a .gitignore, or the configured excludes)."""

    def __init__(self, lines) -> None:
        lines = list(lines)
        self.patterns = [p for p in map(compile_pattern, lines) if p is not None]
        # every pattern a name, matched at any depth (`.git`, `build`, `*.tmp`): an entry of a
        # folder walked (whose folders above were decided already) is decided by its name
        self.by_name = all("/" not in line for line in lines)
        # without a `!` pattern the last match is any match: one expression asks them all
        # (a walk asks the excludes about every file and folder), for a file, for a folder
        self._any: tuple[re.Pattern | None, re.Pattern | None] | None = None
        if not any(p.negated for p in self.patterns):
            self._any = (_joined([p for p in self.patterns if not p.dir_only]), _joined(self.patterns))

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True: left out; False: re-included; None: no pattern speaks of it."""
        if self._any is not None:
            joined = self._any[is_dir]
            return True if joined is not None and joined.match(rel) else None
        verdict = None
        for pattern in self.patterns:
            if pattern.dir_only and not is_dir:
                continue
            if pattern.regex.match(rel):
                verdict = not pattern.negated
        return verdict

    def matches(self, rel: str, is_dir: bool) -> bool:
        """Left out by itself or by a folder above it (git re-includes nothing inside an
        excluded folder)."""
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            if self.decide("/".join(parts[:depth]), True):
                return True
        return bool(self.decide(rel, is_dir))


def _joined(patterns: list[Pattern]) -> re.Pattern | None:
    """One expression that matches where any of `patterns` does."""
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{p.regex.pattern})" for p in patterns), re.DOTALL)


def _relative(path: str, base: str) -> str | None:
    # the walk asks this for every file: a normalised path under `base` is cut, not resolved
    prefix = base if base.endswith(os.sep) else base + os.sep
    if path.startswith(prefix) and os.path.isabs(base):
        rel = path[len(prefix):]
        if rel and not rel.startswith(".") and os.sep + "." not in rel and os.sep * 2 not in rel:
            return rel.replace(os.sep, "/")
    rel = os.path.relpath(path, base)
    if rel == "." or rel == ".." or rel.startswith(".." + os.sep):
        return None
    return rel.replace(os.sep, "/")


class Excludes:
    """`exclude`/`extend-exclude`/`--exclude` patterns, relative to `base` (the
    configuration's folder, else the current directory)."""

    def __init__(self, patterns: tuple[str, ...], base: Path) -> None:
        self.rules = Rules(patterns)
        self.base = os.path.abspath(base)

    def anchor(self, walk_root: str) -> str:
        """The folder patterns are relative to while walking `walk_root`: the base, unless
        the walked folder is outside it or is itself excluded (then the user named it:
        `gpulint build/site` walks it as if it were the base)."""
        walk_root = os.path.abspath(walk_root)
        rel = _relative(walk_root, self.base)
        if walk_root != self.base and (rel is None or self.rules.matches(rel, True)):
            return walk_root
        return self.base

    def matches(self, path: str, is_dir: bool, anchor: str, walked: bool = True) -> bool:
        """While walking, folders above were checked already: only the entry itself is."""
        if walked and self.rules.by_name and path.startswith(anchor) and path[len(anchor):len(anchor) + 1] == os.sep:
            return bool(self.rules.decide(path[path.rfind(os.sep) + 1:], is_dir))
        rel = _relative(path, anchor)
        if rel is None:
            return False
        return bool(self.rules.decide(rel, is_dir)) if walked else self.rules.matches(rel, is_dir)


class GitIgnores:
    """`.gitignore` files from the repository root down, and `.git/info/exclude`: a
    deeper file's verdict wins, as in git. Outside a repository nothing is ignored."""

    def __init__(self) -> None:
        self._roots: dict[str, str | None] = {}
        self._rules: dict[str, Rules | None] = {}
        self._chains: dict[str, tuple[str | None, list]] = {}

    def _root(self, folder: str) -> str | None:
        if folder not in self._roots:
            parent = os.path.dirname(folder)
            if os.path.exists(os.path.join(folder, ".git")):
                self._roots[folder] = folder
            else:
                self._roots[folder] = None if parent == folder else self._root(parent)
        return self._roots[folder]

    def _rules_of(self, folder: str, root: str) -> Rules | None:
        if folder not in self._rules:
            lines: list[str] = []
            files = [os.path.join(folder, ".gitignore")]
            if folder == root:
                files.insert(0, os.path.join(root, ".git", "info", "exclude"))
            for name in files:
                try:
                    with open(name, encoding="utf-8", errors="replace") as handle:
                        lines.extend(handle.read().splitlines())
                except OSError:
                    continue
            rules = Rules(lines)
            self._rules[folder] = rules if rules.patterns else None
        return self._rules[folder]

    def _chain(self, folder: str) -> tuple[str | None, list]:
        """The repository root of `folder`, and the rules from the root down to `folder`
        (the folders holding any), worked out once per folder."""
        if folder not in self._chains:
            root = self._root(folder)
            chain = []
            if root is not None:
                folders = [folder]
                while folders[-1] != root:
                    folders.append(os.path.dirname(folders[-1]))
                chain = [(f, rules) for f in reversed(folders) if (rules := self._rules_of(f, root))]
            self._chains[folder] = (root, chain)
        return self._chains[folder]

    def apply_in(self, folder: str, has_gitignore: bool, has_git: bool | None = None) -> bool:
        """Whether any ignore file decides on the entries of `folder` (absolute), told by
        its listing whether it holds a `.gitignore` (and, where the walk says, a `.git`): a
        walk that lists it asks once per folder, and opens or stats nothing it knows is not
        there."""
        if has_git is not None and folder not in self._roots:
            parent = os.path.dirname(folder)
            self._roots[folder] = folder if has_git else None if parent == folder else self._root(parent)
        if not has_gitignore and folder not in self._rules and self._root(folder) != folder:
            self._rules[folder] = None
        root, chain = self._chain(folder)
        return root is not None and bool(chain)

    def ignored(self, path: str, is_dir: bool, walked: bool = True) -> bool:
        path = os.path.abspath(path)
        root, chain = self._chain(os.path.dirname(path))
        if root is None:
            return False
        if not walked:  # a named file: the folders above it count as well
            folder = os.path.dirname(path)
            while folder != root and _relative(folder, root) is not None:
                if self.ignored(folder, True):
                    return True
                folder = os.path.dirname(folder)
        verdict = False
        for folder, rules in chain:  # from the root down: deeper files decide last
            decided = rules.decide(_relative(path, folder), is_dir)
            if decided is not None:
                verdict = decided
        return verdict
