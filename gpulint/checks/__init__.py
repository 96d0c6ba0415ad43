"""Rule implementations, one module per family; importing a module registers its checks."""

from __future__ import annotations

import functools
import importlib
import pkgutil


@functools.lru_cache(maxsize=None)
def load_all() -> None:
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        importlib.import_module(f"{__name__}.{module}")
