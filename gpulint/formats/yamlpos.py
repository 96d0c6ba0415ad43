"""YAML (and so Kubernetes manifests) into position-carrying Nodes.

PyYAML's composer keeps marks for every node; using the libyaml C loader when it
is present keeps a large manifest set fast.
"""

from __future__ import annotations

import yaml

from gpulint.formats.errors import ParseError
from gpulint.model import LineIndex, Node, place
from gpulint.resources import yaml_loader

_LOADER = yaml_loader()
_TAGS = {
    "tag:yaml.org,2002:int": "int",
    "tag:yaml.org,2002:float": "float",
    "tag:yaml.org,2002:bool": "bool",
    "tag:yaml.org,2002:null": "null",
}
_constructor = yaml.constructor.SafeConstructor()


def _scalar(node: yaml.ScalarNode) -> tuple[object, str]:
    tag = _TAGS.get(node.tag, "str")
    if tag == "str":
        return node.value, tag
    try:
        return _constructor.yaml_constructors[node.tag](_constructor, node), tag
    except Exception:  # an odd scalar is still a value; keep its text
        return node.value, "str"


def _over_budget(node: yaml.Node) -> ParseError:
    return ParseError("invalid YAML: alias expansion over the limit (aliases here expand to "
                      "more nodes than gpulint reads; is this an alias bomb?)",
                      node.start_mark.line + 1, node.start_mark.column + 1)


def convert(root: yaml.Node, index: LineIndex) -> Node:
    """The composed tree as Nodes, positions kept as places (offsets) until asked for.

    Aliases share one composed node, so a few hundred bytes of nested aliases ("billion
    laughs") expand to billions of nodes: a document may expand to at most twice as many
    nodes as it has characters (a file without aliases has fewer nodes than characters)."""
    left = max(50_000, 2 * len(index.text))
    mapping, sequence, scalar = yaml.MappingNode, yaml.SequenceNode, yaml.ScalarNode

    def at(node: yaml.Node) -> int:
        return place(node.start_mark.index, node.end_mark.index, trim=True)

    def build(node: yaml.Node, key_span: int | None, depth: int) -> Node:
        nonlocal left
        left -= 1
        if left < 0:
            raise _over_budget(node)
        span = at(node)
        if depth > 200:  # recursive aliases
            return Node(None, span, key_span, "null", index=index)
        kind = type(node)
        if kind is mapping:
            out: dict[str, Node] = {}
            for key_node, value_node in node.value:
                key = key_node.value if type(key_node) is scalar else str(key_node)
                out[str(key)] = build(value_node, at(key_node), depth + 1)
            return Node(out, span, key_span, "map", index=index)
        if kind is sequence:
            return Node([build(v, None, depth + 1) for v in node.value], span, key_span, "seq", index=index)
        value, tag = _scalar(node)
        return Node(value, span, key_span, tag, quoted=node.style in ("'", '"'), index=index)

    return build(root, None, 0)


def parse_yaml_documents(text: str, index: LineIndex) -> list[Node | None]:
    """Every document of a YAML stream; empty documents are None."""
    try:
        docs = []
        for root in yaml.compose_all(text, Loader=_LOADER):
            docs.append(None if root is None else convert(root, index))
        return docs
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if mark is None:
            raise ParseError(f"invalid YAML: {problem}") from None
        raise ParseError(f"invalid YAML: {problem}", mark.line + 1, mark.column + 1) from None
    except yaml.YAMLError as exc:
        raise ParseError(f"invalid YAML: {exc}") from None
