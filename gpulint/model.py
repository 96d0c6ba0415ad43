"""The shared vocabulary: spans, nodes with positions, findings, fixes, documents.

Lines and columns are 1-based. A Span's end is inclusive of its last character
(end_column points at the last character), which is what findings report in JSON;
SARIF regions and fix edits use an exclusive end and are converted at the edge.
"""

from __future__ import annotations

import bisect
from array import array
from collections import namedtuple
from collections.abc import Iterator
from itertools import accumulate
from types import MappingProxyType

from gpulint.record import Frozen, Record, freeze

# `typing` costs a one-file run about 2 ms to import: its names are for type checkers only
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


# a tuple: made for every finding and many nodes, so cheap to build
class Span(namedtuple("Span", ("line", "column", "end_line", "end_column"))):
    __slots__ = ()

    line: int
    column: int
    end_line: int
    end_column: int

    @staticmethod
    def point(line: int, column: int) -> "Span":
        return Span(line, column, line, column)


class Node:
    """A parsed value with its position.

    `value` is a dict of str -> Node for mappings, a list of Node for sequences and
    a plain Python scalar otherwise. `key_span` is the span of the key that holds
    this node in its parent mapping (None for roots and sequence items).
    `tag` is the parser's type name for scalars ("str", "int", "float", "bool",
    "null"); `quoted` says whether a YAML/TOML scalar was written in quotes.
    """

    __slots__ = ("value", "_span", "_key_span", "tag", "quoted", "_index")

    def __init__(self, value: Any, span: Span | int, key_span: Span | int | None = None,
                 tag: str = "", quoted: bool = False, index: "LineIndex | None" = None) -> None:
        self.value = value
        self._span = span
        self._key_span = key_span
        self.tag = tag
        self.quoted = quoted
        self._index = index  # what turns a place (see `place`) into a Span

    def __reduce__(self):
        # shared files' trees are sent back from worker processes, and kept in the context
        # index: rebuilt through __init__, which takes half the time of the default for
        # __slots__ classes (a dict of the fields for every node)
        return type(self), (self.value, self._span, self._key_span, self.tag, self.quoted, self._index)

    # A parser may give a position as a place, an int of offsets into the file, turned into
    # lines and columns only when asked: most nodes of a large file are never reported, and
    # an int takes half the memory of a Span.
    @property
    def span(self) -> Span:
        span = self._span
        if type(span) is int:
            span = self._span = _resolve(self._index, span)
        return span

    @property
    def key_span(self) -> Span | None:
        span = self._key_span
        if type(span) is int:
            span = self._key_span = _resolve(self._index, span)
        return span

    def __repr__(self) -> str:
        return f"Node({self.plain()!r} @{self.span.line}:{self.span.column})"

    @property
    def is_map(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_seq(self) -> bool:
        return isinstance(self.value, list)

    @property
    def is_scalar(self) -> bool:
        return not isinstance(self.value, (dict, list))

    @property
    def anchor(self) -> Span:
        """Where a finding about this entry should point: its key if it has one."""
        return self.key_span or self.span

    def get(self, *path: str | int) -> "Node | None":
        # the rules' most frequent call: the type tests are written out, not the properties,
        # and the usual step (a str key of a plain dict) is tested first, in one line
        node: Node | None = self
        for part in path:
            if node is None:
                return None
            value = node.value
            if part.__class__ is str and value.__class__ is dict:
                node = value.get(part)
            elif isinstance(part, int):
                if not isinstance(value, list) or not -len(value) <= part < len(value):
                    return None
                node = value[part]
            else:
                if not isinstance(value, dict):
                    return None
                node = value.get(part)
        return node

    # items, children and str are asked of most nodes a rule walks: the type tests are written
    # out on a local, not the properties
    def items(self) -> Iterator[tuple[str, "Node"]]:
        value = self.value
        return iter(value.items()) if isinstance(value, dict) else iter(())

    def children(self) -> list["Node"]:
        value = self.value
        if isinstance(value, dict):
            return list(value.values())
        if isinstance(value, list):
            return list(value)
        return []

    def plain(self) -> Any:
        if self.is_map:
            return {k: v.plain() for k, v in self.value.items()}
        if self.is_seq:
            return [v.plain() for v in self.value]
        return self.value

    def str(self) -> str | None:
        """The scalar as a string, or None for mappings, sequences and null."""
        value = self.value
        if value is None or isinstance(value, (dict, list)):
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)


def place(start: int, end: int, trim: bool = False) -> int:
    """A Node position as the half-open offset range [start, end) of a file; with `trim`,
    trailing blanks in the range are not part of it."""
    return start << 33 | end << 1 | trim


def place_offsets(code: int) -> tuple[int, int]:
    """The [start, end) of a place (`place`), blanks a trimmed one leaves out included."""
    return code >> 33, (code >> 1) & 0xFFFFFFFF


def _resolve(index: "LineIndex", code: int) -> Span:
    start, end = place_offsets(code)
    if code & 1:
        text = index.text
        while end > start + 1 and text[end - 1] in " \t\r\n":
            end -= 1
    return index.span(start, end)


def sequence(node: Node | None) -> list[Node]:
    """The items of a sequence node; none for an absent node or any other type."""
    return node.value if node is not None and node.is_seq else []


def str_value(node: Node | None) -> str | None:
    """The value of a string node as written; None for an absent node and any other
    type (unlike `Node.str()`, which also renders numbers and booleans)."""
    return node.value if node is not None and isinstance(node.value, str) else None


class SharedText(namedtuple("SharedText", ("name", "start", "end", "uses"))):
    """Text that several places of a file use: a YAML anchor (`&name`) that aliases
    (`*name`) refer to. An edit inside it changes every place; `start`/`end` are offsets
    (end exclusive, trailing blanks left out) and `uses` the offsets of the aliases."""

    __slots__ = ()

    name: str
    start: int
    end: int
    uses: tuple[int, ...]


class Edit(Frozen):
    """Replace the text between two 0-based character offsets of a file."""

    __slots__ = ("path", "start", "end", "content")

    path: str
    start: int
    end: int
    content: str

    def __init__(self, path: str, start: int, end: int, content: str) -> None:
        freeze(self, path, start, end, content)


class Fix(Frozen):
    __slots__ = ("description", "edits", "safe")

    description: str
    edits: tuple[Edit, ...]
    safe: bool

    def __init__(self, description: str, edits: tuple[Edit, ...], safe: bool = True) -> None:
        freeze(self, description, edits, safe)


class Related(Frozen):
    __slots__ = ("path", "line", "column", "message")

    path: str
    line: int
    column: int
    message: str

    def __init__(self, path: str, line: int, column: int, message: str) -> None:
        freeze(self, path, line, column, message)


class Finding(Record):
    __slots__ = ("code", "slug", "severity", "path", "span", "message", "fix", "related", "suppressed")

    code: str
    slug: str
    severity: str
    path: str
    span: Span
    message: str
    fix: Fix | None
    related: tuple[Related, ...]
    suppressed: str | None  # justification when silenced by an inline suppression

    def __init__(self, code: str, slug: str, severity: str, path: str, span: Span, message: str,
                 fix: Fix | None = None, related: tuple[Related, ...] = (), suppressed: str | None = None) -> None:
        self.code = code
        self.slug = slug
        self.severity = severity
        self.path = path
        self.span = span
        self.message = message
        self.fix = fix
        self.related = related
        self.suppressed = suppressed

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.span.line, self.span.column, self.code, self.message)


# The array type of line offsets in a text under 2**30 characters: 4 bytes each where a C int has 32 bits.
_OFFSET = "i" if array("i").itemsize >= 4 else "l"


class LineIndex:
    """Converts between 0-based offsets and 1-based (line, column) in a text."""

    # no __dict__: a run keeps one for each shared file, whose trees' positions need it
    __slots__ = ("_text", "_packed", "_starts")

    def __init__(self, text: str) -> None:
        self._text: str | None = text  # None while only its packed form is held (`pack`)
        self._packed: bytes | None = None
        self._starts: array | None = None

    @property
    def text(self) -> str:
        text = self._text
        if text is None:
            text = self._text = _unpack_text(self._packed)
        return text

    def pack(self, packed: bytes) -> None:
        """Hold the text as `packed` (what `Document.packed_text` gives for it) until it is
        read again, with the line starts counted now: the positions of a tree over it are then
        worked out without unpacking it."""
        _ = self.starts
        self._packed, self._text = packed, None

    def repack(self) -> None:
        """Let the text unpacked since `pack` go again (nothing when it was never packed)."""
        if self._packed is not None:
            self._text = None

    # Counted when first asked for: about half the files of a run are never asked for a
    # line or a column (a file with nothing to report).
    @property
    def starts(self) -> array:
        """The offset each line starts at: 4 bytes a line (a list of ints takes 36), 8 in a
        text of 2**30 characters or more; the lengths of the lines, each with its line break,
        summed."""
        starts = self._starts
        if starts is None:
            typecode = _OFFSET if len(self.text) < 1 << 30 else "q"
            starts = array(typecode, [0, *accumulate(map((1).__add__, map(len, self.text.split("\n"))))])
            starts.pop()  # the end of the text, past its last line
            self._starts = starts
        return starts

    def position(self, offset: int) -> tuple[int, int]:
        starts = self.starts
        line = bisect.bisect_right(starts, offset) - 1
        return line + 1, offset - starts[line] + 1

    def offset(self, line: int, column: int) -> int:
        if line - 1 >= len(self.starts):
            return len(self.text)
        return min(self.starts[line - 1] + column - 1, len(self.text))

    def offsets(self, span: Span) -> tuple[int, int]:
        """The half-open offset range [start, end) of a span: the inverse of `span`."""
        return self.offset(span.line, span.column), self.offset(span.end_line, span.end_column) + 1

    def span(self, start: int, end: int) -> Span:
        """Span for the half-open offset range [start, end)."""
        line, col = self.position(start)
        end_line, end_col = self.position(max(start, end - 1))
        return Span(line, col, end_line, end_col)

    def line_text(self, line: int) -> str:
        if not 1 <= line <= len(self.starts):
            return ""
        start = self.starts[line - 1]
        end = self.starts[line] - 1 if line < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r")

    def indent(self, line: int) -> str:
        """The whitespace a line starts with."""
        text = self.line_text(line)
        return text[: len(text) - len(text.lstrip())]

    @property
    def line_count(self) -> int:
        return len(self.starts)


class Suppression(Record):
    """An inline `gpulint: disable=...` comment, a `disable-file`, or a k8s annotation."""

    __slots__ = ("codes", "span", "first_line", "last_line", "reason", "edit_range", "code_spans", "used",
                 "problem")

    codes: tuple[str, ...]
    span: Span  # where the pragma is written (the comment, or the annotation value)
    first_line: int  # the lines whose findings it covers
    last_line: int
    reason: str | None
    edit_range: tuple[int, int] | None  # offsets of the whole comment, for GL002's fix
    code_spans: dict[str, tuple[int, int]]
    used: set[str]
    problem: str | None  # why a malformed `gpulint:` comment suppresses nothing (GL005)

    def __init__(self, codes: tuple[str, ...], span: Span, first_line: int, last_line: int, reason: str | None,
                 edit_range: tuple[int, int] | None = None,
                 code_spans: dict[str, tuple[int, int]] | None = None, used: set[str] | None = None,
                 problem: str | None = None) -> None:
        self.codes = codes
        self.span = span
        self.first_line = first_line
        self.last_line = last_line
        self.reason = reason
        self.edit_range = edit_range
        self.code_spans = {} if code_spans is None else code_spans
        self.used = set() if used is None else used
        self.problem = problem


# The memo of a released document (`Document.release`): empty, and read-only, as nothing
# computed from a tree let go may be kept.
RELEASED = MappingProxyType({})
# The suppressions of a document that has none (or is not read yet): one empty sequence shared
# by all of them, for the same reason.
NO_SUPPRESSIONS: tuple = ()


class Document(Record):
    """One file, parsed. `tree` depends on the kind:

    containerd, nvidia-toolkit: Node (the TOML table); daemon-json: Node (the JSON object);
    cdi: Node (the spec's mapping); kubernetes: list of Node (one per object, List items flattened);
    dockerfile: gpulint.kinds.dockerfile.parse.Dockerfile.
    """

    __slots__ = ("path", "abspath", "kind", "_text", "tree", "templated", "bom", "encoding", "crlf",
                 "suppressions", "cache", "parsed", "unread", "_index")

    path: str  # display path: relative to the current directory, "/" separators
    abspath: str
    kind: str
    _text: str | bytes  # the text, or the text packed (`packed_text`) until it is read
    tree: Any
    templated: bool
    bom: bool  # the file started with a byte order mark (kept when writing fixes)
    encoding: str  # utf-16-le ... when a byte order mark says so (kept when writing)
    # the file used CRLF line ends (text holds LF; kept when writing); with both kinds of
    # line end, the original lines with their ends, so each line keeps its own
    crlf: bool | tuple[str, ...]
    suppressions: list[Suppression]
    cache: dict  # per-document memo for check families
    parsed: bool  # the file parsed (kept once the tree is released)
    unread: bool  # not read as text (too large, unreadable, not UTF-8): nothing to parse
    _index: LineIndex | None

    def __init__(self, path: str, abspath: str, kind: str, text: str, tree: Any = None,
                 templated: bool = False, bom: bool = False, encoding: str = "utf-8",
                 crlf: bool | tuple[str, ...] = False, suppressions: list[Suppression] | None = None,
                 cache: dict | None = None, parsed: bool = False, unread: bool = False,
                 _index: LineIndex | None = None) -> None:
        self.path = path
        self.abspath = abspath
        self.kind = kind
        self._text = text
        self.tree = tree
        self.templated = templated
        self.bom = bom
        self.encoding = encoding
        self.crlf = crlf
        self.suppressions = [] if suppressions is None else suppressions
        self.cache = {} if cache is None else cache
        self.parsed = parsed
        self.unread = unread
        self._index = _index

    @property
    def text(self) -> str:
        """The file's text (LF line ends, no byte order mark). A checked file's is kept packed
        until a report or a fix reads it, then unpacked and kept so; a shared file's, packed
        with its line index (`pack`), is unpacked once for both."""
        text = self._text
        if text.__class__ is bytes:
            index = self._index
            text = self._text = index.text if index is not None and index._packed is text else _unpack_text(text)
        return text

    @text.setter
    def text(self, text: str | bytes) -> None:
        """Set the text, or the text packed (`packed_text`)."""
        self._text = text

    def packed_text(self) -> bytes | str:
        """The text compressed (to a third of its size, or less), as `text` takes it: a large
        run keeps the text of every checked file with something to report until the report.
        An empty text stays as it is."""
        text = self.text
        if not text:
            return text
        import zlib  # here: a run that keeps no text does not load it

        return zlib.compress(text.encode("utf-8", "surrogatepass"), 1)

    def pack(self) -> None:
        """Hold the text packed, here and in the line index the tree's positions use, until a
        check reads it: a large run holds each shared file in every process, and packed a file's
        text takes a third of the memory or less. `repack` lets it go again once read."""
        if self.unread or self._text.__class__ is bytes or not self._text:  # packed already, or nothing to pack
            return
        packed = self.packed_text()
        self.index.pack(packed)
        self._text = packed

    def repack(self) -> None:
        """Back to the packed text `pack` made, where it was read since."""
        index = self._index
        if index is not None and index._packed is not None:
            index.repack()
            self._text = index._packed

    def __reduce__(self):  # a packed text crosses to other processes packed
        return Document, tuple([self._text if name == "text" else getattr(self, name) for name in self._fields])

    def release(self) -> None:
        """Drop the tree and what was computed from it, once the file's checks have run:
        only the text stays, for reports and fixes. The memo left is one empty mapping that
        refuses to keep anything, shared by every released document (a run holds one
        document per file)."""
        self.tree = None
        self.cache = RELEASED
        self._index = None

    def narrow(self, tree: Any) -> None:
        """Keep `tree`, the part of the parsed tree other files' checks consult, once the
        file's own checks ran: what was memoised from the whole tree goes with it, save the
        texts YAML aliases share (a fix on the part kept may edit them)."""
        self.tree = tree
        self.cache = {key: value for key, value in self.cache.items() if key == "shared.text"}

    @property
    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index

    def line_text(self, line: int) -> str:
        return self.index.line_text(line)


# a record's fields are what its __init__ takes: the text, unpacked (what copies, comparisons
# and pickles see), not the slot that may hold it packed
Document._fields = tuple("text" if name == "_text" else name for name in Document._fields)


def _unpack_text(packed: bytes) -> str:
    import zlib

    return zlib.decompress(packed).decode("utf-8", "surrogatepass")


def apply_edits(text: str, edits) -> str:
    """`text` with non-overlapping edits applied, from the end so earlier offsets hold."""
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        text = text[: edit.start] + edit.content + text[edit.end:]
    return text
