"""gpulint splits a Dockerfile into instructions as BuildKit does: the `dockerfile` package
(PyPI), which wraps BuildKit's own parser (moby/buildkit frontend/dockerfile/parser), is the
oracle. Compared on hand-written and a few hundred generated files: each instruction's
keyword, first and last line, arguments and heredoc bodies. Line continuations with empty
lines and comment lines inside, heredocs, the backtick escape directive and JSON forms."""

from __future__ import annotations

import random

import pytest

from conftest import FIXTURES, lint_files  # noqa: F401  (the fixture)
from gpulint.formats.errors import ParseError
from gpulint.kinds.dockerfile.parse import parse_dockerfile
from gpulint.model import LineIndex

dockerfile = pytest.importorskip("dockerfile", reason="the `dockerfile` package (BuildKit's parser, "
                                 "a test extra with wheels for linux x86_64) is not installed")


def gpulint_reads(text: str):
    try:
        parsed = parse_dockerfile(text, LineIndex(text))
    except ParseError:
        return "rejected"
    return [(i.keyword, i.line, i.end_line, (i.value.split("\n", 1)[0] if i.heredocs else i.value).strip(),
             [b.rstrip("\n") for b in i.heredocs]) for i in parsed.instructions]


def buildkit_reads(text: str):
    try:
        commands = dockerfile.parse_string(text)
    except dockerfile.GoParseError:
        return "rejected"
    out = []
    for c in commands:
        first = c.original.split("\n", 1)[0] if c.heredocs else c.original
        parts = first.strip().split(None, 1)
        out.append((c.cmd.upper(), c.start_line, c.end_line, parts[1] if len(parts) > 1 else "",
                    [h.content.rstrip("\n") for h in c.heredocs]))
    return out


HAND_WRITTEN = {
    "empty line in a continuation": "FROM ubuntu:22.04\nRUN apt-get update \\\n\n    && apt-get install -y curl\n",
    "blank line in a continuation": "FROM u\nRUN a \\\n   \t\n  b\n",
    "two empty lines": "FROM u\nRUN a \\\n\n\n  b \\\n\n  c\nRUN d\n",
    "comment in a continuation": "FROM u\nRUN echo x \\\n# the next part\n    y\n",
    "indented comment ending in the escape": "FROM u\nRUN c \\\n   # x \\\n  d\n",
    "continuation at the end of the file": "FROM u\nRUN a \\\n",
    "escape directive": "# escape=`\nFROM u\nRUN a `\n\n  b\nRUN c:\\ `\n  d\n",
    "escape directive after syntax": "# syntax=docker/dockerfile:1\n# escape=`\nFROM u\nRUN a `\n  b\n",
    "escape directive after a blank line is a comment": "\n# escape=`\nFROM u\nRUN a \\\n  b\n",
    "escaped escape": "FROM u\nRUN echo a\\\\\nRUN b\n",
    "three escapes": "FROM u\nRUN echo a\\\\\\\nRUN b\n",
    "a lone escape goes on": "FROM u\nRUN a \\\n\\\nRUN b\n",
    "heredoc": "FROM u\nRUN <<EOF\necho a \\\n\necho b\nEOF\nRUN c\n",
    "two heredocs": "FROM u\nCOPY <<A <<-B /x/\na\nA\n\tb\n\tB\nRUN c\n",
    "quoted heredoc word": "FROM u\nRUN <<'EOF' bash\necho $x\nEOF\n",
    "heredoc after a continuation": "FROM u\nRUN \\\n  <<EOF cat\nx\nEOF\n",
    "no heredoc in quotes": 'FROM u\nRUN echo "<<EOF"\nRUN b\n',
    "no heredoc in the JSON form": 'FROM u\nRUN ["cat", "<<EOF"]\nRUN b\n',
    "no heredoc in ENV": "FROM u\nENV A=<<EOF\nRUN b\n",
    "JSON forms": 'FROM u\nCMD ["a", \\\n  "b"]\nENTRYPOINT ["x"]\nSHELL ["/bin/bash", "-c"]\n',
    "unterminated heredoc": "FROM u\nRUN <<EOF\necho\n",
    "one word on the last line": "FROM u\nRUN a\nUSER",
    "one word on the last line after a heredoc": "FROM u\nRUN <<EOF\necho\nEOF",
}


@pytest.mark.parametrize("text", HAND_WRITTEN.values(), ids=HAND_WRITTEN.keys())
def test_instructions_are_split_as_buildkit_splits_them(text):
    assert gpulint_reads(text) == buildkit_reads(text)


_PARTS = ["apt-get update", "&& apt-get install -y curl", "echo 'a # b'", "pip install torch",
          "--mount=type=cache,target=/root/.cache", "make -j4", "true", 'echo "x  y"']


def _generated(seed: int) -> str:
    rnd = random.Random(seed)
    backtick = rnd.random() < 0.2
    esc = "`" if backtick else "\\"
    lines = ["# escape=`"] if backtick else []
    lines.append(rnd.choice(["FROM ubuntu:22.04", "FROM --platform=linux/amd64 nvidia/cuda:12.4.1-base-ubuntu22.04 AS base"]))
    for _ in range(rnd.randint(1, 6)):
        shape = rnd.random()
        if shape < 0.15:
            word = rnd.choice(["EOF", "SCRIPT"])
            dash = rnd.choice(["", "-"])
            quote = rnd.choice(["", "'", '"'])
            lines.append(f"{rnd.choice(['RUN', 'COPY'])} <<{dash}{quote}{word}{quote}" + (" /x" if rnd.random() < 0.5 else ""))
            for _ in range(rnd.randint(0, 3)):
                lines.append(rnd.choice(["\techo hi", "", "echo a " + esc, "# not a comment here"]))
            lines.append(("\t" if dash and rnd.random() < 0.5 else "") + word)
        elif shape < 0.25:
            lines.append(rnd.choice(['CMD ["python", "train.py"]', 'ENTRYPOINT ["/bin/sh", "-c"]', 'RUN ["a", "<<EOF"]']))
        elif shape < 0.35:
            lines.append(rnd.choice(["ENV A=1 B=2", "ARG V=1", "WORKDIR /app", "LABEL a=b", "USER 1000"]))
        else:
            keyword = rnd.choice(["RUN", "RUN", "ENV A=1 \\", "COPY a b"])
            if keyword.startswith("ENV") or keyword.startswith("COPY"):
                lines.append(keyword.replace("\\", esc) if keyword.endswith("\\") else keyword)
                if keyword.endswith("\\"):
                    lines.append("    B=2")
                continue
            pieces = rnd.sample(_PARTS, rnd.randint(1, 4))
            lines.append(f"RUN {pieces[0]}" + (f" {esc}" if len(pieces) > 1 else ""))
            for n, piece in enumerate(pieces[1:], 2):
                for _ in range(rnd.choice([0, 0, 0, 1, 2])):
                    lines.append(rnd.choice(["", "   ", "# a comment", "    # indented", "# ends " + esc]))
                lines.append("    " + piece + (f" {esc}" if n < len(pieces) else ""))
        if rnd.random() < 0.2:
            lines.append(rnd.choice(["", "# between", "   "]))
    return "\n".join(lines) + rnd.choice(["\n", ""])


@pytest.mark.parametrize("seed", range(300))
def test_generated_files_are_split_as_buildkit_splits_them(seed):
    text = _generated(seed)
    assert gpulint_reads(text) == buildkit_reads(text), text


def test_an_empty_line_in_a_continuation_is_no_instruction(lint_files):
    """Through the CLI: the line after the empty one belongs to the RUN (no GL001)."""
    result = lint_files({"Dockerfile": HAND_WRITTEN["empty line in a continuation"]},
                        "--select", "GL001", "--failure-threshold", "none")
    assert result.findings == []


def test_instruction_lines_match_dockerfile_parse():
    """gpulint's instruction splitter (the reference its one-pass parser equals,
    tests/test_dockerfile_single_pass.py) is dockerfile-parse 2.0.1's `structure`, read line for
    line: the same instructions, lines and values on every fixture Dockerfile and 5,000
    generated ones, apart from the one place where the package and BuildKit differ and
    gpulint follows BuildKit (a line ending in an escaped escape, tested above)."""
    import io

    parser = pytest.importorskip("dockerfile_parse").DockerfileParser
    from dockerfile_reference import instruction_lines

    def theirs(text):
        return [{k: d[k] for k in ("instruction", "startline", "endline", "value")}
                for d in parser(fileobj=io.BytesIO(text.encode())).structure]

    texts = [p.read_text() for p in FIXTURES.rglob("*ockerfile*") if p.is_file()]
    rng = random.Random(7)
    pieces = ["FROM a", "RUN x \\", "  y", "", "# c", "#escape=`", "# syntax=x", "RUN `", "ENV A=b",
              " \\", "RUN", "\\", "\t", "COPY <<EOF /x", "EOF", "RUN a \\  ", "x\\\\"]
    texts += ["\n".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) + rng.choice(["", "\n"])
              for _ in range(5000)]
    def escaped_escape(text):
        return any(line.rstrip(" \t").endswith(("\\\\", "``")) for line in text.split("\n"))

    compared = [t for t in texts if not escaped_escape(t)]
    assert len(compared) > 3000
    assert [t for t in compared if instruction_lines(t) != theirs(t)] == []


# Lines BuildKit's parser refuses for their arguments (line_parsers.go: parseNameVal,
# parseJSON), and lines it reads that instructions.Parse then counts
# (not `COPY ["a", 1] /x`: the wrapped parser predates dockerfile/1.10.0, which reads the whole
# text as JSON, json.Unmarshal, where it read the first value, moby/buildkit 80518e257)
PARSER_REFUSES = ["ENV A", "LABEL a", "ENV A=1 B", 'CMD ["a", 1]', 'COPY ["a", true]',
                  "ONBUILD ENV A", 'HEALTHCHECK CMD ["a", 2]', "ENV \\\n  A"]
PARSER_READS = ["USER", "RUN", "COPY a", "ENV", "ENV A B", "ENV A=1 B=2", "ONBUILD USER",
                "FROM a b c", "HEALTHCHECK NONE x", "SHELL sh", 'VOLUME [""]', "ARG a b=1"]


@pytest.mark.parametrize("line", PARSER_REFUSES + PARSER_READS)
def test_argument_refusals_of_the_parser_are_buildkits(line):
    """gpulint's GL001 for an instruction's arguments says \"BuildKit's parser refuses\" exactly
    where BuildKit's parser refuses the line, with its message."""
    from gpulint.kinds.dockerfile.arguments import arguments_text, refusal

    text = f"FROM u\n{line}\n"
    ins = parse_dockerfile(text, LineIndex(text)).instructions[1]
    found = refusal(ins.keyword, arguments_text(ins))
    try:
        dockerfile.parse_string(text)
        theirs = None
    except dockerfile.GoParseError as exc:
        theirs = str(exc)
    ours = found[0] if found is not None and found[1] else None
    assert (ours is None) == (theirs is None), (ours, theirs)
    if ours is not None:
        assert ours in theirs


_ARGUMENTS = ["", "a", "a b", "  a   b  c ", "--chown=1:1 a b", "--from=x a", '--chown="a b" c d', "-- a b",
              '["a"]', '["a", "b"]', "[]", '[ "a" , "b" ]', '"a b" c', "'a b'", "a=1", "a=1 b=2", 'a="x y"',
              "a\\ b", "NONE", "CMD", "CMD a b", 'CMD ["a"]', "--interval=5s CMD a", "a \\", "=1",
              "a\tb", "--mount=type=cache,target=/x", "--link"]


@pytest.mark.parametrize("keyword", ["ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE",
                                     "FROM", "HEALTHCHECK", "LABEL", "MAINTAINER", "RUN", "SHELL",
                                     "STOPSIGNAL", "USER", "VOLUME", "WORKDIR"])
def test_arguments_are_counted_as_buildkits_parser_splits_them(keyword):
    """The arguments GL001 counts are those BuildKit's parser hands instructions.Parse: as
    many, the flags taken off, and the same JSON form."""
    from gpulint.kinds.dockerfile.arguments import Refusal, split_arguments

    for args in _ARGUMENTS:
        text = f"FROM u\n{keyword} {args}\n"
        try:
            theirs = dockerfile.parse_string(text)[1]
        except dockerfile.GoParseError:
            theirs = None
        ins = parse_dockerfile(text, LineIndex(text)).instructions[1]
        try:
            ours = split_arguments(ins.keyword, ins.value)
        except Refusal:
            ours = None
        assert (ours is None) == (theirs is None), (text, ours, theirs)
        if ours is not None and keyword not in ("ENV", "LABEL"):  # (pairs: the package drops
            # the empty separator of the `NAME value` form)
            assert (len(ours[0]), ours[1]) == (len(theirs.value), theirs.json), (text, ours, theirs)
