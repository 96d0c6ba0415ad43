"""What dockerd decodes from daemon.json, read from rules/dockerd-decode.yaml (transcribed
from moby's source at the 20.10 to 28.x release tags): each key's Go type."""

from __future__ import annotations

import functools

from gpulint.resources import load_yaml

DATA = "dockerd-decode.yaml"
# Go types as daemon.json's decoder sees them: pointers decode like their element type
_PLAIN = {"string": "string", "bool": "bool", "*bool": "bool", "int": "int", "*int": "int",
          "int64": "int", "uint32": "int", "[]string": "[]string", "map[string]string": "map[string]string",
          "map[string]bool": "map[string]bool", "map[string]*units.Ulimit": "map[string]*units.Ulimit"}


@functools.lru_cache(maxsize=None)
def option_types() -> dict[str, str]:
    """daemon.json key -> the Go type its value decodes into, for the types gpulint judges."""
    out = {}
    for key, spec in load_yaml(DATA)["keys"].items():
        plain = _PLAIN.get(spec.get("type") or "")
        if plain is not None:
            out[key] = plain
    return out
