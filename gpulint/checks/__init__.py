"""Rule implementations, one module per family; importing a module registers its checks.

A run imports only the families that concern the kinds of file it found, so
linting one Dockerfile does not pay for the Kubernetes rules.
"""

from __future__ import annotations

import importlib

# family module -> the file kinds that make it worth importing (None: always)
FAMILIES: dict[str, tuple[str, ...] | None] = {
    "containerd": ("containerd",),
    "daemon_json": ("daemon-json",),
    "dockerfile": ("dockerfile",),
    "multistage": ("dockerfile",),
    "kubernetes": ("kubernetes",),
    "crossfile": ("kubernetes",),
    "compat": ("kubernetes", "dockerfile", "gpu-operator-values", "compose", "commands"),
    "compose": ("compose",),
    "commands": ("commands",),
    "toolkit": ("nvidia-toolkit", "cdi"),
    "node": ("node",),  # `gpulint doctor` only: node facts, not a file kind
}


def load_for(kinds: set[str]) -> None:
    for module, needs in FAMILIES.items():
        if needs is None or kinds.intersection(needs):
            importlib.import_module(f"{__name__}.{module}")


def load_all() -> None:
    load_for({kind for needs in FAMILIES.values() if needs for kind in needs})
