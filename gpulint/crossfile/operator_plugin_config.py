"""GL451-GL456 on the device plugin configs the GPU Operator's values hold
(`devicePlugin.config.data`, the ConfigMap the chart creates with `create: true`): judged
as the device plugin's own files are, at their lines in the values file."""

from __future__ import annotations

from gpulint.formats.errors import ParseError
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


def _read(doc: Document) -> tuple[list[Config], list[ParseError]]:
    data = doc.tree.get("devicePlugin", "config", "data") if doc.tree is not None and doc.tree.is_map else None
    found, errors = [], []
    for name, value in data.items() if data is not None and data.is_map else ():
        if not isinstance(value.value, str):
            continue
        try:
            root = embedded(doc.text, doc, value)
        except ParseError as exc:
            errors.append(exc)
            continue
        if root is not None:
            found.append(Config(name, root))
    return found, errors


@check("GL451", "GL452", "GL453", "GL454", "GL455", "GL456", kinds=("gpu-operator-values",))
def device_plugin_config_in_values(doc: Document, ctx: Context):
    if not held_configs(doc) and not doc.cache[HELD + ".errors"]:
        return
    for exc in doc.cache[HELD + ".errors"]:
        yield finding(doc, "GL452", Span.point(exc.line, exc.column),
                      f"{exc.message}: the device plugin cannot read it and exits at start")
    for rule in _RULES:
        yield from rule(doc, ctx)
