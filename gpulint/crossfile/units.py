"""The systemd units of dockerd and containerd joined with the node's other files: the
flags a unit gives dockerd against the daemon.json it reads (GL208) and among the node's
runtimes (`dockerd_nodes`), and the file containerd's `--config` names against the
config.toml gpulint linted (GL124)."""

from __future__ import annotations

from gpulint.common.runtimes import NodeConfig, RuntimeEntry, configs_with_main
from gpulint.formats.template import is_placeholder
from gpulint.kinds.daemon_json.checks import BUILTIN_RUNTIMES, docker_version
from gpulint.kinds.daemon_json.facts import daemon_node
from gpulint.kinds.systemd.facts import Command, DaemonUnit, Flag, linted_units
from gpulint.knowledge import dockerd_config
from gpulint.knowledge.runtimes import is_nvidia_handler
from gpulint.model import Document, Node, Span
from gpulint.registry import Context, check, finding, related

DEFAULT_DAEMON_JSON = "/etc/docker/daemon.json"
DEFAULT_CONTAINERD_CONFIG = "/etc/containerd/config.toml"


def commands(ctx: Context, program: str) -> list[tuple[DaemonUnit, Command]]:
    """(unit, the command systemd runs) of every linted unit that runs `program`."""
    out = []
    for unit in linted_units(ctx):
        command = unit.command
        if command is not None and command.program == program:
            out.append((unit, command))
    return out


def in_tree(ctx: Context, kind: str, unit: DaemonUnit, path: str) -> Document | None:
    """The linted file of `kind` at the absolute `path` of the unit's node tree."""
    target = unit.root + path.lstrip("/")
    return next((d for d in ctx.of_kind(kind) if d.abspath.replace("\\", "/") == target), None)


def named_file(command: Command, flag_names: tuple[str, ...], default: str) -> tuple[str | None, Flag | None]:
    """The file a daemon reads by the last of `flag_names` given, else `default` (also
    beside a variable such as `$DOCKER_OPTS`, which packages leave empty); None when the
    path is not known here (a variable, a relative path)."""
    given = [f for f in command.flags if f.name in flag_names]
    if not given:
        return default, None
    flag = given[-1]
    if flag.value is None or flag.value_word is not None and flag.value_word.expands \
            or not flag.value.startswith("/") or is_placeholder(flag.value):
        return None, flag
    return flag.value, flag


def daemon_json_of(ctx: Context, unit: DaemonUnit, command: Command) -> tuple[str, Document] | None:
    """(the path dockerd reads, the linted daemon.json there), or None."""
    path, _ = named_file(command, ("config-file",), DEFAULT_DAEMON_JSON)
    doc = in_tree(ctx, "daemon-json", unit, path) if path is not None else None
    return (path, doc) if doc is not None else None


def readable_daemon_json(ctx: Context, unit: DaemonUnit, command: Command) -> tuple[str, Document] | None:
    """daemon_json_of, when that file is a JSON object gpulint read (not a template)."""
    joined = daemon_json_of(ctx, unit, command)
    if joined is None or not isinstance(joined[1].tree, Node) or not joined[1].tree.is_map or joined[1].templated:
        return None
    return joined


def runtime_names(config: NodeConfig) -> str:
    return ", ".join(f"`{n}`" for n in sorted(config.runtimes)) or "none"


def _file_keys(tree: Node, flat: frozenset[str]) -> dict[str, Node]:
    """daemon.json's keys as dockerd's duplicate check sees them (configValuesSet): an
    object value whose key is not one of `flat` counts as its members."""
    out: dict[str, Node] = {}
    for key, value in tree.items():
        if value.is_map and key not in flat:
            out.update(dict(value.items()))
        else:
            out[key] = value
    return out


def _go_value(node: Node) -> str:
    """A JSON value as dockerd prints it in its message (Go's %v)."""
    value = node.plain()
    return _go(value)


def _go(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + " ".join(_go(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "<nil>" if value is None else str(value)


# flags whose values collect into a map (opts.NamedMapOpts): Go prints it with sorted keys
_MAP_FLAGS = ("log-opt",)


def _flag_value(flags: list[Flag], named: bool) -> str:
    """The flag's value as dockerd prints it in its message (the flag value's String())."""
    values = [f.value or "" for f in flags]
    if flags[0].name == "add-runtime":  # opts.RuntimeOpt prints the runtimes' names
        return "[" + " ".join(v.partition("=")[0].strip().lower() for v in values) + "]"
    if named:
        if flags[0].name in _MAP_FLAGS:
            return "map[" + " ".join(sorted(v.replace("=", ":", 1) for v in values)) + "]"
        return "[" + " ".join(values) + "]"
    return values[-1]


def conflicts(ctx: Context, command: Command, tree: Node) -> list[tuple[str, list[Flag], Node]]:
    """(daemon.json key, the flags that set it, the file's value) for each setting given
    both ways, as dockerd's findConfigurationConflicts finds them (flags by name)."""
    releases = tuple(dockerd_config.applicable(docker_version(ctx)))
    named, short, _ = dockerd_config.flags(releases)
    known = frozenset().union(*(dockerd_config.flag_names(r) for r in releases))
    letters = {flag: letter for letter, flag in short.items()}
    skip = frozenset().union(*(dockerd_config.skip_duplicates(r) for r in releases)) \
        - dockerd_config.duplicates_refused_by(docker_version(ctx))
    flat = frozenset().union(*(dockerd_config.flat_options(r) for r in releases))
    migrated = {old for r in releases for old in dockerd_config.migrated_keys(r)}
    keys = _file_keys(tree, flat)
    by_name: dict[str, list[Flag]] = {}
    for flag in command.flags:
        by_name.setdefault(flag.name, []).append(flag)
    found = []
    for name in sorted(by_name):  # pflag visits the flags set in the order of their names
        if name not in known:
            continue  # dockerd stops at an unknown flag first (GL210)
        candidates = [named[name]] + [name] * (name in migrated) if name in named else [name, letters.get(name, "")]
        key = next((k for k in candidates if k in keys and k not in skip), None)
        if key is not None:
            found.append((key, by_name[name], keys[key]))
    return found


_PROXIES = ("http-proxy", "https-proxy", "no-proxy")


@check("GL208", project=True)
def flag_also_in_daemon_json(ctx: Context):
    for unit, command in commands(ctx, "dockerd"):
        joined = readable_daemon_json(ctx, unit, command)
        if joined is None:
            continue
        path, doc = joined
        releases = tuple(dockerd_config.applicable(docker_version(ctx)))
        named, _, _ = dockerd_config.flags(releases)
        found = conflicts(ctx, command, doc.tree)
        if not found:
            continue
        items = ", ".join(
            f"{key}: (from flag: {_flag_value(flags, flags[0].name in named) if key not in _PROXIES else '…'}, "
            f"from file: {_go_value(value) if key not in _PROXIES else '…'})"
            for key, flags, value in found)
        refusal = (f"unable to configure the Docker daemon with file {path}: the following directives are "
                   f"specified both as a flag and in the configuration file: {items}")
        for key, flags, value in found:
            hint = (" (the packaged unit's `-H fd://` is the usual one: replace the command in a drop-in with "
                    "`ExecStart=` and `ExecStart=/usr/bin/dockerd` without `-H`, or keep the sockets on the "
                    "command line only)" if key == "hosts" and any(f.value == "fd://" for f in flags) else "")
            for flag in flags:
                where_doc, where = flag.written_in
                places = [related(doc, value.key_span or value.span, f"`{key}` in daemon.json")]
                via = ""
                if where_doc is not command.doc:  # from a variable an environment file sets
                    variable = command.doc.text[flag.word.start:flag.word.end]
                    via = f" (the unit's `ExecStart=` passes it to dockerd as `{variable}`)"
                    places.append(related(command.doc, flag.span, f"`{variable}` in {unit.name}"))
                yield finding(where_doc, "GL208", where,
                              f"`{flag.written}` sets `{key}`{via}, which {doc.path} sets too: dockerd refuses "
                              f"to start (\"{refusal}\"); set it in one place only{hint}",
                              related=places)


def dockerd_nodes(ctx: Context) -> list[NodeConfig]:
    """One NodeConfig per linted daemon.json, with the runtimes (`--add-runtime`) and the
    default runtime (`--default-runtime`) its node's unit gives dockerd; a unit that gives
    them without a linted daemon.json is a NodeConfig of its own (kind "dockerd")."""
    configs = [daemon_node(doc) for doc in ctx.of_kind("daemon-json")]
    by_path = {c.doc.abspath: c for c in configs}
    for unit, command in commands(ctx, "dockerd"):
        added = [f for f in command.get("add-runtime") if _runtime_flag(f) is not None]
        defaults = [f for f in command.get("default-runtime") if f.value and not _expands(f)]
        if not added and not defaults:
            continue
        joined = daemon_json_of(ctx, unit, command)
        config = by_path.get(joined[1].abspath) if joined is not None else None
        if config is None:
            config = NodeConfig(command.doc, "dockerd", {}, "runc", [])
            configs.append(config)
        config.docs.append(command.doc)
        for flag in added:
            name, path = _runtime_flag(flag)
            # dockerd merges the file's runtimes over the flags': an entry of the file wins
            if name not in config.runtimes:
                where = flag.part_node(flag.value.index(path, flag.value.index("=")))
                config.runtimes[name] = RuntimeEntry(name, command.doc, where, path, None,
                                                     is_nvidia_handler(name, path))
        file_default = config.kind == "daemon-json" and config.doc.tree.get("default-runtime") is not None
        if defaults and not file_default:
            config.default_runtime = defaults[-1].value
    return configs


def _expands(flag: Flag) -> bool:
    return flag.word.expands or (flag.value_word is not None and flag.value_word.expands)


def _runtime_flag(flag: Flag) -> tuple[str, str] | None:
    """(name, path) of `--add-runtime NAME=PATH` as dockerd records it: blanks around
    both trimmed and the name lowercased (opts.RuntimeOpt.Set)."""
    if flag.value is None or _expands(flag):
        return None
    name, equals, path = flag.value.partition("=")
    name, path = name.strip().lower(), path.strip()
    return (name, path) if equals and name and path else None


@check("GL124", project=True)
def containerd_reads_another_config(ctx: Context):
    found = commands(ctx, "containerd")
    containerd = [c for c in ctx.fact("node-configs") if c.kind == "containerd"] if found else []
    for unit, command in found:
        path, flag = named_file(command, ("config",), DEFAULT_CONTAINERD_CONFIG)
        if flag is None or path is None or not unit.in_node_tree:
            continue
        read = unit.root + path.lstrip("/")
        covered = {d.abspath for c in containerd if c.doc.abspath.replace("\\", "/") == read for d in c.docs}
        for config in containerd:
            where = config.doc.abspath.replace("\\", "/")
            if where == read or config.doc.abspath in covered or not where.startswith(unit.root + "etc/"):
                continue
            names = runtime_names(config)
            yield finding(command.doc, "GL124", flag.value_span,
                          f"{unit.name} starts containerd with `{flag.written} {path}`, so containerd reads "
                          f"{path}, not the linted {config.doc.path}: the runtimes gpulint checked there "
                          f"({names}, default `{config.default_runtime}`) are not this node's; point "
                          f"`{flag.written}` at that file, or install it as {path}",
                          related=[related(config.doc, Span.point(1, 1), "not read by this containerd")])


@check("GL201", project=True)
def unit_default_runtime_undefined(ctx: Context):
    """`--default-runtime` on the unit's command line, beside a linted daemon.json that
    leaves the default to it: the runtime must come from the file's `runtimes` or an
    `--add-runtime` (daemon.json's own default is GL201 of the file)."""
    for unit, command in commands(ctx, "dockerd"):
        given = [f for f in command.get("default-runtime") if f.value and not _expands(f)]
        joined = readable_daemon_json(ctx, unit, command)
        if not given or joined is None or command.opaque:
            continue  # without the file, or with flags a variable adds, the runtimes are not all known
        path, doc = joined
        if doc.tree.get("default-runtime") is not None:
            continue
        flag = given[-1]
        name = flag.value
        config = next(iter(configs_with_main(ctx, doc)), None)
        if config is None or config.defines(name) or name in BUILTIN_RUNTIMES or is_placeholder(name):
            continue
        names = runtime_names(config)
        yield finding(command.doc, "GL201", flag.value_span,
                      f"`{flag.written} {name}` names a runtime that neither {path} (runtimes: {names}) nor an "
                      f"`--add-runtime` of this command line defines: dockerd refuses to start (\"specified "
                      f"default runtime '{name}' does not exist\"); add `--add-runtime {name}=<path>` or define "
                      f"it under `runtimes` in daemon.json",
                      related=[related(doc, doc.tree.get("runtimes") or doc.tree, "daemon.json searched")])


# daemon.json files dockerd reads without the packaged docker.service: rootless Docker's
# (~/.config/docker/, run by dockerd-rootless.sh) and Windows' (C:\ProgramData\docker\config)
_NOT_UNDER_THE_PACKAGED_UNIT = ("/.config/docker/", "/programdata/docker/")


@check("GL208", project=True)
def hosts_beside_the_packaged_unit(ctx: Context):
    """`hosts` in a daemon.json whose node runs the packaged docker.service, which starts
    `dockerd -H fd://` (docker-ce since 18.09, Debian's and Ubuntu's docker.io): with no
    linted unit of that node to say otherwise, a warning."""
    known = {unit.root for unit, _ in commands(ctx, "dockerd")}
    for doc in ctx.of_kind("daemon-json"):
        node = doc.tree.get("hosts") if isinstance(doc.tree, Node) and not doc.templated else None
        where = "/" + doc.abspath.replace("\\", "/").lower()
        if node is None or any(part in where for part in _NOT_UNDER_THE_PACKAGED_UNIT) \
                or (doc.tree.get("rootless") is not None and doc.tree.get("rootless").value is True):
            continue
        path = doc.abspath.replace("\\", "/")
        root = path[: path.rindex("/etc/docker/") + 1] if "/etc/docker/" in path else path.rsplit("/", 1)[0] + "/"
        if root in known:
            continue  # the node's own unit is linted: judged by its command line
        yield finding(doc, "GL208", node.key_span or node.span,
                      f"`hosts` is also a flag of the packaged docker.service, which starts `dockerd -H fd:// ...`: "
                      f"on such a node dockerd refuses to start (\"the following directives are specified both as "
                      f"a flag and in the configuration file: hosts: (from flag: [fd://], from file: "
                      f"{_go_value(node)})\") unless a drop-in replaces the command (`ExecStart=` then "
                      f"`ExecStart=/usr/bin/dockerd --containerd=/run/containerd/containerd.sock`); lint that "
                      f"drop-in with this file, or keep the sockets on the command line",
                      severity="warning")
