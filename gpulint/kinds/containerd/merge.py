"""How containerd merges a node's files (GL122): containerd 1.x replaces a plugin's whole
table with the one of the last loaded file that writes it (rules/containerd-decode.yaml
merge.'1.6'); 2.x merges the tables key by key.
"""

from __future__ import annotations

from gpulint.kinds.containerd.checks import default_runtime_undefined
from gpulint.kinds.containerd.facts import (
    ALL_CRI_IDS,
    file_majors,
    runtime_tables,
    written_plugins,
)
from gpulint.model import Document, Node, str_value
from gpulint.registry import check, finding, related


def _leaves(node: Node, path: tuple[str, ...] = ()):
    """(path, value node) of every setting under a table."""
    for key, child in node.items():
        if child.is_map and child.value:
            yield from _leaves(child, path + (key,))
        else:
            yield path + (key,), child


def _lost(earlier: Node, later: Node) -> list[tuple[tuple[str, ...], Node]]:
    kept = {path for path, _ in _leaves(later)}
    return [(path, node) for path, node in _leaves(earlier) if path not in kept]


def _said(table: Node, lost: list[tuple[tuple[str, ...], Node]]) -> tuple[str, bool]:
    """What the replaced table loses, in words, and whether it is a runtime or the default."""
    paths = {path for path, _ in lost}
    runtimes = [name for name, node in runtime_tables(table)
                if any(p[:3] == ("containerd", "runtimes", name) for p in paths)]
    default = table.get("containerd", "default_runtime_name")
    parts = [f"runtime{'s' if len(runtimes) > 1 else ''} " + ", ".join(f"`{n}`" for n in runtimes)] if runtimes else []
    if default is not None and ("containerd", "default_runtime_name") in paths:
        parts.append(f"default_runtime_name = \"{str_value(default)}\"")
    others = [p for p in paths if p[:2] != ("containerd", "runtimes") and p != ("containerd", "default_runtime_name")]
    if others:
        first = ".".join(sorted(others)[0])
        parts.append(f"`{first}`" + (f" and {len(others) - 1} other setting{'s' if len(others) > 2 else ''}"
                                      if len(others) > 1 else ""))
    return "; ".join(parts), bool(runtimes) or ("containerd", "default_runtime_name") in paths


@check("GL122", project=True)
def plugin_table_replaced(ctx):
    # GL101 says more where the replaced CRI table leaves the default runtime undefined
    undefined = {f.path for f in default_runtime_undefined(ctx)} if "GL101" in ctx.enabled else set()
    # every plugin table of a node's files, read once per file (of a config of which the run
    # keeps a part, read again from its text) and let go with this check
    written: dict[int, Node | None] = {}

    def plugins_of(doc: Document) -> Node | None:
        if id(doc) not in written:
            written[id(doc)] = written_plugins(doc)
        return written[id(doc)]

    for node in ctx.fact("node-configs"):
        if node.kind != "containerd" or len(node.docs) < 2 or any(d.templated for d in node.docs):
            continue
        majors = file_majors(node.doc, ctx.settings)
        if 1 not in majors:
            continue
        skip = ALL_CRI_IDS if any(d.path in undefined for d in node.docs) else ()
        for index, later in enumerate(node.docs[1:], start=1):
            yield from _replaced(node.docs[:index], later, majors, skip, plugins_of)


def _replaced(earlier_docs: list[Document], later: Document, majors: tuple[int, ...], skip: tuple[str, ...],
              plugins_of):
    plugins = plugins_of(later)
    for key, table in plugins.items() if plugins is not None else ():
        if not table.is_map or key in skip:
            continue
        before = [(d, plugins_of(d).get(key)) for d in earlier_docs
                  if plugins_of(d) is not None and plugins_of(d).get(key) is not None]
        before = [(d, t) for d, t in before if t.is_map]
        if not before:
            continue
        doc, earlier = before[-1]
        lost = _lost(earlier, table)
        if not lost:
            continue
        said, runtime = _said(earlier, lost)
        yield finding(later, "GL122", table.anchor,
                      f"this file is loaded after {doc.path} and writes `plugins.\"{key}\"` again: containerd "
                      f"1.6/1.7 keep only the last file's table of a plugin, so what {doc.path} writes there is "
                      f"lost ({said})" + ("; containerd 2.x merges the two key by key" if 2 in majors else "")
                      + "; keep a plugin's settings in one file, or repeat them here",
                      severity="error" if runtime else "warning",
                      related=[related(doc, earlier, f"the `plugins.\"{key}\"` table it replaces")])
