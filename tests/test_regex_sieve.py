"""The literal sieve (`gpulint.regex.may_match`): the rules ask it before running a pattern
over each instruction or file, so it must never say False where the pattern matches."""

from __future__ import annotations

import importlib
import pkgutil
import re

from hypothesis import given, settings
from hypothesis import strategies as st

import gpulint
from gpulint.regex import Lazy, may_match, needs

# letters whose case folding goes beyond ASCII (ſ folds with s, K with k, İ and ı with i),
# the ones the patterns are built from, and characters the patterns' classes see
ALPHABET = "abkisABKIS-._/ ſKİı\n"


def _atoms():
    literal = st.sampled_from("abkisABKIS-._/ſKİı").map(re.escape)
    klass = st.sampled_from([r"\w", r"\W", r"\s", r"\d", ".", "[a-c]", "[^a]", "[-_.]", "[sS]"])
    anchor = st.sampled_from([r"\b", r"\B", "^", "$", r"\A", r"\Z"])
    return st.one_of(literal, literal, literal, klass, anchor)


def _patterns():
    def extend(inner):
        sequence = st.lists(inner, min_size=1, max_size=5).map("".join)
        return st.one_of(
            sequence,
            st.lists(sequence, min_size=2, max_size=3).map("|".join).map(lambda p: f"(?:{p})"),
            st.lists(sequence, min_size=2, max_size=3).map("|".join).map(lambda p: f"({p})"),
            st.tuples(sequence, st.sampled_from(["*", "+", "?", "{2}", "{0,2}", "{1,3}", "*?", "+?"]))
            .map(lambda t: f"(?:{t[0]}){t[1]}"),
            st.tuples(st.sampled_from(["(?=", "(?!", "(?<=a", "(?<!a"]), sequence)
            .map(lambda t: f"{t[0]}{t[1]})" if t[0].startswith("(?=") or t[0].startswith("(?!")
                 else f"{t[0]})"),
            st.tuples(st.sampled_from(["(?i:", "(?-i:"]), sequence).map(lambda t: f"{t[0]}{t[1]})"),
        )

    return st.recursive(_atoms(), extend, max_leaves=12).map(lambda p: p)


def _compiled(pattern: str, flags: int):
    try:
        return re.compile(pattern, flags)
    except re.error:
        return None


@settings(max_examples=1500, deadline=None)
@given(pattern=_patterns(), flags=st.sampled_from([0, re.IGNORECASE, re.IGNORECASE | re.MULTILINE]),
       texts=st.lists(st.text(alphabet=ALPHABET, max_size=24), min_size=1, max_size=6))
def test_the_sieve_never_rules_out_a_text_the_pattern_matches(pattern, flags, texts):
    compiled = _compiled(pattern, flags)
    if compiled is None:
        return
    for text in texts:
        if compiled.search(text):
            assert may_match(compiled, text), (pattern, flags, text, needs(compiled))


@settings(max_examples=400, deadline=None)
@given(pattern=_patterns(), flags=st.sampled_from([0, re.IGNORECASE]), data=st.data())
def test_the_literals_a_pattern_needs_are_in_every_text_it_matches(pattern, flags, data):
    """Texts built to match: the pattern's own literals, their case changed, joined by
    anything, are the texts most likely to match."""
    compiled = _compiled(pattern, flags)
    if compiled is None:
        return
    pieces = re.findall(r"\\?.", pattern)
    pieces = [p[-1] for p in pieces if p[-1] not in "()|?*+{}[]^$\\:=!<"]
    if not pieces:
        return
    words = st.lists(st.sampled_from(pieces + list(ALPHABET)), max_size=30).map("".join)
    text = data.draw(st.one_of(words, words.map(str.upper), words.map(str.swapcase)))
    if compiled.search(text):
        assert may_match(compiled, text), (pattern, flags, text, needs(compiled))


def test_what_the_sieve_looks_for():
    assert needs(re.compile(r"(?<![\w.])/(?:[\w.+-]+/)*(?:libcuda|libnvidia-ml)\.so")) == \
        ((("libcuda", False), ("libnvidia-ml", False)), ((".so", False),))
    assert needs(re.compile(r"nvidia-driver|vgpu-manager", re.I)) == \
        ((("nvidia-driver", True), ("vgpu-manager", True)),)
    assert needs(re.compile(r"a(?i:Bc)")) == ((("bc", True),), (("a", False),))
    assert needs(re.compile(r"\bkind\W+(?:Node|RuntimeClass)\b")) == \
        ((("kind", False),), (("Node", False), ("RuntimeClass", False)))
    assert needs(re.compile(r"x?|abc")) is None  # an alternative needs nothing
    assert needs(re.compile(r"(?:abc)*")) is None
    assert not may_match(re.compile(r"\bkind\W+(?:Node|RuntimeClass)\b"), "kind: Pod")
    assert not may_match(re.compile(r"\bdevice-plugin\b"), "RUN make install")
    assert may_match(re.compile(r"\bdevice-plugin\b"), "RUN ./k8s-device-plugin")
    assert not may_match(re.compile("nvidia-driver", re.I), "RUN apt-get install -y NVIDIA-DRIVEX")
    assert may_match(re.compile("nvidia-driver", re.I), "RUN apt-get install -y NVIDIA-DRIVER-550")
    # beyond ASCII the sieve does not fold case: ſ matches s under IGNORECASE
    assert re.search("s", "ſ", re.I) and may_match(re.compile("s", re.I), "ſ")


def _project_patterns() -> list[re.Pattern]:
    found = {}
    for info in pkgutil.walk_packages(gpulint.__path__, "gpulint."):
        if info.name.endswith("__main__") or info.name.startswith(("gpulint.face", "gpulint.docgen")):
            continue  # the command line runs on import; the language server needs its extra
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue
        for value in vars(module).values():
            if isinstance(value, Lazy):
                value = value.compiled()
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                found[value] = None
    return list(found)


PROJECT_PATTERNS = _project_patterns()


def test_the_project_has_patterns_to_sieve():
    assert len(PROJECT_PATTERNS) > 100
    assert sum(1 for p in PROJECT_PATTERNS if needs(p)) > 50


@settings(max_examples=600, deadline=None)
@given(data=st.data())
def test_the_sieve_keeps_every_text_a_project_pattern_matches(data):
    """Each of gpulint's own patterns, on texts made of its literals, their case changed, and
    the characters its classes match or refuse."""
    compiled = data.draw(st.sampled_from(PROJECT_PATTERNS))
    literals = [literal for group in needs(compiled) or () for literal, _ in group]
    pieces = literals + [literal[:3] for literal in literals] + list("aZ9 -._/:=\n\"'$\\ſKİ")
    words = st.lists(st.sampled_from(pieces), max_size=12).map("".join)
    text = data.draw(st.one_of(words, words.map(str.upper), words.map(str.swapcase)))
    if compiled.search(text):
        assert may_match(compiled, text), (compiled.pattern, text, needs(compiled))
