"""GPU Operator releases in a Helmfile state file, judged by the gpu-operator chart of the
release their `version` names (GL483, GL484): each inline values mapping as chart values,
each `set`/`setString` entry as Helm's `--set`/`--set-string`."""

from __future__ import annotations

from gpulint.common.operator_chart import OPERATOR_CHART, judge_setting, judge_values
from gpulint.formats.template import is_placeholder
from gpulint.kinds.helmfile.facts import releases
from gpulint.knowledge import gpu_operator
from gpulint.model import Document, str_value
from gpulint.registry import Context, check, finding

_TYPING = "Helmfile hands `set:` entries to `helm --set`, which, YAML quotes or not, makes"


@check("GL483", "GL484", kinds=("helmfile",))
def release_values(doc: Document, ctx: Context):
    for release in releases(doc):
        if not OPERATOR_CHART.search(release.chart):
            continue
        stated = str_value(release.version)
        judged = gpu_operator.judged_release(ctx.settings, stated, f"`version: {stated}` of the Helmfile release")
        for values in release.values:
            for code, where, message in judge_values(values, judged):
                yield finding(doc, code, where, message)
        for setting in release.settings:
            key = str_value(setting.name)
            if not key or is_placeholder(key):
                continue
            value = None if setting.value is None else _as_set(setting.value.value)
            said = judge_setting(key, value, setting.typed, judged, _TYPING, "a `setString:` entry")
            if said is not None:
                code, part, message = said
                where = setting.value if part == "value" and setting.value is not None else setting.name
                yield finding(doc, code, where.span, message)


def _as_set(value) -> str | None:
    """The text Helmfile hands to `--set name=value` (its SetValue.Value is a string: YAML's
    `true` arrives as "true", which `--set` makes a boolean again)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    return None
