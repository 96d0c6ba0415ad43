"""Judging a YAML tree against a custom resource's schema as the API server does, each
problem at the smallest node, in the API server's words.

The API server first drops what the schema does not keep: a null for a field that is not
`nullable`, and every field an object's schema does not list (unless it has
`x-kubernetes-preserve-unknown-fields`): pruning. With strict field validation (kubectl's
default since 1.27: `--validate=strict`) a pruned field fails the request with `strict
decoding error: unknown field "spec.driver.foo"`; with `Warn` (Helm, controllers, most
other clients) it is a warning and the field is silently gone. It then validates what is
left and refuses the object on a value of the wrong type or outside its enum, or one that
fails a CEL rule of the CRD (`x-kubernetes-validations`, run by gpulint.common.cel), in the
rule's own message.
"""

from __future__ import annotations

from gpulint.common import cel
from gpulint.formats.template import is_placeholder
from gpulint.model import Node, Span
from gpulint.record import Frozen, freeze


class Problem(Frozen):
    """unknown: a field the API server prunes (True) or a value it refuses (False)."""

    __slots__ = ("span", "path", "message", "unknown", "field", "known")

    span: Span
    path: str
    message: str
    unknown: bool
    field: tuple
    known: tuple  # for an unknown field: the fields its object has

    def __init__(self, span: Span, path: str, message: str, unknown: bool, field: tuple = (), known: tuple = ()) -> None:
        freeze(self, span, path, message, unknown, field, known)

    def suggestion(self) -> str:
        """` (did you mean `x`?)` for an unknown field that is a near miss of a known one."""
        from gpulint.spelling import closest_key

        near = closest_key(str(self.field[-1]), self.known) if self.unknown and self.field else None
        return f" (did you mean `{near}`?)" if near else ""


def field_path(parts: tuple) -> str:
    """("spec", "toolkit", "env", 0, "value") -> "spec.toolkit.env[0].value"."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _plain(node: Node, path: tuple, nodes: dict):
    """The value the API server sees, with each node remembered by its path; None for a
    null and for a template expression set aside. The API server prunes a null field of an
    object before validating (`PruneNonNullableNullsWithoutDefaults`) but keeps a null item
    of a list, which its type then refuses; a template expression is left out of a list, and
    the items after it are judged at the places they then have."""
    nodes[path] = node
    if node.is_map:
        out = {}
        for key, sub in node.items():
            if is_placeholder(key):
                continue
            value = _plain(sub, path + (key,), nodes)
            if value is not None:
                out[key] = value
        return out
    if node.is_seq:
        items = []
        for sub in node.value:
            if sub.is_scalar and sub.tag != "null" and sub.value is not None and is_placeholder(sub.value):
                continue
            items.append(_plain(sub, path + (len(items),), nodes))
        return items
    if node.tag == "null" or node.value is None or is_placeholder(node.value):
        return None
    return node.value


_TYPE_NAMES = {type(None): "null", bool: "boolean", int: "integer", float: "number", str: "string",
               dict: "object", list: "array"}


def _json_type(value) -> str:
    return _TYPE_NAMES.get(type(value), "string")


def _quote(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


def validate(root: Node, schema: dict, prefix: tuple = ()) -> list[Problem]:
    """The problems of `root` against `schema`; `prefix` is the path `root` sits at in the
    object the API server sees (for values passed into a ClusterPolicy's spec)."""
    nodes: dict = {}
    instance = _plain(root, (), nodes)
    if instance is None:
        return []
    problems = []
    errors: list = []
    _check(schema, instance, (), errors)
    for error in errors:
        problems.extend(_problems(error, nodes, prefix))
    problems.extend(_rules_failed(schema, instance, (), nodes, prefix))
    return sorted(problems, key=lambda p: (p.span.line, p.span.column, p.message))


# What the bundled schemas (rules/gpu-operator-*.json, written by tools/operator_releases.py)
# are checked for, with JSON Schema draft 7's meaning (as jsonschema's Draft7Validator reads
# them, which tests/test_crd_validation.py holds this to): each failure is an error
# (path, keyword, the keyword's value, the value judged, the schema holding the keyword,
# message), message given for anyOf and oneOf only. Keywords not named here
# (x-kubernetes-validations, x-version, x-source) check nothing; the test fails when a bundled
# schema has a keyword of draft 7 that is not handled here.

def _check(schema: dict, value, where: tuple, out: list) -> None:
    for keyword, expected in schema.items():
        check = _KEYWORDS.get(keyword)
        if check is not None:
            check(expected, value, where, schema, out)


_BOOLEAN = frozenset(("boolean",))
_INTEGER = frozenset(("integer", "number"))
_NUMBER = frozenset(("number",))
_STRING = frozenset(("string",))
_OBJECT = frozenset(("object",))
_ARRAY = frozenset(("array",))
_NULL = frozenset(("null",))


def _types(value) -> frozenset:
    """The draft 7 types a value has: bool is no integer, a float with nothing after its
    point is one."""
    if isinstance(value, bool):
        return _BOOLEAN
    if isinstance(value, int):
        return _INTEGER
    if isinstance(value, float):
        return _INTEGER if value.is_integer() else _NUMBER
    if isinstance(value, str):
        return _STRING
    if isinstance(value, dict):
        return _OBJECT
    if isinstance(value, list):
        return _ARRAY
    return _NULL if value is None else frozenset()


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _type(expected, value, where, schema, out):
    have = _types(value)
    if expected in have if isinstance(expected, str) else not have.isdisjoint(expected):
        return
    out.append((where, "type", expected, value, schema, None))


def _properties(expected, value, where, schema, out):
    if isinstance(value, dict):
        for key, sub in value.items():
            inner = expected.get(key)
            if inner is not None:
                _check(inner, sub, where + (key,), out)


def _additional(expected, value, where, schema, out):
    if not isinstance(value, dict):
        return
    known = schema.get("properties") or {}
    if isinstance(expected, dict):
        for key, sub in value.items():
            if key not in known:
                _check(expected, sub, where + (key,), out)
    elif expected is False and any(key not in known for key in value):
        out.append((where, "additionalProperties", expected, value, schema, None))


def _items(expected, value, where, schema, out):
    if isinstance(value, list):
        if isinstance(expected, list):
            for i, (item, sub) in enumerate(zip(value, expected)):
                _check(sub, item, where + (i,), out)
        else:
            for i, item in enumerate(value):
                _check(expected, item, where + (i,), out)


def _required(expected, value, where, schema, out):
    if isinstance(value, dict):
        for key in expected:  # one error for each missing field, as jsonschema gives them
            if key not in value:
                out.append((where, "required", expected, value, schema, None))


def _equal(one, two) -> bool:
    """jsonschema's equality: true is not 1, nor false 0, in lists and maps too."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return one == two
    if isinstance(one, (list, tuple)) and isinstance(two, (list, tuple)):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two))
    if isinstance(one, dict) and isinstance(two, dict):
        return len(one) == len(two) and all(key in two and _equal(sub, two[key]) for key, sub in one.items())
    if isinstance(one, bool) or isinstance(two, bool):
        return type(one) is type(two) and one == two
    return one == two


def _enum(expected, value, where, schema, out):
    if value in expected if isinstance(value, str) else any(_equal(each, value) for each in expected):
        return
    out.append((where, "enum", expected, value, schema, None))


_REGEXES: dict = {}


def _pattern(expected, value, where, schema, out):
    if isinstance(value, str):
        regex = _REGEXES.get(expected)
        if regex is None:
            import re

            regex = _REGEXES[expected] = re.compile(expected)
        if not regex.search(value):
            out.append((where, "pattern", expected, value, schema, None))


def _minimum(expected, value, where, schema, out):
    if _is_number(value) and value < expected:
        out.append((where, "minimum", expected, value, schema, None))


def _maximum(expected, value, where, schema, out):
    if _is_number(value) and value > expected:
        out.append((where, "maximum", expected, value, schema, None))


def _sized(keyword: str, kind: type, longest: bool):
    def check(expected, value, where, schema, out):
        if isinstance(value, kind) and (len(value) > expected if longest else len(value) < expected):
            out.append((where, keyword, expected, value, schema, None))
    return check


def _passes(schema: dict, value) -> bool:
    errors: list = []
    _check(schema, value, (), errors)
    return not errors


def _all_of(expected, value, where, schema, out):
    for sub in expected:
        _check(sub, value, where, out)


def _any_of(expected, value, where, schema, out):
    if not any(_passes(sub, value) for sub in expected):
        out.append((where, "anyOf", expected, value, schema,
                    f"{value!r} is not valid under any of the given schemas"))


def _one_of(expected, value, where, schema, out):
    valid = [sub for sub in expected if _passes(sub, value)]
    if not valid:
        out.append((where, "oneOf", expected, value, schema,
                    f"{value!r} is not valid under any of the given schemas"))
    elif len(valid) > 1:  # jsonschema names the later ones first, then the first
        shown = ", ".join(repr(sub) for sub in valid[1:] + valid[:1])
        out.append((where, "oneOf", expected, value, schema, f"{value!r} is valid under each of {shown}"))


_KEYWORDS = {
    "type": _type, "properties": _properties, "additionalProperties": _additional, "items": _items,
    "required": _required, "enum": _enum, "pattern": _pattern, "minimum": _minimum, "maximum": _maximum,
    "minLength": _sized("minLength", str, False), "maxLength": _sized("maxLength", str, True),
    "minItems": _sized("minItems", list, False), "maxItems": _sized("maxItems", list, True),
    "allOf": _all_of, "anyOf": _any_of, "oneOf": _one_of,
}


def _rules_failed(schema: dict, value, where: tuple, nodes: dict, prefix: tuple):
    """The CEL rules of the schema and its sub-schemas that the value fails, at the node the
    rule is written for (a rule's `fieldPath`, when it names one, is not followed)."""
    node = nodes.get(where)
    if node is None:
        return
    for rule in schema.get("x-kubernetes-validations", ()):
        if cel.holds(rule["rule"], value) is False:
            name = field_path(prefix + where)
            said = rule.get("message") or f"failed rule: {rule['rule']}"
            yield Problem(node.anchor, name, f'{name}: Invalid value: "{_json_type(value)}": {said}', False, where)
    if isinstance(value, dict):
        for key, sub in value.items():
            inner = (schema.get("properties") or {}).get(key) or schema.get("additionalProperties")
            if isinstance(inner, dict):
                yield from _rules_failed(inner, sub, where + (key,), nodes, prefix)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, sub in enumerate(value):
            yield from _rules_failed(schema["items"], sub, where + (i,), nodes, prefix)


def _problems(error: tuple, nodes: dict, prefix: tuple):
    where, check, expected, value, schema, message = error
    node = nodes.get(where)
    if node is None:
        return
    name = field_path(prefix + where)
    if check == "additionalProperties" and expected is False:
        known = schema.get("properties") or {}
        for key in value:
            if key not in known and node.get(key) is not None:
                path = field_path(prefix + where + (key,))
                yield Problem(node.get(key).key_span or node.get(key).span, path,
                              f'unknown field "{path}"', True, where + (key,), tuple(known))
    elif check == "type":
        types = expected if isinstance(expected, list) else [expected]
        shown = " or ".join(types)
        got = _json_type(value)
        yield Problem(node.span, name, f'{name}: Invalid value: "{got}": {name} in body must be of type '
                                       f'{shown}: "{got}"', False, where)
    elif check == "enum":
        allowed = ", ".join(_quote(v) for v in expected)
        yield Problem(node.span, name, f"{name}: Unsupported value: {_quote(value)}: supported values: "
                                       f"{allowed}", False, where)
    elif check == "required":
        missing = [field_path(prefix + where + (key,)) for key in expected if key not in value]
        if missing:  # one finding per object, in the API server's list form
            listed = ", ".join(f"{path}: Required value" for path in missing)
            yield Problem(node.anchor, name, f"[{listed}]" if len(missing) > 1 else listed, False, where)
    elif check == "pattern":
        yield Problem(node.span, name, f"{name}: Invalid value: {_quote(value)}: {name} in body should match "
                                       f"'{expected}'", False, where)
    elif check in _BOUNDS:
        shown = _quote(value) if not isinstance(value, list) else f"{len(value)} items"
        words, unit = _BOUNDS[check]
        yield Problem(node.span, name, f"{name}: Invalid value: {shown}: {name} in body {words} "
                                       f"{expected}{unit}", False, where)
    elif check in ("anyOf", "oneOf", "allOf"):
        yield Problem(node.span, name, f"{name}: Invalid value: {message}", False, where)


# kube-openapi's words for each bound
_BOUNDS = {"minimum": ("should be greater than or equal to", ""),
           "maximum": ("should be less than or equal to", ""),
           "minLength": ("should be at least", " chars long"), "maxLength": ("may not be longer than", ""),
           "minItems": ("should have at least", " items"), "maxItems": ("must have at most", " items")}
