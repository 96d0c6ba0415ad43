"""A checked file's parse tree and facts are freed by reference counting as soon as its
checks have run: none of them form reference cycles, which would keep them (and the file's
text) in memory until the cycle collector runs, in a large run many times over."""

from __future__ import annotations

import gc

import pytest
from conftest import FIXTURES, run_gpulint


# argparse's help formatter holds a root section that points back at it; the command line's
# parser makes a few of them once per run, whatever the files
_PER_RUN = {"_Formatter"}


def _gpulint_garbage() -> list[str]:
    """What the cycle collector finds that gpulint's own code made (per file, not per run)."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        found = []
        for obj in gc.garbage:
            code = getattr(obj, "__code__", None)
            where = code.co_filename if code is not None else type(obj).__module__ or ""
            if "gpulint" in where.replace("\\", "/").split("/tests/")[0]:
                found.append(getattr(obj, "__qualname__", type(obj).__qualname__))
        return [name for name in found if name not in _PER_RUN]
    finally:
        gc.garbage.clear()
        gc.set_debug(0)


POD = """apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  containers:
    - name: main
      image: nvcr.io/nvidia/pytorch:24.01-py3
      resources:
        limits:
          nvidia.com/gpu: 1
"""


# Files that other files' checks consult (node configs, RuntimeClasses) are kept for the
# whole run and left out here: the files checked on their own are what a large run holds
# one after another.
@pytest.mark.parametrize("kind", ["dockerfile", "compose", "cdi", "pod"])
def test_checking_files_leaves_no_cycles(kind, tmp_path):
    if kind == "pod":
        (tmp_path / "pod.yaml").write_text(POD)
    target = str(tmp_path if kind == "pod" else FIXTURES / kind)
    run_gpulint("--isolated", "--jobs", "1", "--format", "json", target)  # imports, caches
    gc.collect()
    gc.disable()
    try:
        run_gpulint("--isolated", "--jobs", "1", "--format", "json", target)
        assert _gpulint_garbage() == []
    finally:
        gc.enable()
