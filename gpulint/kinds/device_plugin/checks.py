"""GL451-GL456 and GL458: the NVIDIA device plugin's config file, judged by what the
plugin's own decoder, flag validation and config manager do with it (rules/device-plugin.yaml,
with its sources)."""

from __future__ import annotations

from gpulint.common.gojson import json_type
from gpulint.common.runtimes import plugin_runtime_gap
from gpulint.formats.template import is_placeholder
from gpulint.kinds.device_plugin import facts
from gpulint.kinds.device_plugin.parse import CHART_DEFAULT, CHART_VALUES
from gpulint.knowledge import device_plugin as known
from gpulint.model import Document, Node, sequence, str_value
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding, related
from gpulint.spelling import closest_key

_PLUGIN_EXITS = "the plugin exits at start"
_DECODE = "unable to parse config file: error parsing config file: unmarshal error: ..."


def _item_tables() -> set[str]:
    """The tables whose mappings are the items of a list (`sharing.mps.resources`)."""
    return {f"{t}.{k}" for t, spec in known.tables().items() for k, f in spec["keys"].items()
            if f["type"] == "list" and known.table(f"{t}.{k}") is not None}


def _where(table: str) -> str:
    if not table:
        return "at the top level"
    return f"in the entries of `{table}`" if table in _item_tables() else f"under `{table}`"


def _homes(key: str, table: str) -> list[list[str]]:
    """The other tables that read `key` (written exactly), those of one shape together
    (`sharing.mps` reads what `sharing.timeSlicing` reads)."""
    shapes: dict[int, list[str]] = {}
    for path, spec in known.tables().items():
        if path != table and key in spec["keys"]:
            shapes.setdefault(id(spec), []).append(path)
    return list(shapes.values())


@check("GL451", kinds=("device-plugin",))
def key_ignored(doc: Document, ctx: Context):
    newest = _newest_release(ctx)
    for config in facts.configs(doc):
        yield from _set_aside(doc, config.root)
        for key in facts.keys(config.root):
            if key.spec is not None:
                if newest is not None and _release(key.spec["since"]) > newest:
                    yield finding(doc, "GL451", key.node.key_span,
                                  f"`{key.key}` arrived in device plugin {key.spec['since']}; the linted "
                                  f"manifests run {_shown_release(newest)}, which drops it without a word")
                continue
            known_keys = known.table(key.table)["keys"]
            near = closest_key(key.key, known_keys)
            homes = _homes(key.key, key.table)
            if near is not None:
                hint = f"did you mean `{near}`?"
            elif len(homes) == 1:
                hint = f"`{key.key}` belongs {' or '.join(_where(path) for path in homes[0])}"
            else:
                hint = f"the plugin reads {', '.join(f'`{k}`' for k in known_keys)} here"
            yield finding(doc, "GL451", key.node.key_span,
                          f"the device plugin has no `{key.key}` {_where(key.table)} and drops it "
                          f"without a word, so the setting has no effect; {hint}")


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.lstrip("v").split("."))


def _newest_release(ctx: Context) -> tuple[int, ...] | None:
    """The newest device plugin release the linted manifests run (None: none is linted)."""
    releases = ctx.fact("device-plugin-releases")
    return releases[-1] if releases else None


def _shown_release(release: tuple[int, ...]) -> str:
    return "device plugin v" + ".".join(str(part) for part in release)


def _set_aside(doc: Document, root: Node):
    """The keys the plugin reads, then sets aside with a warning in its log."""
    resources = facts.folded(root, "resources")
    if resources is not None and resources.is_map and any(sequence(v) for v in resources.value.values()):
        yield finding(doc, "GL451", resources.key_span,
                      f"the plugin reads `resources` but sets it aside (`{known.set_aside('resources')}`): "
                      f"GPUs keep the names `nvidia.com/gpu` and `nvidia.com/mig-<profile>`")
    for strategy, table in facts.sharing_tables(root):
        by_default = table.get("renameByDefault")
        renamed = by_default is not None and by_default.value is True
        for entry in sequence(table.get("resources")):
            if not entry.is_map:
                continue
            name, rename = str_value(entry.get("name")), entry.get("rename")
            name = facts.prefixed(name) if name else None
            default = f"{name}{known.resource_names()['shared_suffix']}" if name else None
            written = str_value(rename)
            if written is not None and not (renamed and facts.prefixed(written) == default):
                shown = f"`{default if renamed else name}`" if name else "the resource's own name"
                said = known.set_aside("rename").format(table=strategy)
                yield finding(doc, "GL451", rename.key_span,
                              f"the plugin sets `rename` aside (`{said}`) and advertises {shown}; "
                              f"`renameByDefault: true` is the one renaming it applies")
            devices = entry.get("devices")
            if devices is not None and not devices.is_map and devices.tag != "null" \
                    and devices.value != "all" and not is_placeholder(devices.value):
                said = known.set_aside("devices").format(table=strategy)
                yield finding(doc, "GL451", devices.key_span,
                              f"the plugin sets `devices` aside (`{said}`) and shares every GPU")


_GO_TYPE = {"str": "string", "bool": "bool", "int": "int", "ints": "[]int"}
_WORDS = {"str": "a string", "bool": "true or false", "int": "a whole number", "map": "a mapping",
          "list": "a list", "ints": "a list of whole numbers", "strings": "a string or a list of strings",
          "duration": "a duration (`60s`) or a number of nanoseconds",
          "devices": "`all`, a count, or a list of GPU indexes or UUIDs"}


def _fits(node: Node, kind: str, exact: bool) -> bool:
    value = node.value
    if node.tag == "null" or is_placeholder(value):
        return True  # JSON null leaves the field unset; a template fills a placeholder in
    if kind == "map":
        return node.is_map
    if kind == "list":
        return node.is_seq
    if kind == "bool":
        return type(value) is bool
    if kind == "int":
        return type(value) is int
    if kind == "str":
        # a struct's string field takes a YAML number or boolean as its text
        # (sigs.k8s.io/yaml); a field with its own decoder does not
        return type(value) is str or (not exact and node.is_scalar)
    if kind == "strings":
        return type(value) is str or (node.is_seq and all(type(v.value) is str for v in value))
    if kind == "ints":
        return node.is_seq and all(type(v.value) is int for v in value)
    if kind == "duration":
        return type(value) in (int, float, str)
    return node.is_scalar or node.is_seq  # devices: judged by GL453


def _dotted(table: str, key: str) -> str:
    name = facts.canonical(table, key) or key
    return f"{table}.{name}" if table else name


@check("GL452", kinds=("device-plugin",))
def value_type(doc: Document, ctx: Context):
    yield from _chart_value_type(doc)
    for config in facts.configs(doc):
        version = config.root.get("version")
        if version is not None and str_value(version) != "v1":
            yield finding(doc, "GL452", version.span,
                          f"the plugin reads only `version: v1`: {_PLUGIN_EXITS} with `unknown "
                          f"version: {version.value}`")
        for key in facts.keys(config.root):
            if key.spec is None or _fits(key.node, key.spec["type"], key.exact):
                continue
            kind = key.spec["type"]
            if kind in _GO_TYPE:
                field = "value" if key.exact else \
                    f"struct field {known.table(key.table)['go']}.{_dotted(key.table, key.key)}"
                into = f"{field} of type {_GO_TYPE[kind]}"
            else:  # a table: the error names its decoder's own types
                into = "..."
            yield finding(doc, "GL452", key.node.span,
                          f"`{key.key}` must be {_WORDS[kind]}: {_PLUGIN_EXITS} with `{_DECODE} json: "
                          f"cannot unmarshal {json_type(key.node)} into Go {into}`")


def _chart_values(doc: Document):
    """(key, node, spec) of the chart's values that become the plugin's environment."""
    root = doc.cache.get(CHART_VALUES)
    for key, spec in known.chart_values().items():
        node = root.get(key) if root is not None else None
        if node is not None and node.tag != "null" and not is_placeholder(node.value):
            yield key, node, spec


def _chart_value_type(doc: Document):
    for key, node, spec in _chart_values(doc):
        wanted = spec["type"]
        if (type(node.value) is bool) if wanted == "bool" else (type(node.value) is str):
            continue
        shown = f"a {json_type(node)}" if node.is_scalar else "a mapping" if node.is_map else "a list"
        yield finding(doc, "GL452", node.span,
                      f"the chart passes `{key}` to the plugin (`{spec['env']}`) only when it is "
                      f"{'true or false' if wanted == 'bool' else 'a string'} (its template tests "
                      f"`typeIs \"{wanted}\"`); this is {shown}, so it is dropped without a word and "
                      f"the plugin keeps its default", severity="warning")


def _missing(doc: Document, holder: Node, table: str):
    required = known.table(table).get("required", {})
    for key, message in required.items():
        node = holder.get(key)
        if node is None or (node.is_seq and not node.value):
            where = node.span if node is not None else _first_key(holder)
            yield finding(doc, "GL453", where,
                          f"`{key}` is missing {_where(table)}: {_PLUGIN_EXITS} with `{message}`")


def _first_key(holder: Node):
    first = next(iter(holder.value.values()), None) if holder.value else None
    return first.key_span if first is not None else holder.span


def _empty_time_slicing(doc: Document, root: Node):
    """`timeSlicing:` left empty: its decoder is called with null too and finds no resources
    (`mps`, a pointer, is simply left unset)."""
    table = facts.folded(root, "sharing", "timeSlicing")
    if table is not None and table.tag == "null":
        yield finding(doc, "GL453", table.key_span,
                      f"`timeSlicing` is empty: {_PLUGIN_EXITS} with `no resources specified`; remove it "
                      f"for a node that should not share")


def _devices(doc: Document, node: Node):
    value = node.value
    if is_placeholder(value):
        return
    if type(value) is str and value != "all":
        yield finding(doc, "GL453", node.span,
                      f"{_PLUGIN_EXITS} with `devices set as '{value}' but the only valid string input "
                      f"is 'all'`")
    elif type(value) is int and value <= 0:
        yield finding(doc, "GL453", node.span,
                      f"{_PLUGIN_EXITS} with `devices set as '{value}' but a count of devices must be > 0`")
    for item in sequence(node) if node.is_seq else ():
        text = str(item.value) if type(item.value) in (int, str) else None
        if text is None or not _device_ref(text, type(item.value) is int):
            yield finding(doc, "GL453", item.span,
                          f"`{item.value}` is no GPU index, MIG index (`0:1`) or GPU/MIG UUID: "
                          f"{_PLUGIN_EXITS} with `unsupported type for device in devices list`")


_UUID = r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"
_DEVICE_REF = lazy(rf"\d+|\d+:\d+|GPU-{_UUID}|MIG-{_UUID}|MIG-GPU-{_UUID}/\d+/\d+")


def _device_ref(text: str, number: bool) -> bool:
    return (number and int(text) >= 0) or _DEVICE_REF.fullmatch(text) is not None


@check("GL453", kinds=("device-plugin",))
def shared_entry_refused(doc: Document, ctx: Context):
    for config in facts.configs(doc):
        yield from _empty_time_slicing(doc, config.root)
        for name, table in facts.sharing_tables(config.root):
            path = f"sharing.{name}"
            yield from _missing(doc, table, path)
            for entry in sequence(table.get("resources")):
                if entry.tag == "null":
                    yield finding(doc, "GL453", entry.span,
                                  f"an empty entry of `{path}.resources`: {_PLUGIN_EXITS} with `no resource "
                                  f"name specified`")
                    continue
                if not entry.is_map:
                    yield finding(doc, "GL453", entry.span,
                                  f"each entry of `{path}.resources` must be a mapping with `name` and "
                                  f"`replicas`: {_PLUGIN_EXITS} with `{_DECODE} json: cannot unmarshal "
                                  f"{json_type(entry)} into Go value of type map[string]json.RawMessage`")
                    continue
                yield from _missing(doc, entry, f"{path}.resources")
                replicas = entry.get("replicas")
                # null leaves the count at 0 (json.Unmarshal of null into an int)
                count = 0 if replicas is not None and replicas.tag == "null" else \
                    replicas.value if replicas is not None and type(replicas.value) is int else None
                if count is not None and count < 2:
                    shown = "null" if replicas.tag == "null" else replicas.value
                    yield finding(doc, "GL453", replicas.span,
                                  f"`replicas: {shown}` shares nothing: {_PLUGIN_EXITS} with "
                                  f"`number of replicas must be >= 2`")
                devices = entry.get("devices")
                if devices is not None:
                    yield from _devices(doc, devices)
        for name in ("gpus", "mig"):
            for entry in sequence(facts.folded(config.root, "resources", name)):
                if entry.is_map:
                    yield from _missing(doc, entry, f"resources.{name}")


_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = lazy(rf"{_DNS_LABEL}(\.{_DNS_LABEL})*")
# a MIG profile's resource: `mig-1g.10gb`, `mig-1c.2g.10gb`, with its media or graphics
# suffixes (`mig-1g.10gb.me`)
_MIG_RESOURCE = lazy(r"mig-\d+(c\.\d+)?g\.\d+gb([.+-][a-z]+)*")


def _name_problem(name: str) -> str | None:
    """What resources.go says of a resource name it refuses (NewResourceName)."""
    rules = known.resource_names()
    full = name if name.startswith(rules["prefix"] + "/") else f"{rules['prefix']}/{name}"
    if len(full) > rules["max_length"]:
        return (f"fully-qualified resource name must be {rules['max_length']} characters or less: "
                f"{full}")
    short = full.split("/", 1)[1]
    if len(short) > 253 or not _DNS_SUBDOMAIN.fullmatch(short):
        return f"incorrect format for resource name '{full}'"
    return None


def _advertised_by_strategy(name: str, mig: str) -> str | None:
    """Why the plugin advertises no `name` under MIG strategy `mig` (None: it may)."""
    short = name.split("/", 1)[1]
    if _MIG_RESOURCE.fullmatch(short):
        if mig == "mixed":
            return None
        return (f"only `migStrategy: mixed` advertises `{name}` (with `{mig}`, MIG devices are "
                f"`nvidia.com/gpu` or not shown at all)")
    if short == "gpu":
        return None
    return "the plugin advertises only `nvidia.com/gpu` and `nvidia.com/mig-<profile>`"


@check("GL454", kinds=("device-plugin",))
def shared_resource_name(doc: Document, ctx: Context):
    for config in facts.configs(doc):
        mig = facts.mig_strategy(config.root)
        for _, table in facts.sharing_tables(config.root):
            yield from _names(doc, table, mig)
        yield from _twice(doc, config.root)


def _names(doc: Document, table: Node, mig: str):
    for entry in sequence(table.get("resources")):
        if not entry.is_map:
            continue
        # a `rename` is decoded (and refused) like a name, though the plugin then sets it aside
        rename = entry.get("rename")
        problem = _name_problem(str_value(rename)) if _judged(rename) else None
        if problem is not None:
            yield finding(doc, "GL454", rename.span, f"{_PLUGIN_EXITS} with `{problem}`")
        node = entry.get("name")
        if not _judged(node):
            continue
        problem = _name_problem(node.value)
        if problem is not None:
            yield finding(doc, "GL454", node.span, f"{_PLUGIN_EXITS} with `{problem}`")
            continue
        full = facts.prefixed(node.value)
        why = _advertised_by_strategy(full, mig)
        if why is not None:
            yield finding(doc, "GL454", node.span,
                          f"no resource `{full}` to share: {why}, so these replicas never exist",
                          severity="warning")


def _judged(node: Node | None) -> bool:
    """A resource name written out (not absent, empty, or filled in by a template)."""
    value = str_value(node)
    return bool(value) and not is_placeholder(value)


def _twice(doc: Document, root: Node):
    seen: dict[str, Node] = {}
    for item in facts.shared(root):
        first = seen.setdefault(item.name, item.node)
        if first is not item.node:
            yield finding(doc, "GL454", item.node.get("name"),
                          f"`{item.name}` is shared by two entries: the plugin gives their replicas the same "
                          f"IDs (device_map.go), so the node gets the larger `replicas`, not the sum",
                          severity="warning",
                          related=[related(doc, first.get("name"), "shared first here")])


@check("GL455", kinds=("device-plugin",))
def flag_value(doc: Document, ctx: Context):
    newest = _newest_release(ctx)
    yield from _chart_flag_values(doc)
    for config in facts.configs(doc):
        yield from _imex_channels(doc, config.root)
        for path in ("migStrategy", "deviceDiscoveryStrategy", "plugin.deviceListStrategy",
                     "plugin.deviceIDStrategy", "plugin.sharedDevicesAllocationPolicy"):
            node = facts.flag(config.root, *path.split("."))
            allowed = known.allowed_values(f"flags.{path}")
            values = sequence(node) if node is not None and node.is_seq else [node] if node is not None else []
            for value in values:
                # a list's items are decoded as they are written (no number turned into text)
                if not value.is_scalar or value.tag == "null" or is_placeholder(value.value) \
                        or (node.is_seq and type(value.value) is not str):
                    continue
                text = _as_text(value)
                since = allowed.get("since", {}).get(text)
                if since is not None and newest is not None and _release(since) > newest:
                    yield finding(doc, "GL455", value.span,
                                  f"`{text}` arrived in device plugin {since}: {_shown_release(newest)}, which "
                                  f"the linted manifests run, exits at start with "
                                  f"`{allowed['message'].format(value=text)}`")
                    continue
                if text in allowed["allowed"]:
                    continue
                near = closest_key(text, allowed["allowed"])
                hint = f"; did you mean `{near}`?" if near else f" (it accepts {', '.join(allowed['allowed'])})"
                yield finding(doc, "GL455", value.span,
                              f"{_PLUGIN_EXITS} with `{allowed['message'].format(value=text)}`{hint}")


def _chart_flag_values(doc: Document):
    """The chart's flag values the plugin validates as it starts (a list flag: each of
    its comma-separated items)."""
    for key, node, spec in _chart_values(doc):
        allowed = known.allowed_values(spec["flag"]) if "flag" in spec else None
        if allowed is None or type(node.value) is not str:
            continue
        items = [item.strip() for item in node.value.split(",")] if spec.get("list") else [node.value]
        for text in items:
            if text in allowed["allowed"]:
                continue
            near = closest_key(text, allowed["allowed"])
            hint = f"; did you mean `{near}`?" if near else f" (it accepts {', '.join(allowed['allowed'])})"
            yield finding(doc, "GL455", node.span,
                          f"the chart passes `{key}` as `{spec['env']}={node.value}`: {_PLUGIN_EXITS} with "
                          f"`{allowed['message'].format(value=text)}`{hint}")


def _imex_channels(doc: Document, root: Node):
    """imex.go AssertChannelIDsValid: no channel, or channel 0 alone."""
    node = facts.folded(root, "imex", "channelIDs")
    if node is None or not node.is_seq or not all(type(v.value) is int for v in node.value):
        return
    ids = [v.value for v in node.value]
    if ids and ids != [0]:
        shown = " ".join(str(i) for i in ids)
        yield finding(doc, "GL455", node.span,
                      f"{_PLUGIN_EXITS} with `invalid IMEX channel IDs: invalid IMEX config: channelIDs must be "
                      f"[] or [0]; found [{shown}]`")


def _as_text(node: Node) -> str:
    """The text sigs.k8s.io/yaml gives a string field for a YAML scalar."""
    if type(node.value) is bool:
        return "true" if node.value else "false"
    return str(node.value)


@check("GL456", kinds=("device-plugin",))
def sharing_conflict(doc: Document, ctx: Context):
    for config in facts.configs(doc):
        tables = dict(facts.sharing_tables(config.root))
        mps = tables.get("mps")
        if mps is None:
            continue
        if "timeSlicing" in tables:
            yield finding(doc, "GL456", tables["timeSlicing"].key_span,
                          "both `timeSlicing` and `mps` are set: the plugin shares with MPS and ignores "
                          "`timeSlicing` entirely", severity="warning",
                          related=[related(doc, mps.key_span, "MPS is used")])
        mig = facts.mig_strategy(config.root)
        node = facts.flag(config.root, "migStrategy")
        if mig == "mixed":
            yield finding(doc, "GL456", node.span,
                          f"{_PLUGIN_EXITS} with `using --mig-strategy=mixed is not supported with MPS`")
        elif mig == "single":
            yield finding(doc, "GL456", node.span,
                          "MPS cannot share MIG devices: on a node with MIG enabled the plugin exits with "
                          "`sharing using MPS is not supported for MIG devices`", severity="warning")


def default_missing(doc: Document, default: Node, names: list[str], where: str, unlabelled: bool = True):
    """GL458 when `default` (or a node's config label: not `unlabelled`) names no config of
    `names` (the keys `where` describes)."""
    value = str_value(default)
    if not value or is_placeholder(value) or value in names or not names:
        return
    near = closest_key(value, names)
    hint = f"did you mean `{near}`?" if near else f"it holds {', '.join(f'`{n}`' for n in names)}"
    nodes = "every node without a `nvidia.com/device-plugin.config` label" if unlabelled else "this node"
    named = "the default config" if unlabelled else "the node's config"
    yield finding(doc, "GL458", default.span,
                  f"{named} `{value}` is not among {where}: on {nodes} the config manager exits with "
                  f"`specified config {value} does not exist` and the plugin does not start; {hint}")


@check("GL458", kinds=("device-plugin",))
def chart_default_missing(doc: Document, ctx: Context):
    found = doc.cache.get(CHART_DEFAULT)
    if found is not None:
        yield from default_missing(doc, found[0], found[1], "the keys of `config.map`")


@check("GL703", kinds=("device-plugin",))
def chart_values_without_nvidia_runtime(doc: Document, ctx: Context):
    """The chart's values set the DaemonSet's `runtimeClassName` only from their value of that
    name (GL703 of a DaemonSet, for the chart's)."""
    root = doc.cache.get(CHART_VALUES)
    runtime_class = root.get("runtimeClassName") if root is not None else None
    if root is None or not root.value or runtime_class is not None and runtime_class.tag != "null":
        return
    gap = plugin_runtime_gap(ctx.fact("node-configs"))
    if gap is None:
        return
    first = next(iter(root.value.values()))
    yield finding(doc, "GL703", first.key_span or first.span,
                  gap.message("these device plugin chart values set no `runtimeClassName`",
                              f"add `runtimeClassName: {gap.handler}`"), related=gap.where())
