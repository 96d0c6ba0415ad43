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
    """The value the API server sees, with each node remembered by its path; None for
    what it prunes before validating (a null) and for a template expression set aside."""
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
        items = [_plain(sub, path + (i,), nodes) for i, sub in enumerate(node.value)]
        return [item for item in items if item is not None] if None in items else items
    if node.tag == "null" or node.value is None or is_placeholder(node.value):
        return None
    return node.value


_TYPE_NAMES = {bool: "boolean", int: "integer", float: "number", str: "string", dict: "object",
               list: "array"}


def _json_type(value) -> str:
    return _TYPE_NAMES.get(type(value), "string")


def _quote(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


def validate(root: Node, schema: dict, prefix: tuple = ()) -> list[Problem]:
    """The problems of `root` against `schema`; `prefix` is the path `root` sits at in the
    object the API server sees (for values passed into a ClusterPolicy's spec)."""
    import jsonschema  # only for files that hold an object with a bundled schema

    nodes: dict = {}
    instance = _plain(root, (), nodes)
    if instance is None:
        return []
    problems = []
    for error in jsonschema.Draft7Validator(schema).iter_errors(instance):
        problems.extend(_problems(error, nodes, prefix))
    problems.extend(_rules_failed(schema, instance, (), nodes, prefix))
    return sorted(problems, key=lambda p: (p.span.line, p.span.column, p.message))


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


def _problems(error, nodes: dict, prefix: tuple):
    where = tuple(error.absolute_path)
    node = nodes.get(where)
    if node is None:
        return
    name = field_path(prefix + where)
    check, expected, value = error.validator, error.validator_value, error.instance
    if check == "additionalProperties" and expected is False:
        known = error.schema.get("properties") or {}
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
        yield Problem(node.span, name, f"{name}: Invalid value: {error.message}", False, where)


# kube-openapi's words for each bound
_BOUNDS = {"minimum": ("should be greater than or equal to", ""),
           "maximum": ("should be less than or equal to", ""),
           "minLength": ("should be at least", " chars long"), "maxLength": ("may not be longer than", ""),
           "minItems": ("should have at least", " items"), "maxItems": ("must have at most", " items")}
