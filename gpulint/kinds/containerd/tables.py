"""containerd tables and files (GL109-GL111, GL113-GL118): legacy fields, drop-ins, generated
files, and what containerd refuses or never reads.
"""

from __future__ import annotations

import os

from gpulint.common.runtimes import configs_loading
from gpulint.formats.template import includes_template
from gpulint.kinds.containerd.facts import (
    ALL_CRI_IDS,
    CRI_PLUGIN_IDS,
    V1_RUNTIME_TYPE,
    containerd_file,
    file_majors,
    imported_docs,
    is_drop_in,
    read_key,
)
from gpulint.kinds.containerd.support import (
    CDI_KEYS,
    GENERATED,
    RUNC_V2,
    checked_fix,
    cri_items,
    declared_runtimes,
    is_unknown_value,
    mains_beside,
    quoted_value,
    replace_edit,
    runc_like,
)
from gpulint.model import Document, Edit, Node, Span, str_value
from gpulint.regex import lazy
from gpulint.registry import check, finding, related

# --- GL109 - GL111 ----------------------------------------------------------------------

def _set(node: Node) -> bool:
    """Whether a value does anything: not empty, not false, not an all-empty table."""
    if node.is_map:
        return any(_set(c) for c in node.children())
    if node.is_seq:
        return bool(node.value)
    return node.value not in ("", False, None, 0) and not is_unknown_value(node.value)


@check("GL109", kinds=("containerd",))
def legacy_runtime_fields(doc, ctx):
    version = containerd_file(doc).version
    newer = version is not None and version >= 3
    for plugin_id, table in containerd_file(doc).cri_tables():
        for key in ("default_runtime", "untrusted_workload_runtime"):
            legacy = table.get("containerd", key)
            if legacy is not None and legacy.is_map and _set(legacy):
                yield finding(doc, "GL109", legacy.anchor,
                              f"the `containerd.{key}` table is deprecated since containerd 1.3 and removed "
                              f"in 2.0; define the runtime under `containerd.runtimes` and select it with "
                              f"`default_runtime_name` (or a RuntimeClass)",
                              severity="error" if newer else "warning")
    for _, name, node in declared_runtimes(doc):
        v2 = (str_value(node.get("runtime_type")) or "").startswith("io.containerd.runc.")
        for key in ("runtime_engine", "runtime_root"):
            value = node.get(key)
            if value is None or not _set(value):
                continue
            yield finding(doc, "GL109", value.anchor,
                          f"runtime `{name}` sets `{key}`, a field of the removed v1 shim: containerd 1.6/1.7 "
                          f"refuse it for runc.v2 runtimes (\"`{key}` only works for runtime "
                          f"{V1_RUNTIME_TYPE}\") and 2.x drops it"
                          + ("; use options.Root instead" if key == "runtime_root" else ""),
                          severity="error" if newer or v2 else "warning")


@check("GL110", kinds=("containerd",))
def cri_plugin_disabled(doc, ctx):
    disabled = doc.tree.get("disabled_plugins")
    info = containerd_file(doc)
    if disabled is None or not disabled.is_seq:
        return
    # containerd appends the disabled_plugins of every file it merges: a drop-in that turns
    # CRI off does so for the runtimes of the main file too
    merged = next((n.docs for n in configs_loading(ctx, doc) if n.kind == "containerd"), [doc])
    where = next((d for d in merged if any(cri_items(t) for _, t in containerd_file(d).cri_tables())), None)
    if where is None:
        return
    said = "this file configures CRI runtimes" if where is doc else f"{where.path}, merged with it, configures CRI runtimes"
    for item in disabled.value:
        plugin = str_value(item)
        if "." not in (plugin or "") and (info.version or 1) >= 2:
            continue  # a short ID in a version 2 file stops containerd (GL115)
        if plugin in ALL_CRI_IDS or (plugin or "").startswith("io.containerd.cri.v1."):
            yield finding(doc, "GL110", item.span,
                          f"disabled_plugins turns off `{plugin}`, but {said}: "
                          f"kubelet fails with `unknown service runtime.v1.RuntimeService` (the containerd "
                          f"package shipped for Docker disables CRI this way)",
                          fix=checked_fix(doc, f"remove `{plugin}` from disabled_plugins",
                                   [_remove_item(doc, disabled, item)]))


def _remove_item(doc: Document, array: Node, item: Node) -> Edit:
    """Delete one array item with the comma on one side."""
    start, end = doc.index.offsets(item.span)
    text = doc.text
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    if after < len(text) and text[after] == ",":
        after += 1
        while after < len(text) and text[after] in " \t":
            after += 1
        return Edit(doc.abspath, start, after, "")
    before = start
    while before > 0 and text[before - 1] in " \t\n":
        before -= 1
    if text[before - 1] == ",":
        before -= 1
    return Edit(doc.abspath, before, end, "")


@check("GL111", kinds=("containerd",))
def cdi_setting_misplaced(doc, ctx):
    cri_tables = {id(t) for _, t in containerd_file(doc).cri_tables()}
    expected = containerd_file(doc).cri_id or CRI_PLUGIN_IDS[2]
    table = "plugins.cri" if expected == "cri" else f'plugins."{expected}"'

    def walk(node: Node, path: tuple[str, ...]):
        for key, child in node.items():
            if key in CDI_KEYS and id(node) not in cri_tables:
                where = f"under `{'.'.join(path)}`" if path else "at the top level"
                yield finding(doc, "GL111", child.anchor,
                              f"`{key}` {where} is ignored: containerd reads it directly from the CRI "
                              f"plugin table (`{table}`), so on containerd 1.7, where CDI is off by "
                              f"default, CDI devices stay unresolvable")
            elif child.is_map:
                yield from walk(child, path + (key,))

    try:
        yield from walk(doc.tree, ())
    finally:
        del walk  # it calls itself through its closure: a cycle that would hold the document


# --- GL113 / GL114 ----------------------------------------------------------------------

@check("GL113", project=True)
def drop_in_not_imported(ctx):
    docs = ctx.of_kind("containerd")
    imported = imported_docs(ctx)
    for doc in docs:
        if not is_drop_in(doc) or doc.abspath in imported:
            continue
        mains = mains_beside(ctx, doc)
        # a templated main may render imports we cannot see
        if not mains or any(m.templated for m in mains):
            continue
        defines = any(True for _ in declared_runtimes(doc))
        main = mains[0]
        imports = containerd_file(main).imports()
        where = ", ".join(f"`{i.value}`" for i in imports) if imports else "no `imports` at all"
        yield finding(doc, "GL113", Span.point(1, 1),
                      f"this drop-in is not imported by {main.path} (which has {where}), so containerd "
                      f"never reads it" + (" and its runtimes do not exist" if defines else "")
                      + "; add its folder to `imports` (containerd's convention is `conf.d/*.toml`)",
                      severity="error" if defines else "warning",
                      related=[related(main, i, "imports") for i in imports])


# where k3s and RKE2 write the containerd config they generate at every start
GENERATED_AT = lazy(r"(?:^|/)var/lib/rancher/(k3s|rke2)/agent/etc/containerd/config\.toml$")


@check("GL114", kinds=("containerd",))
def generated_file_edited(doc, ctx):
    if doc.templated:
        return
    template = "config-v3.toml.tmpl" if (containerd_file(doc).version or 1) >= 3 else "config.toml.tmpl"
    advice = f"put them in {template} next to it (start it with `{{{{ template \"base\" . }}}}`)"
    for line in range(1, min(doc.index.line_count, 3) + 1):
        text = doc.line_text(line)
        match = GENERATED.search(text)
        if match and text.lstrip().startswith("#"):
            yield finding(doc, "GL114", Span(line, 1, line, len(text)),
                          f"this config is generated by {match.group(1).lower()} and rewritten at every "
                          f"start, so changes here vanish; {advice}")
            return
    place = GENERATED_AT.search(doc.abspath.replace("\\", "/"))
    if place is not None:  # the header was dropped, the place still says whose it is
        yield finding(doc, "GL114", Span(1, 1, 1, max(1, len(doc.line_text(1)))),
                      f"this is where {place.group(1)} writes the containerd config it generates at every "
                      f"start, so changes here vanish; {advice}")


# --- GL123: k3s/RKE2 templates -----------------------------------------------------------

# the names k3s and RKE2 read a containerd template from, beside the config they generate
K3S_TEMPLATES = ("config.toml.tmpl", "config-v3.toml.tmpl")
# a path into one k3s/RKE2 release's data folder (`data/<hash>/bin`); `data/current` follows upgrades
RELEASE_DATA_DIR = lazy(r"/var/lib/rancher/(k3s|rke2)/data/(?!current/)[^/\s\"']+/")


@check("GL123", kinds=("containerd",))
def k3s_template_without_base(doc, ctx):
    name = doc.abspath.replace("\\", "/").rsplit("/", 1)[-1]
    if name not in K3S_TEMPLATES or includes_template(doc):
        return
    stale = [(line, match) for line in range(1, doc.index.line_count + 1)
             for match in [RELEASE_DATA_DIR.search(doc.line_text(line))] if match]
    for line, match in stale:
        yield finding(doc, "GL123", Span(line, match.start() + 1, line, match.end()),
                      f"this template names the data folder of one {match.group(1)} release "
                      f"(`{match.group(0)}`): k3s and RKE2 do not update a template, so after an upgrade "
                      f"the folder is gone and containerd finds no CNI plugins (`cni plugin not "
                      f"initialized`); use `/var/lib/rancher/{match.group(1)}/data/current/` or the "
                      f"template's value (`{{{{ .NodeConfig.AgentConfig.CNIBinDir }}}}`), or start the "
                      f"template with `{{{{ template \"base\" . }}}}` and keep only what you change",
                      severity="warning")
    if not stale and "{{" not in doc.text:
        yield finding(doc, "GL123", Span(1, 1, 1, max(1, len(doc.line_text(1)))),
                      "this template has no template expression at all, a copy of a rendered config: "
                      "k3s and RKE2 then stop keeping the settings they generate (CNI folders, sandbox "
                      "image, registry mirrors, the runtimes they detect) in step with the node and the "
                      "release; start it with `{{ template \"base\" . }}` (k3s and RKE2 releases from "
                      "September 2023 on) and add only what you change", severity="info")


# --- GL116 - GL118: what containerd refuses or never reads --------------------------

@check("GL116", kinds=("containerd",))
def import_missing(doc, ctx):
    from pathlib import Path

    if doc.templated or not Path(doc.abspath).is_file():
        return
    for entry in containerd_file(doc).imports():
        path = entry.value
        if "*" in path or is_unknown_value(path) or "$" in path:
            continue  # containerd skips a glob that matches nothing
        places = _import_places(doc, path)
        folders = [p for p in places if p.parent.is_dir()]
        if not folders or any(p.exists() for p in places):
            continue
        shown = os.path.relpath(folders[0].parent, os.path.dirname(doc.abspath)).replace("\\", "/")
        where = "beside this config" if shown == "." else f"in `{shown}/` beside this config"
        yield finding(doc, "GL116", entry.span,
                      f"imports names `{path}`, which is not {where}: containerd "
                      f"does not start (`failed to load TOML: {path}: open {path}: no such file or "
                      f"directory`); fix the name, or import a glob (`*.toml`), which may match nothing")


def _import_places(doc: Document, path: str):
    """Where an import entry may sit in the linted tree: beside the importer for a relative
    path; for an absolute one the path itself and under the folder the importer's own
    location places at `/` (`nodes/gpu/etc/containerd/config.toml` for /etc/containerd)."""
    from pathlib import Path

    folder = Path(doc.abspath).parent
    if not path.startswith("/"):
        return [folder / path]
    wanted = [p for p in path.split("/") if p]
    parts = list(folder.parts)
    places = [Path(path)]
    for size in range(1, len(wanted)):
        if [p for p in parts[-size:]] == wanted[:size]:
            places.append(Path(*parts[:-size], *wanted))
    return places


RUNC_TYPES = ("io.containerd.runc.v1", RUNC_V2)


@check("GL117", kinds=("containerd",))
def runtime_type_unknown(doc, ctx):
    majors = file_majors(doc, ctx.settings)  # 2.x reads keys in any case
    for _, name, node in declared_runtimes(doc, majors):
        value = read_key(node, "runtime_type", majors)
        runtime_type = str_value(value)
        if not runtime_type or is_unknown_value(runtime_type) or runtime_type in RUNC_TYPES:
            continue
        if runtime_type.startswith("/"):
            # containerd runs a path given here as the shim binary itself
            binary = runtime_type.rstrip("/").rsplit("/", 1)[-1]
            if not binary.startswith("containerd-shim-"):
                yield _not_a_shim(doc, name, value,
                                  f"a path, which containerd runs as the runtime's shim (`{binary} "
                                  f"-namespace k8s.io ... start`); but `{binary}` is not a containerd shim "
                                  f"(`containerd-shim-*`), so every pod that selects it fails (`failed to "
                                  f"start shim: start failed`)")
        elif "." not in runtime_type:
            # a binary's name where a shim's belongs (`runc`, `nvidia-container-runtime`)
            yield _not_a_shim(doc, name, value,
                              f"which is not a shim name: every pod that selects it fails (`invalid runtime "
                              f"name {runtime_type}, correct runtime name should be either format like "
                              f"`io.containerd.runc.v1` or a full path to the binary`)")
        elif runtime_type.lower().startswith("io.containerd.runc"):
            shim = "containerd-shim-" + "-".join(runtime_type.split(".")[2:])
            yield finding(doc, "GL117", value.span,
                          f"runtime `{name}` has runtime_type `{runtime_type}`, a runc shim that does not "
                          f"exist: every pod that selects it fails (`binary not installed \"{shim}\"`); "
                          f"use `{RUNC_V2}`", fix=_use_runc_v2(doc, value, safe=True))


def _not_a_shim(doc, name: str, value, why: str):
    return finding(doc, "GL117", value.span,
                   f"runtime `{name}` has runtime_type `{value.value}`, {why}; runtime_type names the shim, "
                   f"`{RUNC_V2}`, and the runtime binary goes in `options.BinaryName`",
                   fix=_use_runc_v2(doc, value, safe=False))


def _use_runc_v2(doc, value, safe: bool):
    return checked_fix(doc, f"use runtime_type `{RUNC_V2}`",
                       [replace_edit(doc, value.span, quoted_value(doc, value, RUNC_V2))], safe=safe)


# the runc shim's option types (containerd's runc options.proto)
OPTION_TYPES = {"SystemdCgroup": bool, "NoPivotRoot": bool, "NoNewKeyring": bool,
                "IoUid": int, "IoGid": int, "TaskApiVersion": int,
                **{k: str for k in ("BinaryName", "Root", "CriuPath", "CriuImagePath", "CriuWorkPath",
                                    "ShimCgroup", "TaskApiAddress")}}
TOML_TYPE = {bool: "a boolean", int: "an integer", str: "a string"}


@check("GL118", kinds=("containerd",))
def runtime_option_type(doc, ctx):
    for _, name, node in declared_runtimes(doc):
        options = node.get("options")
        if not runc_like(node) or options is None or not options.is_map:
            continue
        for key, child in options.items():
            wanted = OPTION_TYPES.get(key)
            value = child.value
            if wanted is None or not child.is_scalar or is_unknown_value(value) \
                    or (isinstance(value, wanted) and not (wanted is int and isinstance(value, bool))):
                continue
            text = doc.text[slice(*doc.index.offsets(child.span))]
            literal = str(value).strip().lower() if isinstance(value, str) else None
            fix = None
            if wanted is bool and literal in ("true", "false"):
                fix = checked_fix(doc, f"write {key} = {literal}", [replace_edit(doc, child.span, literal)])
            elif wanted is int and literal is not None and literal.isdigit():
                fix = checked_fix(doc, f"write {key} = {literal}", [replace_edit(doc, child.span, literal)])
            yield finding(doc, "GL118", child.span,
                          f"`{key} = {text}` in `{name}.options` is {_kind_of(value)}, but the runc shim "
                          f"wants {TOML_TYPE[wanted]}: every pod that selects `{name}` fails (`failed to "
                          f"generate runtime options: Can't convert ...`)", fix=fix)


def _kind_of(value) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, str):
        return "a string"
    return "a " + type(value).__name__
