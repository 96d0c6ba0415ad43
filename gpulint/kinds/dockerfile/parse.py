"""Dockerfiles into stages and instructions with positions.

Instructions are split as dockerfile-parse 2.0.1 splits them (line continuations and
the `escape` directive included; ported, so that a Dockerfile is read without the
package, in one pass and in time linear in its length); heredoc bodies, which it reads
as instructions of their own, are folded back into the instruction that opens them
here. Where it reads otherwise than BuildKit's parser (moby/buildkit
frontend/dockerfile/parser), BuildKit's reading decides: an empty or blank line inside
a line continuation is skipped by BuildKit (the continuation goes on), as a comment
line there is. Heredocs are found as BuildKit finds them: in ADD, COPY and RUN
(not their JSON form), a word that starts with `<<`. `FROM` images are resolved
with the defaults of the ARGs declared before the first FROM.
"""

from __future__ import annotations

import re

from gpulint.formats.errors import ParseError
from gpulint.model import LineIndex, Span
from gpulint.numbers import whole
from gpulint.record import Record
from gpulint.regex import lazy

_VAR = lazy(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")
# _VAR where no `}` follows: only `$V` can match there (the same groups, 1 to 3 never set).
# Searched with _VAR, every `${V:-` there would read to the end of the text in vain.
_BARE_VAR = lazy(r"\$(?:(?!)(.)(.)(.)|([A-Za-z_][A-Za-z0-9_]*))")
INSTRUCTIONS = frozenset((
    "ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK", "LABEL",
    "MAINTAINER", "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR",
))
_FLAG = lazy(r"--([a-z-]+)(?:=(\S*))?")


class Instruction(Record):
    __slots__ = ("keyword", "value", "line", "end_line", "start", "end", "stage", "heredocs")

    keyword: str  # upper case: FROM, RUN, ...
    value: str  # arguments, continuations joined, heredoc bodies appended
    line: int  # 1-based first and last line
    end_line: int
    start: int  # 0-based offsets of the whole instruction in the file text
    end: int
    stage: int  # index of the stage it belongs to; -1 before the first FROM
    heredocs: list[str]

    def __init__(self, keyword: str, value: str, line: int, end_line: int, start: int, end: int,
                 stage: int = -1, heredocs: list[str] | None = None) -> None:
        self.keyword = keyword
        self.value = value
        self.line = line
        self.end_line = end_line
        self.start = start
        self.end = end
        self.stage = stage
        self.heredocs = [] if heredocs is None else heredocs

    @property
    def flags(self) -> dict[str, str]:
        """Leading `--name=value` flags (`COPY --from=build`, `FROM --platform=...`)."""
        out = {}
        rest = self.value
        while True:  # word by word: the flags come first, and most values have none
            words = rest.split(None, 1)
            match = _FLAG.fullmatch(words[0]) if words else None
            if not match:
                break
            out[match[1]] = match[2] or ""
            rest = words[1] if len(words) > 1 else ""
        return out


class Stage(Record):
    __slots__ = ("index", "name", "image", "resolved", "parent", "from_instruction", "image_span",
                 "instructions", "_texts")
    _memo = ("_texts",)

    index: int
    name: str | None  # lower-cased `AS name`
    image: str  # the FROM image as written
    resolved: str  # with global ARG defaults substituted
    parent: int | None  # index of the stage it builds on (`FROM <stage>`), else None
    from_instruction: Instruction
    image_span: Span
    instructions: list[Instruction]
    # the values of its instructions of some keywords, joined, by keywords (facts.stage_text)
    _texts: dict[tuple[str, ...], str] | None

    def __init__(self, index: int, name: str | None, image: str, resolved: str, parent: int | None,
                 from_instruction: Instruction, image_span: Span,
                 instructions: list[Instruction] | None = None) -> None:
        self.index = index
        self.name = name
        self.image = image
        self.resolved = resolved
        self.parent = parent
        self.from_instruction = from_instruction
        self.image_span = image_span
        self.instructions = [] if instructions is None else instructions
        self._texts = None


class Dockerfile(Record):
    __slots__ = ("instructions", "stages", "global_args", "escape", "_names")
    _memo = ("_names",)

    instructions: list[Instruction]
    stages: list[Stage]
    global_args: dict[str, str | None]
    escape: str
    # stage_named's index, by name (made on first use, for as many stages as there were)
    _names: tuple[int, dict[str, Stage]] | None

    def __init__(self, instructions: list[Instruction], stages: list[Stage],
                 global_args: dict[str, str | None], escape: str = "\\") -> None:
        self.instructions = instructions
        self.stages = stages
        self.global_args = global_args
        self.escape = escape
        self._names = None

    def stage_named(self, ref: str) -> Stage | None:
        """The stage a `--from=` or `FROM` names: by `AS` name or by index."""
        ref = ref.lower()
        if self._names is None or self._names[0] != len(self.stages):
            names: dict[str, Stage] = {}
            for stage in self.stages:
                if stage.name is not None:
                    names.setdefault(stage.name, stage)  # the first stage of a name
            self._names = (len(self.stages), names)
        if ref in self._names[1]:
            return self._names[1][ref]
        if ref.isdigit() and whole(ref) < len(self.stages):
            return self.stages[int(ref)]
        return None

    def root(self, stage: Stage) -> Stage:
        """Follow `FROM <stage>` links to the stage that names a real image."""
        seen = set()
        while stage.parent is not None and stage.index not in seen:
            seen.add(stage.index)
            stage = self.stages[stage.parent]
        return stage


# Bounds on variable expansion: a chain of `ARG A=$A$A` doubles the value on every
# line, so a value that would grow past MAX_EXPANDED characters, or defaults nested
# deeper than MAX_DEPTH, are left as written (unresolved) instead.
MAX_EXPANDED = 8192
MAX_DEPTH = 8


class _TooLong(Exception):
    pass


def expand(text: str, variables: dict[str, str | None], _depth: int = 0) -> str:
    """Substitute `$V`, `${V}`, `${V:-default}`, `${V:+alt}` as the builder would;
    unknown variables stay as written, and so does a text whose expansion would pass
    MAX_EXPANDED characters or MAX_DEPTH nested defaults."""
    if _depth > MAX_DEPTH or "$" not in text:
        return text
    size = len(text)

    def sub(match: re.Match) -> str:
        nonlocal size
        name = match[1] or match[4]
        value = variables.get(name)
        op, word = match[2], match[3]
        if op in (":-", "-") and (value is None or (op == ":-" and value == "")):
            out = expand(word or "", variables, _depth + 1)
        elif op in (":+", "+"):
            out = expand(word or "", variables, _depth + 1) if value else ""
        else:
            out = match[0] if value is None else value
        size += len(out)
        if size > MAX_EXPANDED:
            raise _TooLong
        return out

    braced = text.rfind("}") + 1  # no match crosses this point: a `}` ends every `${V}`
    try:
        return _VAR.sub(sub, text[:braced]) + _BARE_VAR.sub(sub, text[braced:])
    except _TooLong:
        return text


def arg_pairs(value: str) -> list[tuple[str, str | None]]:
    """(name, default without quotes, or None) of each variable an ARG declares."""
    out = []
    for token in value.split():
        name, eq, default = token.partition("=")
        if eq:
            default = default.strip("\"'")
        out.append((name, default if eq else None))
    return out


_DIRECTIVE = lazy(r"#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.+?)\s*")
_HEREDOC_WORD = lazy(r"(\d*)<<(-?)([^<]*)")
_WORDS = lazy(r"""(?:[^\s"'\\]|\\.|"(?:\\.|[^"\\])*"?|'[^']*'?)+""")
HEREDOC_KEYWORDS = frozenset(("ADD", "COPY", "RUN"))


def escape_token(lines: list[str]) -> str:
    """The escape character the parser directives at the top of the file set: BuildKit
    reads directives (`# escape=`, `# syntax=`, `# check=`) only up to the first line that
    is none, a blank line included."""
    for line in lines:
        match = _DIRECTIVE.fullmatch(line.strip())
        if match is None or match[1].lower() not in ("escape", "syntax", "check"):
            break
        if match[1].lower() == "escape" and match[2] in ("`", "\\"):
            return match[2]
    return "\\"


def heredoc_words(keyword: str, args: str) -> list[tuple[str, bool]]:
    """(terminator, tabs stripped) of each heredoc an instruction opens, as BuildKit finds
    them: only in ADD, COPY and RUN (and ONBUILD of those), never in their JSON form, each a
    word of its own that starts with `<<` (`cat<<EOF` or `"<<EOF"` opens none)."""
    keyword = keyword.upper()
    if keyword == "ONBUILD":
        keyword, _, args = args.strip().partition(" ")
        keyword = keyword.upper()
    if keyword not in HEREDOC_KEYWORDS or "<<" not in args:
        return []
    rest = args.strip()
    while rest.startswith("--"):  # flags come before the JSON form
        rest = rest.split(None, 1)[1] if len(rest.split(None, 1)) > 1 else ""
    if rest.startswith("["):
        import json

        try:
            if isinstance(json.loads(rest), list):
                return []
        except ValueError:
            pass
    out = []
    for word in _WORDS.findall(args):
        match = _HEREDOC_WORD.fullmatch(word)
        name = match[3].replace('"', "").replace("'", "") if match else ""
        if name and not any(c.isspace() for c in name):
            out.append((name, match[2] == "-"))
    return out


# dockerfile-parse reads the escape directive only among the first lines, as long as each
# is an escape or a syntax directive (it knows no `# check=`); it may so read another escape
# character than BuildKit does (escape_token), and splits instructions with its own.
_ESCAPE_DIRECTIVE = lazy(r"^\s*#\s*escape\s*=\s*(\\|`)\s*$", re.IGNORECASE)
_SYNTAX_DIRECTIVE = lazy(r"^\s*#\s*syntax\s*=\s*(.*)\s*$", re.IGNORECASE)


def _split_escape(lines: list[str]) -> str:
    escape = "\\"
    for line in lines:
        found = _ESCAPE_DIRECTIVE.match(line)
        if found is not None:
            escape = found[1]
        elif _SYNTAX_DIRECTIVE.match(line) is None:
            break
    return escape


# How much of an unknown keyword a message quotes: a line of garbage is one long "keyword".
WORD_SHOWN = 40


def as_written(word: str) -> str:
    """A word of the file as a message quotes it: characters that do not print escaped (a
    NUL, a tab), and cut at WORD_SHOWN characters."""
    shown = word if word.isprintable() else word.encode("unicode_escape").decode("ascii")
    return shown if len(shown) <= WORD_SHOWN else shown[:WORD_SHOWN] + "…"


def parse_dockerfile(text: str, index: LineIndex) -> Dockerfile:
    """The instructions and stages of a Dockerfile, read in one pass over its lines.

    Two readings go along the lines together. BuildKit's says which lines continue an
    instruction (an empty or blank line inside a continuation is skipped, as a comment line
    is, and the file's end ends a continued instruction) and which lines are heredoc bodies
    (so that no empty line inside one is skipped). The other splits the instructions and
    gathers their values as dockerfile-parse 2.0.1's `structure` does (a line that ends in
    an escaped escape character, `echo a\\\\`, does not continue, as in BuildKit), reading
    the lines BuildKit skips as comments; heredoc bodies, which it reads as instructions of
    their own, are then folded back into the instruction that opens them. The two differ
    on odd files (a keyword followed by a tab before a heredoc, a
    heredoc that ends in a comment-like line, the escape directive after `# check=`): each
    is kept as it is, as tests/test_dockerfile_single_pass.py checks against the
    three-pass reading gpulint had before."""
    lines = text.split("\n")
    escape = escape_token(lines)
    split_escape = _split_escape(lines)
    other_escape = split_escape != escape
    last_row = len(lines) - 1
    final_row = last_row - 1 if lines[-1] == "" else last_row  # the last line that may hold text
    instructions: list[Instruction] = []

    # BuildKit's reading: the instruction's text as it joins it (for its heredoc words),
    # whether the next line continues it, the heredoc end words still to come
    joined: list[str] = []
    continued = False
    ends: list[tuple[str, bool]] = []
    # the instruction being split: its keyword (None between instructions), first line, values
    keyword: str | None = None
    first = 0
    parts: list[str] = []
    has_text = False
    skip_until = -1  # the last line of the heredoc bodies read so far

    def finish(last: int) -> None:
        nonlocal skip_until
        if first <= skip_until:  # a heredoc body line, read as an instruction of its own
            return
        if keyword not in INSTRUCTIONS:
            raise ParseError(f"unknown instruction `{as_written(keyword)}` (the builder stops with "
                             f"\"unknown instruction\")", first + 1, 1)
        value = "".join(parts)
        bodies = []
        for end_word, strip_tabs in heredoc_words(keyword, value) if "<<" in value else ():
            body, row = [], last + 1
            while row < len(lines):
                candidate = lines[row].rstrip("\r")
                if (candidate.lstrip("\t") if strip_tabs else candidate) == end_word:
                    break
                body.append(candidate)
                row += 1
            else:
                column = lines[first].find("<<") + 1
                raise ParseError(f"heredoc `<<{end_word}` is never closed by a line `{end_word}`",
                                 first + 1, max(1, column))
            bodies.append("\n".join(body))
            last = row
        if bodies:
            skip_until = last
            value += "".join("\n" + b for b in bodies)
        if last > final_row:  # past the file's end: a continued instruction the end ended
            last = final_row
        end = index.offset(last + 1, len(lines[last].rstrip("\r")) + 1)
        instructions.append(Instruction(keyword, value, first + 1, last + 1, index.offset(first + 1, 1), end,
                                        heredocs=bodies))

    for row, raw in enumerate(lines):
        body = raw.lstrip()
        if body[:1] == "#" or not body:
            if ends:  # a heredoc body line (never its end: the end word holds no blank)
                line = raw.rstrip("\r")
                end_word, strip_tabs = ends[0]
                if (line.lstrip("\t") if strip_tabs else line) == end_word:
                    del ends[0]
            elif continued or body:
                continue  # a comment line, or a blank one inside a continuation: skipped
            if body[:1] == "#" or keyword is None or (not raw and row == last_row and not continued):
                continue
            parts.append("")  # an empty line ends the instruction being split
            finish(row)
            keyword = None
            continue

        line = raw.rstrip("\r")
        stripped = line.rstrip(" \t")
        more = stripped[-1:] == escape and stripped[-2:-1] != escape
        if ends:
            end_word, strip_tabs = ends[0]
            if (line.lstrip("\t") if strip_tabs else line) == end_word:
                del ends[0]
        elif not continued and not more:  # an instruction of one line
            if "<<" in line:
                word, _, args = line.strip().partition(" ")
                ends = heredoc_words(word, args)
        else:
            if not continued:
                joined = []
            joined.append(stripped[:-1] if more else line)
            continued = more
            if not more:
                read = "".join(joined)
                if "<<" in read:
                    word, _, args = read.strip().partition(" ")
                    ends = heredoc_words(word, args)
        if other_escape:
            more = stripped[-1:] == split_escape and stripped[-2:-1] != split_escape
        if keyword is None:
            words = raw.split(None, 1)
            if len(words) == 1:  # an instruction without arguments (BuildKit reads one on
                value = ""  # the file's last line too, where dockerfile-parse drops it)
            elif more:  # the rest continues as the line does (it ends the same way)
                value = words[1].rstrip("\r").rstrip(" \t")[:-1]
            else:
                value = words[1].rstrip()
            keyword = words[0].upper()
            first = row
            parts = [value]
            has_text = bool(value)
        elif has_text:
            parts.append(stripped[:-1] if more else raw.rstrip())
        else:
            parts.append((stripped[:-1] if more else raw.rstrip()).lstrip())
            has_text = bool(parts[-1])
        if not more:
            finish(row)
            keyword = None
    if continued and keyword is not None:  # the file ends the continued instruction
        finish(last_row + 1)

    global_args: dict[str, str | None] = {}
    stages: list[Stage] = []
    named: dict[str, int] = {}  # the last stage of each name so far
    for ins in instructions:
        if ins.keyword == "ARG" and not stages:
            for name, default in arg_pairs(ins.value):  # a default may use earlier ARGs
                if default is not None:
                    global_args[name] = expand(default, global_args)
                else:  # `ARG X` again keeps the default an earlier `ARG X=1` gave
                    global_args.setdefault(name, None)
            continue
        if ins.keyword == "FROM":
            stages.append(_stage(ins, len(stages), named, global_args, text, index))
            if stages[-1].name:
                named[stages[-1].name] = stages[-1].index
        if stages:
            ins.stage = len(stages) - 1
            stages[-1].instructions.append(ins)
    return Dockerfile(instructions, stages, global_args, escape)


def _stage(ins: Instruction, number: int, named: dict[str, int], global_args, text: str,
           index: LineIndex) -> Stage:
    tokens = [t for t in ins.value.split() if not t.startswith("--")]
    image = tokens[0] if tokens else ""
    name = tokens[2].lower() if len(tokens) >= 3 and tokens[1].lower() == "as" else None
    resolved = expand(image, global_args)
    parent = named.get(resolved.lower())  # the last earlier stage of that name
    # `text` is what was parsed (template expressions neutralised): same offsets as the file
    at = text.find(image, ins.start + 4, ins.end) if image else -1
    image_span = index.span(at, at + len(image)) if at >= 0 else index.span(ins.start, ins.end)
    return Stage(number, name, image, resolved, parent, ins, image_span)


def parse(text: str, doc) -> Dockerfile:
    return parse_dockerfile(text, doc.index)
