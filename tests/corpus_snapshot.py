"""The reviewed snapshot of gpulint's findings on the shared corpus of real files.

Every finding gpulint makes on ../shared/corpus/ and on the real files of tests/corpus/files/
(kinds the shared corpus lacks, each with its source in tests/corpus/files/SOURCES.tsv; their
paths are recorded under `project/`; the files of each source repository are linted as a
project of their own, as their authors' projects hold them, so no file is judged by another
repository's), in each of the runs below, has one record in
tests/corpus/findings.tsv with a verdict: `tp` (a real problem, message right) or `judgement`
(defensible either way; the evidence says why). A record with `fp` or `unreviewed` fails the
test, as does any finding that appears, disappears or changes severity.

    python tests/corpus_snapshot.py            # show the difference and the precision
    python tests/corpus_snapshot.py --update   # rewrite the snapshot, keeping verdicts;
                                               # new findings arrive as `unreviewed`
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# GPULINT_CORPUS points at another copy of the corpus (a checkout that is not beside ../shared).
CORPUS = Path(os.environ.get("GPULINT_CORPUS") or ROOT.parent / "shared" / "corpus")
SNAPSHOT = ROOT / "tests" / "corpus" / "findings.tsv"
# Real files of kinds the shared corpus lacks, linted as a corpus of their own.
PROJECT_CORPUS = ROOT / "tests" / "corpus" / "files"
PROJECT_PREFIX = "project/"

RUNS: dict[str, tuple[str, ...]] = {
    "default": (),
    "driver-535": ("--driver", "535.104.05"),
    "driver-550-dc": ("--driver", "550.54.15", "--gpu-class", "datacenter"),
}
VERDICTS = ("tp", "judgement", "fp", "unreviewed")
COLUMNS = ("run", "path", "line", "code", "severity", "verdict", "evidence", "message")


@dataclass
class Record:
    run: str
    path: str
    line: int
    code: str
    severity: str
    verdict: str = "unreviewed"
    evidence: str = ""
    message: str = ""

    @property
    def key(self) -> tuple[str, str, int, str]:
        return (self.run, self.path, self.line, self.code)


def lint(run: str, corpus: Path = CORPUS, prefix: str = "") -> list[Record]:
    """One gpulint run over a corpus, in-process, paths relative to the corpus root."""
    from gpulint.face.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(corpus)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            rc = main(["--isolated", "--format", "json", "--failure-threshold", "none", *RUNS[run], "."])
    finally:
        os.chdir(old)
    if rc != 0:
        raise RuntimeError(f"gpulint exited {rc} on the corpus ({run}): {err.getvalue()[-2000:]}")
    return [
        Record(run, prefix + f["path"], f["line"], f["code"], f["severity"], message=f["message"])
        for f in json.loads(out.getvalue())["findings"]
    ]


def sources(corpus: Path = PROJECT_CORPUS) -> list[dict[str, str]]:
    """The rows of SOURCES.tsv: each real file with its repository, commit, path and license."""
    with (corpus / "SOURCES.tsv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def lint_by_repository(run: str, corpus: Path = PROJECT_CORPUS, prefix: str = PROJECT_PREFIX) -> list[Record]:
    """One gpulint run per source repository over its files, copied apart at their paths."""
    by_repo: dict[str, list[str]] = {}
    for row in sources(corpus):
        by_repo.setdefault(row["repo"], []).append(row["file"])
    records = []
    for files in by_repo.values():
        with tempfile.TemporaryDirectory(prefix="gpulint-corpus-") as folder:
            for name in files:
                target = Path(folder) / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(corpus / name, target)
            records += lint(run, Path(folder), prefix)
    return records


def current() -> list[Record]:
    records = [record for run in RUNS for record in lint(run)]
    return records + [record for run in RUNS for record in lint_by_repository(run)]


def load(path: Path = SNAPSHOT) -> list[Record]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [
        Record(r["run"], r["path"], int(r["line"]), r["code"], r["severity"], r["verdict"], r["evidence"], r["message"])
        for r in rows
    ]


def save(records: list[Record], path: Path = SNAPSHOT) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    order = list(RUNS)
    records = sorted(records, key=lambda r: (order.index(r.run), r.path, r.line, r.code))
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(COLUMNS)
        for r in records:
            writer.writerow([r.run, r.path, r.line, r.code, r.severity, r.verdict, r.evidence, r.message])


def multiset(records: list[Record]) -> Counter:
    return Counter((*r.key, r.severity) for r in records)


def difference(found: list[Record], snapshot: list[Record]) -> list[str]:
    """Lines describing findings that are new, lost or changed severity since the snapshot."""
    new = multiset(found) - multiset(snapshot)
    lost = multiset(snapshot) - multiset(found)
    lines = [f"new:  {run} {path}:{line} {code} {sev}" for (run, path, line, code, sev) in sorted(new.elements())]
    lines += [f"lost: {run} {path}:{line} {code} {sev}" for (run, path, line, code, sev) in sorted(lost.elements())]
    return lines


def merge(found: list[Record], snapshot: list[Record]) -> tuple[list[Record], list[str]]:
    """The new snapshot: today's findings with the verdicts already given to them."""
    reviewed: dict[tuple, list[Record]] = {}
    for r in snapshot:
        reviewed.setdefault(r.key, []).append(r)
    changed_messages = []
    merged = []
    for r in found:
        earlier = reviewed.get(r.key)
        if earlier:
            old = earlier.pop(0)
            r.verdict, r.evidence = old.verdict, old.evidence
            if old.message != r.message or old.severity != r.severity:
                changed_messages.append(f"{r.run} {r.path}:{r.line} {r.code}: review again ({old.severity} -> {r.severity}) {r.message}")
        merged.append(r)
    return merged, changed_messages


def precision(records: list[Record]) -> str:
    """tp / (tp + fp) per run and per rule; judgement calls are counted apart."""

    def line(label: str, group: list[Record]) -> str:
        verdicts = Counter(r.verdict for r in group)
        tp, fp = verdicts["tp"], verdicts["fp"]
        value = f"{100 * tp / (tp + fp):.0f}%" if tp + fp else "n/a"
        return (
            f"{label:<16} findings {len(group):>3}  tp {tp:>3}  fp {fp:>3}  judgement {verdicts['judgement']:>3}"
            f"  unreviewed {verdicts['unreviewed']:>3}  precision {value}"
        )

    out = [line(run, [r for r in records if r.run == run]) for run in RUNS]
    for code in sorted({r.code for r in records}):
        out.append(line(code, [r for r in records if r.code == code]))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--update", action="store_true", help="rewrite the snapshot, keeping verdicts")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    found, snapshot = current(), load()
    for line in difference(found, snapshot):
        print(line)
    if args.update:
        merged, changed = merge(found, snapshot)
        for line in changed:
            print(line)
        save(merged)
        snapshot = merged
    print(precision(snapshot))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
