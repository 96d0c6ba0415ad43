"""General checks (GL0xx) that are not about one file kind.

GL001, GL002 and GL004 are produced by the parser and the suppression pass in
the engine; what remains here is GL003 for the configuration file.
"""

from __future__ import annotations

from gpulint import catalog
from gpulint.discover import display_path
from gpulint.model import Finding, Node, sequence
from gpulint.registry import Context, check

_SELECTOR_KEYS = ("select", "extend-select", "ignore")


@check("GL003", project=True)
def unknown_code_in_config(ctx: Context):
    table = ctx.settings.tree
    if table is None:
        return
    display = display_path(ctx.settings.path)
    candidates: list[Node] = []
    for key in _SELECTOR_KEYS:
        candidates.extend(sequence(table.get(key)))
    ignores = table.get("per-file-ignores")
    for _, codes in ignores.items() if ignores is not None else ():
        candidates.extend(sequence(codes))
    severity = table.get("severity")
    for name, level in severity.items() if severity is not None else ():
        candidates.append(Node(name, level.anchor))
    for node in candidates:
        name = node.str() or ""
        if not catalog.resolve_selector(name):
            yield Finding("GL003", "", "", display, node.span,
                          f"`{name}` in the configuration names no gpulint rule "
                          f"(codes like GL105, prefixes like GL1, slugs or ALL)")
