"""TOML into position-carrying Nodes.

Values come from tomllib (its original, tomli, on Python 3.10), which validates. Neither
gives positions, so a small scanner walks the valid text once and records, for
every key path, where its key and its value are written: table headers, dotted
keys, inline tables and array items.
"""

from __future__ import annotations

import datetime
import sys
from json.decoder import scanstring

from gpulint.formats.errors import ParseError
from gpulint.model import LineIndex, Node, Span
from gpulint.regex import lazy

try:  # Python 3.11+
    import tomllib as _toml
except ImportError:  # Python 3.10: the same parser, so the same errors and positions
    import tomli as _toml

_BARE = lazy(r"[A-Za-z0-9_-]+")
_WS = lazy(r"[ \t]*")
_WSNL = lazy(r"(?:[ \t\r\n]|#[^\n]*)*")
# a bare value (number, boolean, date): up to a `,` `]` `}`, a line's end or a comment, without
# the blanks before it
_SCALAR = lazy(r"[^,\]}\n# \t]*(?:[ \t]+[^,\]}\n# \t]+)*")
_PLAIN_BASIC = lazy(r'"[^"\\\n]*"')  # a basic string without escapes
_KEY_PARTS = r"[A-Za-z0-9_-]+|\"[^\"\\\n]*\"|'[^'\n]*'"
_PLAIN_KEY = lazy(rf"[ \t]*((?:{_KEY_PARTS})(?:[ \t]*\.[ \t]*(?:{_KEY_PARTS}))*)[ \t]*")
# a key/value whose value is a string without escapes (not multi-line) or a bare value: the key
# (1: one bare part, or 2: a dotted or quoted one) and the value (3)
_SIMPLE_KEYVAL = lazy(rf"(?:([A-Za-z0-9_-]+)|((?:{_KEY_PARTS})(?:[ \t]*\.[ \t]*(?:{_KEY_PARTS}))*))[ \t]*=[ \t]*"
                      r"(\"(?!\"\")[^\"\\\n]*\"|'(?!'')[^'\n]*'"
                      r"|[^,\]}\n# \t\"'\[{][^,\]}\n# \t]*(?:[ \t]+[^,\]}\n# \t]+)*)")
_KEY_PART = lazy(r"([A-Za-z0-9_-]+)|\"([^\"\\\n]*)\"|'([^'\n]*)'")
_TOMLLIB_POS = lazy(r"\(at line (\d+), column (\d+)\)")
_TOMLLIB_AT_END = "(at end of document)"

Path = tuple


def load_toml(text: str) -> dict:
    """Parse TOML into plain Python data, raising ParseError with a position."""
    try:
        return _toml.loads(text)
    except _toml.TOMLDecodeError as exc:
        msg = str(exc)
        match = _TOMLLIB_POS.search(msg)
        clean = _TOMLLIB_POS.sub("", msg).strip()
        if match:
            raise ParseError(f"invalid TOML: {clean}", int(match[1]), int(match[2])) from None
        if _TOMLLIB_AT_END in msg:
            # The text ran out inside a value or table: point just past its last character.
            clean = clean.replace(_TOMLLIB_AT_END, "").strip()
            end = len(text.rstrip())
            line_start = text.rfind("\n", 0, end) + 1
            raise ParseError(f"invalid TOML: {clean} at the end of the file",
                             text.count("\n", 0, end) + 1, end - line_start + 1) from None
        raise ParseError(f"invalid TOML: {clean}") from None


def _basic_end(text: str, pos: int) -> int:
    """Offset just past the basic string that opens at `pos`."""
    i = pos + 1
    while True:
        ch = text[i]
        if ch == "\\":
            i += 2
        elif ch == '"':
            return i + 1
        else:
            i += 1


def _key_parts(key: str) -> Path:
    """The parts of a dotted key matched by `_PLAIN_KEY` (no escapes in it)."""
    return tuple(bare or basic or literal for bare, basic, literal in _KEY_PART.findall(key))


# The scanner records each place as the Node will hold it, `model.place(start, end)` written
# out (`start << 33 | end << 1`): one int, made once and shared by every Node at the same
# place (a table header's key and value, a dotted key and the tables it makes).
class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.keys: dict[Path, int] = {}
        self.values: dict[Path, int] = {}
        self.quoted: set[Path] = set()
        self.aot_count: dict[Path, int] = {}

    def run(self) -> None:
        text, pos, current = self.text, 0, ()
        while True:
            pos = _WSNL.match(text, pos).end()
            if pos >= len(text):
                return
            if text.startswith("[[", pos):
                start = pos
                keys, pos, _ = self.key(pos + 2)
                pos = text.index("]]", pos) + 2
                n = self.aot_count.get(keys, 0)
                self.aot_count[keys] = n + 1
                current = keys + (n,)
                at = start << 33 | pos << 1
                self.keys.setdefault(keys, at)
                self.keys[current] = self.values[current] = at
            elif text[pos] == "[":
                start = pos
                keys, pos, _ = self.key(pos + 1)
                pos = text.index("]", pos) + 1
                current = keys
                self.keys[current] = self.values[current] = start << 33 | pos << 1
            else:
                pos = self.keyval(pos, current)

    def key(self, pos: int) -> tuple[Path, int, int]:
        """The key that starts at `pos` (blanks before it skipped): its parts, the offset past
        the blanks after it, and the offset just past its last character."""
        text = self.text
        # most keys are bare or quoted without escapes: one pattern reads the whole dotted key,
        # and it is complete where an `=` (a key/value) or a `]` (a table header) follows it
        match = _PLAIN_KEY.match(text, pos)
        if match is not None and text[match.end():match.end() + 1] in ("=", "]"):
            return _key_parts(match[1]), match.end(), match.end(1)
        parts = []
        while True:
            pos = _WS.match(text, pos).end()
            ch = text[pos]
            if ch == '"':
                end = _basic_end(text, pos)
                try:
                    value = scanstring(text[pos:end], 1, False)[0]
                except ValueError:  # TOML-only escapes; the raw text still names the key
                    value = text[pos + 1:end - 1]
                pos = end
            elif ch == "'":
                end = text.index("'", pos + 1)
                value, pos = text[pos + 1:end], end + 1
            else:
                match = _BARE.match(text, pos)
                value, pos = match.group(0), match.end()
            parts.append(value)
            last = pos
            pos = _WS.match(text, pos).end()
            if pos < len(text) and text[pos] == ".":
                pos += 1
                continue
            return tuple(parts), pos, last

    def keyval(self, pos: int, current: Path) -> int:
        start, text = pos, self.text
        # most lines of a config are `key = "string"`, a number or a boolean: one pattern reads
        # the whole line; arrays, inline tables, multi-line strings and escapes take the long way
        match = _SIMPLE_KEYVAL.match(text, pos)
        if match is not None:
            bare, dotted = match.group(1, 2)
            if bare is not None:
                full = current + (bare,)
                key_end = match.end(1)
            else:
                keys = _key_parts(dotted)
                full = current + keys
                key_end = match.end(2)
                at = start << 33 | key_end << 1
                for i in range(1, len(keys)):  # dotted keys create their parents
                    self.keys.setdefault(current + keys[:i], at)
            value_start, end = match.span(3)
            key_length, gap, value_length = key_end - start, value_start - key_end, end - value_start
            if start < 1 << 26 and 0 < key_length < 1 << 12 and gap < 1 << 8 and value_length < 1 << 14:
                # both places in one int (see `_KeyValue`), for the key and its value alike; negated
                # by `-`, which makes an int of the same size (`~` makes one a digit larger)
                self.keys[full] = self.values[full] = -(((start << 12 | key_length) << 8 | gap) << 14
                                                        | value_length)
            else:
                self.keys[full] = start << 33 | key_end << 1
                self.values[full] = value_start << 33 | end << 1
            if text[value_start] in "\"'":
                self.quoted.add(full)
            return end
        keys, pos, key_end = self.key(pos)
        full = current + keys
        self.keys[full] = at = start << 33 | key_end << 1
        for i in range(1, len(keys)):  # dotted keys create their parents
            self.keys.setdefault(current + keys[:i], at)
        # `key` stopped at the `=`
        return self.value(_WS.match(self.text, pos + 1).end(), full)

    def value(self, pos: int, path: Path) -> int:
        text, start = self.text, pos
        ch = text[pos]
        if ch == '"':
            if text.startswith('"""', pos):
                end = pos + 3
                while True:
                    end = text.index('"""', end)
                    before = end  # the quotes are escaped by an odd run of backslashes before them
                    while text[before - 1] == "\\":
                        before -= 1
                    if (end - before) % 2 == 0:
                        break
                    end += 1
                end += 3
                while end < len(text) and text[end] == '"':
                    end += 1
            else:
                match = _PLAIN_BASIC.match(text, pos)
                end = match.end() if match is not None else _basic_end(text, pos)
            self.quoted.add(path)
        elif ch == "'":
            if text.startswith("'''", pos):
                end = text.index("'''", pos + 3) + 3
                while end < len(text) and text[end] == "'":
                    end += 1
            else:
                end = text.index("'", pos + 1) + 1
            self.quoted.add(path)
        elif ch == "[":
            pos, i = pos + 1, 0
            while True:
                pos = _WSNL.match(text, pos).end()
                if text[pos] == "]":
                    end = pos + 1
                    break
                pos = self.value(pos, path + (i,))
                i += 1
                pos = _WSNL.match(text, pos).end()
                if text[pos] == ",":
                    pos += 1
        elif ch == "{":
            pos += 1
            while True:
                pos = _WSNL.match(text, pos).end()
                if text[pos] == "}":
                    end = pos + 1
                    break
                pos = self.keyval(pos, path)
                pos = _WSNL.match(text, pos).end()
                if text[pos] == ",":
                    pos += 1
        else:
            end = _SCALAR.match(text, pos).end()
        self.values[path] = start << 33 | end << 1
        return end


def _offsets(packed: int) -> tuple[int, int, int, int]:
    """The key's and the value's offset ranges of a key/value whose places are one int: its
    key's start, the key's length, the blanks and `=` after it, the value's length."""
    code = -packed
    value_length, code = code & 0x3FFF, code >> 14
    gap, code = code & 0xFF, code >> 8
    key_length, start = code & 0xFFF, code >> 12
    key_end = start + key_length
    return start, key_end, key_end + gap, key_end + gap + value_length


def _key_place(packed: int) -> int:
    """The key's place (`model.place`) of a key/value whose places are one int."""
    start, key_end, _, _ = _offsets(packed)
    return start << 33 | key_end << 1


def _value_place(packed: int) -> int:
    _, _, start, end = _offsets(packed)
    return start << 33 | end << 1


class _KeyValue(Node):
    """The Node of a `key = value` written on one line with a scalar value (most of a config):
    its key's place and its value's are one int, a negative one, held by both `_key_span` and
    `_span` until each is asked for (one int of 32 bytes where two places take 64). The rest
    is Node's."""

    __slots__ = ()

    @property
    def span(self) -> Span:
        span = self._span
        if type(span) is int:
            if span >= 0:  # a place set since (model.place)
                return Node.span.fget(self)
            _, _, start, end = _offsets(span)
            span = self._span = self._index.span(start, end)
        return span

    @property
    def key_span(self) -> Span | None:
        span = self._key_span
        if type(span) is int:
            if span >= 0:  # a place set since (model.place)
                return Node.key_span.fget(self)
            start, end, _, _ = _offsets(span)
            span = self._key_span = self._index.span(start, end)
        return span


_TAGS = ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"))


# the scalar types tomllib makes; `_tag` for any other
_TAG_OF = {bool: "bool", int: "int", float: "float", str: "str", datetime.datetime: "datetime",
           datetime.date: "datetime", datetime.time: "datetime"}


def _tag(value) -> str:
    for kind, name in _TAGS:
        if isinstance(value, kind):
            return name
    if isinstance(value, (datetime.date, datetime.time)):
        return "datetime"
    return "str"


def parse_toml(text: str, index: LineIndex) -> Node:
    data = load_toml(text)
    scanner = _Scanner(text)
    try:
        scanner.run()
    except (ValueError, IndexError, AttributeError):
        pass  # positions found so far stay; the rest fall back to their parent's
    # the file's lines counted here: the index's line starts are worked out only when a place is asked for
    root_span = Span(1, 1, max(1, text.count("\n") + 1), 1)

    keys, values, quoted = scanner.keys, scanner.values, scanner.quoted
    intern = sys.intern
    new = object.__new__

    # Keys and string values are interned: the containerd configs of a run, whose trees are kept
    # for the whole run, repeat the same few hundred keys (and many values) thousands of times.
    # A sequence's Nodes take the place of tomllib's items in its own list.
    def build(value, path: Path, fallback: Span | int) -> Node:
        key_span = keys.get(path)
        span = values.get(path)
        kind = type(value)
        if span is not None and span is key_span and span < 0 and kind is not dict and kind is not list:
            # a key/value on one line: both places in one int. Node(...) written out: its fields
            # (model.Node's __slots__, all of them) set on a bare instance, in half the time
            node = new(_KeyValue)
            if kind is str:
                node.value = intern(value)
                node.tag = "str"
            else:
                node.value = value
                node.tag = _TAG_OF.get(kind) or _tag(value)
            node._span = node._key_span = span
            node.quoted = path in quoted
            node._index = index
            return node
        if key_span is not None and key_span < 0:
            key_span = _key_place(key_span)
        if span is None:  # a parent of dotted keys: its key
            span = key_span
        elif span < 0:
            span = _value_place(span)
        if kind is dict:  # tomllib makes plain dicts and lists
            inner = span or fallback
            children = {}
            for k, v in value.items():
                k = intern(k)
                children[k] = build(v, path + (k,), inner)
            if span is None:  # an implicit table: point at its first written child
                first = next(iter(children.values()), None)
                # the child's anchor (its key, else its value), as the child holds it
                span = fallback if first is None else (
                    first._key_span if first._key_span is not None else first._span)
                if type(span) is int and span < 0:  # a key/value's places in one int: its key's
                    span = _key_place(span)
                key_span = key_span or span
            return Node(children, span, key_span, "map", index=index)
        if kind is list:
            inner = span or fallback
            for i, v in enumerate(value):
                value[i] = build(v, path + (i,), inner)
            return Node(value, inner, key_span, "seq", index=index)
        if kind is str:
            return Node(intern(value), span or fallback, key_span, "str", path in quoted, index)
        return Node(value, span or fallback, key_span, _TAG_OF.get(kind) or _tag(value),
                    path in quoted, index)

    try:
        return build(data, (), root_span)
    finally:
        del build  # it calls itself through its closure: a cycle that would hold the scanner
