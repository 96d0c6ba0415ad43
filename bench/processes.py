"""The memory of a whole run: the peak resident sets of the process and of the workers it
starts, added up over the processes alive together (a run's workers live at the same time,
so the machine needs their sum; the largest alone, which `wait4` reports, understates a
parallel run; and workers that are gone before others start, such as the ones that tell the
kinds of the files before the ones that check them are forked, do not add up).

A thread follows the process tree while the run lasts (`/proc/PID/task/TID/children`, every
10 ms) and keeps each process's high-water mark (`VmHWM` in `/proc/PID/status`): the figure is
the largest sum, at one poll, of the marks of the processes alive then. It also keeps the
largest sum of the live processes' proportional sets (`Pss` in `/proc/PID/smaps_rollup`),
which counts a page shared by forked processes once. A worker that lives less than one poll
is missed; the main process's own mark is also taken from `wait4` at the end, so a run
without workers is counted exactly. Linux only: elsewhere the figure is the largest process,
as `wait4` gives it.
"""

from __future__ import annotations

import os
import threading

POLL_SECONDS = 0.01


def _children(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as handle:
                out += [int(child) for child in handle.read().split()]
    except OSError:  # gone already
        pass
    return out


def _pss_kb(pid: int) -> int:
    """The proportional set of `pid`: its own pages, and its share of those it shares with its
    workers (a forked worker's resident set counts every page of its parent it still maps)."""
    return _proc_kb(f"/proc/{pid}/smaps_rollup", "Pss:") or 0


def _hwm_kb(pid: int) -> int | None:
    return _proc_kb(f"/proc/{pid}/status", "VmHWM:")


def _proc_kb(path: str, field: str) -> int | None:
    """The kilobytes a /proc file gives on its `field` line (None: the process is gone)."""
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


class TreeMemory:
    """Peaks of `pid` and its descendants, while `stop()` has not been called."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peaks: dict[int, int] = {}  # pid -> kilobytes
        # the largest sum of the proportional sets of the processes alive at one poll: what the
        # machine gives the run at once (workers that never live together are not added up)
        self.pss_at_once_kb = 0
        # the largest sum of the high-water marks of the processes alive at one poll
        self.together_kb = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._follow, daemon=True)
        if os.path.isdir("/proc"):
            self._thread.start()

    def _follow(self) -> None:
        while True:
            todo = [self.pid]
            pss = together = 0
            while todo:
                pid = todo.pop()
                kb = _hwm_kb(pid)
                if kb is not None:
                    self.peaks[pid] = max(kb, self.peaks.get(pid, 0))
                    together += self.peaks[pid]
                    pss += _pss_kb(pid)
                todo += _children(pid)
            self.pss_at_once_kb = max(self.pss_at_once_kb, pss)
            self.together_kb = max(self.together_kb, together)
            if self._done.wait(POLL_SECONDS):
                return

    def stop(self, main_maxrss_kb: int) -> float:
        """The peaks of the processes alive together, summed, in MB, given the main process's
        `ru_maxrss` from `wait4` (which, for a run with workers, is the largest of it and
        them)."""
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()
        if len(self.peaks) <= 1:  # no worker: the main process's own mark, exactly
            return max(self.peaks.get(self.pid, 0), main_maxrss_kb) / 1024
        return self.together_kb / 1024
