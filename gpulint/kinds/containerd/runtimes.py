"""containerd runtime entries (GL104-GL108, GL112): runtime_type, BinaryName, SystemdCgroup,
misplaced and misspelt keys, and privileged device options.
"""

from __future__ import annotations

import posixpath

from gpulint.common.runtimes import configs_loading
from gpulint.formats.template import includes_template, is_placeholder
from gpulint.kinds.containerd.facts import (
    V1_RUNTIME_TYPE,
    containerd_file,
    containerd_nodes,
    file_majors,
    is_drop_in,
    key_matches,
    read_key,
    runtime_entry,
    target_releases,
)
from gpulint.kinds.containerd.support import (
    REMOVED_RUNTIME_TYPES,
    RUNC_OPTIONS,
    RUNC_V2,
    RUNTIME_FIELDS,
    V1_OPTIONS,
    as_written,
    checked_fix,
    declared_runtimes,
    delete_line,
    insert_key,
    is_unknown_value,
    quoted_value,
    replace_edit,
    runc_like,
    suggest,
)
from gpulint.knowledge.runtimes import NOT_RUNTIMES, NVIDIA_BINARIES, OTHER_OCI_RUNTIMES
from gpulint.model import Document, Edit, Node, Span, str_value
from gpulint.registry import check, finding, related

# --- runtime entries: GL104 - GL108, GL112 ----------------------------------------------

@check("GL104", kinds=("containerd",))
def runtime_type_missing(doc, ctx):
    # containerd 2.x merges a drop-in's runtime into the same runtime of the main config, so
    # there a drop-in may leave runtime_type to it; 1.x replaces the whole CRI table
    majors = file_majors(doc, ctx.settings)
    if includes_template(doc):
        return  # (a template that renders k3s' base config gets runc's runtime_type from it)
    typed_elsewhere = _typed_by_merge(doc, ctx) if majors == (2,) and is_drop_in(doc) else set()
    if typed_elsewhere is None:
        return
    for _, name, node in declared_runtimes(doc):
        entry = runtime_entry(name, doc, node)
        if (entry.runtime_type or "").strip() or is_unknown_value(entry.runtime_type):
            continue
        if name in typed_elsewhere:
            continue
        # 2.x decodes a `runc` table over its built-in runc, shim included; 1.x replaces it
        if name == "runc" and 1 not in majors:
            continue
        value = node.get("runtime_type")
        line = f'runtime_type = "{RUNC_V2}"'
        edit = replace_edit(doc, value.span, f'"{RUNC_V2}"') if value is not None else insert_key(doc, node, line)
        what = "NVIDIA runtime" if entry.is_nvidia else "runtime"
        who = ("containerd 1.6/1.7 replace the built-in runc with the one a config writes (2.x "
               "keeps its shim)" if name == "runc" else "containerd does not fill it in")
        yield finding(doc, "GL104", value.span if value is not None else node.anchor,
                      f"{what} `{name}` has no runtime_type: {who}, so pods that select it fail with "
                      f"`container.Runtime.Name must be set: invalid argument`; "
                      f"it needs runtime_type = \"{RUNC_V2}\"",
                      fix=checked_fix(doc, f"set runtime_type = \"{RUNC_V2}\" on `{name}`", [edit]))


def _typed_by_merge(doc: Document, ctx) -> set[str] | None:
    """The runtimes to which another file of the node gives a runtime_type: containerd 2.x
    merges a drop-in's runtime into the same runtime of the files it is loaded with. None
    when no linted config imports the drop-in (its main config, unseen, may give it)."""
    nodes = [n for n in containerd_nodes(ctx) if n.doc is not doc and doc in n.docs]
    if not nodes:
        return None
    typed: set[str] = set()
    for other in (d for n in nodes for d in n.docs if d is not doc):
        if includes_template(other):
            return None
        for _, name, node in declared_runtimes(other):
            runtime_type = runtime_entry(name, other, node).runtime_type
            if (runtime_type or "").strip() or is_unknown_value(runtime_type):
                typed.add(name)
    return typed


@check("GL105", kinds=("containerd",))
def runtime_type_deprecated(doc, ctx):
    majors = file_majors(doc, ctx.settings)
    for _, name, node in declared_runtimes(doc):
        value = node.get("runtime_type")
        runtime_type = str_value(value)
        if runtime_type not in REMOVED_RUNTIME_TYPES:
            continue
        edits = [replace_edit(doc, value.span, quoted_value(doc, value, RUNC_V2))]
        runtime = node.get("options", "Runtime")
        if runtime_type == V1_RUNTIME_TYPE and "/" in (str_value(runtime) or "") \
                and node.get("options", "BinaryName") is None:
            edits.append(replace_edit(doc, runtime.key_span, "BinaryName"))
        # the v1 shim runs options.Runtime, or plain runc: it does not know BinaryName
        binary_lost = runtime_type == V1_RUNTIME_TYPE and runtime is None \
            and str_value(read_key(node.get("options"), "BinaryName", majors))
        if binary_lost:
            on_1x = (f"; on containerd 1.x the `{V1_RUNTIME_TYPE}` shim ignores options.BinaryName "
                     f"and runs plain runc, so `{name}` is not the runtime it names")
        elif majors == (2,):
            on_1x = ""
        else:
            on_1x = " (this file still works on containerd 1.x)"
        yield finding(doc, "GL105", value.span,
                      f"runtime `{name}` uses runtime_type `{runtime_type}`, deprecated since containerd "
                      f"1.4 and removed in 2.0: containerd 2.x cannot start containers with it{on_1x}; "
                      f"use `{RUNC_V2}`",
                      severity="error" if binary_lost or majors == (2,) else "warning",
                      fix=checked_fix(doc, f"use runtime_type `{RUNC_V2}`", edits,
                               safe=runtime_type == "io.containerd.runc.v1"))


def _binary_typo(node: Node) -> bool:
    """BinaryName written somewhere containerd does not read it (GL108 reports that)."""
    keys = list(node.value) + list(node.get("options").value if node.get("options") is not None
                                   and node.get("options").is_map else ())
    return any(k != "BinaryName" and suggest(k, RUNC_OPTIONS) == "BinaryName" for k in keys) \
        or node.get("BinaryName") is not None or _options_misspelt(node)


@check("GL106", kinds=("containerd",))
def binary_name_invalid(doc, ctx):
    for _, name, node in declared_runtimes(doc):
        entry = runtime_entry(name, doc, node)
        if not entry.is_nvidia:
            continue
        value = node.get("options", "BinaryName")
        if entry.binary is None:
            if not _binary_typo(node) and (entry.runtime_type or "") != V1_RUNTIME_TYPE:
                yield finding(doc, "GL106", node.anchor,
                              f"NVIDIA runtime `{name}` has no options.BinaryName, so the runc shim runs "
                              f"plain `runc` and containers that select it get no GPUs; set BinaryName "
                              f"to the absolute path of nvidia-container-runtime")
            continue
        if value is None or is_unknown_value(entry.binary):
            continue
        yield from _binary_findings(doc, name, value, entry.binary)


def _binary_findings(doc: Document, name: str, value: Node, binary: str):
    base = posixpath.basename(binary)
    if base in NOT_RUNTIMES:
        new = binary[: len(binary) - len(base)] + NOT_RUNTIMES[base]
        yield finding(doc, "GL106", value.span,
                      f"BinaryName of `{name}` is `{base}`, which is not an OCI runtime: the shim fails "
                      f"to create containers; the NVIDIA runtime is `{NOT_RUNTIMES[base]}`",
                      fix=checked_fix(doc, f"use `{new}`", [replace_edit(doc, value.span, quoted_value(doc, value, new))],
                               safe=False))
        return
    if base in OTHER_OCI_RUNTIMES and name.lower().startswith("nvidia"):
        new = binary[: len(binary) - len(base)] + "nvidia-container-runtime"
        yield finding(doc, "GL106", value.span,
                      f"BinaryName of `{name}` is `{binary}`, plain `{base}`: the runtime named for NVIDIA "
                      f"runs containers without the NVIDIA runtime, so they get no GPUs; set it to the "
                      f"absolute path of nvidia-container-runtime",
                      fix=checked_fix(doc, f"use `{new}`", [replace_edit(doc, value.span, quoted_value(doc, value, new))],
                                      safe=False))
        return
    if not binary.strip():
        yield finding(doc, "GL106", value.span,
                      f"BinaryName of `{name}` is empty, so the runc shim runs plain `runc` and "
                      f"containers that select it get no GPUs; set it to the absolute path of "
                      f"nvidia-container-runtime")
        return
    if binary != binary.strip() or any(c.isspace() for c in binary.strip()):
        yield finding(doc, "GL106", value.span,
                      f"BinaryName of `{name}` is {binary!r}: the runc shim runs the whole value as one "
                      f"program name, spaces and arguments included, finds no such file, and pods that "
                      f"select the runtime fail (`OCI runtime create failed`); give the program's "
                      f"absolute path alone")
        return
    if binary.endswith("/") or base in ("bin", "sbin"):
        yield finding(doc, "GL106", value.span,
                      f"BinaryName of `{name}` is the folder `{binary}`, not a program: pods that select "
                      f"the runtime fail (`OCI runtime create failed`); name the binary, "
                      f"`/usr/bin/nvidia-container-runtime`")
        return
    if not binary.startswith("/"):
        if "/" in binary:
            yield finding(doc, "GL106", value.span,
                          f"BinaryName of `{name}` is the relative path `{binary}`, which the shim resolves "
                          f"against its own working directory and does not find; use an absolute path")
        else:
            yield finding(doc, "GL106", value.span,
                          f"BinaryName of `{name}` is the bare name `{binary}`, found only if it is on "
                          f"containerd's PATH (the GPU Operator installs it elsewhere); an absolute path "
                          f"does not depend on the service's environment", severity="info")
    for mode in ("cdi", "legacy"):
        wanted = f"nvidia-container-runtime.{mode}"
        if name.endswith(f"-{mode}") and base in NVIDIA_BINARIES and base != wanted:
            new = binary[: len(binary) - len(base)] + wanted
            yield finding(doc, "GL106", value.span,
                          f"runtime `{name}` is the {mode} handler but runs `{base}` instead of "
                          f"`{wanted}`: pods that select it run in the mode the toolkit's config.toml "
                          f"sets (`auto` unless changed), not in {mode} mode",
                          severity="warning", fix=checked_fix(doc, f"use `{new}`", [replace_edit(doc, value.span, quoted_value(doc, value, new))],
                                   safe=False))


def _systemd(node: Node) -> Node | None:
    """A runtime's options.SystemdCgroup as containerd 1.x and 2.x both read it."""
    return read_key(node.get("options"), "SystemdCgroup", (1, 2))


def _systemd_value(node: Node) -> bool | None:
    """A runtime's SystemdCgroup: unset counts as false; None when not a boolean."""
    value = _systemd(node)
    have = value.value if value is not None else False
    return have if isinstance(have, bool) else None


def _systemd_unclear(node: Node) -> bool:
    """Whether the runtime's SystemdCgroup is in a key or table that some containerd
    version ignores (GL108 reports it, with what that costs)."""
    options = node.get("options")
    misplaced = any(suggest(k, RUNC_OPTIONS) == "SystemdCgroup" for k in node.value)
    return misplaced or _options_misspelt(node) or any(
        suggest(k, RUNC_OPTIONS) == "SystemdCgroup" and not key_matches(k, "SystemdCgroup", 1)
        for k, _ in (options.items() if options is not None else ()))


def _options_misspelt(node: Node) -> bool:
    return any(k != "options" and suggest(k, RUNTIME_FIELDS) == "options" for k in node.value)


def _node_of(doc: Document, ctx):
    """The containerd node config that loads `doc`."""
    return next((node for node in configs_loading(ctx, doc) if node.kind == "containerd"), None)


def _runc_for(doc: Document, ctx, plugin_id: str) -> tuple[Document, Node] | None:
    """The `runc` runtime that an NVIDIA handler of `doc` should match: the same CRI
    table's, else one in another file of the same node config."""
    table = containerd_file(doc).plugins.get(plugin_id)
    runc = table.get("containerd", "runtimes", "runc") if table is not None else None
    if runc is not None and runc.is_map:
        return doc, runc
    node = _node_of(doc, ctx)
    for other in node.docs if node is not None else ():
        for _, name, runtime in declared_runtimes(other):
            if name == "runc" and other is not doc:
                return other, runtime
    return None


def _shown(value: bool, node: Node | None) -> str:
    return ("true" if value else "false") + ("" if node is not None else " (unset)")


def _set_systemd(doc: Document, runtime: Node, value: bool) -> Edit | None:
    """Set a runtime's options.SystemdCgroup: replace the value or add the key."""
    text = "true" if value else "false"
    current, options = _systemd(runtime), runtime.get("options")
    if current is not None:
        return replace_edit(doc, current.span, text)
    return insert_key(doc, options, f"SystemdCgroup = {text}") if options is not None else None


def _systemd_anchor(runtime: Node) -> Span:
    """Where a runtime's SystemdCgroup is: its value, else the table it belongs in."""
    value = _systemd(runtime)
    return value.span if value is not None else (runtime.get("options") or runtime).anchor


@check("GL107", kinds=("containerd",))
def systemd_cgroup_mismatch(doc, ctx):
    kubelet = ctx.fact("kubelet-cgroup-driver")
    for plugin_id, name, node in declared_runtimes(doc):
        if _systemd_unclear(node) or is_unknown_value(getattr(_systemd(node), "value", None)):
            continue
        if kubelet is not None:
            if runc_like(node):
                yield from _against_kubelet(doc, name, node, kubelet)
            continue
        if name == "runc" or not runtime_entry(name, doc, node).is_nvidia:
            continue
        found = _runc_for(doc, ctx, plugin_id)
        if found is None:
            yield from _builtin_runc_differs(doc, ctx, name, node)
            continue
        if _systemd_unclear(found[1]):
            continue
        runc_doc, runc = found
        want, have = _systemd_value(runc), _systemd_value(node)
        if want is None and have is not None and is_placeholder(getattr(_systemd(runc), "value", None)):
            yield _runc_from_template(doc, name, node, have, runc_doc, runc)
            continue
        if want is None or have is None or want == have:
            continue
        node_config = _node_of(doc, ctx)
        default = node_config is not None and node_config.default_runtime == name
        yield _differs_from_runc(doc, name, node, runc_doc, runc, default)


def _builtin_runc_differs(doc: Document, ctx, name: str, node: Node):
    """No `runc` written: containerd 2.x keeps its built-in one, with SystemdCgroup = false
    (observed on 2.1.9: runc runs without --systemd-cgroup), so an NVIDIA runtime on the
    systemd driver differs from it. A drop-in linted without its main file is not judged:
    the main file may well define runc."""
    node_config = _node_of(doc, ctx)
    if _systemd_value(node) is not True or 2 not in file_majors(doc, ctx.settings) \
            or (is_drop_in(doc) and (node_config is None or len(node_config.docs) < 2)):
        return
    # as the default runtime the NVIDIA one runs the pods; the built-in runc only those that ask
    default = node_config is not None and node_config.default_runtime == name
    yield finding(doc, "GL107", _systemd_anchor(node),
                  f"NVIDIA runtime `{name}` has SystemdCgroup = true, but this config defines no `runc`: "
                  f"containerd 2.x keeps its built-in runc, which has SystemdCgroup = false, so the pods of "
                  f"the two runtimes use different cgroup drivers and those of the one that differs from "
                  f"kubelet's cgroupDriver are killed seconds after start"
                  + (" (here only pods whose RuntimeClass selects `runc`)" if default else "")
                  + "; define `runc` with SystemdCgroup = true",
                  severity="info" if default else "warning")


def _against_kubelet(doc: Document, name: str, node: Node, kubelet):
    want, have = kubelet.driver == "systemd", _systemd_value(node)
    if have is None or want == have:
        return
    where = f"{kubelet.doc.path}:{kubelet.node.span.line}"
    yield finding(doc, "GL107", _systemd_anchor(node),
                  f"runtime `{name}` has SystemdCgroup = {_shown(have, _systemd(node))} but kubelet's "
                  f"cgroupDriver is {kubelet.driver} ({where}): its containers get cgroup paths kubelet "
                  f"does not manage and are killed seconds after start or lose their GPUs; set "
                  f"SystemdCgroup = {str(want).lower()}",
                  fix=checked_fix(doc, f"set SystemdCgroup = {str(want).lower()} on `{name}`",
                           [_set_systemd(doc, node, want)]),
                  related=[related(kubelet.doc, kubelet.node, "kubelet's cgroup driver")])


def _differs_from_runc(doc: Document, name: str, node: Node, runc_doc: Document, runc: Node,
                       default: bool):
    """The NVIDIA runtime is the one to align with runc (what nvidia-ctk and k3s do: copy
    runc's options). When runc leaves the value unset, which of the two matches kubelet
    is not known here."""
    want, have = _systemd_value(runc), _systemd_value(node)
    explicit = _systemd(runc) is not None
    also = (f" (`{name}` is the default runtime, so most pods are affected, and where kubelet "
            f"takes its cgroup driver from containerd, 2.x with KEP-4033, it follows `{name}`)"
            if default else "")
    if not explicit:
        return finding(doc, "GL107", _systemd_anchor(node),
                       f"NVIDIA runtime `{name}` has SystemdCgroup = {_shown(have, _systemd(node))} but "
                       f"`runc` leaves it unset (false): the two use different cgroup drivers, and the "
                       f"pods of the one that differs from kubelet's cgroupDriver (kubeadm's default is "
                       f"systemd) are killed seconds after start; give both kubelet's value (lint the "
                       f"KubeletConfiguration with this config to have each runtime judged against it)",
                       severity="warning",
                       related=[related(runc_doc, _systemd_anchor(runc), "runc's table")])
    return finding(doc, "GL107", _systemd_anchor(node),
                   f"NVIDIA runtime `{name}` has SystemdCgroup = {_shown(have, _systemd(node))} but "
                   f"`runc` has {_shown(want, _systemd(runc))}: all runc-based runtimes must use the "
                   f"node's one cgroup driver, or the containers of one of them get killed seconds "
                   f"after start or lose their GPUs{also}; copy runc's value into `{name}`",
                   fix=checked_fix(doc, f"set SystemdCgroup = {str(want).lower()} on `{name}`",
                            [_set_systemd(doc, node, want)]),
                   related=[related(runc_doc, _systemd_anchor(runc), "runc's setting")])


def _runc_from_template(doc: Document, name: str, node: Node, have: bool, runc_doc: Document,
                        runc: Node):
    """runc's SystemdCgroup is a template expression (k3s' `{{ .SystemdCgroup }}`): the
    NVIDIA runtime's fixed value differs from it on every node where it renders otherwise."""
    value = _systemd(runc)
    written = runc_doc.text[slice(*runc_doc.index.offsets(value.span))]
    other = "false" if have else "true"
    return finding(doc, "GL107", _systemd_anchor(node),
                   f"NVIDIA runtime `{name}` has SystemdCgroup = {_shown(have, _systemd(node))} but `runc` "
                   f"takes it from the template (`{written}`): wherever that renders {other} (k3s and "
                   f"RKE2 render true on nodes with the systemd cgroup driver) the two runtimes use "
                   f"different cgroup drivers and the containers of one of them get killed seconds "
                   f"after start or lose their GPUs; give `{name}` the same expression",
                   severity="warning",
                   related=[related(runc_doc, _systemd_anchor(runc), "runc's setting")])


@check("GL108", kinds=("containerd",))
def key_misplaced_or_misspelled(doc, ctx):
    majors = file_majors(doc, ctx.settings)
    for plugin_id, table in containerd_file(doc).cri_tables():
        yield from _legacy_systemd_cgroup(doc, table, majors)
        yield from _cri_keys(doc, table, majors)
    for _, name, node in declared_runtimes(doc):
        entry = runtime_entry(name, doc, node)
        if not runc_like(node) and not entry.is_nvidia:
            continue
        yield from _runtime_keys(doc, name, node, entry.is_nvidia, majors)
        options = read_key(node, "options", majors) or node.get("options")
        if options is not None and options.is_map:
            yield from _option_keys(doc, name, node, options, entry.is_nvidia, majors)


def _legacy_systemd_cgroup(doc: Document, table: Node, majors: tuple[int, ...]):
    """CRI-level `systemd_cgroup = true`: containerd 1.x accepts it only when the default
    runtime is the v1 shim and otherwise fails the CRI plugin; 2.x has no such key."""
    legacy = table.get("systemd_cgroup")
    if legacy is None or legacy.value is not True:
        return
    default = str_value(table.get("containerd", "default_runtime_name")) or "runc"
    default_type = str_value(table.get("containerd", "runtimes", default, "runtime_type")) or RUNC_V2
    if 1 in majors and default_type != V1_RUNTIME_TYPE:
        yield finding(doc, "GL108", legacy.anchor,
                      f"CRI-level `systemd_cgroup = true` only works when the default runtime uses the "
                      f"removed `{V1_RUNTIME_TYPE}` shim: containerd 1.6/1.7 fail the CRI plugin "
                      f"(`systemd_cgroup` only works for runtime {V1_RUNTIME_TYPE}), so kubelet reports "
                      f"`unknown service runtime.v1.RuntimeService`, and 2.x ignores the key; set "
                      f"`SystemdCgroup = true` under each runtime's `.options`", severity="error")
        return
    yield finding(doc, "GL108", legacy.anchor,
                  f"CRI-level `systemd_cgroup = true` is a setting of the removed `{V1_RUNTIME_TYPE}` "
                  f"shim that containerd 2.x ignores; set `SystemdCgroup = true` under each runtime's "
                  f"`.options`")


def _readers(key: str, field: str, majors: tuple[int, ...]) -> list[int]:
    return [m for m in majors if key_matches(key, field, m)]


def _ignored_by(key: str, field: str, majors: tuple[int, ...]) -> tuple[str, str]:
    """How containerd treats a variant `key` of `field`, and where that matters."""
    if _readers(key, field, majors) == [2]:
        return (f"containerd 2.x reads `{key}` (it ignores case) but 1.6/1.7 ignore it (their decoder "
                f"tries only `{field}`, all lower or upper case, and a lower first letter)", " on 1.6/1.7")
    return "containerd ignores it", ""


# keys of a CRI plugin table that belong one level down, in `.containerd`
CONTAINERD_LEVEL = ("runtimes", "default_runtime_name")
CONTAINERD_FIELDS = ("snapshotter", "default_runtime_name", "no_pivot", "disable_snapshot_annotations",
                     "discard_unpacked_layers", "runtimes", "default_runtime", "untrusted_workload_runtime",
                     "ignore_blockio_not_enabled_errors", "ignore_rdt_not_enabled_errors")


def _cri_keys(doc: Document, table: Node, majors: tuple[int, ...]):
    """Runtimes and the default written where containerd does not look for them."""
    for key in CONTAINERD_LEVEL:
        child = table.get(key)
        if child is not None and (child.is_map or key != "runtimes"):
            lost = ("the runtimes written here do not exist" if key == "runtimes"
                    else "the default runtime stays `runc`")
            yield finding(doc, "GL108", child.anchor,
                          f"`{key}` sits directly in the CRI plugin table, but containerd reads it from "
                          f"its `containerd` sub-table, so {lost}; move it under `.containerd`",
                          severity="error")
    containerd = table.get("containerd")
    for key, child in containerd.items() if containerd is not None else ():
        if key in CONTAINERD_FIELDS:
            continue
        field = suggest(key, CONTAINERD_LEVEL)
        if field is None or (field != "runtimes" and containerd.get(field) is not None):
            continue
        # go-toml v1 decodes the first of `runtimes`, lower, UPPER and lowerFirst present in the
        # table: `RUNTIMES` beside `runtimes` is never read by 1.x (2.x adds it to the same map)
        shadowed = 1 in majors and containerd.get(field) is not None and key_matches(key, field, 1)
        readers = [m for m in _readers(key, field, majors) if not (m == 1 and shadowed)]
        if len(readers) == len(majors):
            continue
        why, scope = _ignored_by(key, field, majors)
        if shadowed:
            why, scope = (f"containerd 1.6/1.7 read only `{field}`, which this table has too, and ignore "
                          f"`{key}`" + (" (2.x reads both)" if 2 in majors else ""), "")
        yield finding(doc, "GL108", child.anchor,
                      f"`containerd.{key}` is not `containerd.{field}`: {why}, so "
                      + ("the runtimes written under it do not exist" if field == "runtimes"
                         else "the default runtime stays `runc`") + f"{scope}; write `{field}`",
                      severity="error")


def _claims(table: Node | None, option: str, known: tuple[str, ...]) -> int:
    """How many keys of `table` are the option or a variant of it."""
    if table is None or not table.is_map:
        return 0
    return sum(1 for key in table.value if key == option or suggest(key, known) == option)


def _lost(option: str, name: str, nvidia: bool, value=None) -> tuple[str, str]:
    """What an ignored runc option costs, and the severity: an NVIDIA handler without its
    BinaryName is plain runc; a runtime meant for the systemd driver runs cgroupfs, which
    differs from kubelet's and the other runtimes' (GL107 leaves such a runtime to this)."""
    if option == "BinaryName" and nvidia:
        return f"`{name}` runs plain runc and its pods get no GPUs", "error"
    if option == "SystemdCgroup":
        return f"`{name}` keeps the cgroupfs driver", "error" if value is True else "warning"
    return "the option has no effect", "warning"


def _runtime_keys(doc: Document, name: str, node: Node, nvidia: bool, majors: tuple[int, ...]):
    options = node.get("options")
    for key, child in node.items():
        if key in RUNTIME_FIELDS:
            continue
        option = suggest(key, RUNC_OPTIONS)
        if option is not None:
            move = None
            # moved only where nothing in .options already holds (a variant of) the option
            if options is not None and options.is_map and child.is_scalar \
                    and child.span.line == child.span.end_line and _claims(options, option, RUNC_OPTIONS) == 0:
                line = doc.line_text(child.span.line)[child.span.column - 1:].rstrip()  # value and comment
                move = checked_fix(doc, f"move {key} under `{name}.options`",
                            [delete_line(doc, child), insert_key(doc, options, f"{option} = {line}")])
            cost, severity = _lost(option, name, nvidia, child.value)
            yield finding(doc, "GL108", child.anchor,
                          f"`{key}` is a runc option but sits on runtime `{name}` itself; containerd only "
                          f"reads it from `{name}.options`, so it is ignored and {cost}",
                          severity=severity, fix=move)
            continue
        field = suggest(key, RUNTIME_FIELDS)
        if field is None or node.get(field) is not None or len(_readers(key, field, majors)) == len(majors):
            continue
        rename = None
        if _claims(node, field, RUNTIME_FIELDS) == 1:
            rename = checked_fix(doc, f"rename `{key}` to `{field}`", [replace_edit(doc, child.key_span, field)])
        severity = None
        if field == "options" and nvidia and any(suggest(k, RUNC_OPTIONS) == "BinaryName"
                                                 for k, _ in child.items()):
            severity = "error"  # the handler's BinaryName is in it
        why, _ = _ignored_by(key, field, majors)
        yield finding(doc, "GL108", child.anchor,
                      f"unknown key `{key}` in runtime `{name}`: {why}; did you mean `{field}`?",
                      severity=severity, fix=rename)


def _option_keys(doc: Document, name: str, node: Node, options: Node, nvidia: bool,
                 majors: tuple[int, ...]):
    known = V1_OPTIONS if str_value(node.get("runtime_type")) == V1_RUNTIME_TYPE else RUNC_OPTIONS
    yield from _options_written_twice(doc, name, options, known, nvidia, majors)
    for key, child in options.items():
        if key in known:
            continue
        option = suggest(key, known)
        if option is None or options.get(option) is not None \
                or len(_readers(key, option, majors)) == len(majors):
            continue
        rename = None
        # renamed only when no other key (here or misplaced on the runtime table) claims the option
        if _claims(options, option, known) == 1 and _claims(node, option, known) == 0:
            rename = checked_fix(doc, f"rename `{key}` to `{option}`", [replace_edit(doc, child.key_span, option)])
        cost, severity = _lost(option, name, nvidia, child.value)
        why, scope = _ignored_by(key, option, majors)
        advice = f"write `{option}`" if scope else f"did you mean `{option}`?"
        yield finding(doc, "GL108", child.anchor,
                      f"option `{key}` in `{name}.options`: {why}, so {cost}{scope}; {advice}",
                      severity=severity, fix=rename)


def _read_by(option: str, keys: list[str], major: int) -> str | None:
    """Which of `keys`, all spellings of one option, containerd `major`.x decodes. 1.x
    (go-toml v1) tries the option's name, lower, UPPER and lowerFirst, in that order, and
    takes the first present; 2.x re-marshals the options with their keys sorted and decodes
    them in turn (go-toml v2 folds case), so the last key in byte order wins."""
    if major == 1:
        return next((v for v in (option, option.lower(), option.upper(), option[:1].lower() + option[1:])
                     if v in keys), None)
    return max(keys)


def _options_written_twice(doc: Document, name: str, options: Node, known: tuple[str, ...], nvidia: bool,
                           majors: tuple[int, ...]):
    """One runc option under two spellings (`BinaryName` beside `binaryName`, as a tool adds
    the first to a table that holds the second): each containerd reads one of them and
    drops the other, and 1.x and 2.x do not pick the same one."""
    by_option: dict[str, list[str]] = {}
    for key in options.value:
        option = next((o for o in known if o.lower() == key.lower()), None)
        if option is not None:
            by_option.setdefault(option, []).append(key)
    for option, keys in by_option.items():
        if len(keys) < 2:
            continue
        read = {major: _read_by(option, keys, major) for major in majors}
        values = {key: options.value[key] for key in keys}
        shown = {key: as_written(doc, values[key]) for key in keys}
        if len({repr(v.value) for v in values.values()}) == 1:
            for key in keys[1:]:
                yield finding(doc, "GL108", values[key].anchor,
                              f"`{name}.options` sets {option} twice, as `{keys[0]}` and `{key}`, to the same "
                              f"value: containerd reads only one of them, so a later edit of the other does "
                              f"nothing; keep one key, `{option}`", severity="info",
                              related=[related(doc, values[keys[0]], f"`{keys[0]}`")])
            continue
        by_reader = {key: [m for m in majors if read[m] == key] for key in keys}
        agree = len(set(read.values())) == 1
        words = "; ".join(f"containerd {_majors_named(ms)} read{'s only' if agree else 's'} `{key}` = {shown[key]}"
                          for key, ms in by_reader.items() if ms)
        costs = [(ms, _written_cost(option, name, nvidia, values[key], values.values()))
                 for key, ms in by_reader.items() if ms]
        bad = [(ms, cost) for ms, (cost, _) in costs if cost]
        severity = max((sev for _, (_, sev) in costs), key=("info", "warning", "error").index)
        if agree:
            ignored = ", ".join(f"`{k}` = {shown[k]}" for k in keys if not by_reader[k])
            what = f"{ignored} is ignored" + (f", so {bad[0][1]}" if bad else "")
        elif bad:
            what = "; ".join(f"on {_majors_named(ms)} {cost}" for ms, cost in bad)
        else:
            what = "the runtime changes when the node's containerd moves between 1.x and 2.x"
        # the keys no reader takes, or where the readers disagree the one written last
        dropped = [k for k in keys if not by_reader[k]] or [max(keys, key=lambda k: values[k].span.line)]
        for key in dropped:
            yield finding(doc, "GL108", values[key].anchor,
                          f"`{name}.options` sets {option} under {len(keys)} spellings "
                          f"({', '.join(f'`{k}`' for k in keys)}): {words}; {what}; keep one key, `{option}`",
                          severity=severity,
                          related=[related(doc, values[k], f"`{k}`") for k in keys if k != key])


def _written_cost(option: str, name: str, nvidia: bool, value: Node, all_values) -> tuple[str, str]:
    """What reading `value` (one of the spellings' values) costs against the others, and how bad."""
    if option == "BinaryName" and nvidia:
        if _is_nvidia_binary(value):
            return "", "warning"
        return f"`{name}` runs `{value.value}` and its pods get no GPUs", "error"
    if option == "SystemdCgroup" and value.value is not True and any(v.value is True for v in all_values):
        return f"`{name}` keeps the cgroupfs driver", "error"
    return "", "warning"


def _majors_named(majors: list[int]) -> str:
    return " and ".join({1: "1.6/1.7", 2: "2.x"}[m] for m in majors)


def _is_nvidia_binary(value: Node) -> bool:
    return posixpath.basename(str(value.value).strip()) in NVIDIA_BINARIES


@check("GL112", kinds=("containerd",))
def privileged_device_options(doc, ctx):
    for _, name, node in declared_runtimes(doc):
        allowed = node.get("privileged_without_host_devices_all_devices_allowed")
        base = node.get("privileged_without_host_devices")
        if allowed is not None and allowed.value is True and (base is None or base.value is not True):
            # 1.6 has no such option: on nodes that all run 1.6 the setting is only ignored
            only_16 = {r for rs in target_releases(doc, ctx.settings).values() for r in rs} == {"1.6"}
            yield finding(doc, "GL112", allowed.anchor,
                          f"runtime `{name}` sets privileged_without_host_devices_all_devices_allowed "
                          f"without privileged_without_host_devices = true: the CRI plugin of containerd "
                          f"1.7 and 2.x refuses the config (\"`privileged_without_host_devices_all_devices_"
                          f"allowed` requires `privileged_without_host_devices` to be enabled\"); 1.6 "
                          f"does not know the option and ignores it",
                          severity="warning" if only_16 else None,
                          related=[related(doc, base, "privileged_without_host_devices")] if base else [])


