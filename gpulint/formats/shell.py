"""Splitting shell text into commands and words, with each word's place in the file.

Enough of the POSIX shell grammar for command lines written in scripts, Makefile
recipes, CI steps and documentation: quotes, backslash escapes and line
continuations, comments, `$(...)` and backticks kept inside their word, and the
operators that end a command (`;`, `&`, `&&`, `|`, `||`, newlines, parentheses).
Here-documents and shell functions are not interpreted: their lines are read as
commands like any other, which is harmless for the GPU command lines gpulint looks for.
"""

from __future__ import annotations

from gpulint.record import Frozen, freeze


class Word(Frozen):
    """A shell word: `text` as the shell passes it on (quotes removed), `start`/`end` the
    0-based offsets of what was written in the file; `quoted` when any part was quoted."""

    __slots__ = ("text", "start", "end", "quoted", "expands")

    text: str
    start: int
    end: int
    quoted: bool
    expands: bool  # holds `$...` or backticks that the shell would expand

    def __init__(self, text: str, start: int, end: int, quoted: bool = False, expands: bool = False) -> None:
        freeze(self, text, start, end, quoted, expands)


_OPERATOR_CHARS = ";&|()"


def split_commands(text: str, start: int = 0, end: int | None = None,
                   newline_ends: bool = True) -> list[list[Word]]:
    """The simple commands in text[start:end], each a list of words.

    `newline_ends=False` reads newlines as blanks (a folded YAML scalar, where the
    lines of one command are joined with spaces)."""
    end = len(text) if end is None else end
    commands: list[list[Word]] = []
    current: list[Word] = []
    i = start
    while i < end:
        ch = text[i]
        if ch == "\\" and i + 1 < end and text[i + 1] == "\n":
            i += 2  # line continuation
            continue
        if ch == "\n" and newline_ends or ch in _OPERATOR_CHARS:
            if current:
                commands.append(current)
                current = []
            i += 1
            continue
        if ch in " \t\r\n":
            i += 1
            continue
        if ch == "#":  # a comment runs to the end of the line
            while i < end and text[i] != "\n":
                i += 1
            continue
        word, i = _word(text, i, end)
        current.append(word)
    if current:
        commands.append(current)
    return commands


def _word(text: str, i: int, end: int) -> tuple[Word, int]:
    begin = i
    out: list[str] = []
    quoted = expands = False
    while i < end:
        ch = text[i]
        if ch in " \t\r\n" or ch in _OPERATOR_CHARS:
            break
        if ch == "\\":
            if i + 1 < end and text[i + 1] == "\n":
                i += 2
                continue
            if i + 1 < end:
                out.append(text[i + 1])
            i += 2
            continue
        if ch == "'":
            close = text.find("'", i + 1, end)
            close = end if close < 0 else close
            out.append(text[i + 1:close])
            quoted, i = True, close + 1
            continue
        if ch == '"':
            i, part, dollar = _double_quoted(text, i + 1, end)
            out.append(part)
            quoted, expands = True, expands or dollar
            continue
        if ch == "$" and i + 1 < end and text[i + 1] in "({":
            close = _balanced(text, i + 1, end)
            out.append(text[i:close])
            expands, i = True, close
            continue
        if ch == "`":
            close = text.find("`", i + 1, end)
            close = end if close < 0 else close + 1
            out.append(text[i:close])
            expands, i = True, close
            continue
        if ch == "$":
            expands = True
        out.append(ch)
        i += 1
    return Word("".join(out), begin, i, quoted, expands), i


def _double_quoted(text: str, i: int, end: int) -> tuple[int, str, bool]:
    out: list[str] = []
    dollar = False
    while i < end and text[i] != '"':
        ch = text[i]
        if ch == "\\" and i + 1 < end and text[i + 1] in '"\\$`\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        if ch == "$" and i + 1 < end and text[i + 1] in "({":
            close = _balanced(text, i + 1, end)
            out.append(text[i:close])
            dollar, i = True, close
            continue
        dollar = dollar or ch in "$`"
        out.append(ch)
        i += 1
    return min(i + 1, end), "".join(out), dollar


def _balanced(text: str, i: int, end: int) -> int:
    """The offset after the bracket that closes the one at `i`."""
    pairs = {"(": ")", "{": "}"}
    opener, closer = text[i], pairs[text[i]]
    depth = 0
    while i < end:
        if text[i] == opener:
            depth += 1
        elif text[i] == closer:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return end
