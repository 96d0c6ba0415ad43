"""The benchmark harness runs end to end at N = 200 (a smoke run: nothing here is timed)."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def test_bench_smoke_run_prints_every_row():
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--sizes", "200", "--repeat", "1", "--no-peers"],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr
    for work in ("200 Dockerfiles, one call", "200 manifests, one call", "200 mixed files"):
        assert f"| {work} |" in result.stdout
    assert "parse floor:" in result.stdout
    # no peer ran, so no verdict against one: "not measured" (or "busy" on a loaded machine)
    row = next(line for line in result.stdout.splitlines() if line.startswith("| 200 Dockerfiles"))
    assert "| met" not in row and ("not measured (hadolint absent" in row or "busy: not judged" in row)
    assert "/ " in row.split("|")[5]  # the load beside the number of CPUs


def test_bench_server_run_reports_each_change():
    import json

    result = subprocess.run([sys.executable, str(ROOT / "bench" / "server.py"), "--repeat", "2"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert len(data["save_ms"]) == len(data["keystroke_ms"]) == 2


def test_bench_precommit_run_prints_its_row():
    result = subprocess.run([sys.executable, str(ROOT / "bench" / "precommit.py"), "--sizes", "200", "--repeat", "1"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "| 200 files, one changed Dockerfile |" in result.stdout


def test_a_row_waits_for_the_load_the_last_one_left(monkeypatch):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import run as harness
    finally:
        sys.path.remove(str(ROOT / "bench"))
    readings = iter([3.5, 2.5, 1.0, 0.5])
    slept = []
    monkeypatch.setattr(harness, "load", lambda: next(readings))
    monkeypatch.setattr(harness.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(harness.time, "sleep", slept.append)
    harness.settle(60)
    assert slept == [5.0, 5.0]  # until the load fell to 0.75 a CPU, not longer
    readings = iter([3.5] * 10)
    slept.clear()
    harness.settle(12)
    assert slept == [5.0, 5.0, 2.0]  # and never past the time given
