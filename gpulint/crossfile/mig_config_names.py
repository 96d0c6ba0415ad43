"""GL466: a MIG config named where the MIG manager looks it up that the linted MIG configs do
not define: the GPU Operator's `migManager.config.default` (chart values or ClusterPolicy), a
Node's or NodePool's `nvidia.com/mig.config` label, a `kubectl label node ...
nvidia.com/mig.config=<name>` command line. The MIG manager stops with `selected mig-config not
present: <name>` and marks the node `nvidia.com/mig.config.state=failed`."""

from __future__ import annotations

from gpulint.crossfile.held_mig_configs import (
    all_linted_configs,
    chart_config,
    held_configs,
)
from gpulint.formats.shell import split_commands
from gpulint.formats.template import is_placeholder
from gpulint.kinds.commands.parse import shell_regions
from gpulint.kinds.mig_config.facts import named
from gpulint.kinds.mig_config.parse import Config
from gpulint.model import Document, Node, str_value
from gpulint.registry import Context, check, finding
from gpulint.spelling import closest_key

LABEL = "nvidia.com/mig.config"
# the one key of its ConfigMap the MIG manager reads (the chart's values.yaml: "ConfigMap MUST
# have a key named config.yaml")
KEY = "config.yaml"


def _names(found: list[Config]) -> list[str]:
    return sorted({name for c in found if c.name in ("", KEY) for name, _ in named(c.root)})


def _missing(doc: Document, where, value: str, names: list[str], whose: str, nodes: str):
    if not value or is_placeholder(value) or value in names or not names:
        return
    near = closest_key(value, names)
    hint = f"did you mean `{near}`?" if near else f"they define {', '.join(f'`{n}`' for n in names)}"
    yield finding(doc, "GL466", where.span if isinstance(where, Node) else where,
                  f"`{value}` is not a config of {whose}: on {nodes} the MIG manager stops with "
                  f"`selected mig-config not present: {value}` and marks the node "
                  f"`nvidia.com/mig.config.state=failed`; {hint}")


def _operator_configs(ctx: Context) -> list[Config]:
    """The linted configs the GPU Operator's MIG manager may be given: ConfigMaps' and the
    chart values'."""
    from_values = {id(c) for doc in ctx.of_kind("gpu-operator-values") for c in held_configs(doc)}
    return [c for c in all_linted_configs(ctx) if c.configmap or id(c) in from_values]


_UNLABELLED = f"every node without a `{LABEL}` label"


@check("GL466", kinds=("gpu-operator-values",))
def values_default_missing(doc: Document, ctx: Context):
    config = chart_config(doc)
    default = config.get("default") if config is not None else None
    if default is None:
        return
    name, data = str_value(config.get("name")), config.get("data")
    own = held_configs(doc)
    if data is not None and data.is_map and data.value:
        if own and not any(c.name == KEY for c in own):
            yield finding(doc, "GL466", data.key_span,
                          f"the MIG manager reads only the key `{KEY}` of its ConfigMap, and "
                          f"`migManager.config.data` has none: it finds no config `{default.value}`")
            return
        whose = "`migManager.config.data`"
        found = own
    elif name:
        whose = f"the linted ConfigMap `{name}`"
        found = [c for c in _operator_configs(ctx) if c.configmap == name]
    else:
        return
    yield from _missing(doc, default, str_value(default) or "", _names(found), whose, _UNLABELLED)


@check("GL466", kinds=("kubernetes",))
def manifest_names_missing(doc: Document, ctx: Context):
    for obj in doc.tree or ():
        if not obj.is_map:
            continue
        kind = str_value(obj.get("kind"))
        if kind == "ClusterPolicy":
            config = obj.get("spec", "migManager", "config")
            default = config.get("default") if config is not None and config.is_map else None
            name = str_value(config.get("name")) if default is not None else None
            if name:
                found = [c for c in _operator_configs(ctx) if c.configmap == name]
                yield from _missing(doc, default, str_value(default) or "", _names(found),
                                    f"the linted ConfigMap `{name}`", _UNLABELLED)
        label = _label(obj, kind)
        if label is not None:
            yield from _missing(doc, label, str_value(label) or "", _names(_operator_configs(ctx)),
                                "the linted MIG manager ConfigMaps", "this node")


def _label(obj: Node, kind: str | None) -> Node | None:
    """The `nvidia.com/mig.config` label a Node or a Karpenter NodePool gives its nodes."""
    path = {"Node": ("metadata", "labels"), "NodePool": ("spec", "template", "metadata", "labels")}.get(kind or "")
    labels = obj.get(*path) if path else None
    return labels.get(LABEL) if labels is not None and labels.is_map else None


@check("GL466", kinds=("commands",))
def command_label_missing(doc: Document, ctx: Context):
    if LABEL not in doc.text:
        return
    names = _names(_operator_configs(ctx))
    if not names:
        return
    for start, end, newline_ends in shell_regions(doc.path, doc.text, doc.index):
        for words in split_commands(doc.text, start, end, newline_ends):
            for word in _labelled(words):
                value = word.text.split("=", 1)[1]
                # the value where it is written plainly after the `=`, else the whole word
                plain = doc.text.startswith(LABEL + "=", word.start) and not word.quoted
                where = doc.index.span(word.start + len(LABEL) + 1 if plain else word.start, word.end)
                yield from _missing(doc, where, value, names, "the linted MIG manager ConfigMaps", "these nodes")


def _labelled(words):
    """The `nvidia.com/mig.config=<name>` words of a `kubectl label node(s)` command."""
    texts = [w.text for w in words]
    if "kubectl" not in texts:
        return []
    rest = texts[texts.index("kubectl") + 1:]
    if "label" not in rest or not any(t in ("node", "nodes", "no") or t.startswith(("node/", "nodes/"))
                                      for t in rest[rest.index("label") + 1:]):
        return []
    return [w for w in words if w.text.startswith(LABEL + "=") and not w.expands]
