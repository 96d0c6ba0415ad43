"""The per-file work of a run, in worker processes when there is enough of it.

Workers are forked once the shared files are parsed and the checks imported, so each starts
with the run's context in memory; a work item is an index and its answer is plain data
(findings, suppressions), so nothing large crosses between processes. Answers come back in
input order: the output of a parallel run is the output of a serial one, byte for byte.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

# `typing` costs a one-file run about 2 ms to import: its names are for type checkers only
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")
    R = TypeVar("R")

# Below this many files per worker, starting the workers costs more than they save.
MIN_FILES_PER_WORKER = 50

_WORK: tuple[Callable, Sequence] | None = None  # what forked workers inherit


def cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def workers_for(items: int, jobs: int | None) -> int:
    """How many worker processes `items` files get (1: run in this process)."""
    wanted = cpus() if jobs is None else jobs
    if jobs is None:  # the default stays serial where workers would not pay off
        wanted = min(wanted, items // MIN_FILES_PER_WORKER)
    wanted = min(wanted, items)
    if wanted <= 1 or not hasattr(os, "fork"):
        return 1
    return wanted


# Allocations between two young-generation collections during a run (Python's default: 700).
# A checked file's tree and facts hold no reference cycles and are freed as its checks end,
# so collecting rarely costs little memory, where collecting every 700 allocations costs a
# tenth of a large run's time.
YOUNG_THRESHOLD = 20_000


@contextmanager
def few_collections() -> Iterator[None]:
    """The cyclic garbage collector runs seldom within the block."""
    previous = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)


@contextmanager
def frozen() -> Iterator[None]:
    """What the process holds now (modules, the shared files and the run's context) is left
    out of garbage collection within the block: no collection scans it again, and forked
    workers do not copy its pages by writing to their collector headers."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def map_in_order(fn: Callable[[T], R], items: Sequence[T], jobs: int | None) -> list[R]:
    """[fn(item) for item in items], spread over worker processes where that pays off."""
    return list(iterate_in_order(fn, items, jobs))


def iterate_in_order(fn: Callable[[T], R], items: Sequence[T], jobs: int | None) -> Iterator[R]:
    """fn(item) for each item, in input order, each answer as soon as it and those before it
    are done: what a streamed report writes while later files are still being checked."""
    workers = workers_for(len(items), jobs)
    with frozen():
        if workers == 1:
            for item in items:
                yield fn(item)
            return
        import multiprocessing

        global _WORK
        _WORK = (fn, items)
        try:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                chunk = max(1, len(items) // (workers * 16))
                yield from pool.imap(_call, range(len(items)), chunksize=chunk)
        finally:
            _WORK = None


def _call(index: int):
    fn, items = _WORK
    return fn(items[index])
