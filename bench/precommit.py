"""Benchmark (not a test): a pre-commit call on one changed Dockerfile in a large repository.

    python bench/precommit.py                    # repositories of 5,000 and 50,000 files
    python bench/precommit.py --sizes 200 --repeat 1   # the smoke run the test suite makes

pre-commit names the changed files only; gpulint reads the rest of the repository for the
files other files' checks consult, through the index it keeps in the cache folder. Each row
times one changed Dockerfile with a warm index (the index made by an earlier run, the file
touched since) against the same file with `--isolated` (no project around it), and reads
the whole repository afresh (`--no-cache`) for reference. CPU time (user + system) is the
measure, as the machine may be shared; the runs of one row are interleaved.
Goal: warm index <= 1.5x `--isolated`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate  # noqa: E402
from run import Sample, measure  # noqa: E402

GOAL = 1.5
LINT = [sys.executable, "-m", "gpulint", "--failure-threshold", "none", "--format", "json"]


def repository(work: Path, n: int) -> tuple[Path, Path]:
    """A generated tree of `n` files marked as a git repository, and one Dockerfile in it."""
    tree = generate(work / f"repo-{n}", n)
    (tree / ".git").mkdir()
    # a repository's files were written long before the commit: files (and folders) written
    # within the last seconds are not trusted to the index, and would be read on every run
    then = time.time_ns() - 86_400 * 10**9
    for folder, _, names in os.walk(tree):
        for path in [folder, *(os.path.join(folder, name) for name in names)]:
            os.utime(path, ns=(then, then))
    changed = next(p for p in sorted(tree.rglob("*")) if p.is_file() and "dockerfile" in p.name.lower())
    return tree, changed


def row(work: Path, n: int, repeat: int) -> dict:
    tree, changed = repository(work, n)
    cache = work / "cache"
    path = str(changed)
    index = LINT + ["--cache-dir", str(cache), path]
    subprocess.run(index, check=False, capture_output=True)  # the index a previous commit left
    samples = {"warm index": Sample(), "--isolated": Sample(), "--no-cache": Sample()}
    commands = {"warm index": index, "--isolated": LINT + ["--isolated", path],
                "--no-cache": LINT + ["--no-cache", path]}
    for _ in range(repeat):
        for name, sample in samples.items():
            os.utime(changed)  # the changed file: newer than the index
            measure(commands[name], sample)
    warm, alone = samples["warm index"].cpu_median, samples["--isolated"].cpu_median
    return {"files": n, **{name: s.cpu_median for name, s in samples.items()}, "ratio": warm / alone}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="5000,50000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("| repository | warm index CPU | --isolated CPU | --no-cache CPU | ratio | goal | verdict |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for n in (int(s) for s in args.sizes.split(",")):
            r = row(Path(work), n, args.repeat)
            verdict = "met" if r["ratio"] <= GOAL else "MISSED"
            print(f"| {n:,} files, one changed Dockerfile | {r['warm index'] * 1000:.0f} ms | "
                  f"{r['--isolated'] * 1000:.0f} ms | {r['--no-cache'] * 1000:.0f} ms | {r['ratio']:.2f}x | "
                  f"<= {GOAL}x | {verdict} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
