"""Regular expressions compiled when first used: a run over one Dockerfile then pays only for
the patterns the rules it runs need, not for the few hundred every module defines."""

from __future__ import annotations

import re


class Lazy:
    """A pattern that compiles itself on first use and then behaves like the compiled one."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int = 0):
        self._args = (pattern, flags)
        self._compiled: re.Pattern | None = None

    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return self._compiled

    def __getattr__(self, name: str):  # search, match, finditer, sub, pattern ...
        return getattr(self.compiled(), name)


def lazy(pattern: str, flags: int = 0) -> Lazy:
    return Lazy(pattern, flags)
