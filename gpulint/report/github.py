"""GitHub Actions workflow commands: one annotation per finding.

GitHub places an annotation's `file` relative to the workspace (the checkout), not to the
step's `working-directory:`; paths are written relative to $GITHUB_WORKSPACE where it is
set, else to the repository holding the linted files.

GitHub shows at most 10 annotations of each type (error, warning, notice) per
step; the rest would vanish silently. Past that, findings are printed as plain
log lines and one notice says how many were not annotated.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from gpulint.report.roots import ReportRoot, report_root

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}
PER_TYPE = 10


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(f, where: ReportRoot) -> str:
    props = ",".join([
        f"file={_prop((where.relative(f.path) or os.path.abspath(f.path)).replace(os.sep, '/'))}", f"line={f.span.line}", f"col={f.span.column}",
        f"endLine={f.span.end_line}", f"endColumn={f.span.end_column}",
        f"title={_prop(f'{f.code} {f.slug}')}",
    ])
    return f"::{_LEVEL[f.severity]} {props}::{_data(f.message)}"


def render(result, findings) -> str:
    workspace = os.environ.get("GITHUB_WORKSPACE")
    where = ReportRoot(Path(workspace) if workspace and os.path.isdir(workspace) else report_root(result, findings))
    shown: Counter = Counter()
    dropped: Counter = Counter()
    annotations, plain = [], []
    overflow = any(n > PER_TYPE for n in Counter(f.severity for f in findings).values())
    for f in findings:
        level = _LEVEL[f.severity]
        # the closing notice needs one of the ten notice slots
        room = PER_TYPE - (1 if overflow and level == "notice" else 0)
        if shown[level] < room:
            shown[level] += 1
            annotations.append(_annotation(f, where))
        else:
            dropped[level] += 1
            plain.append(f"{f.path}:{f.span.line}:{f.span.column}: {f.code} [{f.severity}] {f.message}")
    out = annotations
    if dropped:
        counts = ", ".join(f"{n} {level}{'' if n == 1 else 's'}" for level, n in sorted(dropped.items()))
        out = out + plain + [
            f"::notice title=gpulint::{counts} more than GitHub shows as annotations "
            f"({PER_TYPE} of each type per step) are listed in the log above; "
            f"upload --format sarif to code scanning to see every finding"]
    return "".join(line + "\n" for line in out)
