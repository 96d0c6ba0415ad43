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
