"""Dockerfiles into stages and instructions with positions.

Instructions are split as dockerfile-parse 2.0.1 splits them (`instruction_lines`,
line continuations and the `escape` directive included; ported, so that a Dockerfile
is read without the package and in time linear in its length); heredoc bodies, which
it reads as instructions of their own, are folded back into the instruction that
opens them here. Where it reads otherwise than BuildKit's parser (moby/buildkit
frontend/dockerfile/parser), the text it is given is first made to read the same: an empty or blank line inside a
line continuation is skipped by BuildKit (the continuation goes on), as a comment
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
        for token in self.value.split():
            match = _FLAG.fullmatch(token)
            if not match:
                break
            out[match[1]] = match[2] or ""
        return out


class Stage(Record):
    __slots__ = ("index", "name", "image", "resolved", "parent", "from_instruction", "image_span",
                 "instructions")

    index: int
    name: str | None  # lower-cased `AS name`
    image: str  # the FROM image as written
    resolved: str  # with global ARG defaults substituted
    parent: int | None  # index of the stage it builds on (`FROM <stage>`), else None
    from_instruction: Instruction
    image_span: Span
    instructions: list[Instruction]

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


def _continues(line: str, escape: str) -> tuple[str, bool]:
    """BuildKit's trimContinuationCharacter: the line without a final escape character
    (and the blanks after it), and whether the instruction goes on."""
    stripped = line.rstrip(" \t")
    if stripped.endswith(escape) and (len(stripped) == 1 or stripped[-2] != escape):
        return stripped[:-1], True
    return line, False


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def continuation_blanks(lines: list[str], escape: str) -> tuple[list[int], bool]:
    """The (0-based) empty or blank lines inside a line continuation: BuildKit skips them
    and the instruction goes on (with a warning that this may become an error); and
    whether the file ends inside a continuation (the instruction ends there)."""
    blanks = []
    more = False
    row = 0
    while row < len(lines):
        line = lines[row].rstrip("\r").lstrip()
        row += 1
        if _is_comment(line) or not line:
            continue
        joined, more = _continues(line, escape)
        while more and row < len(lines):
            raw = lines[row].rstrip("\r")
            row += 1
            if _is_comment(raw):
                continue
            if not raw.strip():
                blanks.append(row - 1)
                continue
            part, more = _continues(raw, escape)
            joined += part
        keyword, _, args = joined.strip().partition(" ")
        for name, tabs in heredoc_words(keyword, args):
            while row < len(lines):
                candidate = lines[row].rstrip("\r")
                row += 1
                if (candidate.lstrip("\t") if tabs else candidate) == name:
                    break
    return blanks, more


_INSTRUCTION_LINE = lazy(r"^\s*(\S+)\s+(.*)$")
_COMMENT_LINE = lazy(r"^\s*#")
_ESCAPE_DIRECTIVE = lazy(r"^\s*#\s*escape\s*=\s*(\\|`)\s*$", re.I)
_SYNTAX_DIRECTIVE = lazy(r"^\s*#\s*syntax\s*=\s*(.*)\s*$", re.I)


def instruction_lines(text: str) -> list[dict]:
    """The instructions of a Dockerfile as dockerfile-parse 2.0.1's `structure` gives them
    ({instruction, startline, endline, value}, lines 0-based; comment lines as COMMENT),
    read the same way line for line, with a continued instruction's value gathered in a
    list: the package's `+=` on one string made thousands of continuation lines quadratic.
    Where the package and BuildKit differ, BuildKit is followed: a line that ends in an
    escaped escape character (`echo a\\\\`) does not continue the instruction.
    tests/test_dockerfile_oracle.py compares the two where the package is installed."""
    out: list[dict] = []
    escape = "\\"
    directives = True
    current: dict | None = None
    parts: list[str] = []
    lines = text.split("\n")
    for number, raw in enumerate(lines):
        line = raw + "\n" if number < len(lines) - 1 else raw  # as readlines() gives it
        if not line:
            continue
        if directives:
            found = _ESCAPE_DIRECTIVE.match(line)
            if found is not None:
                escape = found[1]
            elif _SYNTAX_DIRECTIVE.match(line) is None:
                directives = False
        if _COMMENT_LINE.match(line):  # also inside a continuation, which goes on after it
            out.append({"instruction": "COMMENT", "startline": number, "endline": number,
                        "value": re.sub(r"^\s*#\s*", "", line).replace("\n", "")})
            continue
        if current is None:
            found = _INSTRUCTION_LINE.match(line)
            if found is None:
                continue  # a line of one word is no instruction to dockerfile-parse
            current = {"instruction": found[1].upper(), "startline": number, "endline": number}
            parts = [_without_escape(found[2], escape)]
        else:
            current["endline"] = number
            parts.append(_without_escape(line if any(parts) else line.lstrip(), escape))
        if not _continues(line.rstrip("\r\n"), escape)[1]:  # not `a\\`: an escaped escape
            current["value"] = "".join(parts)
            out.append(current)
            current = None
    return out


def _without_escape(text: str, escape: str) -> str:
    """A line without the escape character that continues it (BuildKit's rule)."""
    part, more = _continues(text.rstrip("\r\n"), escape)
    return part if more else text.rstrip()


def parse_dockerfile(text: str, index: LineIndex) -> Dockerfile:
    lines = text.split("\n")
    escape = escape_token(lines)
    blanks, open_at_end = continuation_blanks(lines, escape)
    given_text = text
    if blanks:  # read as the comment lines dockerfile-parse already skips there
        given = list(lines)
        for row in blanks:
            given[row] = "#"
        given_text = "\n".join(given)
    if open_at_end:  # BuildKit ends the instruction with the file; dockerfile-parse drops it
        given_text += "\n\n"
    structure = instruction_lines(given_text)

    instructions: list[Instruction] = []
    skip_until = -1
    for item in structure:
        first, last = item["startline"], item["endline"]
        if first <= skip_until or item["instruction"] == "COMMENT":
            continue
        keyword = item["instruction"].upper()
        value = item["value"]
        if keyword not in INSTRUCTIONS:
            raise ParseError(f"unknown instruction `{item['instruction']}` (the builder stops with "
                             f"\"unknown instruction\")", first + 1, 1)
        bodies = []
        for end_word, strip_tabs in heredoc_words(keyword, value):
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
            last = min(row, len(lines) - 1)
        skip_until = last if bodies else skip_until
        if open_at_end:  # not past the file's last line (the lines added above)
            last = min(last, len(lines) - (2 if lines[-1] == "" else 1))
        start = index.offset(first + 1, 1)
        end_text = lines[last].rstrip("\r") if last < len(lines) else ""
        end = index.offset(last + 1, len(end_text) + 1)
        instructions.append(Instruction(keyword, value + "".join("\n" + b for b in bodies),
                                        first + 1, last + 1, start, end, heredocs=bodies))

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
