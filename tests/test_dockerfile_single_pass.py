"""parse_dockerfile reads a Dockerfile in one pass over its lines; it reads every file as the
three passes gpulint made before did (tests/dockerfile_reference.py): the same instructions,
lines, offsets, values and heredoc bodies, or the same error. Compared on every fixture
Dockerfile and on generated files built from the lines where the readings could part:
continuations with empty, blank and comment lines, both escape characters and the
directives that set them, heredocs (quoted, tab-stripped, several, unclosed, ending in a
comment-like or continued line), one-word lines, carriage returns and odd blanks. The
words of ENV values and RUN scripts are compared in the same way."""

from __future__ import annotations

import dockerfile_reference
from conftest import FIXTURES
from dockerfile_reference import instructions as reference
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulint.formats.errors import ParseError
from gpulint.kinds.dockerfile import facts
from gpulint.kinds.dockerfile.parse import Instruction, parse_dockerfile
from gpulint.model import LineIndex


def read(text: str):
    try:
        return [(i.keyword, i.value, i.line, i.end_line, i.start, i.end, i.heredocs)
                for i in parse_dockerfile(text, LineIndex(text)).instructions]
    except ParseError as exc:
        return ("error", str(exc), exc.line, exc.column)


def read_before(text: str):
    try:
        return [(i.keyword, i.value, i.line, i.end_line, i.start, i.end, i.heredocs)
                for i in reference(text)]
    except ParseError as exc:
        return ("error", str(exc), exc.line, exc.column)


def test_fixture_dockerfiles_read_as_before():
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in FIXTURES.rglob("*ockerfile*") if p.is_file()]
    assert len(texts) > 50
    assert [t for t in texts if read(t) != read_before(t)] == []


LINES = [
    "FROM a", "FROM b AS c", "RUN x \\", "  y", "", "   ", "\t", "  \x0c ", "\r", "# c", "  # x \\",
    "#escape=`", "# escape=`", "# escape = \\", "# escape=x", "# syntax=x", "# check=skip=all",
    "RUN `", "x`", "RUN x ``", "x\\\\", "\\", " \\", "RUN a \\  ", "RUN a\\\r", "RUN \\ \r", "RUN\\",
    "ENV A=b", "USER", "RUN", "run a", "FOO bar",
    "COPY <<EOF /x", "EOF", "EOF\\", "RUN <<-E cat", "\tE", "RUN\t<<EOF", "run <<'#X'", "#X",
    "RUN <<EOF <<F", "F", "ONBUILD RUN <<EOF", 'RUN ["<<EOF"]', "RUN --mount=x <<EOF", "RUN <<A\\",
    "A\\", "RUN a <\\", "<EOF", 'RUN <<"EOF" sh', "echo $x \\",
]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=16), st.sampled_from(["", "\n", "\r\n", "\n\n"]))
def test_generated_dockerfiles_read_as_before(lines, end):
    text = "\n".join(lines) + end
    assert read(text) == read_before(text)


# ENV/LABEL words and RUN tokens: facts.py matches them with one regular expression each
# where a character loop and a token-at-a-time loop (tests/dockerfile_reference.py) ran
PIECES = ["a", "b", "=", " ", "\t", "\n", "\r", "\\", "'", '"', "#", ";", "&", "|", "(", ")", "$",
          "$(", "`", "&&", "x\\\n", "\\\r\n", "\x0c", "é", "${A:-b}"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=16))
def test_run_scripts_are_split_into_the_same_words(pieces):
    script = "".join(pieces)
    assert facts._tokens(script) == dockerfile_reference._tokens(script)


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=16), st.lists(st.sampled_from(PIECES), max_size=3),
       st.lists(st.sampled_from(PIECES), max_size=3))
def test_env_values_are_split_into_the_same_words(pieces, before, after):
    """Within the instruction's part of the text, which need not end where the text does."""
    text = "".join(before + pieces + after)
    start, end = len("".join(before)), len("".join(before + pieces))
    assert facts._words(text, start, end) == dockerfile_reference._words(text, start, end)


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(["--from=a", "--platform=x", "--mount", "--a-b=", "a", " ", "\t", "\n",
                                 "--x=y z", "-", "--", "\x0c", "=", "--from=b"]), max_size=8))
def test_leading_flags_are_read_as_before(pieces):
    value = "".join(pieces)
    assert Instruction("COPY", value, 1, 1, 0, 0).flags == dockerfile_reference.flags(value)
