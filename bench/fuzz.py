"""Fuzzing harness (not a test): thousands of mutated and size-driven variants of real-shaped
files, each linted (and fixed) by gpulint, with a time and memory bound per case.

    python bench/fuzz.py                       # 5,000 variants, seed 1
    python bench/fuzz.py --count 300 --seed 7  # a quick run (tests/test_fuzz.py runs this shape)
    python bench/fuzz.py --scaling             # each construct at 1 kB, 10 kB, 100 kB and 1 MB
    python bench/fuzz.py --scaling --quick     # 2 kB, 20 kB, 200 kB (tests/test_fuzz.py runs this)

Seeds are the files under tests/fixtures and examples/ (and ../shared/corpus when it is beside the
checkout). Each variant is one of: a byte-level mutation (flip, delete, duplicate a slice, truncate,
splice two files), or a size-driven shape (a very long line, deep nesting, many YAML aliases, a
long Dockerfile variable chain, a huge number, thousands of keys). Variants run in worker processes
in batches, in-process through gpulint's CLI (`--format json` then `--fix`), each under an alarm;
a worker runs under an address-space limit. Reported: crashes (an exception or an internal error),
cases over the CPU-time bound, and each worker's peak RSS. Exit status 1 when any bound is broken.

With --scaling, each construct in SCALING (a long RUN word, many `&&`, deep YAML, a long TOML
string, an unclosed `{{` ...) is built at growing sizes and linted in-process; the CPU time of each
size is compared with the one before, as a ratio per tenfold growth (below FLOOR seconds a time
counts as FLOOR, so start-up noise is not growth). A ratio over GROWTH_BOUND (linear work gives
about 10, quadratic 100) or a size over the time bound is super-linear: exit status 1.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import resource
import signal
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


def _alnum(n: int) -> str:
    rng = random.Random(n)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(n))


def _repeat(piece: str, n: int) -> str:
    return piece * max(1, n // len(piece))


def _yaml_nested(n: int) -> str:
    lines, size, depth = [], 0, 0
    while size < n:
        line = "  " * depth + f"k{depth}:\n"
        lines.append(line)
        size, depth = size + len(line), depth + 1
    return "".join(lines) + "  " * depth + "x: 1\n"


_FROM = "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n"
_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n"
_RUN_CLI = "docker run --gpus all "
_CD = '[plugins."io.containerd.grpc.v1.cri".containerd]\n'
# construct -> (file name, the file's text at about n bytes)
SCALING = {
    "run-alphanumeric": ("Dockerfile", lambda n: _FROM + "RUN " + _alnum(n) + "\n"),
    "run-words": ("Dockerfile", lambda n: _FROM + "RUN " + _repeat("abc1 ", n) + "\n"),
    "run-and-chain": ("Dockerfile", lambda n: _FROM + "RUN " + _repeat("apt-get install -y x && ", n) + "true\n"),
    "run-continued-lines": ("Dockerfile", lambda n: _FROM + "RUN " + _repeat("echo a \\\n  && ", n) + "true\n"),
    "run-many": ("Dockerfile", lambda n: _FROM + _repeat("RUN nvidia-smi && make\n", n)),
    "run-gpu-calls": ("Dockerfile", lambda n: _FROM + "RUN " + _repeat("torch.cuda.is_available() ", n) + "\n"),
    "run-unbalanced-quote": ("Dockerfile", lambda n: _FROM + 'RUN echo "' + _repeat("a 'b ", n) + "\n"),
    "run-unterminated-heredoc": ("Dockerfile", lambda n: _FROM + "RUN <<EOF\n" + _repeat("echo a\n", n)),
    "env-long": ("Dockerfile", lambda n: _FROM + "ENV LD_LIBRARY_PATH=" + _repeat("/usr/lib:", n) + "\n"),
    "env-many-pairs": ("Dockerfile", lambda n: _FROM + "ENV " + "".join(
        f"A{i}=x " for i in range(max(1, n // 8))) + "\n"),
    "env-nested-default": ("Dockerfile", lambda n: _FROM + "ENV A=" + "${B:-" * (n // 6) + "x"
                           + "}" * (n // 6) + "\n"),
    "arg-many": ("Dockerfile", lambda n: "".join(f"ARG A{i}=x{i}\n" for i in range(max(1, n // 12)))
                 + _FROM + "RUN echo $A0\n"),
    "stage-many": ("Dockerfile", lambda n: "".join(
        f"FROM nvidia/cuda:12.4.1-base-ubuntu22.04 AS s{i}\nCOPY --from=s{max(0, i - 1)} /a /a\n"
        for i in range(max(1, n // 80)))),
    "comment-directive": ("Dockerfile", lambda n: "# gpulint: disable=" + _repeat("GL301,", n) + "\n" + _FROM),
    "yaml-deep-block": ("cm.yaml", lambda n: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n"
                        + "".join("  " + line + "\n" for line in _yaml_nested(n).splitlines())),
    "yaml-scalar-long": ("pod.yaml", lambda n: _POD + "    - name: a\n      image: nvidia/cuda:12.4.1-base\n"
                         "      args: [\"" + _alnum(n) + "\"]\n"),
    "yaml-many-keys": ("cm.yaml", lambda n: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n"
                       + "".join(f"  k{i}: v\n" for i in range(max(1, n // 10)))),
    "k8s-containers": ("pod.yaml", lambda n: _POD + "".join(
        f"    - name: c{i}\n      image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        f"      resources: {{limits: {{nvidia.com/gpu: 1}}}}\n" for i in range(max(1, n // 110)))),
    "k8s-documents": ("pods.yaml", lambda n: "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec:\n  runtimeClassName: nvidia\n"
        f"  containers: [{{name: a, image: nvidia/cuda:12.4.1-base}}]\n" for i in range(max(1, n // 130)))),
    "compose-services": ("compose.yaml", lambda n: "services:\n" + "".join(
        f"  s{i}:\n    image: nvidia/cuda:12.4.1-base\n    gpus: all\n" for i in range(max(1, n // 60)))),
    "toml-string": ("config.toml", lambda n: "version = 2\n" + _CD + '  default_runtime_name = "'
                    + _alnum(n) + '"\n'),
    "toml-array": ("config.toml", lambda n: "version = 2\nimports = [" + _repeat('"/etc/a.toml", ', n) + "]\n"),
    "toml-many-tables": ("config.toml", lambda n: "version = 2\n" + "".join(
        f'[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.r{i}]\n  runtime_type = "io.containerd.runc.v2"\n'
        for i in range(max(1, n // 100)))),
    "json-array": ("daemon.json", lambda n: '{"runtimes": {"nvidia": {"path": "nvidia-container-runtime", '
                   '"runtimeArgs": [' + _repeat('"a", ', n) + '"a"]}}}'),
    "json-string": ("daemon.json", lambda n: '{"default-runtime": "' + _alnum(n) + '"}'),
    "shell-long-line": ("run.sh", lambda n: _RUN_CLI + _repeat("-e A=b ", n) + "nvidia/cuda:12.0-base nvidia-smi\n"),
    "shell-many-lines": ("run.sh", lambda n: _repeat(_RUN_CLI + "nvidia/cuda:12.0-base nvidia-smi\n", n)),
    "shell-continued": ("run.sh", lambda n: _RUN_CLI + _repeat("-e A=b \\\n", n) + "nvidia/cuda:12.0-base\n"),
    "shell-unbalanced-quote": ("run.sh", lambda n: _RUN_CLI + '"' + _repeat("a 'b ", n) + "\n"),
    "shell-alphanumeric": ("run.sh", lambda n: _RUN_CLI + _alnum(n) + "\n"),
    "markdown-long-line": ("README.md", lambda n: "```bash\n" + _RUN_CLI + _repeat("-e A=b ", n)
                           + "nvidia/cuda:12.0-base\n```\n"),
    "markdown-many-blocks": ("README.md", lambda n: _repeat("```bash\n" + _RUN_CLI + "nvidia/cuda:12.0-base\n```\n", n)),
    "ci-long-script": (".gitlab-ci.yml", lambda n: "job:\n  script:\n    - " + _RUN_CLI + _repeat("-e A=b ", n)
                       + "nvidia/cuda:12.0-base\n"),
    "template-unclosed": ("values.yaml", lambda n: "a: {{ .x }}\nb: " + _repeat("{{ x ", n) + "\n"),
    "template-one-line": ("values.yaml", lambda n: "a: [" + _repeat("{{ range .x }}{{ . }}, ", n) + "]\n"),
    "template-many-lines": ("pod.yaml.tmpl", lambda n: _POD + _repeat("    - name: {{ .n }}\n      image: {{ .i }}\n", n)),
}
GROWTH_BOUND = 20.0  # CPU-time ratio per tenfold size above which work is super-linear
FLOOR = 0.05  # seconds: a shorter time counts as this much


def _lint_text(folder: Path, name: str, text: str, bound: float) -> float | None:
    """CPU seconds to lint `text` as `name`; None past `bound` seconds."""
    path = folder / name
    path.write_text(text, encoding="utf-8")
    signal.signal(signal.SIGALRM, _alarm)
    start = time.process_time()
    signal.alarm(max(1, int(bound)))
    try:
        from gpulint.face.cli import main

        old = os.getcwd()
        os.chdir(folder)
        try:
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                main(["--isolated", "--preview", "--format", "json", "--failure-threshold", "none",
                      "--max-file-size", str(64 * 1024 * 1024), name])
        finally:
            os.chdir(old)
    except _Timeout:
        return None
    finally:
        signal.alarm(0)
    return time.process_time() - start


def scale_one(job: tuple[str, list[int], float]) -> dict:
    """One construct at each size, in a worker of its own: the CPU time of each, and the
    growth per tenfold size from one to the next."""
    construct, sizes, bound = job
    name, build = SCALING[construct]
    resource.setrlimit(resource.RLIMIT_AS, (4 * 1024 ** 3,) * 2)
    times: list[float | None] = []
    with tempfile.TemporaryDirectory(prefix="gpulint-scaling-") as tmp:
        _lint_text(Path(tmp), name, build(sizes[0]), bound)  # imports and caches, not timed
        for size in sizes:
            spent = _lint_text(Path(tmp), name, build(size), bound)
            times.append(None if spent is None else round(spent, 3))
            if spent is None:
                break
    growth = []
    for (small, big), (t_small, t_big) in zip(zip(sizes, sizes[1:]), zip(times, times[1:])):
        if t_big is None:
            growth.append(None)
            continue
        tenfolds = max(0.1, __import__("math").log10(big / small))
        growth.append(round((t_big / max(t_small, FLOOR)) ** (1 / tenfolds), 1))
    superlinear = any(g is None or g > GROWTH_BOUND for g in growth) or len(times) < len(sizes)
    return {"construct": construct, "file": name, "sizes": sizes, "cpu_seconds": times,
            "growth_per_tenfold": growth, "superlinear": superlinear}


def scaling(sizes: list[int], bound: float, jobs: int, only: list[str] | None = None) -> list[dict]:
    constructs = [c for c in SCALING if not only or c in only]
    with ProcessPoolExecutor(max_workers=jobs, max_tasks_per_child=1) as pool:
        return list(pool.map(scale_one, [(c, sizes, bound) for c in constructs]))


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
    parser.add_argument("--scaling", action="store_true", help="time each construct at growing sizes")
    parser.add_argument("--quick", action="store_true", help="with --scaling: 2 kB to 200 kB")
    parser.add_argument("--construct", action="append", help="with --scaling: only this construct")
    args = parser.parse_args(argv)
    if args.scaling:
        sizes = [2_000, 20_000, 200_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
        results = scaling(sizes, 20.0 if args.quick else 60.0, args.jobs, args.construct)
        if args.json:
            print(json.dumps(results, indent=1))
        else:
            for r in results:
                mark = "SUPER-LINEAR" if r["superlinear"] else "ok"
                print(f"{r['construct']:28} {r['file']:16} {r['cpu_seconds']} x{r['growth_per_tenfold']} {mark}")
        return 1 if any(r["superlinear"] for r in results) else 0
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
