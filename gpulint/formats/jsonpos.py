"""JSON into position-carrying Nodes.

The standard library's decoder does the validation (and gives the exact error
position); a small recursive reader then walks the already valid text to record
where every key and value sits, reusing the decoder's own string scanner.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring

from gpulint.formats.errors import ParseError
from gpulint.model import LineIndex, Node
from gpulint.regex import lazy

_WS = lazy(r"[ \t\r\n]*")
_NUMBER = lazy(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")


def parse_json(text: str, index: LineIndex) -> Node:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise _explain(text, exc, index) from None
    except RecursionError:
        raise ParseError("invalid JSON: nested too deeply") from None
    except ValueError:  # a number longer than Python converts (4,300 digits)
        long = re.search(r"\d{4301,}", text)
        line, column = index.position(long.start()) if long else (None, None)
        raise ParseError("invalid JSON: a number too long to read (over 4,300 digits)", line, column) from None
    node, _ = _value(text, _WS.match(text, 0).end(), index, None)
    return node


def _explain(text: str, exc: json.JSONDecodeError, index: LineIndex) -> ParseError:
    """Name the usual hand-editing slips (trailing comma, comment, two objects)."""
    pos = exc.pos
    if text.startswith(("//", "/*", "#"), pos):
        return ParseError("invalid JSON: comments are not allowed in JSON (dockerd rejects the file)",
                          exc.lineno, exc.colno)
    if exc.msg == "Extra data":
        return ParseError("invalid JSON: a second value follows the first one; the file must hold "
                          "exactly one object", exc.lineno, exc.colno)
    if exc.msg.startswith(("Expecting property name", "Expecting value")):
        before = text[:pos].rstrip()
        if before.endswith(","):
            line, column = index.position(len(before) - 1)
            return ParseError("invalid JSON: trailing comma (JSON allows none before `}` or `]`)",
                              line, column)
    return ParseError(f"invalid JSON: {exc.msg}", exc.lineno, exc.colno)


def _value(text: str, pos: int, index: LineIndex, key_span) -> tuple[Node, int]:
    ch = text[pos]
    if ch == "{":
        out: dict[str, Node] = {}
        start, pos = pos, _WS.match(text, pos + 1).end()
        if text[pos] == "}":
            return Node(out, index.span(start, pos + 1), key_span, "map"), pos + 1
        while True:
            key, end = scanstring(text, pos + 1)
            kspan = index.span(pos, end)
            pos = _WS.match(text, end).end() + 1  # past ':'
            pos = _WS.match(text, pos).end()
            child, pos = _value(text, pos, index, kspan)
            before = out.get(key)
            if before is not None and before.is_map and child.is_map:
                # Go's encoding/json, which reads these files, decodes a repeated object into
                # the map or struct the first one filled: both objects' keys count
                child.value = {**before.value, **child.value}
            out[key] = child  # other duplicate keys: the last one wins, as in Go and json.loads
            pos = _WS.match(text, pos).end()
            if text[pos] == "}":
                return Node(out, index.span(start, pos + 1), key_span, "map"), pos + 1
            pos = _WS.match(text, pos + 1).end()  # past ','
    if ch == "[":
        items: list[Node] = []
        start, pos = pos, _WS.match(text, pos + 1).end()
        if text[pos] == "]":
            return Node(items, index.span(start, pos + 1), key_span, "seq"), pos + 1
        while True:
            child, pos = _value(text, pos, index, None)
            items.append(child)
            pos = _WS.match(text, pos).end()
            if text[pos] == "]":
                return Node(items, index.span(start, pos + 1), key_span, "seq"), pos + 1
            pos = _WS.match(text, pos + 1).end()
    if ch == '"':
        value, end = scanstring(text, pos + 1)
        return Node(value, index.span(pos, end), key_span, "str", quoted=True), end
    for word, value, tag in (("true", True, "bool"), ("false", False, "bool"), ("null", None, "null")):
        if text.startswith(word, pos):
            return Node(value, index.span(pos, pos + len(word)), key_span, tag), pos + len(word)
    match = _NUMBER.match(text, pos)
    if match and match.end() > pos:
        raw = match.group(0)
        is_float = bool(match.group(1) or match.group(2))
        value = float(raw) if is_float else int(raw)
        tag = "float" if is_float else "int"
        return Node(value, index.span(pos, match.end()), key_span, tag), match.end()
    # NaN / Infinity: accepted by json.loads, kept as floats
    for word in ("NaN", "-Infinity", "Infinity"):
        if text.startswith(word, pos):
            return Node(float(word), index.span(pos, pos + len(word)), key_span, "float"), pos + len(word)
    raise ParseError("invalid JSON", *index.position(pos))


def parse_jsonc(text: str, index: LineIndex) -> Node:
    """JSON with comments (`//`, `/* */`) and trailing commas, as VS Code reads
    devcontainer.json: both are blanked out, keeping every offset, then read as JSON."""
    return parse_json(blank_jsonc(text), index)


def blank_jsonc(text: str) -> str:
    """`text` with comments and trailing commas turned into spaces (newlines kept), so
    positions in the result are positions in `text`. An unterminated string or block
    comment is left for the JSON reader to report."""
    out = list(text)
    pos, end = 0, len(text)
    last_comma = -1  # a comma with only blanks and comments after it so far
    while pos < end:
        ch = text[pos]
        if ch == '"':
            last_comma = -1
            pos += 1
            while pos < end and text[pos] != '"':
                pos += 2 if text[pos] == "\\" else 1
            pos += 1
        elif text.startswith("//", pos):
            stop = text.find("\n", pos)
            stop = end if stop < 0 else stop
            out[pos:stop] = " " * (stop - pos)
            pos = stop
        elif text.startswith("/*", pos):
            stop = text.find("*/", pos + 2)
            if stop < 0:
                return "".join(out)
            stop += 2
            out[pos:stop] = [c if c in "\r\n" else " " for c in text[pos:stop]]
            pos = stop
        else:
            if ch in "}]" and last_comma >= 0:
                out[last_comma] = " "
            if ch == ",":
                last_comma = pos
            elif ch not in " \t\r\n":
                last_comma = -1
            pos += 1
    return "".join(out)
