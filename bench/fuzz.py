"""Fuzzing harness (not a test): thousands of mutated and size-driven variants of real-shaped
files, each linted (and fixed) by gpulint, with a time and memory bound per case.

    python bench/fuzz.py                       # 5,000 variants, seed 1
    python bench/fuzz.py --count 300 --seed 7  # a quick run (tests/test_fuzz.py runs this shape)

Seeds are the files under tests/fixtures and examples/ (and ../shared/corpus when it is beside the
checkout). Each variant is one of: a byte-level mutation (flip, delete, duplicate a slice, truncate,
splice two files), or a size-driven shape (a very long line, deep nesting, many YAML aliases, a
long Dockerfile variable chain, a huge number, thousands of keys). Variants run in worker processes
in batches, in-process through gpulint's CLI (`--format json` then `--fix`), each under an alarm;
a worker runs under an address-space limit. Reported: crashes (an exception or an internal error),
cases over the CPU-time bound, and each worker's peak RSS. Exit status 1 when any bound is broken.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import resource
import signal
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CPU_BOUND = 5.0  # seconds of CPU time per case
MEMORY_BOUND = 500 * 1024 * 1024  # bytes of RSS per worker
KINDS = {"containerd": "config.toml", "daemon-json": "daemon.json", "dockerfile": "Dockerfile",
         "kubernetes": "pod.yaml", "compose": "compose.yaml", "commands": "run.sh"}


def seeds() -> list[tuple[str, bytes]]:
    folders = [ROOT / "tests" / "fixtures", ROOT / "examples", ROOT.parent / "shared" / "corpus"]
    out = []
    for folder in folders:
        if folder.is_dir():
            for path in sorted(folder.rglob("*")):
                if path.is_file() and path.stat().st_size < 200_000:
                    out.append((path.name, path.read_bytes()))
    return out


def size_driven(rng: random.Random) -> tuple[str, bytes]:
    n = rng.choice([1_000, 10_000, 50_000])
    shape = rng.randrange(8)
    if shape == 0:
        return "Dockerfile", b"FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nRUN " + b"a " * n + b"\n"
    if shape == 1:
        depth = rng.choice([100, 1_000, 5_000])
        return "daemon.json", b'{"a":' * depth + b"1" + b"}" * depth
    if shape == 2:
        depth = rng.choice([100, 1_000])
        return "pod.yaml", b"apiVersion: v1\nkind: Pod\nspec:\n" + b"".join(
            b"  " * (i + 1) + b"k%d:\n" % i for i in range(depth)) + b"  " * depth + b"x: 1\n"
    if shape == 3:
        width, levels = rng.choice([(9, 9), (20, 6), (5, 14)])
        lines = [b'  a0: &a0 ["x"]']
        for i in range(1, levels):
            lines.append(b"  a%d: &a%d [" % (i, i) + b",".join([b"*a%d" % (i - 1)] * width) + b"]")
        return "cm.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n" + b"\n".join(lines) + b"\n"
    if shape == 4:
        return "Dockerfile", (b"FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nARG A=x\n"
                              + b"ARG A=$A$A$A\n" * rng.choice([10, 30, 60]) + b"ENV LD_LIBRARY_PATH=$A\n")
    if shape == 5:
        return "daemon.json", b'{"mtu": ' + b"9" * rng.choice([4_000, 5_000, 50_000]) + b"}"
    if shape == 6:
        return "config.toml", b"version = 2\n" + b"".join(b"k%d = %d\n" % (i, i) for i in range(n))
    return "Dockerfile", b"FROM ubuntu\n# gpulint: disable=" + b" " * n + b"!\n"


def mutate(rng: random.Random, pool: list[tuple[str, bytes]]) -> tuple[str, bytes]:
    name, data = rng.choice(pool)
    data = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(6)
        if not data:
            break
        i = rng.randrange(len(data))
        if op == 0:
            data[i] = rng.randrange(256)
        elif op == 1:
            del data[i:i + rng.randint(1, 40)]
        elif op == 2:
            data[i:i] = data[i:i + rng.randint(1, 200)] * rng.randint(1, 20)
        elif op == 3:
            del data[i:]
        elif op == 4:
            other = rng.choice(pool)[1]
            j = rng.randrange(len(other) + 1)
            data[i:] = other[j:]
        else:
            data[i:i] = rng.choice([b"{{", b"}}", b"&a ", b"*a", b"\\\n", b"\r\n", b"\t", b"\xef\xbb\xbf",
                                    b"[", b"]", b'"""', b"#", b"<<EOF\n", b"${A:-", b"\x00"])
    return name, bytes(data)


def variants(count: int, seed: int) -> list[tuple[int, str, bytes]]:
    rng = random.Random(seed)
    pool = seeds()
    out = []
    for i in range(count):
        name, data = size_driven(rng) if rng.random() < 0.2 else mutate(rng, pool)
        if rng.random() < 0.1:  # the same bytes under another kind's name
            name = rng.choice(list(KINDS.values()))
        out.append((i, name, data))
    return out


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def _lint(folder: Path, name: str) -> tuple[int, str]:
    from gpulint.face.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(folder)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            rc = main(["--isolated", "--format", "json", "--failure-threshold", "none", name])
            if rc != 2:
                main(["--isolated", "--fix", "--unsafe-fixes", "-q", name])
    finally:
        os.chdir(old)
    return rc, err.getvalue()


def run_batch(batch: list[tuple[int, str, bytes]]) -> dict:
    """One worker: its cases in turn, each under an alarm; CPU time per case, peak RSS."""
    resource.setrlimit(resource.RLIMIT_AS, (2 * MEMORY_BOUND + 512 * 1024 * 1024,) * 2)
    signal.signal(signal.SIGALRM, _alarm)
    crashes, slow = [], []
    with tempfile.TemporaryDirectory(prefix="gpulint-fuzz-") as tmp:
        for index, name, data in batch:
            folder = Path(tmp) / str(index)
            folder.mkdir()
            (folder / name).write_bytes(data)
            start = time.process_time()
            signal.alarm(30)
            try:
                rc, err = _lint(folder, name)
                if "internal error" in err or "Traceback" in err:
                    crashes.append((index, name, err[-300:]))
            except _Timeout:
                slow.append((index, name, 30.0))
            except BaseException as exc:  # noqa: BLE001 - a crash is what is being looked for
                crashes.append((index, name, f"{type(exc).__name__}: {exc}"[:300]))
            finally:
                signal.alarm(0)
            spent = time.process_time() - start
            if spent > CPU_BOUND:
                slow.append((index, name, round(spent, 2)))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"cases": len(batch), "crashes": crashes, "slow": slow, "peak_rss": peak}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", action="store_true", help="print the totals as JSON")
    args = parser.parse_args(argv)
    cases = variants(args.count, args.seed)
    batches = [cases[i:i + args.batch] for i in range(0, len(cases), args.batch)]
    started = time.time()
    with ProcessPoolExecutor(max_workers=args.jobs, max_tasks_per_child=1) as pool:
        results = list(pool.map(run_batch, batches))
    totals = {
        "variants": sum(r["cases"] for r in results),
        "size_driven_share": 0.2,
        "crashes": [c for r in results for c in r["crashes"]],
        "over_cpu_bound": [s for r in results for s in r["slow"]],
        "max_worker_rss_mb": round(max(r["peak_rss"] for r in results) / 2**20, 1),
        "wall_seconds": round(time.time() - started, 1),
    }
    if args.json:
        print(json.dumps(totals, indent=1))
    else:
        print(f"{totals['variants']} variants in {totals['wall_seconds']} s: {len(totals['crashes'])} crashes, "
              f"{len(totals['over_cpu_bound'])} over {CPU_BOUND:.0f} s of CPU, worker peak RSS "
              f"{totals['max_worker_rss_mb']} MB (bound {MEMORY_BOUND // 2**20} MB)")
        for index, name, what in totals["crashes"][:20]:
            print(f"  crash #{index} {name}: {what}")
        for index, name, spent in totals["over_cpu_bound"][:20]:
            print(f"  slow  #{index} {name}: {spent} s")
    broken = totals["crashes"] or totals["over_cpu_bound"] or totals["max_worker_rss_mb"] * 2**20 > MEMORY_BOUND
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
