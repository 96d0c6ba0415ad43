"""Near-miss keys: which known key a misspelt one most likely means."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache


def loose(key: str) -> str:
    """Case, `_` and `-` ignored: `systemd_cgroup`, `SystemdCgroup` and `systemd-cgroup` meet."""
    return key.lower().replace("_", "").replace("-", "")


def closest_key(key: str, known: Iterable[str], normal: Callable[[str], str] = loose) -> str | None:
    """The one known key that `key` is a spelling variant (same `normal` form) or a near miss
    of; None where there is none or more than one."""
    known = tuple(known)
    try:
        return _closest(key, known, normal)
    except TypeError:  # something unhashable: worked out without the memo
        return _closest.__wrapped__(key, known, normal)


@lru_cache(maxsize=8192)  # the same keys are asked about in file after file
def _closest(key: str, known: tuple[str, ...], normal: Callable[[str], str]) -> str | None:
    same = [k for k in known if normal(k) == normal(key)]
    if same:
        return same[0] if len(same) == 1 else None
    import difflib  # only for keys that are no spelling variant of a known one

    close = difflib.get_close_matches(normal(key), [normal(k) for k in known], n=2, cutoff=0.85)
    if len(close) != 1:
        return None
    return next(k for k in known if normal(k) == close[0])
