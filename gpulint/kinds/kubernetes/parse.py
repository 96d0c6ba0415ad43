"""Kubernetes manifests: the objects of every YAML document (or of one JSON value),
with the items of `List` kinds flattened."""

from __future__ import annotations

from gpulint.formats.template import strip_template_suffix


def parse(text: str, doc) -> list:
    stripped = text.lstrip()
    base = strip_template_suffix(doc.path)[0].lower()
    if base.endswith(".json") or (stripped.startswith("{") and not base.endswith((".yaml", ".yml"))):
        # JSON only for a JSON manifest
        from gpulint.formats.jsonpos import parse_json

        roots = [parse_json(text, doc.index)]
    else:
        # PyYAML only for YAML
        from gpulint.formats.yamlpos import YamlReading, parse_yaml_documents

        reading = YamlReading()
        roots = parse_yaml_documents(text, doc.index, reading)
        doc.cache["yaml.duplicates"] = reading.duplicates
        doc.cache["shared.text"] = reading.shared
    objects: list = []
    incomplete: list = []
    for root in roots:
        _collect_objects(root, objects, incomplete)
    if incomplete:  # the other objects are still checked
        node = incomplete[0]
        missing, present = (("apiVersion", "kind") if node.get("apiVersion") is None
                            else ("kind", "apiVersion"))
        doc.cache["parse.problem"] = (
            node.get(present).key_span or node.span,
            f"a Kubernetes object without `{missing}`: kubectl rejects it "
            f"(`{missing} not set`) and gpulint cannot check it")
    return objects


def _collect_objects(node, out: list, incomplete: list) -> None:
    """Kubernetes objects of a document; the items of `List` kinds are flattened.
    Mappings with only one of `apiVersion` and `kind` go to `incomplete`."""
    if node is None or not node.is_map:
        return
    if (node.get("apiVersion") is None) != (node.get("kind") is None):
        incomplete.append(node)
        return
    kind = node.get("kind")
    items = node.get("items")
    if kind is not None and str(kind.value).endswith("List") and items is not None and items.is_seq:
        for item in items.value:
            _collect_objects(item, out, incomplete)
        return
    if node.get("apiVersion") is not None and kind is not None:
        out.append(node)
