"""A time budget for the work on one file: past it, the work stops with `FileTimeout` and the
file is reported as not checked (GL006), and the run goes on with the other files.

The budget is a real-time interval timer (`signal.setitimer`, SIGALRM), so it needs POSIX and
the main thread of a process: a run in one process and each worker process (`run/parallel`)
qualify. Elsewhere (Windows, a thread) the work runs without a budget. Python delivers the
signal between bytecodes: a single call into C that never returns to Python (a regular
expression's backtracking inside `re`) is stopped when it does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

try:  # the C module under `signal`: its handlers are plain ints, not enums to convert (each
    import _signal as _signals  # file's budget sets and restores SIGALRM's handler), and a
    # one-file run imports neither `signal`'s enums nor `threading`
except ImportError:  # an interpreter without it
    import signal as _signals

# The default budget for one file, in seconds (`--file-timeout`, `file-timeout`).
DEFAULT_SECONDS = 10.0
LONGEST = 10.0 ** 7  # a budget this long is none


class FileTimeout(BaseException):
    """The file's budget ran out. A BaseException, so that the `except Exception` around
    each check (a broken check is an internal error) lets it through."""


_NONE = object()  # no handler was set


@contextmanager
def budget(seconds: float | None) -> Iterator[None]:
    """Raise FileTimeout in the block once `seconds` have passed (None or 0: no budget)."""
    previous = _NONE
    if seconds and seconds < LONGEST and hasattr(_signals, "setitimer"):
        try:
            previous = _signals.signal(_signals.SIGALRM, _expired)
        except ValueError:  # not the main thread, which alone receives signals: no budget
            pass
    if previous is _NONE:
        yield
        return
    _signals.setitimer(_signals.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        _signals.setitimer(_signals.ITIMER_REAL, 0)
        _signals.signal(_signals.SIGALRM, _signals.SIG_DFL if previous is None else previous)



def _expired(signum, frame):
    raise FileTimeout()
