"""--jobs: parsing and per-file checks in worker processes give the output of a serial run,
byte for byte, in every format."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES


def _lint(tree, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpulint", "--isolated", "--failure-threshold", "none",
                           *args, str(tree)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """Every fixture, twice over (so each worker gets files that other files' checks
    consult, and files checked on their own)."""
    root = tmp_path_factory.mktemp("tree")
    for copy in ("a", "b"):
        shutil.copytree(FIXTURES, root / copy)
    return root


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_parallel_output_is_the_serial_output(tree, fmt):
    serial = _lint(tree, "--jobs", "1", "--format", fmt)
    assert serial.returncode == 0, serial.stderr
    assert serial.stdout.count("GL") > 100  # the tree has findings of many rules
    for jobs in ("2", "3"):
        parallel = _lint(tree, "--jobs", jobs, "--format", fmt)
        assert parallel.returncode == 0, parallel.stderr
        assert parallel.stdout == serial.stdout


def test_jobs_must_be_positive(tree):
    proc = _lint(tree, "--jobs", "0")
    assert proc.returncode == 2
    assert "--jobs must be a positive number" in proc.stderr
