"""GL001 for Dockerfile instructions BuildKit refuses for their arguments (too few, too many,
or not of the form the instruction takes: moby/buildkit frontend/dockerfile/instructions/
parse.go and frontend/dockerfile/parser/line_parsers.go), through the CLI's JSON report."""

from __future__ import annotations

import pytest
from conftest import lint_fixture

BAD = [
    (3, 1, "dockerfile parse error on line 3: USER requires exactly one argument"),
    (4, 1, "dockerfile parse error on line 4: COPY requires at least two arguments, but only one "
           "was provided. Destination could not be determined"),
    (5, 1, "ENV must have two arguments"),
    (6, 1, "LABEL must have two arguments"),
    (7, 1, "WORKDIR requires exactly one argument"),
    (8, 1, "EXPOSE requires at least one argument"),
    (9, 1, "VOLUME requires at least one argument"),
    (10, 1, "SHELL requires the arguments to be in JSON form"),
    (11, 1, "HEALTHCHECK NONE takes no arguments"),
    (12, 1, "Missing command after HEALTHCHECK CMD"),
    (13, 1, "STOPSIGNAL requires exactly one argument"),
    (14, 3, "ARG requires at least one argument"),
    (15, 1, "ENV must have two arguments"),
    (16, 1, "FROM isn't allowed as an ONBUILD trigger"),
    (17, 1, "line 17: ADD requires at least two arguments"),
    (20, 1, "line 20: COPY requires at least two arguments"),
    (23, 1, "FROM requires either one or three arguments"),
]


def _gl001(relative: str) -> list[dict]:
    run = lint_fixture(f"dockerfile/arguments/{relative}", "--failure-threshold", "none")
    assert run.rc == 0, run.err
    return [f for f in run.findings if f["code"] == "GL001"]


def test_each_refused_instruction_is_reported_at_its_keyword():
    found = _gl001("bad.Dockerfile")
    assert [(f["line"], f["column"]) for f in found] == [(line, column) for line, column, _ in BAD]
    for f, (_, _, words) in zip(found, BAD):
        assert words in f["message"], f["message"]
        assert f["severity"] == "error"
    user = found[0]
    assert (user["end_line"], user["end_column"]) == (3, 4)  # the keyword `user`, as written


def test_parser_refusals_and_instruction_refusals_are_told_apart():
    messages = {f["line"]: f["message"] for f in _gl001("bad.Dockerfile")}
    assert messages[5].startswith("BuildKit's parser refuses the file: \"ENV must have two arguments\"")
    assert messages[3].startswith("BuildKit refuses the file: \"dockerfile parse error on line 3:")


def test_the_rest_of_the_file_is_still_checked():
    run = lint_fixture("dockerfile/arguments/bad.Dockerfile", "--failure-threshold", "none")
    assert [(f["code"], f["line"]) for f in run.findings if f["code"] != "GL001"] == [("GL310", 25)]
    assert run.json["summary"]["files_checked"] == 1


@pytest.mark.parametrize("relative", ["good.Dockerfile", "last-word-good.Dockerfile"])
def test_instructions_buildkit_accepts_are_not_reported(relative):
    # RUN, CMD and ENTRYPOINT without arguments, HEALTHCHECK NONE, ARG with several names,
    # ENV's `name value` form, heredoc sources, flags, comments inside continuations
    assert _gl001(relative) == []


def test_a_one_word_last_line_without_a_newline_is_read():
    found = _gl001("last-word.Dockerfile")
    assert [(f["line"], f["column"]) for f in found] == [(3, 1)]
    assert "USER requires exactly one argument" in found[0]["message"]


def test_json_arrays_of_other_things_than_strings_are_refused_by_the_parser():
    # parseMaybeJSON: RUN, CMD and ENTRYPOINT are refused only for this; a bracket inside a
    # command written in shell form is an argument like any other
    found = _gl001("json-not-strings.Dockerfile")
    assert [(f["line"], f["column"]) for f in found] == [(2, 1), (3, 1), (4, 1)]
    for f in found:
        assert "arrays must be comprised of strings only" in f["message"], f["message"]


def test_an_unknown_keyword_is_quoted_escaped_and_cut(lint_files):
    # a line of garbage is one long keyword: the message shows what it starts with, printable
    run = lint_files({"Dockerfile": "FROM ubuntu:22.04\n" + "\0" * 1000 + "\n",
                      "b/Dockerfile": "FROM ubuntu:22.04\nRUNN\tapt-get update\n"},
                     "--failure-threshold", "none")
    messages = {f["path"]: f["message"] for f in run.findings if f["code"] == "GL001"}
    garbage = messages["Dockerfile"]
    assert garbage.startswith("unknown instruction `" + "\\x00" * 10 + "…` (the builder stops with")
    assert "\0" not in garbage and len(garbage) < 120
    assert messages["b/Dockerfile"].startswith("unknown instruction `RUNN` (the builder stops with")
