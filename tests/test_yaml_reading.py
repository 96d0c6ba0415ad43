"""The YAML reader builds what PyYAML's SafeLoader constructs (merge keys applied, the
mapping's own keys and the earlier merge sources winning), and notes what it cannot show:
keys written twice and anchored text that aliases use."""

from __future__ import annotations

import pytest
import yaml

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
