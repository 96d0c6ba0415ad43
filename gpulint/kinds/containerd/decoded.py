"""containerd reads its config into typed structs (GL119, GL120): the file is decoded as each
release would decode it (rules/containerd-decode.yaml), a value whose TOML type does not fit
its field stops containerd (GL119), and a key no field matches is a setting containerd never
reads (GL120). The top-level table and the CRI plugin tables are decoded; a runtime's
`options` belong to the runc shim (GL108, GL118).
"""

from __future__ import annotations

from datetime import date, datetime, time

from gpulint.kinds.containerd.checks import cri_plugin_path_mismatch
from gpulint.kinds.containerd.facts import containerd_file, target_releases
from gpulint.kinds.containerd.runtimes import key_misplaced_or_misspelled
from gpulint.kinds.containerd.support import GENERATED, as_written, is_unknown_value
from gpulint.kinds.containerd.tables import cdi_setting_misplaced, legacy_runtime_fields
from gpulint.knowledge import containerd_config as model
from gpulint.model import Document, Node
from gpulint.record import Record
from gpulint.regex import lazy
from gpulint.registry import check, finding
from gpulint.spelling import closest_key

_INTEGERS = ("int", "int32", "int64", "uint32", "uint64")
MIGRATED_FROM = "1.7"  # the structs containerd 2.x migrates a version 1 or 2 file from
# keys whose value 2.x decodes into a typed field after migration (sandbox_image ->
# pinned_images.sandbox, a string: containerd 2.1.9 refuses `sandbox_image = 3.9`)
MIGRATED_TYPED = ("sandbox_image",)
# Fields k3s and RKE2 add in the containerd they ship, which reads their generated config
# and templates: registry mirror rewrites (https://docs.k3s.io/installation/private-registry#rewrites).
K3S_FIELDS = {"cri.Mirror": {"rewrite": {"type": "map[string]string", "go": "Rewrites"}}}
_MAP = lazy(r"map\[string\](.+)")
# go-toml v1's %T of a decoded TOML value, and go-toml v2's name of the TOML type
_GO_TYPES = {str: "string", int: "int64", float: "float64", bool: "bool", list: "[]interface {}",
             dict: "*toml.Tree"}
_TOML_TYPES = {str: "string", int: "integer", float: "float", bool: "boolean", list: "array",
               dict: "table"}


class _Problem(Record):
    __slots__ = ("node", "kind", "key", "path", "releases", "detail")

    node: Node
    kind: str  # "type" | "unknown"
    key: str  # the key as written
    path: str  # where, for the message (`plugins."io.containerd.grpc.v1.cri".containerd`)
    releases: set[str]
    detail: dict  # per major: the daemon's message, or the table's keys

    def __init__(self, node: Node, kind: str, key: str, path: str, releases: set[str] | None = None,
                 detail: dict | None = None) -> None:
        self.node = node
        self.kind = kind
        self.key = key
        self.path = path
        self.releases = set() if releases is None else releases
        self.detail = {} if detail is None else detail


def _cri_structs(major: int, release: str, version: int, plugin_id: str) -> list[tuple[str, str]]:
    """(release, struct) pairs a CRI plugin table is decoded into, by the table's plugin ID."""
    if major == 1:
        wanted = {1: "cri", 2: "io.containerd.grpc.v1.cri"}.get(version)
        return [(release, "cri.PluginConfig")] if plugin_id == wanted else []
    if version >= 3:
        name = {"io.containerd.cri.v1.runtime": "cri.RuntimeConfig",
                "io.containerd.cri.v1.images": "cri.ImageConfig",
                "io.containerd.grpc.v1.cri": "cri.ServerConfig"}.get(plugin_id)
        return [(release, name)] if name else []
    # containerd 2.x migrates a version 2 file's CRI table over its three structs, carrying
    # the keys of 1.7's (a renamed one, such as sandbox_image, is read there too); the CRI
    # table of a version 1 file is dropped by 2.0-2.2 (GL121)
    if version <= 1 and release in model.V1_CRI_NOT_MIGRATED:
        return []
    wanted = "cri" if version == 1 else "io.containerd.grpc.v1.cri"
    if plugin_id != wanted:
        return []
    return [(release, "cri.RuntimeConfig"), (release, "cri.ImageConfig"), (release, "cri.ServerConfig"),
            (MIGRATED_FROM, "cri.PluginConfig")]


def _problems(doc: Document, settings) -> list[_Problem]:
    cache_key = ("containerd-decoded", id(settings))
    if cache_key in doc.cache:
        return doc.cache[cache_key]
    found: dict[tuple[int, str], _Problem] = {}
    file = containerd_file(doc)
    version = file.version
    # a template is k3s' or RKE2's (config.toml.tmpl), as is the config they generate
    k3s = doc.templated or bool(GENERATED.search(doc.text))
    for major, releases in target_releases(doc, settings).items():
        if version is None or (major == 1 and version > 2):
            continue  # a version 1.x refuses, or one a template fills in (GL103)
        for release in releases:
            walker = _Walker(release, major, found, migrating=major == 2 and version < 3, k3s=k3s)
            walker.table(doc.tree, [(release, "server.Config")], "the top level", top=True)
            plugins = doc.tree.get("plugins")
            for plugin_id, table in plugins.items() if plugins is not None else ():
                structs = _cri_structs(major, release, version, plugin_id)
                if structs and table.is_map:
                    walker.table(table, structs, f'plugins."{plugin_id}"')
    doc.cache[cache_key] = out = list(found.values())
    return out


# (structs, k3s) -> what `_Walker._fields` gives: the structs are the bundled model's
_FIELDS: dict = {}


class _Walker:
    def __init__(self, release: str, major: int, found: dict, migrating: bool, k3s: bool) -> None:
        self.release, self.major, self.found = release, major, found
        self._migrating = migrating  # a version 1 or 2 file read by 2.x
        self._k3s = k3s  # read by the containerd k3s or RKE2 ships

    def _note(self, node: Node, kind: str, key: str, path: str, detail) -> None:
        problem = self.found.setdefault((id(node), kind), _Problem(node, kind, key, path))
        problem.releases.add(self.release)
        problem.detail.setdefault(self.major, detail)

    def _fields(self, structs) -> tuple[dict[str, tuple[str, str, dict]], dict[str, dict]]:
        """key -> (release, struct, field) over the structs a table is decoded into, and
        key -> field; worked out once per run for each list of structs (read only)."""
        memo_key = (tuple(structs), self._k3s)
        found = _FIELDS.get(memo_key)
        if found is not None:
            return found
        out: dict[str, tuple[str, str, dict]] = {}
        for release, name in structs:
            extra = K3S_FIELDS.get(name, {}) if self._k3s else {}
            for key, spec in {**model.fields(release, name), **extra}.items():
                out.setdefault(key, (release, name, spec))
        found = _FIELDS[memo_key] = (out, {key: spec for key, (_, _, spec) in out.items()})
        return found

    def table(self, node: Node, structs, path: str, top: bool = False) -> None:
        fields, plain = self._fields(structs)
        major = self.major
        for key, child in node.value.items():  # `node` is a table
            if is_unknown_value(key):
                continue
            exact = fields.get(key)  # most keys are written as their field's tag
            if exact is not None:
                tag, (release, container, spec) = key, exact
            else:
                match = model.field_for(key, plain, major)
                if match is None:
                    self._note(child, "unknown", key, path, sorted(plain))
                    continue
                tag, spec = match
                release, container, _ = fields[tag]
            if top and tag == "plugins":
                continue  # each plugin's table is decoded by the plugin
            self.value(child, key, release, container, spec, f"{path}.{key}" if not top else key)

    def value(self, node: Node, key: str, release: str, container: str, spec: dict, path: str) -> None:
        if is_unknown_value(node.value):
            return
        go = spec["type"]
        struct, inner, inner_struct = _plan(release, container, go)
        if struct is not None:
            if node.is_map:
                self.table(node, self._related(release, struct), path)
            else:
                self._type_error(node, key, release, container, spec)
            return
        if inner is not None:
            if not node.is_map:
                self._type_error(node, key, release, container, spec)
                return
            for name, child in node.value.items():
                if inner_struct is not None:
                    if child.is_map:
                        self.table(child, self._related(release, inner_struct), f"{path}.{name}")
                    elif not is_unknown_value(child.value):
                        self._type_error(child, name, release, container, {"type": inner, "go": spec["go"]})
                elif inner in ("string", "bool", *_INTEGERS) and not _fits(child, inner):
                    self._type_error(child, name, release, container, {"type": inner, "go": spec["go"]},
                                     in_map=True)
            return
        if not _fits(node, go):
            self._type_error(node, key, release, container, spec)

    def _related(self, release: str, struct: str) -> list[tuple[str, str]]:
        """A nested struct, and in a table 2.x migrates, 1.7's struct of the same name."""
        out = [(release, struct)]
        if release == MIGRATED_FROM and self.release != MIGRATED_FROM:
            return out  # already the migrated-from struct
        if self.major == 2 and self._migrating and model.struct(MIGRATED_FROM, struct) is not None:
            out.append((MIGRATED_FROM, struct))
        return out

    def _type_error(self, node: Node, key: str, release: str, container: str, spec: dict,
                    in_map: bool = False) -> None:
        if release != self.release and key not in MIGRATED_TYPED:
            return  # 2.x moves the raw value of a key it reads only through migration, or drops it
        # a key 2.x reads only through migration: its words in 2.x are not known
        text = None if release != self.release else _message(self.major, node, container, spec, in_map)
        self._note(node, "type", key, "", text)


# (release, struct, Go type) -> the struct the type names, and for a map type the type of its
# values and the struct that names; the same few hundred are asked for every value of every config
_PLANS: dict[tuple[str, str, str], tuple[str | None, str | None, str | None]] = {}


def _plan(release: str, container: str, go: str) -> tuple[str | None, str | None, str | None]:
    found = _PLANS.get((release, container, go))
    if found is None:
        struct = model.resolve_type(release, container, go)
        mapped = _MAP.fullmatch(go) if struct is None else None
        inner = mapped[1] if mapped is not None else None
        inner_struct = model.resolve_type(release, container, inner) if inner is not None else None
        found = _PLANS[(release, container, go)] = (struct, inner, inner_struct)
    return found


def _fits(node: Node, go: str) -> bool:
    value = node.value
    if go == "bool":
        return isinstance(value, bool)
    if go == "string":
        return isinstance(value, str)
    if go in _INTEGERS:
        return isinstance(value, int) and not isinstance(value, bool) \
            and (value >= 0 or not go.startswith("uint"))
    if go == "[]string":
        return node.is_seq and all(isinstance(item.value, str) for item in node.value)
    return True  # a type gpulint does not model: never judged


def _go_value(node: Node) -> str:
    """A TOML value as Go's %v prints it once go-toml v1 decoded it."""
    value = node.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if isinstance(value, list):
        return "[" + " ".join(_go_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "map[...]"
    return str(value)


def _python_type(value) -> type:
    for kind in (bool, int, float, str, list, dict):
        if isinstance(value, kind):
            return kind
    return type(value)


def _message(major: int, node: Node, container: str, spec: dict, in_map: bool) -> str | None:
    """The error the release's TOML library gives (go-toml v1 for 1.x, v2 for 2.x), when
    gpulint knows its words; None otherwise."""
    kind = _python_type(node.value)
    if isinstance(node.value, (datetime, date, time)):
        return None
    go = spec["type"].lstrip("*")
    if major == 1:
        if kind is list and (go in ("bool", "string") or go in _INTEGERS):
            return f"Can't convert {_go_value(node)}([]interface {{}}) to a slice"
        if kind in (str, int, float, bool) and (go in ("bool", "string") or go in _INTEGERS):
            return f"Can't convert {_go_value(node)}({_GO_TYPES[kind]}) to {go}"
        return None
    if in_map:
        return f"toml: cannot decode TOML {_TOML_TYPES.get(kind, 'value')} into {go}"
    package, _, name = container.partition(".")
    return (f"toml: cannot decode TOML {_TOML_TYPES.get(kind, 'value')} into struct field "
            f"{model.GO_PACKAGES.get(package, package)}.{name}.{spec['go']} of type {go}")


def _majors_text(releases: set[str]) -> str:
    majors = sorted({r.split(".")[0] for r in releases})
    return " and ".join(f"{m}.x" for m in majors)


def _version_type(doc: Document, settings) -> _Problem | None:
    """`version = 2.0` (or true, or an array): the top-level integer every release decodes first,
    so the file cannot be read at all. A quoted version is GL103's, which can fix it."""
    node = containerd_file(doc).version_node
    value = None if node is None else node.value
    if node is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return None
    spec = {"type": "int", "go": "Version"}
    targets = target_releases(doc, settings)
    problem = _Problem(node, "type", "version", "the top level",
                       releases={r for releases in targets.values() for r in releases})
    problem.detail = {major: _message(major, node, "server.Config", spec, False) for major in targets}
    return problem


@check("GL119", kinds=("containerd",))
def value_not_decodable(doc, ctx):
    version = _version_type(doc, ctx.settings)
    for problem in ([version] if version else []) + _problems(doc, ctx.settings):
        if problem.kind != "type" or (problem.key == "version" and problem is not version):
            continue  # GL103 judges a quoted `version`
        said = "; ".join(f"{major}.x: `{text}`" for major, text in sorted(problem.detail.items()) if text)
        quoted = f" ({said})" if said else ""
        yield finding(doc, "GL119", problem.node.span,
                      f"`{problem.key} = {as_written(doc, problem.node)}` has a TOML type containerd cannot "
                      f"decode into this field: containerd {_majors_text(problem.releases)} "
                      f"{'refuse' if ' and ' in _majors_text(problem.releases) else 'refuses'} to start"
                      f"{quoted}; write the value as its type requires (no quotes around true, false and "
                      f"numbers, quotes around strings)")


# rules that say more about a key in the wrong table than GL120 can: runtimes under the
# wrong CRI plugin ID (GL102), runtimes and runc options misplaced or misspelt (GL108), the
# removed v1 shim's fields (GL109), CDI settings outside the CRI table (GL111)
_MORE_SPECIFIC = (("GL102", cri_plugin_path_mismatch), ("GL108", key_misplaced_or_misspelled),
                  ("GL109", legacy_runtime_fields), ("GL111", cdi_setting_misplaced))


def _owned_elsewhere(doc: Document, ctx) -> list[tuple[int, int]]:
    """Where the enabled more specific rules report in this file."""
    return [(f.span.line, f.span.column) for code, rule in _MORE_SPECIFIC if code in ctx.enabled
            for f in rule(doc, ctx)]


def _inert(node: Node) -> bool:
    if node.is_map:
        return all(_inert(child) for child in node.children())
    if node.is_seq:
        return not node.value
    return node.value in ("", False, None) or (type(node.value) is int and node.value == 0)


def _within(node: Node, places: list[tuple[int, int]]) -> bool:
    """Whether a place is the node's or one of its descendants' (a table's span may be its
    header alone)."""
    stack = [node]
    while stack:
        here = stack.pop()
        for span in (here.anchor, here.span):
            if (span.line, span.column) in places:
                return True
        stack.extend(here.children())
    return False


@check("GL120", kinds=("containerd",))
def key_not_decoded(doc, ctx):
    problems = [p for p in _problems(doc, ctx.settings) if p.kind == "unknown"]
    if not problems:
        return
    targets = {r for releases in target_releases(doc, ctx.settings).values() for r in releases}
    owned = _owned_elsewhere(doc, ctx)
    for problem in problems:
        anchor = problem.node.anchor
        if _within(problem.node, owned):
            continue
        if not problem.releases >= targets:
            continue  # a key some of the releases read: said only when the fleet names one
        if _inert(problem.node):
            continue  # an empty or false value: nothing is lost
        keys = next(iter(problem.detail.values()))
        near = closest_key(problem.key, tuple(keys))
        hint = f"; did you mean `{near}`?" if near else ""
        elsewhere = _home(problem.key)
        if elsewhere:
            hint = f"; containerd reads `{problem.key}` in {elsewhere}"
        yield finding(doc, "GL120", anchor,
                      f"`{problem.key}` in {problem.path} is not a key containerd reads there: it is "
                      f"ignored (1.x without a word; 2.x logs `Ignoring unknown key in TOML`), so the "
                      f"setting is lost{hint}")


# where a key that is not read in one table belongs (the CRI keys users most often misplace)
_HOMES = {
    "default_runtime_name": 'the CRI plugin\'s `containerd` table (`[plugins."io.containerd.grpc.v1.cri".containerd]`)',
    "runtimes": "the CRI plugin's `containerd` table",
    "SystemdCgroup": "a runc runtime's `options` table (`...containerd.runtimes.runc.options`)",
    "BinaryName": "a runtime's `options` table",
    "runtime_type": "a runtime's table (`...containerd.runtimes.<name>`)",
}


def _home(key: str) -> str | None:
    for name, home in _HOMES.items():
        if model.matches(key, name, 2):
            return home
    return None
