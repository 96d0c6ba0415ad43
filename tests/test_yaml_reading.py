"""The YAML reader builds what PyYAML's SafeLoader constructs (merge keys applied, the
mapping's own keys and the earlier merge sources winning), and notes what it cannot show:
keys written twice and anchored text that aliases use."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
import yaml
from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulint.formats import yamlpos
from gpulint.formats.errors import ParseError
from gpulint.formats.yamlpos import YamlReading, parse_yaml_documents
from gpulint.model import LineIndex

CASES = [
    "a: &x {p: 1, q: 2}\nb:\n  <<: *x\n  q: 3\n",
    "a: &x {p: 1, q: 2}\nb:\n  q: 3\n  <<: *x\n",
    "a: &x {p: 1}\nb: &y {p: 2, r: 2}\nc:\n  <<: [*x, *y]\nd:\n  <<: [*y, *x]\n",
    "a: &x {p: 1}\nb: &y\n  <<: *x\n  q: 2\nc:\n  <<: *y\n  r: 3\n",
    "a: &x {p: 1}\nb:\n  <<: {p: 5, s: 6}\n",
    "a: &x [1, 2]\nb: *x\nc: {'<<': 1}\n",
    "- &x {k: v}\n- <<: *x\n  j: w\n- *x\n",
]


@pytest.mark.parametrize("text", CASES)
def test_nodes_hold_what_the_safe_loader_constructs(text):
    reading = YamlReading()
    [root] = parse_yaml_documents(text, LineIndex(text), reading)
    assert root.plain() == yaml.safe_load(text)
    assert reading.duplicates == []


def test_a_merged_value_keeps_the_position_of_its_text():
    text = "a: &x\n  p: 1\nb:\n  <<: *x\n  q: 2\n"
    [root] = parse_yaml_documents(text, LineIndex(text))
    assert (root.get("b", "p").key_span.line, root.get("b", "q").key_span.line) == (2, 5)


def test_keys_written_twice_and_shared_anchors_are_noted():
    text = "a: &x\n  p: 1\n  p: 2\nb: *x\nc:\n  <<: *x\n"
    reading = YamlReading()
    parse_yaml_documents(text, LineIndex(text), reading)
    assert [(d.key, d.first.line, d.second.line) for d in reading.duplicates] == [("p", 2, 3)]
    [shared] = reading.shared
    assert (shared.name, text[shared.start:shared.end]) == ("x", "&x\n  p: 1\n  p: 2")
    assert [LineIndex(text).position(use)[0] for use in shared.uses] == [4, 6]


# What the reader builds from the parser's events must be what `convert` builds from the
# composed tree (the reader for anchors, aliases, merge keys, keys that are no scalars and
# deep nesting): the same values, tags, quoting, places, duplicate keys and errors.
EDGES = [
    "a: 1\na: 2\nb: {c: x, c: y}\n",
    "? [1, 2]\n: complex key\n",
    "a: !!str 12\nb: !!int '7'\nc: ! yes\nd: !custom x\ne: !!binary aGk=\n",
    "'quoted': \"x\"\nplain: 0x1F\nf: 1e3\nn: ~\nt: 2001-12-14\nb: no\n",
    "---\na: 1\n...\n---\n- x\n- [y, {z: w}]\n---\n",
    "",
    "# only a comment\n",
    "---\n",
    "a: |\n  line\n  more\nb: >-\n  folded\n",
    "<<: {a: 1}\nb: 2\n",
    "a: &x 1\nb: *x\n",
    "a: *undefined\n",
    "a: [1, 2\n",
    "a: b: c\n",
    "x: " + "[" * 250 + "]" * 250 + "\n",
    "x: " + "[" * 150 + "]" * 150 + "\n",
    "- a\n-\n- ''\n- \"\"\n- null\n- {}\n- []\n",
    "1: one\ntrue: yes\nnull: ~\n",
    "a:\n  - b: 1\n    b: 2\n  - c\nd: {e: [f, {g: h, g: i}]}\n",
    "\ufeffa: 1\n",
    "k: caf\u00e9 \u2713 \U0001d11e\n",
]


def _shape(result):
    """What a reading gives, plainly: each document's nodes (value, tag, quoting, places),
    the duplicates, the shared texts; or the error."""
    def node(n):
        if n is None:
            return None
        value = n.value
        if isinstance(value, dict):
            value = [(key, node(child)) for key, child in value.items()]
        elif isinstance(value, list):
            value = [node(child) for child in value]
        return (value, type(n.value).__name__, n.tag, n.quoted, n._span, n._key_span)
    if isinstance(result, Exception):
        return ("error", str(result), getattr(result, "line", None), getattr(result, "column", None))
    docs, reading = result
    return [node(d) for d in docs], reading.duplicates, reading.shared


def _read(text):
    reading = YamlReading()
    try:
        return parse_yaml_documents(text, LineIndex(text), reading), reading
    except ParseError as exc:
        return exc


def _left_to_the_composer(*_):
    raise yamlpos._Unusual


def _composed(text):
    """What the composer and `convert` read (the reader for what the events do not show)."""
    built = yamlpos._built
    yamlpos._built = _left_to_the_composer
    try:
        return _read(text)
    finally:
        yamlpos._built = built


def _yaml_fixtures() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


@pytest.mark.parametrize("text", EDGES + [p.read_text(encoding="utf-8") for p in _yaml_fixtures()])
def test_the_reader_builds_from_events_what_the_composer_builds(text):
    assert _shape(_read(text)) == _shape(_composed(text))


_PIECES = [":", " ", "\n", "- ", "'", '"', "{", "}", "[", "]", ",", "#", "&a ", "*a", "<<: ", "!!int ",
           "! ", "? ", "---\n", "...\n", "\t", "yes", "0x1F", "~", "|\n  ", "key: ", "  ", "a: 1\na: 2\n"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES + ["name", "image", "x1"]), max_size=40))
def test_the_reader_and_the_composer_agree_on_any_text(pieces):
    text = "".join(pieces)
    assert _shape(_read(text)) == _shape(_composed(text))


def test_a_large_document_is_not_held_composed_while_it_is_read():
    # a composed node and its marks take twice the memory of the Node made from it: reading
    # from the events holds one tree at a time, not both
    text = "items:\n" + "".join(f"  - name: item-{n}\n    path: /dev/nvidia{n}\n    flags: [rw, {n}]\n"
                                for n in range(3000))

    def peak(read) -> int:
        tracemalloc.start()
        try:
            read()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    events = peak(lambda: _read(text))
    composed = peak(lambda: _composed(text))
    assert events < composed * 0.6
