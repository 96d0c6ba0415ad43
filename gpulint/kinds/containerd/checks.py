"""containerd config.toml rules (GL101-GL103): the default runtime, the CRI plugin path and
the version header.

The per-file and per-node facts (version, CRI plugin table, effective runtimes) come from
the kind's facts. Fixes are small text edits computed from the parser's positions, so
comments, indentation and table order stay as written; every fix is checked to parse
before it is offered.
"""

from __future__ import annotations

import re

from gpulint.common.runtimes import configs_with_main
from gpulint.formats.template import includes_template
from gpulint.kinds.containerd.facts import (
    ALL_CRI_IDS,
    containerd_file,
    effective_cri,
    file_majors,
    is_drop_in,
    runtime_tables,
)
from gpulint.kinds.containerd.support import (
    CDI_KEYS,
    checked_fix,
    cri_items,
    declared_runtimes,
    drop_ins_beside,
    is_unknown_value,
    line_start,
    replace_edit,
    version_text,
)
from gpulint.knowledge import containerd_config as model
from gpulint.model import Document, Edit, Fix, Node, apply_edits, str_value
from gpulint.registry import check, finding, related

# --- GL101 ------------------------------------------------------------------------------

@check("GL101", project=True)
def default_runtime_undefined(ctx):
    for node in ctx.fact("node-configs"):
        if node.kind != "containerd":
            continue
        found = effective_cri(node.docs)
        if found is None:
            continue
        doc, table = found
        name_node = table.get("containerd", "default_runtime_name")
        name = str_value(name_node) if name_node is not None else "runc"
        if name is None or is_unknown_value(name) or node.default_runtime != name:
            continue
        if name == "runc":
            yield from _runc_not_built_in(ctx, node, doc, table, name_node)
            continue
        if node.defines(name):
            continue
        yield finding(doc, "GL101", name_node.span,
                      f"default_runtime_name = \"{name}\" names no runtime in `containerd.runtimes` "
                      f"of this config: containerd's CRI plugin fails validation (no corresponding "
                      f"runtime configured in `containerd.runtimes` for `containerd` "
                      f"`default_runtime_name = \"{name}\"`) and kubelet reports `unknown service "
                      f"runtime.v1.RuntimeService`{_hint(ctx, node, doc, name)}",
                      related=_elsewhere(ctx, node, name))


def _runc_not_built_in(ctx, node, doc: Document, table: Node, name_node: Node | None):
    """containerd 1.x decodes the CRI table with go-toml v1, which replaces the default
    runtime map (holding `runc`) with the `containerd.runtimes` table a file writes;
    2.x (go-toml v2) adds to it."""
    written = runtime_tables(table)
    # a drop-in that no linted file imports is judged with the config that imports it
    if not written or is_drop_in(node.doc) or _cri_disabled(node.doc) or "runc" in node.runtimes \
            or any(map(includes_template, node.docs)) or any(is_unknown_value(n) for n, _ in written) \
            or 1 not in file_majors(doc, ctx.settings):
        return
    where = name_node.span if name_node is not None else written[0][1].anchor
    said = ('default_runtime_name = "runc"' if name_node is not None
            else "no default_runtime_name, so the default runtime is `runc`")
    names = ", ".join(f"`{n}`" for n, _ in written)
    lost = ""
    if doc is not node.doc:
        lost = (f"; {doc.path} is loaded after {node.doc.path} and, before containerd 2.1, "
                f"replaces its whole CRI plugin table, `runc` and the default included")
    yield finding(doc, "GL101", where,
                  f"{said}, but the runtimes written here ({names}) include no `runc`: containerd "
                  f"1.6/1.7 replace their built-in runtimes with the runtimes a config writes, so the "
                  f"CRI plugin fails validation (no corresponding runtime configured in "
                  f"`containerd.runtimes` for `containerd` `default_runtime_name = \"runc\"`) and "
                  f"kubelet reports `unknown service runtime.v1.RuntimeService` (containerd 2.x keeps "
                  f"its built-in `runc`){lost}; define a `runc` runtime or set default_runtime_name "
                  f"to one of these")


def _cri_disabled(doc: Document) -> bool:
    disabled = doc.tree.get("disabled_plugins")
    return disabled is not None and disabled.is_seq and any(
        str_value(item) in ALL_CRI_IDS for item in disabled.value)


def _nearby(ctx, node) -> list[Document]:
    """The files of this node's config, and the drop-ins in folders beside its main file:
    other configs in the linted set belong to other nodes."""
    own = {d.abspath for d in node.docs}
    return list(node.docs) + [d for d in drop_ins_beside(ctx, node.doc) if d.abspath not in own]


def _definitions(ctx, node, name: str):
    """(document, plugin ID, table) of every runtime called `name` (any case) in this node's
    files and the drop-ins beside them."""
    for doc in _nearby(ctx, node):
        for plugin_id, runtime, table in declared_runtimes(doc):
            if runtime.lower() == name.lower():
                yield doc, plugin_id, runtime, table


def _hint(ctx, node, doc: Document, name: str) -> str:
    defined = list(_definitions(ctx, node, name))
    for other, plugin_id, runtime, _ in defined:
        if runtime != name:
            return f"; did you mean `{runtime}`? (names are case-sensitive)"
    paths = {d.abspath for d in node.docs}
    for other, plugin_id, _, _ in defined:
        if other.abspath not in paths:
            return f"; a runtime `{name}` is defined in {other.path}, which this config does not import"
        if containerd_file(other).cri_id not in (None, plugin_id):
            return (f"; the runtime `{name}` in {other.path} is under plugin `{plugin_id}`, "
                    f"which {version_text(other)} does not read")
        if other is not doc:
            return (f"; the runtime `{name}` in {other.path} is lost because {doc.path} is loaded later "
                    f"and, before containerd 2.1, replaces the whole CRI plugin table")
    return ""


def _elsewhere(ctx, node, name: str):
    return [related(other, table, f"runtime `{runtime}` defined here")
            for other, _, runtime, table in _definitions(ctx, node, name)]


# --- GL102 / GL103 ---------------------------------------------------------------------

def _header_prefix(plugin_id: str, only_containerd: bool) -> re.Pattern:
    quoted = re.escape(plugin_id)
    tail = r"(?=\s*\.\s*containerd\b)" if only_containerd else r"(?=\s*[.\]])"
    return re.compile(rf"^(\s*\[\[?\s*plugins\s*\.\s*)(\"{quoted}\"|'{quoted}'|{quoted}){tail}",
                      re.MULTILINE)


def _prefix_fix(doc: Document, wrong: str, expected: str) -> Fix | None:
    """Rewrite table headers from the wrong CRI plugin ID to the expected one. From
    io.containerd.grpc.v1.cri to the 2.x runtime plugin only the `containerd` tables
    move: the streaming settings stay in the old ID."""
    only_containerd = wrong == "io.containerd.grpc.v1.cri"
    if only_containerd and any(doc.tree.get("plugins", wrong, key) is not None for key in CDI_KEYS):
        return None
    new_id = expected if expected == "cri" else f'"{expected}"'
    edits = []
    for match in _header_prefix(wrong, only_containerd).finditer(doc.text):
        edits.append(Edit(doc.abspath, match.start(2), match.end(2), new_id))
    fix = checked_fix(doc, f"move the runtime tables from `{wrong}` to `{expected}`", edits)
    if fix is None:
        return None
    # the TOML reader (tomlkit): only when a fix or a file is read again as TOML
    from gpulint.formats.tomlpos import load_toml

    after = load_toml(apply_edits(doc.text, fix.edits)).get("plugins", {}).get(wrong, {})
    if isinstance(after, dict) and (after.get("containerd") or any(k in after for k in CDI_KEYS)):
        return None
    return fix


@check("GL102", kinds=("containerd",))
def cri_plugin_path_mismatch(doc, ctx):
    info = containerd_file(doc)
    if doc.tree.get("version") is None or info.cri_id is None:
        return
    expected = info.cri_id
    if expected == "cri" and 1 not in file_majors(doc, ctx.settings):
        return  # 2.x reads no CRI settings of a version 1 file (GL121)
    wrong = [(pid, table) for pid, table in info.cri_tables()
             if pid != expected and cri_items(table)]
    fix = _prefix_fix(doc, wrong[0][0], expected) if len(wrong) == 1 else None
    for plugin_id, table in wrong:
        for item in cri_items(table):
            what = f"runtime `{_name_of(table, item)}`" if item.is_map else f"`{_key_of(table, item)}`"
            yield finding(doc, "GL102", item.anchor,
                          f"{what} is under plugin `{plugin_id}`, but {version_text(doc)} reads "
                          f"runtimes, default_runtime_name and CDI settings from `{expected}`: "
                          f"{_consequence(plugin_id, expected)}", fix=fix)


def _name_of(table: Node, item: Node) -> str:
    return next(name for name, node in runtime_tables(table) if node is item)


def _key_of(table: Node, item: Node) -> str:
    return "default_runtime_name" if table.get("containerd", "default_runtime_name") is item else \
        next(k for k in CDI_KEYS if table.get(k) is item)


def _consequence(plugin_id: str, expected: str) -> str:
    if plugin_id == "cri":
        return "containerd 1.x refuses to start (`invalid plugin key URI \"cri\" expect io.containerd.x.vx`)"
    if expected == "cri":
        return ("a version 1 file addresses plugins by short name, so containerd 1.x ignores this "
                "table (and 2.0 to 2.2 drop the CRI settings of a version 1 file, GL121)")
    return ("containerd logs `Ignoring unknown key in TOML for plugin` and the setting does not exist, "
            "so pods that select the runtime fail with `no runtime for \"...\" is configured`")


@check("GL103", kinds=("containerd",))
def version_header_missing(doc, ctx):
    info = containerd_file(doc)
    if info.version is None:
        if info.version_node is not None:
            yield from _version_not_a_number(doc, info.version_node)
        return
    if info.version_node is not None or info.plugins is None or includes_template(doc):
        return
    qualified = [(pid, node) for pid, node in info.plugins.items() if pid.startswith("io.containerd.")]
    if not qualified:
        return
    if 1 not in file_majors(doc, ctx.settings):
        return  # 2.x reads no CRI settings of a version 1 file (GL121)
    runtime_ids = [pid for pid, table in info.cri_tables() if cri_items(table)]
    mixed = info.plugins.get("cri") is not None or len(runtime_ids) > 1
    lost = any(pid != "cri" for pid in runtime_ids)
    yield finding(doc, "GL103", qualified[0][1].anchor,
                  f"no `version` key, so containerd reads this file as version 1, where plugins go by "
                  f"short name (`plugins.cri`): containerd 1.x ignores the fully qualified "
                  f"`{qualified[0][0]}` table"
                  + (" and the runtimes and default written in it" if lost else "")
                  + ", containerd 2.0 to 2.2 drop the CRI settings of a version 1 file (GL121), and "
                  "nvidia-ctk adds its runtime under `plugins.cri` instead"
                  + ("; the file also mixes short and qualified CRI plugin IDs, so one silently wins"
                     if mixed else ""),
                  severity="error" if mixed or lost else "warning",
                  fix=None if mixed else _version_fix(doc, info))


# --- GL121 ------------------------------------------------------------------------------

@check("GL121", kinds=("containerd",))
def version_1_cri_dropped(doc, ctx):
    """containerd 2.0-2.2 convert a version 0/1 main file to version 3 while loading it, without
    the CRI plugin's own migration, and then skip that migration because the result is already
    version 3: the CRI settings stay where the CRI plugins of 2.x do not read them."""
    info = containerd_file(doc)
    if info.version is None or info.version > 2 or is_drop_in(doc) or doc.templated or info.plugins is None:
        return
    stated = model.stated_release(ctx.settings)
    majors = file_majors(doc, ctx.settings)
    if (stated is not None and stated not in model.V1_CRI_NOT_MIGRATED) or 2 not in majors:
        return
    raised_by = _converted_to_3(doc, ctx)
    if raised_by is None:
        return
    if info.version == 2:
        yield from _raised_to_3(doc, info, raised_by)
        return
    if info.version_node is None and 1 in majors and any(p.startswith("io.containerd.") for p in info.plugins.value):
        return  # GL103 reports the missing version for 1.x and 2.x at once
    tables = [(pid, table) for pid, table in info.cri_tables()
              if pid in ("cri", "io.containerd.grpc.v1.cri") and cri_items(table)]
    if not tables:
        return
    runtimes = [name for _, table in tables for name, _ in runtime_tables(table)]
    handler = next((n for n in runtimes if n != "runc"), None)
    defaults = [table.get("containerd", "default_runtime_name") for _, table in tables]
    default = next((str_value(n) for n in defaults if n is not None and str_value(n)), None)
    lost = ", ".join(f"`{n}`" for n in runtimes[:4]) or "none"
    said = ("no `version` key, so this is a version 1 file" if info.version_node is None
            else f"this is a version {info.version} file")
    where = info.version_node.span if info.version_node is not None else tables[0][1].anchor
    only_2x = 1 not in majors
    yield finding(doc, "GL121", where,
                  f"{said}: containerd 2.0 to 2.2 convert it to version 3 on start without moving the CRI "
                  f"plugin's settings, so the CRI settings here (runtimes: {lost}"
                  + (f"; default_runtime_name = \"{default}\"" if default else "")
                  + ") are dropped: pods run containerd's built-in runc"
                  + (f" and a RuntimeClass with handler `{handler}` fails (`no runtime for "
                     f"\"{handler}\" is configured`)" if handler else "")
                  + ("" if only_2x else "; containerd 1.x reads it")
                  + "; write `version = 2` with the CRI tables under `plugins.\"io.containerd.grpc.v1.cri\"` "
                  "(`containerd config migrate` writes version 3)",
                  severity="error" if only_2x else "warning")


def _converted_to_3(doc: Document, ctx) -> Document | None:
    """The file that leaves the merged config of the node `doc` is the main file of at version
    3, so that the server skips the plugins' migrations; None when it ends below 3. Each file
    with no version, or version 1, is converted to the version merged so far (3, containerd's
    default, for the main file); a later file's own version replaces it (mergo override): a
    version 2 drop-in brings it back to 2, and the CRI migration then runs over the whole
    merged config, while a version 3 drop-in of a version 2 file raises it to 3."""
    node = next((n for n in configs_with_main(ctx, doc) if n.kind == "containerd"), None)
    merged, by = 3, doc
    for loaded in node.docs if node is not None else [doc]:
        version = containerd_file(loaded).version
        if version is not None and version >= 2:
            merged, by = version, loaded
    return by if merged >= 3 else None


def _raised_to_3(doc: Document, info, drop_in: Document):
    """A version 2 file whose imported drop-in says `version = 3`."""
    table = info.plugins.get("io.containerd.grpc.v1.cri")
    if table is None or not table.is_map or not cri_items(table):
        return
    runtimes = ", ".join(f"`{n}`" for n, _ in runtime_tables(table)[:4]) or "none"
    version = containerd_file(drop_in).version_node
    yield finding(doc, "GL121", info.version_node.span,
                  f"this version 2 file is merged with {drop_in.path}, which says `version = 3` and so makes "
                  f"the merged config version 3: containerd 2.0 to 2.2 then skip the migration of this file's "
                  f"CRI settings, so its runtimes ({runtimes}) and default are dropped, containerd 2.3 refuses "
                  f"to start (`drop-in config version 3 higher than root config version 2`), and 1.6.32+/1.7.17+ "
                  f"refuse version 3 (`unsupported config version`); write the drop-in for version 2 "
                  f"(`plugins.\"io.containerd.grpc.v1.cri\"`), or this file as version 3",
                  severity="error", related=[related(drop_in, version, "version = 3")] if version else [])


def _version_not_a_number(doc: Document, node: Node):
    """`version = "2"`: containerd decodes `version` into an integer and fails to load the file."""
    if not isinstance(node.value, str) or is_unknown_value(node.value):
        return
    text = node.value.strip()
    fix = None
    if text in ("1", "2", "3", "4"):
        fix = checked_fix(doc, f"write version = {text}", [replace_edit(doc, node.span, text)])
    yield finding(doc, "GL103", node.span,
                  f"`version` is the string \"{node.value}\", not an integer: containerd decodes it into "
                  f"a number and does not start (`failed to load TOML`); write it without quotes",
                  severity="error", fix=fix)


def _version_fix(doc: Document, info) -> Fix | None:
    ids = list(info.plugins.value)
    new = any(pid.startswith("io.containerd.cri.v1.") for pid in ids)
    old_runtime = cri_items(info.plugins.get("io.containerd.grpc.v1.cri") or Node({}, info.plugins.span))
    if new and old_runtime:
        return None
    version = 3 if new else 2
    line = 1
    while line <= doc.index.line_count and (not doc.line_text(line).strip()
                                            or doc.line_text(line).lstrip().startswith("#")):
        line += 1
    pos = line_start(doc, line) if line <= doc.index.line_count else len(doc.text)
    gap = "\n" if doc.line_text(line).lstrip().startswith("[") else ""
    return checked_fix(doc, f"add `version = {version}`", [Edit(doc.abspath, pos, pos, f"version = {version}\n{gap}")])


