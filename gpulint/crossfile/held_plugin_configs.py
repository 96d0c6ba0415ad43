"""GL451-GL456 on the device plugin configs that files of other kinds hold: the GPU
Operator's values (`devicePlugin.config.data`, the ConfigMap the chart creates with
`create: true`) and ConfigMaps in a manifest beside other objects (the plugin's DaemonSet).
They are judged as the device plugin's own files are, at their lines in the file."""

from __future__ import annotations

from gpulint.crossfile.held import judge_held
from gpulint.formats.errors import ParseError
from gpulint.formats.template import neutralise
from gpulint.kinds.device_plugin import checks
from gpulint.kinds.device_plugin.facts import HELD, configs
from gpulint.kinds.device_plugin.parse import (
    Config,
    configmap_name,
    embedded,
    may_hold_config,
)
from gpulint.model import Document
from gpulint.registry import Context, check

_RULES = (checks.key_ignored, checks.value_type, checks.shared_entry_refused, checks.shared_resource_name,
          checks.flag_value, checks.sharing_conflict)


def held_configs(doc: Document) -> list[Config]:
    """The configs of `devicePlugin.config.data` (memoised on the document)."""
    if HELD not in doc.cache:
        doc.cache[HELD], doc.cache[HELD + ".errors"] = _read(doc)
    return doc.cache[HELD]


def _holders(doc: Document) -> list:
    """(ConfigMap name, mapping) whose string values may be device plugin configs."""
    if doc.kind == "gpu-operator-values":
        tree = doc.tree
        config = tree.get("devicePlugin", "config") if tree is not None and tree.is_map else None
        name = config.get("name") if config is not None and config.is_map else None
        return [(name.value if name is not None and isinstance(name.value, str) else "", config.get("data"))] \
            if config is not None and config.is_map else []
    return [(configmap_name(obj), obj.get("data")) for obj in doc.tree or () if obj.is_map and configmap_name(obj)]


def _read(doc: Document) -> tuple[list[Config], list[ParseError]]:
    found, errors = [], []
    pairs = [(configmap, name, value) for configmap, data in _holders(doc) if data is not None and data.is_map
             for name, value in data.items() if isinstance(value.value, str) and may_hold_config(value.value)]
    # the text the tree was read from: a template's expressions set aside (only where a
    # config may be held: most manifests hold none)
    text = (neutralise(doc.text) if doc.templated else doc.text) if pairs else ""
    for configmap, name, value in pairs:
        try:
            root = embedded(text, doc, value)
        except ParseError as exc:
            errors.append(exc)
            continue
        if root is not None:
            found.append(Config(name, root, configmap))
    return found, errors


@check("GL451", "GL452", "GL453", "GL454", "GL455", "GL456", kinds=("gpu-operator-values", "kubernetes"))
def device_plugin_config_held(doc: Document, ctx: Context):
    if held_configs(doc) or doc.cache[HELD + ".errors"]:
        yield from judge_held(doc, ctx, doc.cache[HELD + ".errors"], "GL452",
                              "the device plugin cannot read it and exits at start", _RULES)


@check("GL458", kinds=("gpu-operator-values",))
def operator_default_config_missing(doc: Document, ctx: Context):
    config = doc.tree.get("devicePlugin", "config") if doc.tree is not None and doc.tree.is_map else None
    default = config.get("default") if config is not None and config.is_map else None
    if default is None:
        return
    data, name = config.get("data"), config.get("name")
    if data is not None and data.is_map and data.value:
        yield from checks.default_missing(doc, default, list(data.value), "the keys of `devicePlugin.config.data`")
    elif name is not None and isinstance(name.value, str) and name.value:
        names = _linted_configmap_keys(ctx, name.value)
        if names is not None:
            yield from checks.default_missing(doc, default, names,
                                              f"the configs of the linted ConfigMap `{name.value}`")


def _linted_configmap_keys(ctx: Context, configmap: str) -> list[str] | None:
    """The config names of the linted ConfigMaps called `configmap` (None: none is linted)."""
    names = [c.name for c in _all_linted_configs(ctx) if c.configmap == configmap]
    return names or None


_CONFIG_LABEL = "nvidia.com/device-plugin.config"


@check("GL458", kinds=("kubernetes",))
def node_label_config_missing(doc: Document, ctx: Context):
    labelled = [(obj, labels.get(_CONFIG_LABEL)) for obj, labels in _node_labels(doc)]
    labelled = [(obj, label) for obj, label in labelled if label is not None]
    if not labelled:
        return
    names = sorted({c.name for c in _all_linted_configs(ctx) if c.name})
    for _, label in labelled:
        yield from checks.default_missing(doc, label, names, "the configs of the linted device plugin ConfigMaps",
                                          unlabelled=False)


def _node_labels(doc: Document):
    """(object, labels mapping) of the Node objects and Karpenter NodePools of a manifest."""
    for obj in doc.tree or ():
        kind = obj.get("kind") if obj.is_map else None
        path = {"Node": ("metadata", "labels"), "NodePool": ("spec", "template", "metadata", "labels")}.get(
            kind.value if kind is not None else None)
        labels = obj.get(*path) if path else None
        if labels is not None and labels.is_map:
            yield obj, labels


def _all_linted_configs(ctx: Context) -> list[Config]:
    return ctx.memo("crossfile.all-device-plugin-configs", lambda: [
        *(c for doc in ctx.of_kind("kubernetes") for c in held_configs(doc)),
        *(c for doc in ctx.of_kind("gpu-operator-values") for c in held_configs(doc)),
        *(c for doc in ctx.of_kind("device-plugin") for c in configs(doc))])
