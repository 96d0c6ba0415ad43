"""GL451-GL456 on the device plugin configs that files of other kinds hold: the GPU
Operator's values (`devicePlugin.config.data`, the ConfigMap the chart creates with
`create: true`) and ConfigMaps in a manifest beside other objects (the plugin's DaemonSet).
They are judged as the device plugin's own files are, at their lines in the file."""

from __future__ import annotations

from gpulint.formats.errors import ParseError
from gpulint.formats.template import neutralise
from gpulint.kinds.device_plugin import checks
from gpulint.kinds.device_plugin.facts import HELD
from gpulint.kinds.device_plugin.parse import Config, embedded
from gpulint.model import Document, Span
from gpulint.registry import Context, check, finding

_RULES = (checks.key_ignored, checks.value_type, checks.shared_entry_refused, checks.shared_resource_name,
          checks.flag_value, checks.sharing_conflict)


def held_configs(doc: Document) -> list[Config]:
    """The configs of `devicePlugin.config.data` (memoised on the document)."""
    if HELD not in doc.cache:
        doc.cache[HELD], doc.cache[HELD + ".errors"] = _read(doc)
    return doc.cache[HELD]


def _holders(doc: Document) -> list:
    """The mappings whose string values may be device plugin configs."""
    if doc.kind == "gpu-operator-values":
        tree = doc.tree
        return [tree.get("devicePlugin", "config", "data")] if tree is not None and tree.is_map else []
    return [obj.get("data") for obj in doc.tree or () if obj.is_map and obj.get("kind") is not None
            and obj.get("kind").value == "ConfigMap"]


def _read(doc: Document) -> tuple[list[Config], list[ParseError]]:
    found, errors = [], []
    pairs = [(name, value) for data in _holders(doc) if data is not None and data.is_map
             for name, value in data.items()]
    # the text the tree was read from: a template's expressions set aside
    text = neutralise(doc.text) if doc.templated else doc.text
    for name, value in pairs:
        if not isinstance(value.value, str) or "version" not in value.value:
            continue
        try:
            root = embedded(text, doc, value)
        except ParseError as exc:
            errors.append(exc)
            continue
        if root is not None:
            found.append(Config(name, root))
    return found, errors


@check("GL451", "GL452", "GL453", "GL454", "GL455", "GL456", kinds=("gpu-operator-values", "kubernetes"))
def device_plugin_config_held(doc: Document, ctx: Context):
    if not held_configs(doc) and not doc.cache[HELD + ".errors"]:
        return
    for exc in doc.cache[HELD + ".errors"]:
        yield finding(doc, "GL452", Span.point(exc.line, exc.column),
                      f"{exc.message}: the device plugin cannot read it and exits at start")
    for rule in _RULES:
        yield from rule(doc, ctx)
