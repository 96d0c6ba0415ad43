"""gpulint's own validator of custom resources (gpulint.common.crd_validation) against
jsonschema's Draft7Validator, the reference it replaces: for instances drawn from the bundled
GPU Operator CRD schemas, right and wrong (wrong types, unknown fields, enum misses, bounds,
missing required fields), both give the same errors (path, keyword, the keyword's value, the
value judged, the schema holding the keyword, and for anyOf/oneOf jsonschema's message)."""

from __future__ import annotations

import json
import math
from collections import Counter

import jsonschema
import pytest
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulint.common import crd_validation

# keywords that check nothing: the CEL rules (judged apart, by gpulint.common.cel) and the
# generator's notes of where and which version a schema comes from
_NOT_CHECKED = {"x-kubernetes-validations", "x-source", "x-version"}
_SUBSCHEMAS = ("anyOf", "allOf", "oneOf")


def _bundled() -> list[dict]:
    out = []
    for path in sorted((ROOT / "rules").glob("gpu-operator-v*.json")):
        data = json.loads(path.read_text())
        out.extend(data[kind] for kind in ("ClusterPolicy", "NVIDIADriver"))
    return out


def _walk(schema: dict):
    """Every schema node under `schema` (itself first)."""
    yield schema
    for sub in (schema.get("properties") or {}).values():
        yield from _walk(sub)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from _walk(schema[key])
    for key in _SUBSCHEMAS:
        for sub in schema.get(key, ()):
            yield from _walk(sub)


BUNDLED = _bundled()
NODES = list({id(node): node for root in BUNDLED for node in _walk(root)}.values())
# the schema nodes holding each keyword: a keyword is drawn first, so that the few nodes with
# a bound or a list of values are judged as often as the thousands with a type
WITH = {key: [node for node in NODES if key in node] for key in {key for node in NODES for key in node}}


def test_the_bundled_schemas_use_only_the_handled_keywords():
    used = {key for node in NODES for key in node}
    assert used - _NOT_CHECKED <= set(crd_validation._KEYWORDS), sorted(used - _NOT_CHECKED - set(crd_validation._KEYWORDS))
    assert all(isinstance(node.get("items", {}), dict) for node in NODES)


def _reference(schema: dict, instance) -> Counter:
    out = Counter()
    for error in jsonschema.Draft7Validator(schema).iter_errors(instance):
        message = error.message if error.validator in ("anyOf", "oneOf") else None
        out[(tuple(error.absolute_path), error.validator, repr(error.validator_value), repr(error.instance),
             id(error.schema), message)] += 1
    return out


def _ours(schema: dict, instance) -> Counter:
    errors: list = []
    crd_validation._check(schema, instance, (), errors)
    return Counter((where, keyword, repr(expected), repr(value), id(holder), message)
                   for where, keyword, expected, value, holder, message in errors)


_SCALARS = (st.booleans() | st.integers(-3, 3) | st.integers() | st.floats()
            | st.sampled_from([0.0, 1.0, -1.0, 1.5, 2.0 ** 70, math.inf]) | st.text(max_size=6) | st.none())
_ANY = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)


def _near(word: str) -> list[str]:
    return [word.lower(), word.upper(), word + "s", word[:-1], " " + word]


def _instance(draw, schema: dict, depth: int = 0):
    """A value for `schema`, often wrong in one way or another."""
    if depth > 4 or draw(st.integers(0, 9)) == 0:
        return draw(_ANY)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        keys = draw(st.lists(st.sampled_from(sorted(props)), unique=True, max_size=4)) if props else []
        keys += [key for key in schema.get("required", ()) if draw(st.integers(0, 3))]
        extra = schema.get("additionalProperties")
        unknown = [draw(st.sampled_from(_near(key)) | st.text(min_size=1, max_size=5))
                   for key in draw(st.lists(st.sampled_from(sorted(props) or ["x"]), max_size=2 if isinstance(extra, dict) else 1))]
        out = {}
        for key in keys + unknown:
            sub = props.get(key, extra if isinstance(extra, dict) else {})
            out[key] = _instance(draw, sub, depth + 1)
        return out
    if kind == "array":
        items = schema.get("items") or {}
        return [_instance(draw, items, depth + 1) for _ in range(draw(st.integers(0, 3)))]
    if kind == "boolean":
        return draw(st.booleans())
    options = []
    if "enum" in schema:
        options += [st.sampled_from(schema["enum"]),
                    st.sampled_from(schema["enum"]).flatmap(lambda word: st.sampled_from(_near(word)))]
    if "pattern" in schema:
        options += [st.from_regex(schema["pattern"], fullmatch=True), st.text(max_size=6)]
    if "minLength" in schema or "maxLength" in schema:
        longest = schema.get("maxLength", schema.get("minLength", 0) + 3)
        options.append(st.text(alphabet="ab.", max_size=longest + 2))
    if "minimum" in schema or "maximum" in schema:
        edge = schema.get("minimum", schema.get("maximum", 0))
        options += [st.integers(edge - 2, edge + 2), st.sampled_from([edge - 0.5, float(edge), edge + 0.5])]
    if kind == "integer" or kind == ["integer", "string"]:
        options.append(st.integers(-5, 10 ** 6))
    if kind == "string" or kind == ["integer", "string"]:
        options.append(st.text(max_size=8))
    return draw(st.one_of(options)) if options else draw(_ANY)


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_the_same_errors_as_draft7_for_the_bundled_schemas(data):
    schema = data.draw(st.sampled_from(sorted(WITH)).flatmap(lambda key: st.sampled_from(WITH[key])))
    instance = _instance(data.draw, schema)
    assert _ours(schema, instance) == _reference(schema, instance)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_same_errors_as_draft7_for_whole_objects(data):
    schema = data.draw(st.sampled_from(BUNDLED))
    instance = _instance(data.draw, schema, -2)
    assert _ours(schema, instance) == _reference(schema, instance)


# what the bundled schemas do not use today but the validator handles as draft 7 does: more
# than one type, several valid oneOf branches, allOf, array bounds, enums of other values
SYNTHETIC = [
    {"oneOf": [{"type": "integer"}, {"minimum": 0}, {"type": "string", "maxLength": 2}]},
    {"allOf": [{"type": "object", "required": ["a", "b"]},
               {"properties": {"a": {"minLength": 1, "maxLength": 2, "enum": ["a", "bb", "ccc"]}}}]},
    {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "number", "maximum": 3, "minimum": -1}},
    {"type": "object", "additionalProperties": {"type": ["boolean", "null"]}, "properties": {"x": {"type": "null"}}},
    {"enum": [1, True, [1, "a"], {"a": 0}, 0.0, None]},
    {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
    {"anyOf": [{"type": "object", "additionalProperties": False}, {"type": "array", "maxItems": 0}]},
]


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(SYNTHETIC), _ANY)
def test_the_same_errors_as_draft7_for_other_keywords(schema, instance):
    assert _ours(schema, instance) == _reference(schema, instance)


@pytest.mark.parametrize("instance,message", [
    (True, "True is not valid under any of the given schemas"),
    (1.5, "1.5 is not valid under any of the given schemas"),
    ({"a": [1, "b"]}, "{'a': [1, 'b']} is not valid under any of the given schemas"),
])
def test_an_int_or_string_field_in_jsonschemas_words(instance, message):
    schema = {"type": ["integer", "string"], "anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert [e[-1] for e in _ours_list(schema, instance) if e[1] == "anyOf"] == [message]


def _ours_list(schema, instance) -> list:
    errors: list = []
    crd_validation._check(schema, instance, (), errors)
    return errors
