"""Reading a file and parsing it into a Document with its kind's parser.

A file that does not parse becomes a GL001 finding at the parser's position (a
templated one, GL004) and the run goes on. The parser comes from the caller (the
kinds' registry, or a kind reading another file of its own kind).
"""

from __future__ import annotations

from collections.abc import Callable

from gpulint.formats.errors import ParseError
from gpulint.formats.template import (
    has_template_syntax,
    neutralise,
    strip_template_suffix,
)
from gpulint.model import Document, Finding, Span

# A kind's parser: (text, document) -> tree; raises ParseError.
Parser = Callable[[str, Document], object]
# The largest file read by default (`max-file-size` in the configuration changes it).
MAX_BYTES = 4 * 1024 * 1024


# The third-party parsers gpulint reads files with, by module: the pip package to install.
PARSER_PACKAGES = {"yaml": "PyYAML"}


class ParserMissing(Exception):
    """The package that parses this kind of file is not installed."""

    def __init__(self, package: str) -> None:
        super().__init__(package)
        self.package = package


# The byte order marks a file may start with, and the encoding each one names; UTF-32 LE's
# starts with UTF-16 LE's, so it is tried first.
BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
        (b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def decode(data: bytes) -> tuple[str, bool, bool, str]:
    """Text with LF line ends, whether the file had a BOM and CRLF line ends, and its
    encoding: UTF-8, or UTF-16 or UTF-32 when a byte order mark says so (as kubectl and
    dockerd read them). Raises UnicodeDecodeError (`start` counts from the first byte of
    the file) for anything else."""
    text, encoding = _decode(data)
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    crlf: bool | tuple[str, ...] = "\r\n" in text
    if crlf:
        if "\n" in text.replace("\r\n", ""):  # mixed: remember each line's own end
            crlf = tuple(text.splitlines(keepends=True))
        text = text.replace("\r\n", "\n")
    return text, bom, crlf, encoding


def _decode(data: bytes) -> tuple[str, str]:
    failure = None
    for mark, encoding in BOMS:
        if not data.startswith(mark) or encoding == "utf-8":
            continue
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError as exc:  # UTF-32 LE's mark may be UTF-16 LE's and a NUL
            failure = failure or exc
    if failure is not None:
        raise failure
    return data.decode("utf-8"), "utf-8"


def encode(doc: Document, text: str) -> bytes:
    if isinstance(doc.crlf, tuple):
        text = _keep_line_ends(doc.text, doc.crlf, text)
    elif doc.crlf:
        text = text.replace("\n", "\r\n")
    return (("\ufeff" if doc.bom else "") + text).encode(doc.encoding)


def _keep_line_ends(old: str, raw_lines: tuple[str, ...], new: str) -> str:
    """`new` (LF ends) written with the line ends of the original file: unchanged lines
    keep theirs, changed and added lines take the end of the line they replace or follow."""
    import difflib

    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(raw_lines[i1:i2])
            continue
        near = raw_lines[min(i1, len(raw_lines) - 1)] if raw_lines else "\n"
        end = "\r\n" if near.endswith("\r\n") else "\n"
        out.extend(line[:-1] + end if line.endswith("\n") else line for line in new_lines[j1:j2])
    return "".join(out)


def read(path, kind: str, parser: Parser) -> Document | None:
    """A file outside the linted set, read and parsed as `kind` (a Dockerfile that
    `[tool.gpulint.images]` names, the file a Compose service extends); None when it
    cannot be read or does not parse."""
    import os

    from gpulint.paths import display_path

    try:
        if os.path.getsize(path) > MAX_BYTES:
            return None
        with open(path, "rb") as handle:
            text, bom, crlf, encoding = decode(handle.read())
    except (OSError, UnicodeDecodeError):
        return None
    _, templated = strip_template_suffix(os.path.basename(path))
    doc = Document(display_path(path), os.path.abspath(path), kind, text, templated=templated, bom=bom, crlf=crlf,
                   encoding=encoding)
    try:
        return doc if parse(doc, parser) is None else None
    except ParserMissing:
        return None


def _parse_error(doc: Document, exc: ParseError, code: str, message: str) -> Finding:
    span = Span.point(exc.line, exc.column)
    return Finding(code=code, slug="", severity="", path=doc.path, span=span, message=message)


def parse(doc: Document, parser: Parser, templates: bool = False) -> Finding | None:
    """Fill doc.tree with what `parser` reads; return the GL001/GL004 finding when the file
    does not parse. `templates`: `{{ }}` in the text marks a file of this kind templated."""
    text = doc.text
    templated = doc.templated or (templates and has_template_syntax(text))
    doc.templated = templated
    if templated:
        text = neutralise(text)
    try:
        doc.tree = parser(text, doc)
    except ParseError as exc:
        if templated:
            return _parse_error(doc, exc, "GL004",
                                f"templated file not checked: it does not parse once template "
                                f"expressions are set aside ({exc.message})")
        return _parse_error(doc, exc, "GL001", exc.message)
    except ModuleNotFoundError as exc:
        if exc.name not in PARSER_PACKAGES:
            raise
        raise ParserMissing(PARSER_PACKAGES[exc.name]) from None
    except RecursionError:
        return _parse_error(doc, ParseError("nested too deeply"), "GL001",
                            "the file is nested too deeply to check")
    except (ValueError, OverflowError, MemoryError) as exc:  # a parser's own limit, past its checks
        return _parse_error(doc, ParseError(str(exc)), "GL001",
                            f"the file could not be read: {type(exc).__name__}: {str(exc)[:200]}")
    doc.parsed = doc.tree is not None
    problem = None if templated else doc.cache.get("parse.problem")
    if problem is not None:  # the parser kept what it could read: the rest is still checked
        span, message = problem
        return Finding("GL001", "", "", doc.path, span, message)
    return None
