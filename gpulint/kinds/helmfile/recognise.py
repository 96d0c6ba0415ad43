"""A Helmfile state file: named `helmfile.yaml` (`.gotmpl` when templated), any YAML in a
`helmfile.d` folder, or YAML whose top-level `releases:` sits beside Helmfile's own keys."""

from __future__ import annotations

import re

from gpulint.regex import lazy

NAMES = ("helmfile.yaml", "helmfile.yml")
_RELEASES = lazy(r"^releases:\s*(#.*)?$", re.MULTILINE)
_HELMFILE_KEYS = lazy(r"^(repositories|helmDefaults|helmfiles|environments|missingFileHandler|bases):",
                      re.MULTILINE)


def by_name(lower: str) -> bool:
    return lower in NAMES


def by_folder(folder: str, lower: str) -> bool:
    return folder == "helmfile.d" and lower.endswith((".yaml", ".yml"))


def wants(lower: str) -> bool:
    return lower.endswith((".yaml", ".yml"))


def by_content(lower: str, text: str) -> bool | None:
    # every YAML file is asked: the literal the pattern needs, looked for first, rules out most
    if wants(lower) and "releases:" in text and _RELEASES.search(text) and _HELMFILE_KEYS.search(text):
        return True
    return None
