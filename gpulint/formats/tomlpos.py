"""TOML into position-carrying Nodes.

Values come from tomllib (its original, tomli, on Python 3.10), which validates. Neither
gives positions, so a small scanner walks the valid text once and records, for
every key path, where its key and its value are written: table headers, dotted
keys, inline tables and array items.
"""

from __future__ import annotations

import datetime
from json.decoder import scanstring

from gpulint.formats.errors import ParseError
from gpulint.model import LineIndex, Node, Span, place
from gpulint.regex import lazy

try:  # Python 3.11+
    import tomllib as _toml
except ImportError:  # Python 3.10: the same parser, so the same errors and positions
    import tomli as _toml

_BARE = lazy(r"[A-Za-z0-9_-]+")
_WS = lazy(r"[ \t]*")
_WSNL = lazy(r"(?:[ \t\r\n]|#[^\n]*)*")
_SCALAR_END = lazy(r"[,\]}\n#]")
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


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.keys: dict[Path, tuple[int, int]] = {}
        self.values: dict[Path, tuple[int, int]] = {}
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
                keys, pos = self.key(pos + 2)
                pos = text.index("]]", pos) + 2
                n = self.aot_count.get(keys, 0)
                self.aot_count[keys] = n + 1
                current = keys + (n,)
                self.keys.setdefault(keys, (start, pos))
                self.keys[current] = self.values[current] = (start, pos)
            elif text[pos] == "[":
                start = pos
                keys, pos = self.key(pos + 1)
                pos = text.index("]", pos) + 1
                current = keys
                self.keys[current] = self.values[current] = (start, pos)
            else:
                pos = self.keyval(pos, current)

    def key(self, pos: int) -> tuple[Path, int]:
        text, parts = self.text, []
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
            pos = _WS.match(text, pos).end()
            if pos < len(text) and text[pos] == ".":
                pos += 1
                continue
            return tuple(parts), pos

    def keyval(self, pos: int, current: Path) -> int:
        start = pos
        keys, pos = self.key(pos)
        full = current + keys
        self.keys[full] = (start, self._trim(start, pos))
        for i in range(1, len(keys)):  # dotted keys create their parents
            self.keys.setdefault(current + keys[:i], (start, self._trim(start, pos)))
        pos = _WS.match(self.text, pos).end() + 1  # past '='
        pos = _WS.match(self.text, pos).end()
        return self.value(pos, full)

    def _trim(self, start: int, end: int) -> int:
        while end > start and self.text[end - 1] in " \t":
            end -= 1
        return end

    def value(self, pos: int, path: Path) -> int:
        text, start = self.text, pos
        if text.startswith('"""', pos):
            end = pos + 3
            while True:
                end = text.index('"""', end)
                backslashes = len(text[:end]) - len(text[:end].rstrip("\\"))
                if backslashes % 2 == 0:
                    break
                end += 1
            end += 3
            while end < len(text) and text[end] == '"':
                end += 1
            self.quoted.add(path)
        elif text.startswith("'''", pos):
            end = text.index("'''", pos + 3) + 3
            while end < len(text) and text[end] == "'":
                end += 1
            self.quoted.add(path)
        elif text[pos] == '"':
            end = _basic_end(text, pos)
            self.quoted.add(path)
        elif text[pos] == "'":
            end = text.index("'", pos + 1) + 1
            self.quoted.add(path)
        elif text[pos] == "[":
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
        elif text[pos] == "{":
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
            match = _SCALAR_END.search(text, pos)
            end = self._trim(pos, match.start() if match else len(text))
        self.values[path] = (start, end)
        return end


_TAGS = ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"))


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
    root_span = Span(1, 1, max(1, index.line_count), 1)

    def span_of(table: dict, path: Path) -> tuple[int | None, int | None]:
        key = scanner.keys.get(path)
        value = scanner.values.get(path)
        if value is None and key is not None:
            value = key
        if value is None:
            return None, None
        return (place(*key) if key else None), place(*value)

    def build(value, path: Path, fallback: Span | int) -> Node:
        key_span, span = span_of(value, path)
        if isinstance(value, dict):
            children = {k: build(v, path + (k,), span or fallback) for k, v in value.items()}
            if span is None:  # an implicit table: point at its first written child
                first = next((c for c in children.values()), None)
                span = first.anchor if first else fallback
                key_span = key_span or span
            return Node(children, span, key_span, "map", index=index)
        if isinstance(value, list):
            items = [build(v, path + (i,), span or fallback) for i, v in enumerate(value)]
            return Node(items, span or fallback, key_span, "seq", index=index)
        return Node(value, span or fallback, key_span, _tag(value), quoted=path in scanner.quoted, index=index)

    try:
        return build(data, (), root_span)
    finally:
        del build  # it calls itself through its closure: a cycle that would hold the scanner
