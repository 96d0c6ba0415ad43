"""--statistics: how many findings each rule has, most first (ruff's layout)."""

from __future__ import annotations

import json
from collections import Counter


def rows(result, unsafe_fixes: bool) -> list[dict]:
    counts = Counter(f.code for f in result.active)
    fixable = Counter(f.code for f in result.active
                      if f.fix is not None and (f.fix.safe or unsafe_fixes))
    slugs = {f.code: f.slug for f in result.active}
    return [{"code": code, "slug": slugs[code], "count": n, "fixable": fixable[code]}
            for code, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def render(result, fmt: str, unsafe_fixes: bool) -> str:
    table = rows(result, unsafe_fixes)
    if fmt == "json":
        return json.dumps(table, indent=2) + "\n"
    width = max((len(str(r["count"])) for r in table), default=1)
    return "".join(f"{r['count']:>{width}}  {r['code']}  {'[*] ' if r['fixable'] else '    '}{r['slug']}\n"
                   for r in table)
