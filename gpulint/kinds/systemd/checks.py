"""Rules about the units of dockerd and containerd on their own (GL209). The joins
with daemon.json and config.toml live in `crossfile/units.py`."""

from __future__ import annotations

from gpulint.kinds.systemd.facts import DAEMONS, linted_units, service_type
from gpulint.model import Document, Edit, Fix
from gpulint.registry import Context, check, finding, related


@check("GL209", kinds=("systemd",))
def exec_start_not_reset(doc: Document, ctx: Context):
    for unit in linted_units(ctx):
        if doc not in unit.docs or service_type(unit) == "oneshot":
            continue
        # the packaged docker.service and containerd.service have an ExecStart= of their own
        packaged = not unit.unit_linted and not unit.reset and unit.name in DAEMONS.values()
        chain = ([None] if packaged else []) + list(unit.starts)
        for index, item in enumerate(chain):
            if index == 0 or item is None or item[0] is not doc:
                continue
            before = chain[index - 1]
            setting = item[1]
            key = doc.index.span(setting.key_start, setting.key_end)
            if before is None:
                said, where = "the packaged unit's", []
            else:
                said = "the one above" if before[0] is doc else f"the one of {before[0].path}"
                where = [related(before[0], before[0].index.span(before[1].key_start, before[1].key_end),
                                 "the ExecStart= it adds to")]
            # clearing the list is what the drop-in means unless it writes both commands itself
            fix = None if before is not None and before[0] is doc else Fix(
                "clear the unit's command first with an empty `ExecStart=`",
                (Edit(doc.abspath, _line_start(doc, setting.key_start), _line_start(doc, setting.key_start),
                      "ExecStart=\n"),))
            yield finding(doc, "GL209", key,
                          f"this ExecStart= adds a second command to {unit.name} after {said}, without an empty "
                          f"`ExecStart=` line before it to clear that one: systemd refuses to start the unit "
                          f"(\"Service has more than one ExecStart= setting, which is only allowed for "
                          f"Type=oneshot services. Refusing.\"); put `ExecStart=` on the line above",
                          fix=fix, related=where)


def _line_start(doc: Document, offset: int) -> int:
    return doc.text.rfind("\n", 0, offset) + 1
