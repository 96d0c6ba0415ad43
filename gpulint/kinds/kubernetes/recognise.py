"""Kubernetes manifests: JSON or YAML with `apiVersion` and `kind`."""

from __future__ import annotations

import re

from gpulint.regex import lazy

# blanks as spaces and tabs only: `\s*` after `^` would cross lines, and a search over many
# empty lines would take quadratic time
_K8S_API = lazy(r"^[ \t]*(?:-[ \t]+)?[\"']?apiVersion[\"']?[ \t]*:", re.MULTILINE)
_K8S_KIND = lazy(r"^[ \t]*(?:-[ \t]+)?[\"']?kind[\"']?[ \t]*:", re.MULTILINE)


# text that opens with a YAML object: its first line that is not blank or a comment is
# `---`, `apiVersion:` or `kind:`
_MANIFEST_START = lazy(r"\A(?:[ \t]*(?:#[^\n]*)?\r?\n)*(?:---|apiVersion:|kind:)")
# the same without `---`, which also opens Markdown front matter and other YAML
_OBJECT_START = lazy(r"\A(?:[ \t]*(?:#[^\n]*)?\r?\n)*(?:apiVersion|kind):")


def wants(lower: str) -> bool:
    return lower.endswith((".json", ".yaml", ".yml"))


def by_content(lower: str, text: str) -> bool | None:
    if lower.endswith(".json"):
        stripped = text.lstrip("\ufeff \t\r\n")
        return True if stripped.startswith("{") and '"apiVersion"' in text and '"kind"' in text else None
    # the literal the patterns below need, looked for first: it rules out the other YAML files
    if "apiVersion" not in text:
        return None
    if lower.endswith((".yaml", ".yml")) and _K8S_API.search(text) and _K8S_KIND.search(text):
        return True
    if "." not in lower and _MANIFEST_START.match(text) and _K8S_API.search(text) and _K8S_KIND.search(text):
        return True  # a manifest template named without `.yaml` (`kubeadm-config.template`)
    if _OBJECT_START.match(text) and _K8S_API.search(text) and _K8S_KIND.search(text):
        return True  # whatever its name, a file that opens with an object's `apiVersion:` (kubectl reads any name)
    return None
