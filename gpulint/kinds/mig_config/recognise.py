"""A mig-parted config: `version: v1` beside `mig-configs:`, written on its own or as the text of
a ConfigMap's entries; a `*mig*config*.yaml` with either key at its top level."""

from __future__ import annotations

import fnmatch
import re

from gpulint.regex import lazy

_VERSION = lazy(r"^([ \t]*)version:[ \t]*[\"']?v1[\"']?[ \t]*(#.*)?$", re.MULTILINE)
_CONFIGS = lazy(r"^([ \t]*)mig-configs:[ \t]*(#.*)?$", re.MULTILINE)
# the same text in a double-quoted YAML string, its line breaks written `\n`
_QUOTED = lazy(r"version:[ \t]*v1\\n[ \t]*mig-configs:")
_TOP_KEY = lazy(r"^(version|mig-configs):", re.MULTILINE)
_TOP_KIND = lazy(r"^kind:\s*[\"']?([A-Za-z]+)", re.MULTILINE)


def wants(lower: str) -> bool:
    return lower.endswith((".yaml", ".yml"))


def _starts_a_line(text: str, literal: str) -> bool:
    """Whether a line of `text` starts with `literal`: what `^literal` with re.MULTILINE finds,
    as two looks for a literal (the pattern engine tries every character of a file without it)."""
    return text.startswith(literal) or "\n" + literal in text


def _named(lower: str) -> bool:
    # a name alone is not enough: a manifest may be called `mig-config-manager.yaml`
    # (the two words the pattern needs, looked for first: fnmatch costs more than the look)
    return "mig" in lower and "config" in lower and fnmatch.fnmatch(lower, "*mig*config*.y*ml")


def _looks_like_config(text: str) -> bool:
    # every YAML file is asked: the patterns' literals, looked for first, rule out most
    if "version:" not in text or "mig-configs:" not in text:
        return False
    indents = {m[1] for m in _VERSION.finditer(text)}
    return any(m[1] in indents for m in _CONFIGS.finditer(text)) or _QUOTED.search(text) is not None


def by_content(lower: str, text: str) -> bool | None:
    if not wants(lower):
        return None
    # every YAML file is asked: the literals the patterns need, looked for first, rule out most
    if _starts_a_line(text, "apiVersion:"):
        # a manifest: a file of ConfigMaps only is this kind's; beside other objects (the MIG
        # manager's DaemonSet) the file stays a Kubernetes manifest and its ConfigMaps are
        # judged from there
        return True if _looks_like_config(text) and {m[1] for m in _TOP_KIND.finditer(text)} == {"ConfigMap"} \
            else None
    if _starts_a_line(text, "kind:") and _TOP_KIND.search(text):
        return None
    if "mig-configs:" in text and any(m[1] == "" for m in _CONFIGS.finditer(text)) and _looks_like_config(text):
        return True
    # a file named for a MIG config is read as one when it has either key at its top level,
    # so a config that lacks `version` (which mig-parted refuses) is still judged
    return True if _named(lower) and _TOP_KEY.search(text) else None
