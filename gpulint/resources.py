"""Where the bundled rule catalog and knowledge live.

In a wheel, `rules/` is shipped inside the package as `gpulint/rules`; in a source
checkout (or an editable install) it is the top-level `rules/` beside the package.
"""

from __future__ import annotations

import functools
import marshal
import os
import sys
from collections.abc import Callable
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=None)
def rules_dir() -> Path:
    for candidate in (_PACKAGE / "rules", _PACKAGE.parent / "rules"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("gpulint: bundled rules/ directory not found")


def cache_dir() -> Path:
    """Where gpulint may remember work between runs (validated configs, the parsed catalog):
    the platform's cache folder ($XDG_CACHE_HOME or ~/.cache, ~/Library/Caches on macOS,
    %LOCALAPPDATA% on Windows), or the folder `$GPULINT_CACHE_DIR` (`--cache-dir`) names."""
    chosen = os.environ.get("GPULINT_CACHE_DIR")
    if chosen:
        return Path(chosen)
    root = os.environ.get("XDG_CACHE_HOME")
    if not root and sys.platform == "darwin":
        root = os.path.join(os.path.expanduser("~"), "Library", "Caches")
    elif not root and os.name == "nt":
        root = os.environ.get("LOCALAPPDATA")
    return Path(root or os.path.join(os.path.expanduser("~"), ".cache")) / "gpulint"


# entries of each kind kept in the cache folder; older ones are removed when one is added
CACHE_ENTRIES = 32


def prune(prefix: str, keep: int = CACHE_ENTRIES) -> None:
    """Remove all but the `keep` most recently used cache entries named `prefix*`."""
    try:
        entries = sorted(cache_dir().glob(prefix + "*"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[keep:]:
            old.unlink()
    except OSError:  # another run removed it first, or the folder is not ours to clean
        pass


def yaml_loader():
    """PyYAML's safe loader, backed by libyaml when that is built in (several times faster)."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(name: str):
    """Parse one bundled YAML file from rules/ (no cache)."""
    import yaml

    with open(rules_dir() / name, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=yaml_loader())


def load_yaml(name: str):
    """One bundled YAML data file from rules/, parsed: shipped so in a wheel, else through the cache."""
    return bundled(name.removesuffix(".yaml"), lambda: [rules_dir() / name], lambda: read_yaml(name))


# rules/prebuilt/NAME.marshal: the bundled YAML parsed when the wheel is built (tools/prebuild.py)
PREBUILT = "prebuilt"


def installed() -> bool:
    """gpulint runs from a wheel (rules/ shipped inside the package), not from a checkout,
    whose rules/ may have been edited since the prebuilt data was made."""
    return rules_dir() == _PACKAGE / "rules"


def bundled(name: str, sources: Callable[[], list[Path]], build):
    """`build()`'s result for the bundled data `name`. An installed gpulint reads it from
    rules/prebuilt (marshal: a few milliseconds, nothing to import, nothing to write, so a
    fresh CI container pays no first-run parse); a checkout, or data this Python cannot read,
    goes through the cache, which notices an edited file."""
    if installed():
        try:
            with open(rules_dir() / PREBUILT / f"{name}.marshal", "rb") as handle:
                return marshal.load(handle)
        except (OSError, EOFError, ValueError, TypeError):
            pass
    return cached(sources(), build, name)


def cached(paths: list[Path], build, name: str = ""):
    """`build()`, remembered in the cache folder between runs. Parsing the bundled YAML costs
    more than linting a file, so its result is kept as a pickle keyed by gpulint's version and
    the files' names, sizes and modification times (and `name`: two data built from the same
    files differ): an edited or upgraded file is read afresh.
    Without a writable cache folder it is simply built each time."""
    import hashlib
    import pickle

    from gpulint import __version__

    stamp = [__version__, name] + [(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in paths]
    key = hashlib.sha256(repr(stamp).encode()).hexdigest()[:32]
    path = cache_dir() / f"data-{key}.pickle"
    try:
        with open(path, "rb") as handle:
            return pickle.load(handle)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ValueError):
        pass
    data = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as handle:
            pickle.dump(data, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        pass
    else:
        prune("data-")
    return data
