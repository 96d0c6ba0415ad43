"""YAML (and so Kubernetes manifests) into position-carrying Nodes.

PyYAML's composer keeps marks for every node; using the libyaml C loader when it
is present keeps a large manifest set fast.
"""

from __future__ import annotations

import yaml

from gpulint.model import LineIndex, Node, Place, Span
from gpulint.parse.errors import ParseError
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


class _Budget:
    """How many nodes a document may expand to. Aliases share one composed node, so a few
    hundred bytes of nested aliases ("billion laughs") expand to billions of nodes; a file
    without aliases has fewer nodes than characters, so the budget grows with its size."""

    def __init__(self, text: str):
        self.left = max(50_000, 2 * len(text))

    def spend(self, node: yaml.Node) -> None:
        self.left -= 1
        if self.left < 0:
            raise ParseError("invalid YAML: alias expansion over the limit (aliases here expand to "
                             "more nodes than gpulint reads; is this an alias bomb?)",
                             node.start_mark.line + 1, node.start_mark.column + 1)


def convert(node: yaml.Node, index: LineIndex, key_span: Span | Place | None = None,
            depth: int = 0, budget: _Budget | None = None) -> Node:
    if budget is None:
        budget = _Budget(index.text)
    budget.spend(node)
    span = Place(index, node.start_mark.index, node.end_mark.index)
    if depth > 200:  # recursive aliases
        return Node(None, span, key_span, "null")
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Node] = {}
        for key_node, value_node in node.value:
            kspan = Place(index, key_node.start_mark.index, key_node.end_mark.index)
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            out[str(key)] = convert(value_node, index, kspan, depth + 1, budget)
        return Node(out, span, key_span, "map")
    if isinstance(node, yaml.SequenceNode):
        return Node([convert(v, index, None, depth + 1, budget) for v in node.value], span, key_span, "seq")
    value, tag = _scalar(node)
    return Node(value, span, key_span, tag, quoted=node.style in ("'", '"'))


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
