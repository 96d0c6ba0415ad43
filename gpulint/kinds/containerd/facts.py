"""containerd facts: which runtimes a node's containerd would have.

containerd: a file's `version` (absent = 1) decides which CRI plugin ID holds
`containerd.runtimes`, `default_runtime_name` and the CDI keys. `imports`
(paths and globs, relative ones against the importing file) are resolved
against the linted files; containerd loads the main file first, then its imports
in order, and before containerd 2.1 each file's plugin table *replaces* the same
plugin's table from earlier files. The effective CRI table is therefore the one
from the last loaded file that has it. Files of different versions are
compared by their CRI runtime table, as containerd migrates each one up.

Checks and cross-file rules share one computation per run (memoised on the
Context); per-file facts are memoised on the Document.
"""

from __future__ import annotations

import functools
import os
from fnmatch import fnmatchcase

from gpulint.common.runtimes import NodeConfig, RuntimeEntry
from gpulint.formats.errors import ParseError
from gpulint.formats.template import is_placeholder, neutralise
from gpulint.knowledge import containerd_config as model
from gpulint.knowledge.runtimes import is_nvidia_handler
from gpulint.model import Document, Node, str_value
from gpulint.record import Record
from gpulint.regex import lazy

# The CRI plugin ID that holds runtimes, per config version (a version 4 file
# uses the version 3 ID).
CRI_PLUGIN_IDS = {1: "cri", 2: "io.containerd.grpc.v1.cri", 3: "io.containerd.cri.v1.runtime",
                  4: "io.containerd.cri.v1.runtime"}
ALL_CRI_IDS = ("cri", "io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime")
V1_RUNTIME_TYPE = "io.containerd.runtime.v1.linux"


# --- containerd, one file ---------------------------------------------------

DROP_IN_DIRS = lazy(r".*\.d$")


def is_drop_in(doc: Document) -> bool:
    """A fragment that another config or the platform merges: a file in a `*.d` folder
    (containerd's `conf.d`, Talos' `/etc/cri/conf.d/*.part`) or a `.part` file."""
    parts = doc.abspath.replace("\\", "/").split("/")
    return parts[-1].lower().endswith(".part") or (len(parts) >= 2 and bool(DROP_IN_DIRS.match(parts[-2])))


class ContainerdFile(Record):
    __slots__ = ("doc", "version", "version_node", "plugins")

    doc: Document
    version: int | None  # None when the `version` value cannot be read (a template expression)
    version_node: Node | None
    plugins: Node | None

    def __init__(self, doc: Document, version: int | None, version_node: Node | None, plugins: Node | None) -> None:
        self.doc = doc
        self.version = version
        self.version_node = version_node
        self.plugins = plugins

    @property
    def cri_id(self) -> str | None:
        if self.version is None:
            return None
        return CRI_PLUGIN_IDS.get(min(max(self.version, 1), 4))

    @property
    def cri(self) -> Node | None:
        """The CRI runtime plugin table for the file's version, if present; for a file
        whose version is not known, its one CRI table."""
        if self.cri_id is None:
            tables = self.cri_tables()
            return tables[0][1] if len(tables) == 1 else None
        return _map(self.plugins.get(self.cri_id)) if self.plugins else None

    def cri_tables(self) -> list[tuple[str, Node]]:
        """Every CRI plugin table in the file, under any of the known IDs."""
        out = []
        for plugin_id in ALL_CRI_IDS:
            table = _map(self.plugins.get(plugin_id)) if self.plugins else None
            if table is not None:
                out.append((plugin_id, table))
        return out

    def imports(self) -> list[Node]:
        node = self.doc.tree.get("imports")
        if node is None or not node.is_seq:
            return []
        return [item for item in node.value if isinstance(item.value, str)]


def _map(node: Node | None) -> Node | None:
    return node if node is not None and node.is_map else None


def containerd_file(doc: Document) -> ContainerdFile:
    cached = doc.cache.get("containerd-file")
    if cached is None:
        root = doc.tree
        version_node = root.get("version")
        if version_node is None:
            # a drop-in is read with the version of the config it is merged into
            version = None if is_drop_in(doc) else 1
        elif isinstance(version_node.value, int) and not isinstance(version_node.value, bool):
            version = version_node.value
        else:
            version = None
        cached = ContainerdFile(doc, version, version_node, _map(root.get("plugins")))
        doc.cache["containerd-file"] = cached
    return cached


# --- what other files' checks read of a config ------------------------------------------

# The CRI plugin table's CDI settings (GL111 and the cross-file checks read them there).
CDI_KEYS = ("enable_cdi", "cdi_spec_dirs")

# What other files' checks, and the project checks, read of a config (each function: a key
# -> WHOLE, the function for the keys to keep of its table, or None). At the top: the version
# (which CRI plugin ID holds the runtimes, which containerd reads the file), the imports (the
# node's files), the disabled plugins (GL101 asks whether CRI is off) and, of `plugins`, the
# CRI tables under every ID containerd has used. Of those, the CDI keys (`cri_items`, GL516's
# `enable_cdi`) and, under `containerd`, what the node's runtimes come from (`runtime_tables`:
# `runtimes` in any case go-toml matches; `default_runtime_name`; the legacy typed
# `default_runtime`), each runtime's table whole (its options, runc's SystemdCgroup). GL122
# compares every plugin table of a node's files: it reads them again (`written_plugins`).
WHOLE = True


def _containerd_keys(key: str):
    return WHOLE if key.lower() == "runtimes" or key in ("default_runtime_name", "default_runtime") else None


def _cri_keys(key: str):
    return _containerd_keys if key == "containerd" else WHOLE if key in CDI_KEYS else None


def _plugin_keys(key: str):
    return _cri_keys if key in ALL_CRI_IDS else None


def _top_keys(key: str):
    return _plugin_keys if key == "plugins" else WHOLE if key in ("version", "imports", "disabled_plugins") else None


class KeptConfig(Node):
    """The root of a config of which the run keeps only what other files' checks read
    (`kept_part`)."""

    __slots__ = ()


def kept_part(doc: Document) -> Node | None:
    """What other files' checks and the project checks read of a shared config, for the
    run to keep in place of the whole tree (`Kind.kept`): the keys `_top_keys` names, and
    the file's first top-level entry, whose place GL812 names (`next(iter(tree.value.values()))`).
    The kept Nodes are the parsed ones; a table with keys left out is a copy with its
    places, so every position read stays the same. None when that is the whole tree."""
    root = doc.tree
    if root is None or not root.is_map:
        return None
    first = next(iter(root.value), None)
    part = _cut(root, lambda key: _top_keys(key) or (WHOLE if key == first else None), KeptConfig)
    return None if part is root else part


def _cut(node: Node, keys, cls: type = Node) -> Node:
    """`node` with the keys `keys` keeps (itself when that is every key, whole); a value
    that is no table, where one is read, as it is."""
    if not node.is_map:
        return node
    kept = {}
    for key, child in node.value.items():
        inner = keys(key)
        if inner is not None:
            kept[key] = child if inner is WHOLE else _cut(child, inner)
    if len(kept) == len(node.value) and all(kept[key] is child for key, child in node.value.items()):
        return node
    copy = object.__new__(cls)  # its places, tag and line index as they are
    copy.value = kept
    copy._span, copy._key_span = node._span, node._key_span
    copy.tag, copy.quoted, copy._index = node.tag, node.quoted, node._index
    return copy


def written_plugins(doc: Document) -> Node | None:
    """Every table of the file's `plugins` (GL122 compares a node's files table by table):
    the kept one, else, where only a part of the config is kept, read again from the text."""
    if type(doc.tree) is not KeptConfig:
        return containerd_file(doc).plugins
    # the kind's parser, imported where it is used
    from gpulint.formats.tomlpos import parse_toml

    try:
        tree = parse_toml(neutralise(doc.text) if doc.templated else doc.text, doc.index)
    except ParseError:  # it parsed before: the text is the same
        return containerd_file(doc).plugins
    return _map(tree.get("plugins"))


def runtime_tables(table: Node, majors: tuple[int, ...] = ()) -> list[tuple[str, Node]]:
    """(name, table) of each runtime under a CRI plugin table's `containerd.runtimes`; with
    `majors`, also under every spelling of `runtimes` one of those containerd versions decodes
    into the same map (go-toml v2 in 2.x adds the runtimes of `RUNTIMES` to those of
    `runtimes`)."""
    containerd = table.get("containerd")
    if containerd is None or not containerd.is_map:
        return []
    keys = {"runtimes"} if "runtimes" in containerd.value else set()
    if 1 in majors and not keys:  # go-toml v1 reads the first of these it finds
        keys |= {next((k for k in ("RUNTIMES", "runtimes") if k in containerd.value), "")}
    if 2 in majors:  # go-toml v2 decodes every key that folds to it into the one map
        keys |= {k for k in containerd.value if k.lower() == "runtimes"}
    out = []
    for key in sorted(k for k in keys if k):
        runtimes = containerd.value[key]
        if runtimes.is_map:
            out.extend((name, node) for name, node in runtimes.items() if node.is_map)
    return out


def runtime_entry(name: str, doc: Document, node: Node) -> RuntimeEntry:
    # the key as the decoder matches it (go-toml v1 reads RUNTIME_TYPE too)
    runtime_type = str_value(read_key(node, "runtime_type", file_majors(doc)))
    options = node.get("options")
    # the v1 shim runs options.Runtime; the runc shims options.BinaryName
    field = "Runtime" if runtime_type == V1_RUNTIME_TYPE else "BinaryName"
    binary = str_value(read_key(options, field, file_majors(doc)))
    return RuntimeEntry(name, doc, node, binary, runtime_type, is_nvidia_handler(name, binary))


# --- which containerd reads a file, and how it matches keys --------------------------

def file_majors(doc: Document, settings=None) -> tuple[int, ...]:
    """The containerd major versions that may read `doc`: a version 3/4 file only
    containerd 2.x, any other both 1.x and 2.x; `containerd-version` in the fleet
    configuration names the one the nodes run."""
    stated = str(((getattr(settings, "fleet", None) or {}).get("containerd-version")) or "")
    if stated[:1] in ("1", "2"):
        return (int(stated[:1]),)
    version = containerd_file(doc).version
    return (2,) if version is not None and version >= 3 else (1, 2)


def target_releases(doc: Document, settings) -> dict[int, tuple[str, ...]]:
    """The releases that judge the file: the one the fleet names, else each release of every
    major version that may read it."""
    minor = model.stated_release(settings)
    if minor in model.RELEASES:
        return {int(minor[0]): (minor,)}
    return {major: model.releases_of(major) for major in file_majors(doc, settings)}


def key_matches(key: str, name: str, major: int) -> bool:
    """Whether containerd `major`.x decodes the TOML key `key` into the field `name`.
    1.x decodes with go-toml v1, which tries `name`, lower, UPPER and lowerFirst; 2.x
    with go-toml v2, which folds case."""
    if major == 1:
        return key in (name, name.lower(), name.upper(), name[:1].lower() + name[1:])
    return key.lower() == name.lower()


def read_key(table: Node | None, name: str, majors: tuple[int, ...]) -> Node | None:
    """The value of field `name` in `table` as every one of `majors` reads it: the exact
    key first, else the one key each of them matches; None when they disagree."""
    if table is None or not table.is_map:
        return None
    if name in table.value:
        return table.value[name]
    found = {major: next((v for k, v in table.items() if key_matches(k, name, major)), None)
             for major in majors}
    values = list(found.values())
    return values[0] if all(v is values[0] for v in values) else None


# --- imports ------------------------------------------------------------------

@functools.lru_cache(maxsize=None)  # a repository's configs are each compared with every other
def _parts(path: str) -> tuple[str, ...]:
    return tuple(p for p in path.replace("\\", "/").split("/") if p not in ("", "."))


def _glob_parts(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    """Component-wise glob match: `*` does not cross `/`, as in Go's filepath.Glob."""
    return len(pattern) == len(path) and all(fnmatchcase(p, g) for g, p in zip(pattern, path))


def import_covers(importer: Document, pattern: str, target: Document) -> bool:
    """Whether an `imports` entry of `importer` names `target`.

    A relative entry resolves against the importing file's folder. An absolute
    one (`/etc/containerd/conf.d/*.toml`) names the file itself when linting a
    real /etc. A repository keeps a node's files under a folder of its own
    (`nodes/gpu/etc/containerd/...`), so the entry also resolves against that
    folder: the one the importer's path places at `/` (the importer sits in
    `.../etc/containerd`), else the importer's own folder for the entry's last
    folder (`conf.d/*.toml` beside the importer). Another node's `conf.d` never
    matches.
    """
    target_parts = _parts(target.abspath)
    return any(_glob_parts(c, target_parts) for c in _candidates(importer.abspath, pattern))


def _candidates(importer: str, pattern: str) -> list[tuple[str, ...]]:
    """The paths, as parts, an `imports` entry of the file `importer` may name (see
    import_covers)."""
    if not pattern.startswith("/"):
        base = os.path.dirname(importer)
        return [_parts(os.path.normpath(os.path.join(base, pattern)))]
    wanted = _parts(pattern)
    folder = _parts(os.path.dirname(importer))
    candidates = [wanted]
    candidates += [folder[:-size] + wanted for size in range(1, len(wanted))
                   if folder[-size:] == wanted[:size]]
    if len(wanted) >= 2:
        candidates.append(folder + wanted[-2:])
    return candidates


def _literal(parts: tuple[str, ...]) -> bool:
    return not any(c in part for part in parts for c in "*?[")


def direct_imports(doc: Document, docs: list[Document],
                   by_folder: dict[tuple[str, ...], list[Document]] | None = None) -> list[Document]:
    """The linted files `doc` imports, in containerd's order (entries in order, each
    glob's matches sorted by path). `by_folder`: `docs` by the parts of their folder, so an
    entry whose folders are written plainly is matched against the files there only."""
    out: list[Document] = []
    for entry in containerd_file(doc).imports():
        if is_placeholder(entry.value):
            continue
        pool = docs
        candidates = _candidates(doc.abspath, entry.value)
        if by_folder is not None and all(c and _literal(c[:-1]) for c in candidates):
            pool = list({id(d): d for c in candidates for d in by_folder.get(c[:-1], ())}.values())
        matches = sorted((d for d in pool if d is not doc and import_covers(doc, entry.value, d)),
                         key=lambda d: d.abspath)
        out.extend(d for d in matches if all(d is not seen for seen in out))
    return out


def import_graph(ctx) -> dict[str, list[Document]]:
    """For each linted containerd file (by absolute path), the linted files it imports."""
    if "containerd.imports" not in ctx.cache:
        docs = ctx.of_kind("containerd")
        by_folder: dict[tuple[str, ...], list[Document]] = {}
        for doc in docs:
            by_folder.setdefault(_parts(doc.abspath)[:-1], []).append(doc)
        ctx.cache["containerd.imports"] = {doc.abspath: direct_imports(doc, docs, by_folder) for doc in docs}
    return ctx.cache["containerd.imports"]


def imported_docs(ctx) -> set[str]:
    """Absolute paths of the containerd files that another linted config imports."""
    return {d.abspath for targets in import_graph(ctx).values() for d in targets}


def _load_order(main: Document, graph: dict[str, list[Document]]) -> list[Document]:
    loaded: dict[str, Document] = {}
    pending = [main]
    while pending:
        doc, pending = pending[0], pending[1:]
        if doc.abspath in loaded:  # containerd skips a file it already loaded
            continue
        loaded[doc.abspath] = doc
        pending.extend(graph.get(doc.abspath, ()))
    return list(loaded.values())


def containerd_nodes(ctx) -> list[NodeConfig]:
    docs = ctx.of_kind("containerd")
    graph = import_graph(ctx)
    imported = imported_docs(ctx)
    mains = [d for d in docs if d.abspath not in imported]
    covered: set[str] = set()
    nodes = []
    # files reachable only through an import cycle become mains of their own
    for doc in mains + [d for d in docs if d.abspath in imported]:
        if doc.abspath in covered and doc.abspath in imported:
            continue
        order = _load_order(doc, graph)
        covered.update(d.abspath for d in order)
        nodes.append(_containerd_node(doc, order, getattr(ctx, "settings", None)))
    return nodes


def effective_cri(order: list[Document]) -> tuple[Document, Node] | None:
    """The CRI runtime table containerd would use: the last loaded file's."""
    found = None
    for doc in order:
        table = containerd_file(doc).cri
        if table is not None:
            found = (doc, table)
    return found


def _containerd_node(main: Document, order: list[Document], settings=None) -> NodeConfig:
    runtimes: dict[str, RuntimeEntry] = {}
    default = "runc"
    found = effective_cri(order)
    if found is not None:
        doc, table = found
        # the runtimes 1.x has where it may run (GL101 speaks for 1.x), else those of 2.x
        majors = file_majors(doc, settings)
        for name, node in runtime_tables(table, (1,) if 1 in majors else (2,)):
            runtimes[name] = runtime_entry(name, doc, node)
        name_node = table.get("containerd", "default_runtime_name")
        if name_node is not None and isinstance(name_node.value, str):
            default = name_node.value
        legacy = table.get("containerd", "default_runtime")
        if legacy is not None and legacy.is_map and str_value(legacy.get("runtime_type")):
            # containerd 1.x turns a typed legacy `default_runtime` table into a
            # runtime named "default" and makes it the default
            runtimes["default"] = runtime_entry("default", doc, legacy)
            default = "default"
    return NodeConfig(main, "containerd", runtimes, default, order)


