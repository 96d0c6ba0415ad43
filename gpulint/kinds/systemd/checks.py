"""Rules about the units of dockerd and containerd on their own (GL209, GL210). The joins
with daemon.json and config.toml live in `crossfile/units.py`."""

from __future__ import annotations

from gpulint.kinds.systemd.facts import DAEMONS, Flag, linted_units, service_type
from gpulint.knowledge import dockerd_config
from gpulint.model import Document, Edit, Fix
from gpulint.registry import Context, check, finding, related
from gpulint.spelling import closest_key


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


def _dockerd_commands(doc: Document, ctx: Context):
    for unit in linted_units(ctx):
        command = unit.command
        if command is not None and command.doc is doc and command.program == "dockerd":
            yield command


@check("GL210", kinds=("systemd",))
def dockerd_flag_refused(doc: Document, ctx: Context):
    stated = dockerd_config.fleet_release(ctx.settings)
    releases = dockerd_config.applicable(stated)
    oldest, newest = dockerd_config.releases()[0][0], dockerd_config.releases()[-1][0]
    # a release newer than the transcribed ones may have flags gpulint does not know, and an
    # older one flags removed before the oldest transcribed release
    beyond = stated is not None and (_after(stated, newest) or stated < _key(oldest))
    known = frozenset().union(*(dockerd_config.flag_names(r) for r in releases))
    _, short, bools = dockerd_config.flags(tuple(releases))
    for command in _dockerd_commands(doc, ctx):
        runtimes: dict[str, Flag] = {}
        for flag in command.flags:
            refusal = _refusal(flag, known, short, bools, runtimes)
            if refusal is None:
                continue
            said, hint = refusal
            unknown = said.startswith("unknown")
            if unknown and (beyond or command.fork):
                continue
            # a name near no known flag may be one of a release newer than those transcribed
            unsure = unknown and stated is None and not hint
            yield finding(doc, "GL210", flag.span,
                          f"dockerd refuses this command line and does not start (`{said}`){hint}"
                          + (f"; no dockerd release from {releases[0]} to {newest} has this flag (set "
                             f"`docker-version` in the fleet configuration if the nodes run a newer one)"
                             if unsure else ""),
                          severity="warning" if unsure else None)


def _key(release: str) -> tuple[int, int]:
    major, _, minor = release.partition(".")
    return int(major), int(minor or 0)


def _after(stated: tuple[int, int], release: str) -> bool:
    """Whether the stated release is newer than a transcribed one ("28" covers every 28.x)."""
    major, _, minor = release.partition(".")
    return stated[0] > int(major) if not minor else stated > (int(major), int(minor))


def _refusal(flag: Flag, known, short, bools, runtimes: dict[str, Flag]) -> tuple[str, str] | None:
    """(dockerd's message, a hint) when dockerd's flag parser refuses the flag."""
    long = flag.written.startswith("--")
    if (long and flag.name not in known) or (not long and flag.name not in short.values()):
        if long:
            near = closest_key(flag.name, sorted(known))
            return f"unknown flag: --{flag.name}", f"; did you mean `--{near}`?" if near else ""
        return f"unknown shorthand flag: '{flag.name}' in {flag.written}", ""
    if flag.value is None:
        shown = f"--{flag.name}" if long else f"'{flag.written[1]}' in {flag.written}"
        return f"flag needs an argument: {shown}", ""
    if flag.name != "add-runtime" or flag.word.expands or (flag.value_word and flag.value_word.expands):
        return None
    invalid = f'invalid argument "{flag.value}" for "--add-runtime" flag: '
    name, equals, path = flag.value.partition("=")
    name, path = name.strip().lower(), path.strip()
    if not equals or not name or not path:
        return invalid + f"invalid runtime argument: {flag.value}", "; write `--add-runtime NAME=PATH`"
    if name == "runc":
        return invalid + "runtime name 'runc' is reserved", "; give the runtime another name"
    if name in runtimes:
        return invalid + f"runtime '{name}' was already defined", \
            " (names are compared in lower case); register each runtime once"
    runtimes[name] = flag
    return None


@check("GL211", kinds=("systemd",))
def exec_start_cleared(doc: Document, ctx: Context):
    for unit in linted_units(ctx):
        if doc not in unit.docs or unit.starts or not unit.reset or _settings(unit, "ExecStop"):
            continue
        # the empty ExecStart= that no later line follows with a command
        last = [(d, s) for d in unit.docs for s in d.tree.get("Service", "ExecStart")][-1]
        if last[0] is not doc:
            continue
        setting = last[1]
        yield finding(doc, "GL211", doc.index.span(setting.key_start, setting.key_end),
                      f"this empty ExecStart= clears the command of {unit.name} and no later line gives it another: "
                      f"systemd refuses to start the unit (\"Service has no ExecStart=, ExecStop=, or "
                      f"SuccessAction=. Refusing.\"); write the daemon's command on the next line "
                      f"(`ExecStart={'/usr/bin/dockerd' if unit.name == 'docker.service' else '/usr/bin/containerd'} ...`)")


def _settings(unit, key: str) -> list:
    return [s for d in unit.docs for s in d.tree.get("Service", key)]
