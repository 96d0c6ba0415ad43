"""Exclude and .gitignore patterns: without a `!` pattern, one joined expression answers for
all of them; it must say what asking each pattern in turn says (the last match decides)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gpulint.run.ignore import Rules

_SEGMENT = st.text(alphabet="ab.*?[]!-", min_size=1, max_size=4)
_LINE = st.builds(lambda lead, parts, slash: lead + "/".join(parts) + slash,
                  st.sampled_from(["", "/", "**/"]), st.lists(st.one_of(_SEGMENT, st.just("**")), min_size=1,
                                                                       max_size=3),
                  st.sampled_from(["", "/"]))
_PATH = st.lists(st.text(alphabet="ab.-", min_size=1, max_size=3), min_size=1, max_size=4).map("/".join)


def _one_by_one(rules: Rules, rel: str, is_dir: bool) -> bool | None:
    verdict = None
    for pattern in rules.patterns:
        if pattern.dir_only and not is_dir:
            continue
        if pattern.regex.match(rel):
            verdict = not pattern.negated
    return verdict


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE, max_size=6), _PATH, st.booleans())
def test_joined_patterns_decide_as_each_pattern_in_turn(lines, rel, is_dir):
    rules = Rules([line for line in lines if not line.startswith("!")])
    assert rules.decide(rel, is_dir) == _one_by_one(rules, rel, is_dir)


def test_a_negated_pattern_still_re_includes():
    rules = Rules(["*.yaml", "!keep.yaml"])
    assert rules.decide("drop.yaml", False) is True
    assert rules.decide("keep.yaml", False) is False
    assert rules.decide("other.toml", False) is None


def test_a_folder_pattern_leaves_out_folders_only():
    rules = Rules(["build/", "*.tmp"])
    assert rules.decide("build", True) is True
    assert rules.decide("build", False) is None
    assert rules.decide("x.tmp", False) is True


def test_a_closing_bracket_first_in_brackets_is_one_of_its_characters():
    rules = Rules(["x[]a]", "y[!]]"])
    assert rules.decide("x]", False) is True and rules.decide("xa", False) is True
    assert rules.decide("xb", False) is None
    assert rules.decide("yb", False) is True and rules.decide("y]", False) is None


def test_brackets_hold_an_opening_bracket_and_set_operators_as_characters():
    # git reads `[[]` as the one character `[`; Python would read a nested set (and `&&`,
    # `~~`, `||` as set operations to come), and warns
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        rules = Rules(["a[[]b", "c[&&]", "d[~~|]"])
    assert rules.decide("a[b", False) is True and rules.decide("ab", False) is None
    assert rules.decide("c&", False) is True
    assert rules.decide("d~", False) is True and rules.decide("d|", False) is True
    assert rules.decide("dd", False) is None


def test_brackets_no_pattern_can_read_match_nothing_and_stop_no_run(tmp_path):
    from conftest import run_gpulint, write_files

    write_files(tmp_path, {".git/HEAD": "ref: refs/heads/main\n", ".gitignore": "[]\n",
                           "Dockerfile": "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"})
    run = run_gpulint("--isolated", "--format", "json", ".", cwd=tmp_path)
    assert run.rc in (0, 1) and "internal error" not in run.err
    assert "Traceback" not in run.err
    run = run_gpulint("--isolated", "--exclude", "[]", "--format", "json", ".", cwd=tmp_path)
    assert run.rc in (0, 1) and "Traceback" not in run.err
