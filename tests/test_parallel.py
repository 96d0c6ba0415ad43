"""--jobs: parsing and per-file checks in worker processes give the output of a serial run,
byte for byte, in every format."""

from __future__ import annotations

import json
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


def test_workers_see_the_facts_of_files_in_other_workers(tmp_path):
    """A RuntimeClass defined in one manifest is known to the checks of every other manifest,
    whichever worker checks it: only the pods naming an undefined class are reported."""
    (tmp_path / "runtimeclass.yaml").write_text(
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: gpu\nhandler: nvidia\n")
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{n}\nspec:\n  runtimeClassName: {cls}\n"
           "  containers:\n    - name: c\n      image: busybox:1.36\n")
    for n in range(120):
        (tmp_path / f"pod-{n:03}.yaml").write_text(pod.format(n=n, cls="gpu" if n % 40 else "nvidia-gpu"))
    for jobs in ("1", "2"):
        run = _lint(tmp_path, "--jobs", jobs, "--format", "json", "--select", "GL701")
        assert run.returncode == 0, run.stderr
        found = [(f["path"].rsplit("/", 1)[1], f["line"]) for f in json.loads(run.stdout)["findings"]]
        assert found == [("pod-000.yaml", 6), ("pod-040.yaml", 6), ("pod-080.yaml", 6)]


_MAIN: list[int] = []  # this process, as the tests below see it


def _pid_of(item):
    import os
    import time

    if os.getpid() != _MAIN[0]:
        time.sleep(0.005)  # the workers are slow: this process surely takes chunks too
    return item, os.getpid()


def test_this_process_takes_its_share_beside_n_minus_one_workers():
    """--jobs N is N processes in all: this one works through chunks of the items beside
    N - 1 forked workers, and the answers come in input order."""
    import os

    from gpulint.run.parallel import iterate_in_order

    _MAIN[:] = [os.getpid()]
    items = list(range(400))
    answers = list(iterate_in_order(_pid_of, items, 3))
    assert [item for item, _ in answers] == items
    pids = {pid for _, pid in answers}
    assert os.getpid() in pids
    assert len(pids - {os.getpid()}) <= 2


def _fails_in_a_worker(item):
    import os
    import time

    if os.getpid() != _MAIN[0]:
        raise ValueError(f"item {item}")
    time.sleep(0.002)  # this process is slow: the worker gets chunks too
    return item


def test_a_worker_that_fails_stops_the_run_with_its_traceback():
    import os

    from gpulint.run.parallel import iterate_in_order

    _MAIN[:] = [os.getpid()]
    with pytest.raises(RuntimeError, match=r"(?s)a worker process failed:.*ValueError: item"):
        list(iterate_in_order(_fails_in_a_worker, list(range(2000)), 2))


def test_chunks_shrink_as_the_work_runs_out():
    """Every item is taken once, in order, in chunks of at most CHUNK_MOST that shrink toward
    the end: the chunk the other processes wait for last is a single item, not 64."""
    import multiprocessing

    from gpulint.run.parallel import CHUNK_MOST, _claim

    claimed = multiprocessing.get_context("fork").Value("q", 0, lock=True)
    chunks = []
    while (chunk := _claim(claimed, 2000, 2)) is not None:
        chunks.append(chunk)
    assert chunks[0] == (0, CHUNK_MOST)
    assert [start for start, _ in chunks[1:]] == [end for _, end in chunks[:-1]]
    assert chunks[-1] == (1999, 2000)
    sizes = [end - start for start, end in chunks]
    assert sizes == sorted(sizes, reverse=True)
    assert sum(1 for size in sizes if size <= 4) >= 8  # the last stretch in small steps
