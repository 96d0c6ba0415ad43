"""The YAML reader's tag resolver (a word table and the number patterns) gives every scalar the
tag PyYAML's own safe resolver gives it, and the reader builds the same values and tags."""

from __future__ import annotations

import itertools

import yaml

from gpulint.formats.yamlpos import _SAFE, _WORDS, _Loader, parse_yaml_documents
from gpulint.model import LineIndex

_BOOLS = ("yes", "no", "true", "false", "on", "off")
_NULLS = ("~", "null")


def _candidates() -> list[str]:
    words = [*_BOOLS, *_NULLS, "<<", "=", "!", "&", "*", "y", "n", "Y", "N", "nul", "nulls", "tru", "truee",
             "yess", "onn", "o", "of", "offf", "<", "<<<", "==", "!!", "&&", "**", "name", "namespace", "nvidia.com/gpu",
             "0", "1", "-1", "+1", "0x1F", "0o17", "017", "0b101", "1_000", "1:30", "1.5", ".5", "-.inf", ".NaN", ".inf",
             "1e3", "1.0e+3", "2024-01-02", "2024-01-02T03:04:05Z", "2024-1-2 3:04:05", "v1", "1.2.3", "-", "+", ".",
             "0.0.0.0", "1Gi", "500m", ""]
    out = set(words)
    for word in words:
        out.update((word.upper(), word.title(), word.capitalize(), word + "\n", word + "\n\n", " " + word,
                    word + " ", "\n" + word, word + "\r"))
    chars = "yYnNtTfFoO~<=!&*01.+-e:_ \nxaslru"
    out.update("".join(p) for n in (1, 2, 3) for p in itertools.product(chars, repeat=n))
    return sorted(out)


def test_tags_are_the_safe_resolvers():
    ours, theirs = _Loader(""), yaml.SafeLoader("")
    for value in _candidates():
        for implicit in ((True, False), (False, True), (False, False)):
            assert ours.resolve(yaml.ScalarNode, value, implicit) == \
                theirs.resolve(yaml.ScalarNode, value, implicit), (value, implicit)


def test_word_table_holds_every_word_pattern():
    # each word resolves to its tag by the safe loader's own patterns, and every implicit
    # resolver that is not a number pattern is one of the table's tags
    theirs = yaml.SafeLoader("")
    for word, tag in _WORDS.items():
        assert theirs.resolve(yaml.ScalarNode, word, (True, False)) == tag, word
    numbers = {tag for resolvers in _Loader._numbers.values() for tag, _ in resolvers}
    every = {tag for resolvers in _SAFE.yaml_implicit_resolvers.values() for tag, _ in resolvers}
    assert every == numbers | set(_WORDS.values())


def test_no_path_resolvers():
    # the composer's calls to follow path resolvers are answered by built-ins that do nothing
    assert not _SAFE.yaml_path_resolvers
    assert not yaml.SafeLoader.yaml_path_resolvers


def test_values_and_tags_as_the_safe_loader_reads_them():
    text = "".join(f"k{i}: {value}\n" for i, value in enumerate(
        ["yes", "No", "~", "null", "''", '"true"', "! true", "!!str 1", "1_000", "0x1f", "1.5", ".inf",
         "'<<'", "&a x", "*a", "on", "OFF", "1:30", "v1"]))
    [root] = parse_yaml_documents(text, LineIndex(text))
    assert root.plain() == yaml.safe_load(text)
    tags = {key: node.tag for key, node in root.items()}
    assert tags["k0"] == "bool" and tags["k2"] == "null" and tags["k6"] == "bool" and tags["k7"] == "str"
    assert tags["k8"] == "int" and tags["k10"] == "float"


def test_collection_tags_are_the_safe_resolvers():
    ours, theirs = _Loader(""), yaml.SafeLoader("")
    for kind in (yaml.MappingNode, yaml.SequenceNode):
        for implicit in (True, False):
            assert ours.resolve(kind, None, implicit) == theirs.resolve(kind, None, implicit)
