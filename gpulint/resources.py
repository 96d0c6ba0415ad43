"""Where the bundled rule catalog and knowledge live.

In a wheel, `rules/` is shipped inside the package as `gpulint/rules`; in a source
checkout (or an editable install) it is the top-level `rules/` beside the package.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=None)
def rules_dir() -> Path:
    for candidate in (_PACKAGE / "rules", _PACKAGE.parent / "rules"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("gpulint: bundled rules/ directory not found")


def cache_dir() -> Path:
    """Where gpulint may remember work between runs (validated configs, the parsed catalog)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "gpulint"


def yaml_loader():
    """PyYAML's safe loader, backed by libyaml when that is built in (several times faster)."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(name: str):
    """Load one bundled YAML data file from rules/."""
    import yaml

    with open(rules_dir() / name, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=yaml_loader())
