"""GL461-GL465 and GL467: mig-parted's config, judged by what its decoder (api/spec/v1
spec.go, sigs.k8s.io/yaml then encoding/json) and `apply` do with it, and by the MIG profiles
each GPU offers (rules/mig-profiles.yaml, with its sources)."""

from __future__ import annotations

from gpulint.common.gojson import json_type
from gpulint.formats.template import is_placeholder
from gpulint.kinds.mig_config import facts
from gpulint.kinds.mig_config.profile import format_error
from gpulint.knowledge import mig
from gpulint.model import Document, Node, Span, sequence
from gpulint.registry import Context, check, finding
from gpulint.spelling import closest_key

_TOP = ("version", "mig-configs")
_ENTRY = ("device-filter", "devices", "mig-enabled", "mig-devices")
_REFUSED = "mig-parted refuses the file and the MIG manager applies no config"


def _start(node: Node) -> Span:
    return Span.point(node.span.line, node.span.column)


def _unset(node: Node) -> bool:
    return is_placeholder(node.value)


def _refused(doc: Document, where, said: str, hint: str = ""):
    return finding(doc, "GL461", where, f"{_REFUSED}: `{said}`{'; ' + hint if hint else ''}")


def _unexpected(doc: Document, key: str, node: Node, known: tuple[str, ...]):
    near = closest_key(key, known)
    hint = f"did you mean `{near}`?" if near else f"it reads {', '.join(f'`{k}`' for k in known)} here"
    if key in _ENTRY and known == _TOP:
        hint = f"`{key}` belongs in the entries of a config under `mig-configs`"
    return _refused(doc, node.key_span, f"unexpected field: {key}", hint)


@check("GL461", kinds=("mig-config",))
def decode_refused(doc: Document, ctx: Context):
    for config in facts.configs(doc):
        root = config.root
        version = root.get("version")
        if version is None and root.value:
            yield _refused(doc, _start(root), "unable to parse with missing 'version' field")
        elif version is not None and not _unset(version):
            if type(version.value) is not str:
                yield _refused(doc, version, f"json: cannot unmarshal {json_type(version)} into Go value of type string")
            elif version.value != "v1":
                yield _refused(doc, version, f"unknown version: {version.value}", "mig-parted reads `v1` only")
        for key, node in root.items():
            if key not in _TOP:
                yield _unexpected(doc, key, node, _TOP)
        table = root.get("mig-configs")
        if table is not None and not _unset(table):
            yield from _configs(doc, table)


def _configs(doc: Document, table: Node):
    if table.tag == "null":
        # JSON null leaves the map empty
        yield _refused(doc, table.key_span or table, "at least one entry in 'mig-configs' is required")
        return
    if not table.is_map:
        yield _refused(doc, table, f"json: cannot unmarshal {json_type(table)} into Go value of type "
                                   "map[string]v1.MigConfigSpecSlice")
        return
    if not table.value:
        yield _refused(doc, table.key_span or table, "at least one entry in 'mig-configs' is required")
    for name, items in table.items():
        if items.is_seq or items.tag == "null":
            if not sequence(items):
                yield _refused(doc, items.key_span, f"at least one entry in '{name}' is required")
            for item in sequence(items):
                yield from _entry(doc, item)
        elif not _unset(items):
            yield _refused(doc, items, f"json: cannot unmarshal {json_type(items)} into Go value of type "
                                       "v1.MigConfigSpecSlice", "a config is a list of entries (`- devices: all`)")


def _entry(doc: Document, entry: Node):
    if not entry.is_map:
        if not _unset(entry):
            yield _refused(doc, entry, f"json: cannot unmarshal {json_type(entry)} into Go value of type "
                                       "map[string]json.RawMessage")
        return
    for required in ("devices", "mig-enabled"):
        if required not in entry.value:
            yield _refused(doc, _start(entry), f"missing required field: {required}")
    for key, node in entry.items():
        if key not in _ENTRY:
            yield _unexpected(doc, key, node, _ENTRY)
        elif not _unset(node):
            yield from _field(doc, key, node)
    enabled, devices = entry.get("mig-enabled"), entry.get("mig-devices")
    if enabled is not None and enabled.value is True and (devices is None or devices.tag == "null"):
        yield _refused(doc, enabled, "missing required field 'mig-devices' when 'mig-enabled' is true",
                       "`mig-devices: {}` enables MIG mode without creating MIG devices")


def _both(node: Node, first: str, second: str) -> str:
    """encoding/json's two errors when neither decoding fits: for a list, the second names the
    first item of the wrong type and the element type (`[]int` -> `int`)."""
    kind = json_type(node)
    if node.is_seq:
        element = second.removeprefix("[]")
        item = next((i for i in node.value if json_type(i) != {"int": "number"}.get(element, element)), node)
        return (f"(json: cannot unmarshal {kind} into Go value of type {first}, "
                f"json: cannot unmarshal {json_type(item)} into Go value of type {element})")
    return (f"(json: cannot unmarshal {kind} into Go value of type {first}, "
            f"json: cannot unmarshal {kind} into Go value of type {second})")


def _field(doc: Document, key: str, node: Node):
    if key == "device-filter":
        if not (type(node.value) is str or node.tag == "null"
                or (node.is_seq and all(type(i.value) is str for i in node.value))):
            yield _refused(doc, node, _both(node, "string", "[]string"),
                           "write a PCI device ID (`0x20B010DE`) or a list of them")
    elif key == "devices":
        if type(node.value) is str:
            if node.value != "all":
                yield _refused(doc, node, f"invalid string input for 'devices': {node.value}",
                               "write `all` or a list of GPU indexes")
        elif not (node.is_seq and all(type(i.value) is int for i in node.value)):
            yield _refused(doc, node, _both(node, "string", "[]int"), "write `all` or a list of GPU indexes")
    elif key == "mig-enabled":
        if type(node.value) is not bool:
            yield _refused(doc, node, f"json: cannot unmarshal {json_type(node)} into Go value of type bool")
    elif key == "mig-devices":
        yield from _mig_devices(doc, node)


def _mig_devices(doc: Document, node: Node):
    if node.tag == "null":
        return
    if not node.is_map:
        yield _refused(doc, node, f"json: cannot unmarshal {json_type(node)} into Go value of type types.MigConfig")
        return
    prefix = "error validating values in 'mig-devices' field: "
    for name, count in node.items():
        if _unset(count):
            continue
        if type(count.value) is not int:
            # encoding/json names a number it cannot store with its text (`number 1.5`)
            said = f"number {count.value}" if type(count.value) is float else json_type(count)
            yield _refused(doc, count, f"json: cannot unmarshal {said} into Go value of type int")
            continue
        error = format_error(name)
        if error is not None:
            yield _refused(doc, count.key_span, f"{prefix}invalid format for '{name}': {error}")
        elif count.value < 0:
            yield _refused(doc, count, f"{prefix}invalid count for '{count.value}': <nil>")
    counts = [c.value for c in node.value.values()]
    if counts and all(type(c) is int and c == 0 for c in counts):
        yield _refused(doc, node.key_span, f"{prefix}all counts for all MigProfiles are 0",
                       "`mig-devices: {}` enables MIG mode without creating MIG devices")


def _valid(entry: facts.Entry) -> list[tuple[str, Node, int]]:
    """The entry's profiles that mig-parted's decoder accepts, with a count above 0."""
    return [(p, n, c) for p, n, c in entry.profiles if c > 0 and format_error(p) is None]


def _models(models: list[mig.Model]) -> str:
    names = [m.name for m in models]
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


@check("GL462", kinds=("mig-config",))
def profile_unknown(doc: Document, ctx: Context):
    for config in facts.configs(doc):
        for entry in facts.entries(config.root):
            if entry.enabled is not True:
                continue
            profiles = _valid(entry)
            filtered = facts.filtered_models(entry)
            reported = False
            for name, node, _ in profiles:
                if not mig.known_anywhere(name):
                    reported = True
                    yield finding(doc, "GL462", node.key_span,
                                  f"no MIG-capable GPU has the profile `{name}`: applying the config stops "
                                  f"with `unable to parse profile string into a valid profile`; {_offered(name)}")
                elif filtered is not None and mig.models_with(name) \
                        and not any(mig.offers(m, name) for m in filtered):
                    # a profile whose GPU the sources do not name may be the filtered GPU's
                    reported = True
                    yield finding(doc, "GL462", node.key_span,
                                  f"the GPUs `device-filter` names ({_models(filtered)}) have no profile "
                                  f"`{name}`, so applying the config fails on them; "
                                  f"`{name}` is a profile of {_models(mig.models_with(name))}")
            names = [n for n, _, _ in profiles]
            if not reported and filtered is None and len(names) > 1 and all(mig.models_with(n) for n in names) \
                    and not facts.candidate_models(entry):
                yield finding(doc, "GL462", entry.get("mig-devices").key_span,
                              f"no GPU has all of {', '.join(f'`{n}`' for n in names)}: "
                              + "; ".join(f"`{n}` is a profile of {_models(mig.models_with(n))}" for n in names))


def _offered(name: str) -> str:
    """The profiles of the same size on the GPUs that have one, as a hint."""
    size = (mig.canonical(name) or name).split("+")[0].split("-")[0].split(".")[-2]
    same = sorted({p for m in mig.models().values() for p in m.profiles if p.split(".")[0] == size
                   and "+" not in p and "-" not in p}, key=lambda p: int(p.split(".")[1].rstrip("gb") or 0))
    return f"the {size} profiles are {', '.join(f'`{p}`' for p in same)}" if same else \
        "`gpulint mig` lists each GPU's profiles"


@check("GL463", kinds=("mig-config",))
def over_capacity(doc: Document, ctx: Context):
    for config in facts.configs(doc):
        for entry in facts.entries(config.root):
            profiles = _valid(entry)
            if entry.enabled is not True or not profiles or any(mig.is_compute_instance(p) for p, _, _ in profiles):
                continue  # compute instances share a GPU instance: their slices do not add up
            models = facts.candidate_models(entry)
            reasons = [_overflow(m, profiles) for m in models]
            if not models or not all(reasons):
                continue
            by_reason: dict[str, list[mig.Model]] = {}
            for model, (_, said) in zip(models, reasons):
                by_reason.setdefault(said, []).append(model)
            said = "; ".join(f"on {_models(group)}, {text}" for text, group in by_reason.items())
            yield finding(doc, "GL463", reasons[0][0],
                          f"{said}: the MIG manager cannot create these MIG devices and marks the node "
                          f"`nvidia.com/mig.config.state=failed`")


def _overflow(model: mig.Model, profiles: list[tuple[str, Node, int]]) -> tuple[Node, str] | None:
    """Where and why `profiles` do not fit on one GPU of `model` (None: they may fit; the
    placement of instances is not judged)."""
    offered = [(mig.offers(model, name), node, count) for name, node, count in profiles]
    if any(profile is None for profile, _, _ in offered):
        return None  # GL462's
    for (profile, node, count), (name, _, _) in zip(offered, profiles):
        if count > profile.max:
            return node, f"`{name}: {count}` asks for more than the {profile.max} instance(s) of `{name}` that fit"
    node = profiles[0][1].key_span
    compute = sum(profile.compute * count for profile, _, count in offered)
    if compute > model.compute_slices:
        return node, (f"these MIG devices take {compute} compute slices, more than the "
                      f"{model.compute_slices} a GPU has")
    if model.memory_slices is None or any(profile.memory is None for profile, _, _ in offered):
        return None
    used = sum(profile.memory * count for profile, _, count in offered)
    stuck = mig.unplaced([(profile, count) for profile, _, count in offered])
    if stuck is not None:
        where = next(n for (p, n, _) in offered if p is stuck).key_span
        return where, (f"no layout of these MIG devices leaves room for `{stuck.name}`, whose instances start "
                       f"at memory slice {_slices(stuck.starts)} and take {stuck.memory} slice(s) each (together they take "
                       f"{used} of the {model.memory_slices} memory slices)")
    if used > model.memory_slices:
        return node, f"these MIG devices take {used} memory slices, more than the {model.memory_slices} a GPU has"
    return None


def _slices(starts: tuple[int, ...]) -> str:
    """`0 to 6`, `0, 2, 4 or 6`, `0`."""
    if len(starts) > 2 and list(starts) == list(range(starts[0], starts[-1] + 1)):
        return f"{starts[0]} to {starts[-1]}"
    return " or ".join(filter(None, (", ".join(map(str, starts[:-1])), str(starts[-1]))))


@check("GL464", kinds=("mig-config",))
def disabled_with_devices(doc: Document, ctx: Context):
    for config in facts.configs(doc):
        for entry in facts.entries(config.root):
            devices = entry.get("mig-devices")
            if entry.enabled is False and devices is not None and devices.is_map and devices.value:
                yield finding(doc, "GL464", devices.key_span,
                              f"{_REFUSED}: `MIG devices included when 'mig-enabled' is false`; drop "
                              f"`mig-devices` to turn MIG off, or set `mig-enabled: true` to create them")


@check("GL465", kinds=("mig-config",))
def entries_overlap(doc: Document, ctx: Context):
    for config in facts.configs(doc):
        seen: dict[str, list[facts.Entry]] = {}
        for entry in facts.entries(config.root):
            if entry.filter_ids is None and entry.devices is not None:
                seen.setdefault(entry.config, []).append(entry)
        for name, unfiltered in seen.items():
            for i, later in enumerate(unfiltered):
                earlier = next((e for e in unfiltered[:i] if _overlap(e.devices, later.devices)
                                and _layout(e) != _layout(later)), None)
                if earlier is None:
                    continue
                models = _differ(earlier, later)
                why = f" (the first suits {models[0]}, this one {models[1]})" if models else ""
                yield finding(doc, "GL465", later.get("devices"),
                              f"config `{name}` configures the same GPUs again without a `device-filter`"
                              f"{why}: mig-parted applies its entries in turn to every GPU they match, so "
                              f"the entry at line {earlier.node.span.line} is undone here, or applying it "
                              f"fails on a GPU without its profiles; give each entry the `device-filter` "
                              f"of its GPU model")


def _overlap(first, second) -> bool:
    if first == "all" or second == "all":
        return True
    return bool(first & second)


def _layout(entry: facts.Entry) -> tuple:
    return entry.enabled, tuple(sorted((p, c) for p, _, c in entry.profiles))


def _differ(first: facts.Entry, second: facts.Entry) -> tuple[str, str] | None:
    """The models each entry's profiles belong to, when the two sets do not meet."""
    one, two = facts.candidate_models(first), facts.candidate_models(second)
    if not one or not two or {m.name for m in one} & {m.name for m in two} \
            or not first.profiles or not second.profiles:
        return None
    return _models(one), _models(two)


@check("GL467", kinds=("mig-config",))
def filter_unreadable(doc: Document, ctx: Context):
    for config in facts.configs(doc):
        for entry in facts.entries(config.root):
            for text, node in entry.filter_ids or ():
                if is_placeholder(text):
                    continue
                packed = mig.device_id(text)
                if packed is None:
                    yield finding(doc, "GL467", node,
                                  f"mig-parted cannot read `{text}` as a PCI device ID and sets the error "
                                  f"aside, so this filter matches no GPU and the entry configures none; "
                                  f"{_ID_FORM}")
                elif packed & 0xFFFF != mig.NVIDIA_VENDOR:
                    guess = f"; did you mean `{text}10DE`?" if packed <= 0xFFFF else ""
                    yield finding(doc, "GL467", node,
                                  f"mig-parted reads `{text}` as device 0x{packed >> 16:04X} of vendor "
                                  f"0x{packed & 0xFFFF:04X}, which is not NVIDIA's 0x10DE, so this filter "
                                  f"matches no GPU and the entry configures none{guess}")


# how `nvidia-smi --query-gpu=pci.device_id` prints a GPU's ID, the form mig-parted reads
_ID_FORM = "write the device and vendor IDs as one hex number (`0x20B010DE` for A100-SXM4-40GB)"
