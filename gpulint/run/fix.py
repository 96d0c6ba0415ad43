"""Applying fixes: text edits over file contents, checked, and written in place behind a backup copy.

Every fix is a list of edits (offset ranges and replacement text) placed at the
positions the parsers recorded, so only the bytes a fix means to change change:
comments, spacing, key and table order survive in every format (for TOML this is
stricter than re-serialising a tomlkit document, which can respace an edited
table). A result that no longer parses is refused.
"""

from __future__ import annotations

import os
import stat

from gpulint.formats.documents import encode
from gpulint.formats.errors import ParseError
from gpulint.kinds import parse_text
from gpulint.model import Document, Edit, Finding, Fix, apply_edits


def applicable(findings: list[Finding], unsafe: bool) -> list[Finding]:
    return [f for f in findings if f.suppressed is None and f.fix is not None
            and (f.fix.safe or unsafe)]


def _overlaps(a: Edit, b: Edit) -> bool:
    if a.start == a.end == b.start == b.end:
        return True  # two insertions at one point: one per pass keeps the order defined
    return a.start < b.end and b.start < a.end


def apply_fixes(text: str, path: str, fixes: list[Fix]) -> tuple[str, int]:
    """Apply whole fixes whose edits overlap no fix already taken; the rest wait for
    the next pass, when they are computed again on the new text."""
    taken: list[Edit] = []
    count = 0
    for fix in sorted(fixes, key=lambda f: min((e.start for e in f.edits), default=0)):
        edits = [e for e in fix.edits if e.path == path]
        if not edits or any(_overlaps(e, t) for e in edits for t in taken):
            continue
        taken.extend(edits)
        count += 1
    return apply_edits(text, taken), count


def fixed_texts(findings: list[Finding], documents: list[Document],
                unsafe: bool) -> tuple[dict[str, str], int, list[str]]:
    """New text per absolute path, the number of fixes applied, and refusals."""
    docs = {d.abspath: d for d in documents}
    per_path: dict[str, list[tuple[Finding, Edit]]] = {}
    for f in applicable(findings, unsafe):
        for edit in f.fix.edits:
            per_path.setdefault(edit.path, []).append((f, edit))
    out: dict[str, str] = {}
    applied = 0
    refused: list[str] = []
    for path, pairs in per_path.items():
        doc = docs.get(path)
        if doc is None:
            continue
        fixes_here = list({id(f): f.fix for f, _ in pairs}.values())
        new_text, count = apply_fixes(doc.text, path, fixes_here)
        if new_text == doc.text:
            continue
        if not doc.parsed:  # it did not parse before either: the fix cannot make it worse
            out[path] = new_text
            applied += count
            continue
        try:
            parse_text(doc.kind, new_text, Document(doc.path, doc.abspath, doc.kind, new_text))
        except ParseError as exc:
            refused.append(f"{doc.path}: fixes not applied, the result would not parse "
                           f"({exc.message} at {exc.line}:{exc.column})")
            continue
        out[path] = new_text
        applied += count
    return out, applied, refused


# the most fix-and-lint-again passes: a fix may make room for another, never for ever
MAX_FIX_PASSES = 8


def fix_until_settled(result, rerun, unsafe: bool, refused=lambda message: None):
    """Fix, lint the fixed text again, and repeat until nothing more applies.

    `rerun(changed)` lints again with {absolute path: fixed text} in place of those files;
    `refused(message)` hears of each fix left out because its result would not parse.
    Returns the last result, the number of fixes applied, the final text of each changed
    file, and the original documents (for a diff and for writing)."""
    originals = {d.abspath: d for d in result.documents}
    changed: dict[str, str] = {}
    total = 0
    current = result
    for _ in range(MAX_FIX_PASSES):
        texts, count, refusals = fixed_texts(current.findings, current.documents, unsafe)
        for message in refusals:
            refused(message)
        if not texts:
            break
        total += count
        changed.update(texts)
        current = rerun(changed)
    changed = {p: t for p, t in changed.items() if t != originals[p].text}
    return current, total, changed, originals


BACKUP_PREFIX = ".gpulint-fix-"  # `.gpulint-fix-<pid>-<name>.tmp`: never a kind gpulint lints


class NotWritten(Exception):
    """A fixed file that was left as it was, and why."""


def write_in_place(doc: Document, text: str) -> str:
    """Write the fixed text into the file itself, and return the path written.

    The file is rewritten in place, through a symlink to its target, so its inode, owner,
    mode and hard links stay; a read-only file is refused, not rewritten. While it is
    written, a copy of the original sits beside it (`.gpulint-fix-<pid>-<name>.tmp`, removed
    once the new content reads back right), so a run killed half-way leaves the original
    recoverable; later runs do not lint these copies."""
    target = os.path.realpath(doc.abspath)
    data = encode(doc, text)
    try:
        info = os.stat(target)
        if not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(target, os.W_OK):
            raise NotWritten("the file is read-only")
        with open(target, "rb") as handle:
            original = handle.read()
    except OSError as exc:
        raise NotWritten(exc.strerror or str(exc)) from None
    backup = os.path.join(os.path.dirname(target), f"{BACKUP_PREFIX}{os.getpid()}-{os.path.basename(target)}.tmp")
    try:
        with open(backup, "xb") as handle:
            handle.write(original)
    except OSError:  # a read-only folder: the file itself may still be writable
        backup = None
    try:
        with open(target, "r+b") as handle:
            handle.write(data)
            handle.truncate()
            handle.flush()
            os.fsync(handle.fileno())
        with open(target, "rb") as handle:
            if handle.read() != data:
                raise NotWritten("the file did not read back as written; the original is in " + str(backup))
    except OSError as exc:
        raise NotWritten(f"{exc.strerror or exc}" + (f"; the original is in {backup}" if backup else "")) from None
    if backup is not None:
        os.unlink(backup)
    return target


def unified_diff(doc: Document, new_text: str) -> str:
    import difflib

    return "".join(difflib.unified_diff(
        doc.text.splitlines(keepends=True), new_text.splitlines(keepends=True),
        fromfile=f"a/{doc.path}", tofile=f"b/{doc.path}"))
