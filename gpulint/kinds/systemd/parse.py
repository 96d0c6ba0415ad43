"""systemd unit files and drop-ins (systemd.syntax(7)), read with the place of every
value and of every word of a command line.

systemd joins a line that ends in a backslash with the next one (the backslash becomes a
space; comment lines inside the continued value are skipped), strips blanks around `=`
and ignores, with a warning, a line without `=`. Only a section header it cannot read
makes it refuse a unit file (of a drop-in, it reads no further).
"""

from __future__ import annotations

import re

from gpulint.formats.errors import ParseError
from gpulint.model import Span
from gpulint.record import Frozen, Record, freeze
from gpulint.regex import lazy

COMMENTS = "#;"
BLANKS = " \t"


class Word(Frozen):
    """A command-line word: `text` after systemd's unquoting, `start`/`end` the 0-based
    offsets in the file of what was written; `expands` when it holds `$NAME` or `${NAME}`
    (an environment variable systemd substitutes) or a `%` specifier. A word systemd put in
    place of a variable an environment file sets keeps the place of the variable, and has
    `origin`: that file and the offsets of the word in it."""

    __slots__ = ("text", "start", "end", "expands", "origin")

    text: str
    start: int
    end: int
    expands: bool
    origin: tuple | None  # (the environment file's Document, start, end) of a substituted word

    def __init__(self, text: str, start: int, end: int, expands: bool = False, origin: tuple | None = None) -> None:
        freeze(self, text, start, end, expands, origin)


class Setting(Record):
    __slots__ = ("section", "key", "value", "key_start", "key_end", "places", "end")

    section: str
    key: str
    value: str  # continued lines joined
    key_start: int
    key_end: int
    places: tuple[int, ...]  # the file offset of each character of `value`
    end: int  # the file offset just after the value

    def __init__(self, section: str, key: str, value: str, key_start: int, key_end: int,
                 places: tuple[int, ...], end: int) -> None:
        self.section = section
        self.key = key
        self.value = value
        self.key_start = key_start
        self.key_end = key_end
        self.places = places
        self.end = end

    @property
    def start(self) -> int:
        return self.places[0] if self.places else self.end

    def offset(self, index: int) -> int:
        """The file offset of value[index] (the end of the value past its last character)."""
        return self.places[index] if index < len(self.places) else self.end

    def words(self) -> list[Word]:
        return split_words(self)


class UnitFile(Record):
    __slots__ = ("settings", "sections", "ignored")

    settings: list[Setting]
    sections: list[tuple[str, int]]  # name, offset of `[`
    ignored: list[tuple[int, str]]  # offset, why systemd skips the line

    def __init__(self, settings: list[Setting] | None = None, sections: list[tuple[str, int]] | None = None,
                 ignored: list[tuple[int, str]] | None = None) -> None:
        self.settings = [] if settings is None else settings
        self.sections = [] if sections is None else sections
        self.ignored = [] if ignored is None else ignored

    def get(self, section: str, key: str) -> list[Setting]:
        return [s for s in self.settings if s.section == section and s.key == key]


def _lines(text: str):
    """(offset, line without its end) of each line."""
    start = 0
    for line in text.splitlines(keepends=True):
        yield start, line.rstrip("\r\n")
        start += len(line)


class _BadHeader(Exception):
    def __init__(self, offset: int, header: str) -> None:
        super().__init__(header)
        self.offset, self.header = offset, header


def parse_unit(text: str, position=None, dropin: bool = False) -> UnitFile:
    """The settings of a unit file; `position(offset) -> (line, column)` places a section
    header systemd cannot read. systemd refuses a unit file with one (ParseError); of a
    drop-in it keeps what comes before it and reads no further."""
    unit = UnitFile()
    section = ""
    pending: list[tuple[int, str]] = []  # the pieces of a continued line: (offset, text)
    try:
        for offset, line in _lines(text):
            stripped = line.lstrip(BLANKS)
            if stripped[:1] and stripped[0] in COMMENTS:
                continue  # a comment, also inside a continued value
            if line.endswith("\\"):
                pending.append((offset, line[:-1] + " "))
                continue
            pending.append((offset, line))
            section = _logical_line(unit, pending, section)
            pending = []
        if pending:
            _logical_line(unit, pending, section)
    except _BadHeader as bad:
        said = f"\"Invalid section header '{bad.header}'\""
        if not dropin:
            line_no, column = position(bad.offset) if position is not None else (1, 1)
            raise ParseError(f"systemd cannot load this unit ({said}: \"Bad message\")", line_no, column) from None
        unit.ignored.insert(0, (bad.offset, f"systemd reads this drop-in no further ({said}): what follows is lost"))
    return unit


def _logical_line(unit: UnitFile, pieces: list[tuple[int, str]], section: str) -> str:
    chars: list[str] = []
    places: list[int] = []
    for offset, piece in pieces:
        chars.extend(piece)
        places.extend(range(offset, offset + len(piece)))
    end_of_line = pieces[-1][0] + len(pieces[-1][1])
    # blanks around the line are not part of it
    first = 0
    while first < len(chars) and chars[first] in BLANKS:
        first += 1
    last = len(chars)
    while last > first and chars[last - 1] in BLANKS:
        last -= 1
    line = "".join(chars[first:last])
    places = places[first:last]
    if not line:
        return section
    if line.startswith("["):
        if not line.endswith("]") or len(line) < 3:
            raise _BadHeader(places[0], line)
        unit.sections.append((line[1:-1], places[0]))
        return line[1:-1]
    equals = line.find("=")
    if equals <= 0:
        unit.ignored.append((places[0], "systemd ignores this line and what it was meant to set "
                                        "(\"Missing '=', ignoring line.\")"))
        return section
    if not section:
        unit.ignored.append((places[0], "systemd ignores this setting, which comes before any section header "
                                        "(\"Assignment outside of section. Ignoring.\")"))
        return section
    key_end = equals
    while key_end > 0 and line[key_end - 1] in BLANKS:
        key_end -= 1
    start = equals + 1
    while start < len(line) and line[start] in BLANKS:
        start += 1
    end = places[-1] + 1 if start < len(line) else min(places[equals] + 1, end_of_line)
    unit.settings.append(Setting(section, line[:key_end], line[start:], places[0], places[key_end - 1] + 1,
                                 tuple(places[start:]), end))
    return section


# C-style escapes systemd reads in command lines (systemd.service(5), "Command lines")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\",
            '"': '"', "'": "'", "s": " ", " ": " ", ";": ";"}


# a word: runs of plain characters, quoted strings (to their closing quote, or the end) and
# escaped characters, up to a blank outside quotes
_WORD = lazy(r"""(?:[^ \t"'\\]+|"(?:[^"\\]|\\.)*(?:"|$)|'(?:[^'\\]|\\.)*(?:'|$)|\\.?)+""", re.S)
_PLAIN = lazy(r"""[^"'\\]*""")


def split_words(setting: Setting) -> list[Word]:
    """The words of a command line as systemd splits it: blanks separate words, single and
    double quotes group them, backslash escapes one character."""
    words = []
    for match in _WORD.finditer(setting.value):
        written = match.group()
        text = written if _PLAIN.fullmatch(written) else _unquote(written)
        words.append(Word(text, setting.offset(match.start()), setting.offset(match.end() - 1) + 1,
                          "$" in written or "%" in written))
    return words


def split_places(text: str) -> list[tuple[str, int, int]]:
    """`text` split into words as a command line is (quotes grouped, then removed), each word
    with the offsets in `text` of what is written."""
    return [(m.group() if _PLAIN.fullmatch(m.group()) else _unquote(m.group()), m.start(), m.end())
            for m in _WORD.finditer(text)]


def _unquote(written: str) -> str:
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(written):
        ch = written[i]
        if ch == "\\" and i + 1 < len(written):
            i += 1
            out.append(_ESCAPES.get(written[i], written[i]))
        elif quote and ch == quote:
            quote = ""
        elif not quote and ch in "\"'":
            quote = ch
        else:
            out.append(ch)
        i += 1
    return "".join(out)


class EnvironmentFile(Record):
    """A file `EnvironmentFile=` names: `NAME=value` lines (systemd.exec(5)); each value
    with the file offsets of what is written."""

    __slots__ = ("values", "unsure")

    values: dict[str, tuple[str, int, int]]
    unsure: bool  # a line gpulint does not read as systemd does (escapes, continuations)

    def __init__(self, values: dict[str, tuple[str, int, int]] | None = None, unsure: bool = False) -> None:
        self.values = {} if values is None else values
        self.unsure = unsure


_ASSIGNMENT = re.compile(r"[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*(.*?)[ \t]*$")


def parse_environment(text: str) -> EnvironmentFile:
    """Lines starting with `#` or `;` are comments; a value in single or double quotes is
    taken without them (systemd reads such files as a shell's variable assignments)."""
    env = EnvironmentFile()
    for offset, line in _lines(text):
        stripped = line.lstrip(BLANKS)
        if not stripped or stripped[0] in COMMENTS:
            continue
        found = _ASSIGNMENT.fullmatch(line)
        if found is None or "\\" in line:
            env.unsure = True
            continue
        value, start, end = found.group(2), offset + found.start(2), offset + found.end(2)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value, start, end = value[1:-1], start + 1, end - 1
        env.values[found.group(1)] = (value, start, end)
    return env


def parse(text: str, doc) -> UnitFile | EnvironmentFile:
    name = doc.path.replace("\\", "/").rsplit("/", 1)[-1]
    if "." not in name:  # /etc/default/docker: a daemon's environment file, not a unit
        return parse_environment(text)
    unit = parse_unit(text, doc.index.position, doc.path.endswith(".conf"))
    if unit.ignored:  # the rest of the file is still read, as systemd does
        offset, why = unit.ignored[0]
        line, column = doc.index.position(offset)
        doc.cache["parse.problem"] = (Span.point(line, column), why)
    return unit
