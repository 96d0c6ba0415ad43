"""A short fuzzing run (bench/fuzz.py) through the CLI: mutated and size-driven variants of
real-shaped files never crash gpulint or break its time and memory bounds."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT


def test_three_hundred_variants_without_a_crash_or_a_broken_bound():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "fuzz.py"), "--count", "300", "--seed", "11",
                           "--json"], capture_output=True, text=True, timeout=600)
    totals = json.loads(proc.stdout)
    assert totals["variants"] == 300
    assert totals["crashes"] == [], totals["crashes"][:3]
    assert totals["over_cpu_bound"] == [], totals["over_cpu_bound"][:3]
    assert totals["max_worker_rss_mb"] < 500


def test_a_number_too_large_for_go_is_a_type_error_not_a_crash(lint_files):
    run = lint_files({"daemon.json": '{"mtu": 1' + "0" * 400 + ', "debug": true}\n'})
    assert [f["code"] for f in run.findings] == ["GL207"]
    bools = lint_files({"daemon.json": '{"mtu": true}\n'})
    assert [f["code"] for f in bools.findings] == ["GL207"]


def test_no_construct_grows_faster_than_linearly_up_to_200_kb():
    """bench/fuzz.py --scaling --quick: each construct at 2, 20 and 200 kB; judged by the growth
    of CPU time per tenfold size (linear is about 10; a time under FLOOR counts as FLOOR), so a
    slow machine passes as well as a fast one."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "fuzz.py"), "--scaling", "--quick", "--json"],
                          capture_output=True, text=True, timeout=300)
    results = json.loads(proc.stdout)
    assert len(results) >= 30
    assert [r for r in results if r["superlinear"]] == []
