"""The per-file work of a run, spread over processes when there is enough of it.

Workers are forked once the shared files are parsed and the checks imported, so each starts
with the run's context in memory; the work is cut in chunks of items, shorter as it runs
out, which the workers and this process take in turn (this process does its share, not
waiting idle: `--jobs N` is N processes in all), and an answer is plain data (findings,
suppressions), so nothing large crosses between processes. Answers come back in input order: the output of a parallel run is
the output of a serial one, byte for byte.
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

# Below this many files per process, starting workers costs more than they save.
MIN_FILES_PER_WORKER = 50
# The most files in one chunk of work: a worker holds a chunk's answers (a shared file's tree
# among them) until they are sent. Chunks shrink as the work runs out (`_claim`): the last
# chunk taken is what the other processes wait for at the end.
CHUNK_MOST = 64
# Each chunk is at most this share of the work left per process.
CHUNK_SHARE = 8

_WORK: tuple[Callable, Sequence] | None = None  # what forked workers inherit


def cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def workers_for(items: int, jobs: int | None) -> int:
    """How many processes share the work on `items` files, this one included (1: this one
    alone, no worker)."""
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
# tenth of a large run's time; at 20,000 it still cost 4% of a 2,000-file run (each young
# collection scans the tree of the file being checked, and what the run keeps), at 100,000
# the collector hardly runs, and a 20,000-file run takes the same memory.
YOUNG_THRESHOLD = 100_000


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
    """[fn(item) for item in items], spread over processes where that pays off."""
    return list(iterate_in_order(fn, items, jobs))


def iterate_in_order(fn: Callable[[T], R], items: Sequence[T], jobs: int | None) -> Iterator[R]:
    """fn(item) for each item, in input order, each answer as soon as it and those before it
    are done: what a streamed report writes while later files are still being checked.

    `jobs` counts this process: it takes chunks of the work as its workers do, so a run on
    N CPUs forks N - 1 of them (each counts the pages it shares with this one in its
    memory)."""
    processes = workers_for(len(items), jobs)
    with frozen():
        if processes == 1:
            for item in items:
                yield fn(item)
            return
        yield from _shared(fn, items, processes)


def _shared(fn: Callable[[T], R], items: Sequence[T], processes: int) -> Iterator[R]:
    import multiprocessing

    global _WORK
    context = multiprocessing.get_context("fork")
    claimed = context.Value("q", 0, lock=True)  # the first item no process has taken
    answers = context.Queue()  # (first item, its chunk's answers) from the workers
    _WORK = (fn, items, processes, claimed, answers)
    workers = [context.Process(target=_work, daemon=True) for _ in range(processes - 1)]
    try:
        for worker in workers:
            worker.start()
        done: dict[int, list] = {}  # first item -> the answers of its chunk
        position = 0
        while position < len(items):
            while position not in done:
                while not answers.empty():  # what the workers have finished, first
                    _take(answers.get(), done)
                if position in done:
                    break
                mine = _claim(claimed, len(items), processes)
                if mine is not None:
                    done[mine[0]] = _answers(fn, items, *mine)
                else:  # every chunk is taken: this one comes from a worker
                    _take(_receive(answers, workers), done)
            chunk = done.pop(position)
            position += len(chunk)
            yield from chunk
    finally:
        _WORK = None
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
            worker.join()
        answers.close()


def _claim(claimed, total: int, processes: int) -> tuple[int, int] | None:
    """The next chunk of items, [start, end), or None when every item is taken: a share of
    what is left per process (`CHUNK_SHARE`), at most CHUNK_MOST items, so the chunks taken
    last are short and no process waits long for another's at the end."""
    with claimed.get_lock():
        start = claimed.value
        if start >= total:
            return None
        size = max(1, min(CHUNK_MOST, (total - start) // (processes * CHUNK_SHARE)))
        claimed.value = start + size
    return start, start + size


def _answers(fn: Callable, items: Sequence, start: int, end: int) -> list:
    return [fn(item) for item in items[start:end]]


def _take(answer: tuple, done: dict[int, list]) -> None:
    chunk, result = answer
    if chunk is None:  # the worker failed: its traceback
        raise RuntimeError(f"a worker process failed:\n{result}")
    done[chunk] = result


def _receive(answers, workers: list) -> tuple:
    """The next answer of a worker; an error where every worker that could give it has
    stopped without giving it."""
    import queue

    while True:
        try:
            return answers.get(timeout=0.5)
        except queue.Empty:
            stopped = [w.exitcode for w in workers if w.exitcode not in (None, 0)]
            if stopped:
                raise RuntimeError(f"a worker process stopped (exit code {stopped[0]})") from None


def _work() -> None:
    """A worker: chunks taken in turn until none is left, each one's answers sent back."""
    fn, items, processes, claimed, answers = _WORK
    while (chunk := _claim(claimed, len(items), processes)) is not None:
        try:
            result = _answers(fn, items, *chunk)
        except BaseException:
            import traceback

            answers.put((None, traceback.format_exc()))
            break
        answers.put((chunk[0], result))
    answers.close()
    answers.join_thread()
