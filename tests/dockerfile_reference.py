"""The Dockerfile splitter gpulint used before its single pass (three passes: BuildKit's
escape directive, the empty lines BuildKit skips inside continuations, dockerfile-parse's
`structure` on the text with those lines made comments), kept as the reference the single
pass must equal (tests/test_dockerfile_single_pass.py) and that tests/test_dockerfile_oracle.py
compares with dockerfile-parse. Also the character loop that split ENV and LABEL values into
words and the token loop that split RUN scripts, which gpulint.kinds.dockerfile.facts now
match with one regular expression each."""

from __future__ import annotations

import re

from gpulint.formats.errors import ParseError
from gpulint.kinds.dockerfile.parse import (
    INSTRUCTIONS,
    Instruction,
    as_written,
    escape_token,
    heredoc_words,
)
from gpulint.model import LineIndex
from gpulint.regex import lazy


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
_ESCAPE_DIRECTIVE = lazy(r"^\s*#\s*escape\s*=\s*(\\|`)\s*$", re.IGNORECASE)
_SYNTAX_DIRECTIVE = lazy(r"^\s*#\s*syntax\s*=\s*(.*)\s*$", re.IGNORECASE)


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


def instructions(text: str) -> list[Instruction]:
    """The instructions parse_dockerfile read (or the ParseError it raised)."""
    index = LineIndex(text)
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
    elif lines[-1] and len(lines[-1].split()) == 1 and not lines[-1][-1].isspace():
        given_text += " "  # a one-word last line: BuildKit reads it, dockerfile-parse drops it
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
            raise ParseError(f"unknown instruction `{as_written(item['instruction'])}` (the builder stops with "
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
    return instructions


# ---------------------------------------------------------------- ENV words, RUN tokens


def _words(text: str, start: int, end: int) -> list[tuple[str, int, int]]:
    """Split text[start:end] into words as Docker does for ENV/LABEL: quotes group,
    backslash escapes, a backslash-newline continues the line. Returns (word without
    quotes, start offset, end offset)."""
    out = []
    i = start
    while i < end:
        ch = text[i]
        if ch in " \t\r\n" or (ch == "\\" and i + 1 < end and text[i + 1] in "\r\n"):
            i += 1
            continue
        word_start, chars, quote = i, [], None
        while i < end:
            ch = text[i]
            if quote:
                if ch == quote:
                    quote = None
                elif ch == "\\" and quote == '"' and i + 1 < end:
                    i += 1
                    chars.append(text[i])
                else:
                    chars.append(ch)
            elif ch in "\"'":
                quote = ch
            elif ch == "\\" and i + 1 < end:
                if text[i + 1] in "\r\n":
                    break
                i += 1
                chars.append(text[i])
            elif ch in " \t\r\n":
                break
            else:
                chars.append(ch)
            i += 1
        out.append(("".join(chars), word_start, i))
    return out


_SUBSTITUTION = lazy(r"\$\((?:[^()]|\([^()]*\))*\)|`[^`]*`")


# The words of a RUN script as `shlex.shlex(posix=True, punctuation_chars=";&|()")` with
# `whitespace_split` reads them, matched by whole pieces rather than one character at a time:
# blanks, a run of operator characters, a comment (to the end: newlines are `;` by then), or a
# word made of bare text, '...', "..." and backslash escapes.
_TOKEN = lazy(r"""[ \t\r\n]+|([;&|()]+)|(\#)|((?:[^ \t\r\n;&|()'"\\\#]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+)""",
              re.DOTALL)
_PIECE = lazy(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)|([^'"\\]+)""", re.DOTALL)
_IN_DOUBLE = lazy(r"""\\(["\\])""")


def _tokens(script: str) -> list[str]:
    # `$(nproc)` is one word to the command around it, not a subshell boundary
    script = _SUBSTITUTION.sub("SUBST", script)
    line = script.replace("\n", " ; ")
    out: list[str] = []
    pos, end = 0, len(line)
    match = _TOKEN.match
    while pos < end:
        m = match(line, pos)
        if m is None:  # unbalanced quotes or a trailing backslash: fall back to plain words
            return re.findall(r"&&|\|\||[;|&()]|[^\s;|&()]+", script)
        pos = m.end()
        punct, comment, word = m.groups()
        if comment is not None:
            break
        if punct is not None:
            out.append(punct)
        elif word is not None:
            out.append(_unquote(word) if "'" in word or '"' in word or "\\" in word else word)
    return out


def _unquote(word: str) -> str:
    parts = []
    for single, double, escaped, bare in _PIECE.findall(word):
        if bare:
            parts.append(bare)
        elif escaped:
            parts.append(escaped)
        elif double:
            parts.append(_IN_DOUBLE.sub(r"\1", double))
        else:
            parts.append(single)
    return "".join(parts)


# ---------------------------------------------------------------- leading flags


_FLAG = lazy(r"--([a-z-]+)(?:=(\S*))?")


def flags(value: str) -> dict[str, str]:
    """Instruction.flags as it was: every word of the value split off, then the leading flags read."""
    out = {}
    for token in value.split():
        match = _FLAG.fullmatch(token)
        if not match:
            break
        out[match[1]] = match[2] or ""
    return out
