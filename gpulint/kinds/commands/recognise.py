"""Files whose lines run GPU containers: shell scripts (by suffix or shebang), Makefiles,
Markdown and reStructuredText, GitHub Actions workflows and GitLab CI files."""

from __future__ import annotations

import re

from gpulint.regex import lazy

_WORKFLOW = lazy(r"^jobs:[ \t]*(#.*)?$", re.MULTILINE)
SCRIPT_SUFFIXES = (".sh", ".bash", ".md", ".markdown", ".rst", ".mk")
MAKEFILES = ("makefile", "gnumakefile")


def wants(lower: str) -> bool:
    return lower.endswith(SCRIPT_SUFFIXES + (".yaml", ".yml")) or lower in MAKEFILES


def by_content(lower: str, text: str) -> bool | None:
    if lower.endswith((".yaml", ".yml")):
        if lower == ".gitlab-ci.yml" or ("jobs:" in text and _WORKFLOW.search(text)):
            return _worth_reading(text, ci=True)
        return None
    if lower.endswith(SCRIPT_SUFFIXES) or lower in MAKEFILES or "." not in lower:
        if "." not in lower and lower not in MAKEFILES:
            # the parser: only for such names
            from gpulint.kinds.commands.parse import is_shell_script

            if not is_shell_script(text):
                return False
        return _worth_reading(text)
    return None


def _worth_reading(text: str, ci: bool = False) -> bool:
    # the parser: only for such names
    from gpulint.kinds.commands.parse import worth_reading

    return worth_reading(text, ci)
