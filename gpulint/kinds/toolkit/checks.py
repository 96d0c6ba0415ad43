"""GL809-GL811: the NVIDIA Container Toolkit's config.toml and CDI specs, as files.

The toolkit's keys, their types and the CDI spec format are data
(rules/nvidia-toolkit.yaml, with their sources).
"""

from __future__ import annotations

import functools

from gpulint.formats.template import is_placeholder
from gpulint.kinds.toolkit.node import node_configs_of
from gpulint.model import Document, Node, str_value
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding, related
from gpulint.resources import load_yaml
from gpulint.spelling import closest_key

_CDI_NAME = lazy(r"[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?")
_DEVICE_NAME = lazy(r"[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?")


@functools.lru_cache(maxsize=1)
def _data() -> dict:
    return load_yaml("nvidia-toolkit.yaml")


def _tables() -> dict[str, dict[str, str]]:
    return _data()["tables"]


def _walk(node: Node, table: str):
    """(table name, key, node) of every key in the file, tables included. go-toml also
    reads a key written all in capitals (`NO-CGROUPS`): it is given as the toolkit's name."""
    for written, child in node.items():
        key = written.lower() if written.isupper() else written
        yield table, key, child
        name = f"{table}.{key}" if table else key
        if child.is_map and name in _tables():
            yield from _walk(child, name)


def _type_ok(node: Node, expected: str) -> bool:
    if is_placeholder(node.value):  # a template fills it in
        return True
    if expected == "table":
        return node.is_map
    if expected == "list":
        return node.is_seq and all(isinstance(v.value, str) for v in node.value)
    if expected == "bool":
        return isinstance(node.value, bool)
    return isinstance(node.value, str)


_WORDS = {"bool": "true or false", "str": "a string", "list": "a list of strings", "table": "a table"}


def _home(key: str, table: str) -> str | None:
    """The one other table that has `key`."""
    homes = [name for name, keys in _tables().items() if key in keys and name != table]
    return homes[0] if len(homes) == 1 else None


def _shown(table: str) -> str:
    return f"in [{table}]" if table else "at the top level"


@check("GL809", kinds=("nvidia-toolkit",))
def toolkit_key_ignored(doc: Document, ctx: Context):
    for table, key, node in _walk(doc.tree, ""):
        known = _tables().get(table, {})
        if key in known:
            continue
        home = _home(key, table)
        if home is not None:
            yield finding(doc, "GL809", node.key_span,
                          f"`{key}` belongs {_shown(home)}; {_shown(table)} the toolkit ignores it, so "
                          f"the setting has no effect")
            continue
        near = closest_key(key, known)
        if near is not None:
            yield finding(doc, "GL809", node.key_span,
                          f"the toolkit has no `{key}` {_shown(table)} and ignores it; did you mean "
                          f"`{near}`?")


@check("GL810", kinds=("nvidia-toolkit",))
def toolkit_value_invalid(doc: Document, ctx: Context):
    for table, key, node in _walk(doc.tree, ""):
        expected = _tables().get(table, {}).get(key)
        if expected is not None and not _type_ok(node, expected):
            yield finding(doc, "GL810", node.span,
                          f"`{key}` must be {_WORDS[expected]}: the toolkit cannot load this file "
                          f"(`failed to unmarshal config`), and the NVIDIA runtime and hook fail for "
                          f"every container")
    yield from _mode(doc)
    yield from _ldconfig(doc)


def _mode(doc: Document):
    for path, allowed in ((("nvidia-container-runtime", "mode"), _data()["modes"]),
                          (("nvidia-container-runtime", "modes", "legacy", "cuda-compat-mode"),
                           _data()["cuda_compat_modes"])):
        node = doc.tree.get(*path)
        value = str_value(node)
        if value is not None and value not in allowed and not is_placeholder(value):
            yield finding(doc, "GL810", node.span,
                          f"`{path[-1]} = \"{value}\"` is not one the toolkit knows "
                          f"({', '.join(allowed)}): the NVIDIA runtime fails to create every container")


def _ldconfig(doc: Document):
    node = doc.tree.get("nvidia-container-cli", "ldconfig")
    value = str_value(node)
    allowed = doc.tree.get("features", "allow-ldconfig-from-container")
    if value and not value.startswith("@") and not is_placeholder(value) \
            and not (allowed is not None and allowed.value is True):
        yield finding(doc, "GL810", node.span,
                      f"`ldconfig = \"{value}\"` is a path inside the container: since toolkit 1.18 "
                      f"the toolkit refuses it (`is not host-relative (does not start with a '@')`); "
                      f"write `@{value}` to run the host's ldconfig")


# ------------------------------------------------------------------ CDI specs


def _cdi() -> dict:
    return _data()["cdi"]


def _unknown_keys(doc: Document, node: Node | None, allowed: list[str], where: str):
    for key, child in node.items() if node is not None else ():
        if key not in allowed:
            yield finding(doc, "GL811", child.key_span,
                          f"`{key}` is not a CDI field {where}: runtimes parse specs strictly and "
                          f"reject the whole file (`failed to unmarshal CDI Spec`)")


def _qualifier_problem(kind: str) -> str | None:
    vendor, _, klass = kind.partition("/")
    if not vendor or not klass:
        return "is not `vendor/class` (such as `nvidia.com/gpu`)"
    for part in (vendor, klass):
        if not _CDI_NAME.fullmatch(part):
            return f"has an invalid name `{part}` (letters, digits, `_`, `-`, `.`; starting with a letter)"
    return None


@check("GL811", kinds=("cdi",))
def cdi_spec_invalid(doc: Document, ctx: Context):
    tree = doc.tree
    yield from _unknown_keys(doc, tree, _cdi()["spec_keys"], "at the top level")
    version = tree.get("cdiVersion")
    text = version.str() if version is not None else None
    if text is None:
        yield finding(doc, "GL811", tree.span, "the CDI spec has no `cdiVersion`: runtimes reject it "
                                               "(`invalid version \"\"`)")
    elif text.removeprefix("v") not in _cdi()["versions"]:
        yield finding(doc, "GL811", version.span,
                      f"`cdiVersion: {text}` is not a CDI version ({', '.join(_cdi()['versions'])}): "
                      f"runtimes reject the spec (`invalid version`)")
    kind = tree.get("kind")
    if str_value(kind) is None:
        yield finding(doc, "GL811", kind.span if kind is not None else tree.span,
                      "the CDI spec has no `kind` string (such as `nvidia.com/gpu`): runtimes reject it "
                      "and no device in it can be requested")
    elif _qualifier_problem(kind.value):
        yield finding(doc, "GL811", kind.span,
                      f"`kind: {kind.value}` {_qualifier_problem(kind.value)}: runtimes reject the spec")
    yield from _edits(doc, tree.get("containerEdits"))
    yield from _devices(doc, tree)
    if text is not None and text.removeprefix("v") in _cdi()["versions"]:
        yield from _newer_than_declared(doc, tree, _semver(text))


def _semver(text: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in text.removeprefix("v").split("."))


def _features(tree: Node, wanted: set[str]):
    """(feature, span) for every use of a feature a later cdiVersion added (specs-go/version.go),
    of the `wanted` features only: a spec lists thousands of device nodes and mounts."""
    annotations = tree.get("annotations")
    if "annotations" in wanted and annotations is not None and annotations.value:
        yield "annotations", annotations.anchor
    kind = tree.get("kind")
    if "class-dot" in wanted and str_value(kind) is not None and "." in kind.value.partition("/")[2]:
        yield "class-dot", kind.span
    devices = tree.get("devices")
    edits = [tree.get("containerEdits")]
    for item in devices.value if devices is not None and devices.is_seq else ():
        fields = item.value  # the device's mapping, read directly: a spec may list thousands
        if not isinstance(fields, dict):
            continue
        name = fields.get("name")
        if "device-name-digit" in wanted and str_value(name) and name.value[0].isdigit():
            yield "device-name-digit", name.span
        annotations = fields.get("annotations")
        if "annotations" in wanted and annotations is not None and annotations.value:
            yield "annotations", annotations.anchor
        edits.append(fields.get("containerEdits"))
    for edit in edits:
        if edit is not None and edit.is_map:
            yield from _edit_features(edit, wanted)


def _edit_features(edit: Node, wanted: set[str]):
    fields = edit.value  # the edits' mapping, read directly: a spec may list thousands
    for key, field, feature in (("mounts", "type", "mount-type"), ("deviceNodes", "hostPath", "host-path")):
        if feature not in wanted:
            continue
        entries = fields.get(key)
        for entry in entries.value if entries is not None and entries.is_seq else ():
            found = entry.value.get(field) if isinstance(entry.value, dict) else None
            if str_value(found):
                yield feature, found.anchor
    rdt = fields.get("intelRdt")
    if rdt is not None:
        if "intel-rdt" in wanted:
            yield "intel-rdt", rdt.anchor
        # `intelRdt: null` (or any value but a mapping) has neither field
        schemata, monitoring = (rdt.get("schemata"), rdt.get("enableMonitoring")) if rdt.is_map else (None, None)
        if "intel-rdt-schemata" in wanted and \
                (schemata is not None or (monitoring is not None and monitoring.value is True)):
            yield "intel-rdt-schemata", (schemata if schemata is not None else monitoring).anchor
    for key, feature in (("additionalGids", "additional-gids"), ("netDevices", "net-devices")):
        value = fields.get(key)
        if feature in wanted and value is not None and value.value:
            yield feature, value.anchor


def _newer_than_declared(doc: Document, tree: Node, declared: tuple[int, ...]):
    """The CDI library computes the lowest version a spec's features need and rejects a spec
    that declares less, naming the highest one needed; each use is reported where it is written."""
    text = str_value(tree.get("cdiVersion"))
    requires = _cdi()["requires"]
    wanted = {feature for feature, need in requires.items() if _semver(need["version"]) > declared}
    late = [(requires[feature], span) for feature, span in _features(tree, wanted)] if wanted else []
    if not late:
        return
    highest = max((need["version"] for need, _ in late), key=_semver)
    for need, span in late:
        yield finding(doc, "GL811", span,
                      f"{need['what']} needs cdiVersion {need['version']} or later, and this spec says "
                      f"{text}: runtimes reject the whole spec (`the spec version must be at least "
                      f"v{highest}`); raise `cdiVersion`")


def _edits(doc: Document, edits: Node | None):
    if edits is not None and edits.is_map:
        yield from _unknown_keys(doc, edits, _cdi()["edit_keys"], "in `containerEdits`")


def _devices(doc: Document, tree: Node):
    devices = tree.get("devices")
    items = devices.value if devices is not None and devices.is_seq else []
    if not items:
        yield finding(doc, "GL811", devices.anchor if devices is not None else tree.span,
                      "the CDI spec lists no devices: runtimes reject it (`invalid spec, no devices`)")
        return
    # a spec may list thousands of devices: each one's mapping is read directly, and its keys
    # are looked at one by one only when some are not CDI fields
    device_keys, edit_keys = set(_cdi()["device_keys"]), set(_cdi()["edit_keys"])
    seen: set[str] = set()
    for item in items:
        fields = item.value
        if not isinstance(fields, dict):
            continue
        if not device_keys.issuperset(fields):
            yield from _unknown_keys(doc, item, _cdi()["device_keys"], "of a device")
        edits = fields.get("containerEdits")
        if edits is not None and isinstance(edits.value, dict) and not edit_keys.issuperset(edits.value):
            yield from _edits(doc, edits)
        name = fields.get("name")
        value = str_value(name)
        valid = value is not None and _DEVICE_NAME.fullmatch(value) is not None
        if not valid:
            yield finding(doc, "GL811", name.span if name is not None else item.span,
                          "a CDI device needs a `name` of letters, digits, `_`, `-`, `.` and `:` that starts and "
                          "ends with a letter or digit: "
                          "runtimes reject the spec (`failed add device`)")
        elif value in seen:
            yield finding(doc, "GL811", name.span,
                          f"device `{value}` is listed twice: runtimes reject the spec "
                          f"(`invalid spec, multiple device`)")
        else:
            seen.add(value)
        if valid and not _edits_something(edits):
            yield finding(doc, "GL811", name.span,
                          f"device `{value}` has no container edits of its own (`env`, `deviceNodes`, "
                          f"`mounts`, `hooks` …): runtimes reject the whole spec (`invalid device, empty "
                          f"device edits`), so no device in it resolves (`unresolvable CDI devices`); "
                          f"the spec's top-level `containerEdits` do not count for a device")


def _edits_something(edits: Node | None) -> bool:
    """Whether a device's `containerEdits` change anything: the CDI library (pkg/cdi/device.go
    validate, container-edits.go isEmpty) refuses a device whose edits are all empty."""
    if edits is None or not edits.is_map:
        return False
    return any(child.value is not None if key == "intelRdt" else child.is_seq and bool(child.value)
               for key, child in edits.items())


# ------------------------------------------------------------------ no-cgroups


def _rootless(config) -> bool:
    """A Docker daemon that runs as a user: `"rootless": true`, or its file in the user's
    ~/.config/docker/ (where rootless Docker reads daemon.json)."""
    if config.kind != "daemon-json":
        return False
    flag = config.doc.tree.get("rootless") if config.doc.tree is not None else None
    return (flag is not None and flag.value is True) or "/.config/docker/" in "/" + config.doc.path


def _meant_for_rootless(path: str) -> bool:
    """A toolkit config in a user's ~/.config/ (where the runtime of a rootless daemon reads
    it, $XDG_CONFIG_HOME), or one the project names for rootless use (its file or folders)."""
    path = path.replace("\\", "/")
    if "/.config/" in "/" + path:
        return True
    named = path.rsplit("/", 1)[-1] if path.startswith(("/", "../")) else path
    return "rootless" in named.lower()


def _where_root(config):
    """The NVIDIA runtime of a root daemon's config, or else its first setting."""
    entry = next((e for e in config.runtimes.values() if e.is_nvidia), None)
    if entry is not None:
        return related(entry.doc, entry.node, f"runtime `{entry.name}` of a daemon that runs as root")
    first = next(iter(config.doc.tree.value.values()), config.doc.tree) if config.doc.tree.is_map else config.doc.tree
    return related(config.doc, first, "a daemon that runs as root")


@check("GL812", kinds=("nvidia-toolkit",))
def no_cgroups_outside_rootless(doc: Document, ctx: Context):
    node = doc.tree.get("nvidia-container-cli", "no-cgroups")
    if node is None or node.value is not True:
        return
    if _meant_for_rootless(doc.path):
        return
    mode = str_value(doc.tree.get("nvidia-container-runtime", "mode"))
    if mode in ("cdi", "jit-cdi"):  # devices come from the CDI spec: nvidia-container-cli is not used
        return
    rootful = [c for c in node_configs_of(doc, ctx.fact("node-configs")) if not _rootless(c)]
    said = ("`no-cgroups = true` tells nvidia-container-cli not to give the container access to the "
            "GPU device nodes in its device cgroup: it is meant for rootless Docker and Podman, which "
            "cannot write cgroups. Under a daemon that runs as root the container starts with the "
            "driver's libraries but no usable GPU (`Failed to initialize NVML: Unknown Error`)")
    if rootful:
        names = ", ".join(sorted({c.doc.path for c in rootful})[:3])
        yield finding(doc, "GL812", node.span,
                      f"{said}, and {names} on this node configures a daemon that runs as root; set it to false",
                      related=[_where_root(c) for c in rootful[:3]])
    else:
        yield finding(doc, "GL812", node.span, f"{said}; keep it only where the runtime is rootless",
                      severity="info")
