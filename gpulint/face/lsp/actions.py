"""Code actions on an open file: each finding's fix (unsafe ones say so), all safe fixes in
the file at once, and a suppression comment for a finding's line or for the whole file,
written as `run/suppress.py` reads them.

A suppression comment is offered only where gpulint itself reads it back as one covering
the finding, and the file still parses with it: never inside a string value that spans lines
(a YAML block scalar or TOML multi-line string of a kind that holds data in them), never after
an instruction in a Dockerfile; and never between the lines of a continued shell command,
which a comment line would end.
"""

from __future__ import annotations

from lsprotocol import types

from gpulint import kinds
from gpulint.face.lsp.positions import Place, offset_position
from gpulint.formats import documents
from gpulint.model import Document, Edit, Finding
from gpulint.regex import lazy
from gpulint.run.fix import fix_until_settled, fixed_texts
from gpulint.run.suppress import comment_lines, find_suppressions

FIX_ALL = "source.fixAll.gpulint"
# a Dockerfile's parser directives (`# syntax=`, `# escape=`, `# check=`) must stay first
_DIRECTIVE = lazy(r"#[ \t]*[A-Za-z][A-Za-z0-9_-]*[ \t]*=")


def _overlaps(finding: Finding, first: int, last: int) -> bool:
    return finding.span.line <= last and finding.span.end_line >= first


def _text_edits(doc: Document, place: Place, edits) -> list[types.TextEdit]:
    newline = "\r\n" if doc.crlf is True else "\n"
    return [types.TextEdit(range=types.Range(start=offset_position(place, doc.index, e.start),
                                             end=offset_position(place, doc.index, e.end)),
                           new_text=e.content.replace("\n", newline))
            for e in sorted(edits, key=lambda e: e.start)]


def _action(title: str, kind, uri: str, edits: list[types.TextEdit], found=(), preferred=False):
    return types.CodeAction(title=title, kind=kind, diagnostics=list(found) or None,
                            is_preferred=preferred or None,
                            edit=types.WorkspaceEdit(changes={uri: edits}))


def fix_actions(uri: str, doc: Document, place: Place, findings, diagnostic_of) -> list[types.CodeAction]:
    """The fix of each finding given, where its edits stay in this file and the result parses."""
    out = []
    for f in findings:
        if f.fix is None or any(e.path != doc.abspath for e in f.fix.edits):
            continue
        _, applied, _ = fixed_texts([f], [doc], unsafe=True)
        if not applied:  # the fixed text would not parse
            continue
        title = f"{f.code}: {f.fix.description}" + ("" if f.fix.safe else " (unsafe fix: review it)")
        out.append(_action(title, types.CodeActionKind.QuickFix, uri,
                           _text_edits(doc, place, f.fix.edits), [diagnostic_of(f)], preferred=f.fix.safe))
    return out


def fix_all(uri: str, doc: Document, place: Place, result, relint, kind=FIX_ALL) -> types.CodeAction | None:
    """Every safe fix in the file, applied and linted again until none is left, as
    `gpulint --fix` does; one edit from the first changed character to the last."""
    if not any(f.fix is not None and f.fix.safe for f in result.active if f.path == doc.path):
        return None
    _, count, changed, _ = fix_until_settled(result, lambda texts: relint(texts[doc.abspath]), unsafe=False)
    new = changed.get(doc.abspath)
    if not count or new is None:
        return None
    edit = _difference(doc, new)
    return _action("Fix all gpulint findings in this file", kind, uri, _text_edits(doc, place, [edit]))


# -- suppression comments -----------------------------------------------------------------------

def _reads_back(doc: Document, text: str, line: int, code: str) -> bool:
    """Whether gpulint, reading `text`, finds a suppression of `code` covering `line`, and
    the file parses as it did."""
    trial = Document(doc.path, doc.abspath, doc.kind, text, templated=doc.templated)
    try:
        broken = documents.parse(trial, kinds.parser(doc.kind), kinds.BY_NAME[doc.kind].templated)
    except Exception:  # the parser's package missing, or a bug: offer nothing rather than guess
        return False
    if broken is not None and doc.parsed:
        return False
    return any(s.problem is None and code in s.codes and s.first_line <= line <= s.last_line
               for s in find_suppressions(trial))


def _extended(doc: Document, line: int, code: str, file_wide: bool) -> str | None:
    """The text with `code` added to a suppression comment that already covers `line`."""
    for sup in find_suppressions(doc):
        if sup.problem is not None or sup.edit_range is None or not sup.code_spans:
            continue  # a Kubernetes annotation, or a comment that is none
        scope_is_file = "disable-file" in doc.text[sup.edit_range[0]:sup.edit_range[1]]
        if sup.first_line <= line <= sup.last_line and scope_is_file == file_wide:
            at = max(end for _, end in sup.code_spans.values())
            return doc.text[:at] + "," + code + doc.text[at:]
    return None


def _inserted(doc: Document, line: int, comment: str, indent: str = "") -> str:
    """The text with `comment` on a line of its own before `line`."""
    at = doc.index.starts[line - 1] if line <= doc.index.line_count else len(doc.text)
    prefix = "" if at == 0 or doc.text[at - 1] == "\n" else "\n"
    return doc.text[:at] + prefix + indent + comment + "\n" + doc.text[at:]


def _line_candidates(doc: Document, line: int, code: str):
    """(new text, the finding's line in it) for a comment covering `line`: added to one
    there already, on a line of its own above, or at the end of the line."""
    extended = _extended(doc, line, code, file_wide=False)
    if extended is not None:
        yield extended, line
    above = doc.index.line_text(line - 1) if line > 1 else ""
    if doc.kind == "commands" and above.rstrip().endswith("\\"):
        return  # a comment line would end the shell command continued onto this line
    yield _inserted(doc, line, f"# gpulint: disable={code}", doc.index.indent(line)), line + 1
    own = doc.index.line_text(line)
    if doc.kind in ("commands", "dockerfile") and own.rstrip().endswith("\\"):
        return  # text after the backslash would end the continued command
    end = doc.index.starts[line - 1] + len(own)
    yield doc.text[:end] + f"  # gpulint: disable={code}" + doc.text[end:], line


def _file_line(doc: Document) -> int:
    """The first line a file-wide comment may go on: past a shebang, a Dockerfile's parser
    directives, and, in documentation, outside the shell blocks."""
    allowed = comment_lines(doc)
    if allowed is not None:
        return min(allowed, default=1)
    line = 1
    if doc.index.line_text(1).startswith("#!"):
        line = 2
    if doc.kind == "dockerfile":
        while line <= doc.index.line_count and _DIRECTIVE.match(doc.index.line_text(line)):
            line += 1
    return line


def _file_candidates(doc: Document, code: str):
    extended = _extended(doc, 1, code, file_wide=True)
    if extended is not None:
        yield extended, 1
    yield _inserted(doc, _file_line(doc), f"# gpulint: disable-file={code}"), 1


def suppression_actions(uri: str, doc: Document, place: Place, findings, diagnostic_of):
    """"Disable GLxxx on this line" and "... in this file", where the file takes comments."""
    if not kinds.BY_NAME[doc.kind].suppressions or doc.path.lower().endswith(".json"):
        return []
    out, seen = [], set()
    for f in findings:
        for scope, candidates in (("on this line", _line_candidates(doc, f.span.line, f.code)),
                                  ("in this file", _file_candidates(doc, f.code))):
            key = (f.code, f.span.line if scope == "on this line" else 0)
            if key in seen:
                continue
            for text, line in candidates:
                if _reads_back(doc, text, line, f.code):
                    seen.add(key)
                    edit = _difference(doc, text)
                    out.append(_action(f"Disable {f.code} {scope}", types.CodeActionKind.QuickFix, uri,
                                       _text_edits(doc, place, [edit]), [diagnostic_of(f)]))
                    break
    return out


def _difference(doc: Document, new: str) -> Edit:
    """One edit that turns doc.text into `new`: from the first character that differs to the
    last, so the editor keeps the cursor and folds outside it."""
    old = doc.text
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1
    return Edit(doc.abspath, start, end_old, new[start:end_new])
