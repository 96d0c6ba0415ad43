"""Benchmark harness (not a test): how long gpulint takes on the shared corpus and to start.

    python bench/run.py [--repeat N] [PATH]

Prints the best and median wall time of whole-process runs, as a pre-commit hook or a
CI step would pay them.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", nargs="?", default=str(ROOT.parent / "shared" / "corpus"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    base = [sys.executable, "-m", "gpulint", "--isolated", "--failure-threshold", "none"]
    cases = {
        "start-up (--version)": [sys.executable, "-m", "gpulint", "--version"],
        "one Dockerfile": base + [str(ROOT / "tests/fixtures/core/clean/Dockerfile")],
        f"corpus text ({args.path})": base + [args.path],
        "corpus sarif --preview": base + ["--preview", "--format", "sarif", args.path],
    }
    for name, cmd in cases.items():
        times = timed(cmd, args.repeat)
        print(f"{name:<60} best {min(times) * 1000:7.1f} ms   median "
              f"{statistics.median(times) * 1000:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
