"""Benchmark (not a test): a pre-commit call on one changed Dockerfile in a large repository.

    python bench/precommit.py                    # repositories of 5,000 and 50,000 files
    python bench/precommit.py --sizes 200 --repeat 1   # the smoke run the test suite makes

pre-commit names the changed files only; gpulint reads the rest of the repository for the
files other files' checks consult, through the index it keeps in the cache folder. Each row
times one changed Dockerfile, changed and staged before each run, in a committed git
repository, as pre-commit calls gpulint (`PRE_COMMIT=1`: what changed since the index was
made is git's answer), with a warm index (the index made by an earlier run), against the
same file with `--isolated` (no project around it); for reference, the same call with the
project walked (no `PRE_COMMIT`: every candidate file stat'ed) and read whole afresh
(`--no-cache`). CPU time (user + system, git's included) is the measure, as the machine may
be shared; the runs of one row are interleaved.
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


GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def _git(tree: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=tree, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def repository(work: Path, n: int) -> tuple[Path, Path]:
    """A generated tree of `n` files, committed to a git repository, and one Dockerfile in it."""
    tree = generate(work / f"repo-{n}", n)
    # a repository's files were written long before the commit: files (and folders) written
    # within the last seconds are not trusted to the walked index, and would be read on every run
    then = time.time_ns() - 86_400 * 10**9
    for folder, _, names in os.walk(tree):
        for path in [folder, *(os.path.join(folder, name) for name in names)]:
            os.utime(path, ns=(then, then))
    _git(tree, "init", "-q")
    _git(tree, "add", "-A")
    _git(tree, "commit", "-q", "-m", "generated")
    # a Dockerfile by the generator's folder of its kind: a corpus name that mentions
    # "Dockerfile" may be a containerd config (`..._Dockerfile.test.d__..._config.toml`), whose
    # checks consult every node config of the repository
    changed = next(p for p in sorted((tree / "dockerfile").rglob("*")) if p.is_file())
    return tree, changed


def row(work: Path, n: int, repeat: int) -> dict:
    tree, changed = repository(work, n)
    cache = work / "cache"
    path = str(changed)
    original = changed.read_text()
    index = LINT + ["--cache-dir", str(cache), path]
    hook = {**os.environ, "PRE_COMMIT": "1"}
    plain = {k: v for k, v in os.environ.items() if k != "PRE_COMMIT"}
    for env in (hook, plain):  # the indexes a previous commit left
        subprocess.run(index, check=False, capture_output=True, env=env)
    samples = {"warm index": Sample(), "--isolated": Sample(), "walked": Sample(), "--no-cache": Sample()}
    commands = {"warm index": (index, hook), "--isolated": (LINT + ["--isolated", path], hook),
                "walked": (index, plain), "--no-cache": (LINT + ["--no-cache", path], hook)}
    for turn in range(repeat):
        for name, sample in samples.items():
            changed.write_text(f"{original}# change {turn}\n")  # the change being committed
            _git(tree, "add", str(changed))
            command, env = commands[name]
            measure(command, sample, env=env)
    warm, alone = samples["warm index"].cpu_median, samples["--isolated"].cpu_median
    return {"files": n, **{name: s.cpu_median for name, s in samples.items()}, "ratio": warm / alone}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="5000,50000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    # the bytecode written as an installed wheel has it: where PYTHONDONTWRITEBYTECODE is set,
    # each call would otherwise compile every module it imports
    import compileall

    import gpulint

    compileall.compile_dir(str(Path(gpulint.__file__).parent), quiet=1)
    print("| repository | warm index CPU | --isolated CPU | ratio | goal | verdict | walked CPU | --no-cache CPU |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for n in (int(s) for s in args.sizes.split(",")):
            r = row(Path(work), n, args.repeat)
            verdict = "met" if r["ratio"] <= GOAL else "MISSED"
            print(f"| {n:,} files, one changed Dockerfile | {r['warm index'] * 1000:.0f} ms | "
                  f"{r['--isolated'] * 1000:.0f} ms | {r['ratio']:.2f}x | <= {GOAL}x | {verdict} | "
                  f"{r['walked'] * 1000:.0f} ms | {r['--no-cache'] * 1000:.0f} ms |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
