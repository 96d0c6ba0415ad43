"""Regular expressions compiled when first used: a run over one Dockerfile then pays only for
the patterns the rules it runs need, not for the few hundred every module defines."""

from __future__ import annotations

import re

_BOUND = ("search", "match", "fullmatch", "finditer", "findall", "sub", "split")


class Lazy:
    """A pattern that compiles itself on first use and then behaves like the compiled one."""

    __slots__ = ("_args", "_compiled", *_BOUND)

    def __init__(self, pattern: str, flags: int = 0):
        self._args = (pattern, flags)
        self._compiled: re.Pattern | None = None

    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return self._compiled

    def __getattr__(self, name: str):  # search, match, finditer, sub, pattern ...
        # only called for a name not found on the instance; the common methods are then
        # bound on the instance, so later calls cost what the compiled pattern's do
        compiled = self.compiled()
        value = getattr(compiled, name)
        if name in _BOUND:
            object.__setattr__(self, name, value)
        return value


def lazy(pattern: str, flags: int = 0) -> Lazy:
    return Lazy(pattern, flags)
