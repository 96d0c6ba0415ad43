"""A Dockerfile or Containerfile: by its name, or by a name that mentions one and a
first instruction that is FROM or ARG."""

from __future__ import annotations

import re

from gpulint.regex import lazy

# names that mention Dockerfile but hold something else (docs, scripts, backups)
_NOT_DOCKERFILE = (
    ".toml", ".json", ".yaml", ".yml", ".md", ".rst", ".txt", ".adoc", ".html", ".py", ".sh", ".go",
    ".rs", ".js", ".ts", ".java", ".c", ".cc", ".cpp", ".h", ".xml", ".ini", ".cfg", ".lock", ".bak",
    ".orig", ".patch", ".diff", ".swp", ".dockerignore")
_FIRST_INSTRUCTION = lazy(r"(?i)(FROM|ARG)\s")


def by_name(lower: str) -> bool:
    return lower in ("dockerfile", "containerfile") or lower.startswith(("dockerfile.", "containerfile.")) \
        or lower.endswith(".dockerfile") or lower.startswith("containerfile")


def wants(lower: str) -> bool:
    return "dockerfile" in lower or "containerfile" in lower


def by_content(lower: str, text: str) -> bool | None:
    suffixed = re.search(r"(dockerfile|containerfile)\.[^.]+$", lower)  # `x_Dockerfile.cpp`
    if wants(lower) and (suffixed or not lower.endswith(_NOT_DOCKERFILE)):
        # names such as `Dockerfile-minimal` or `gpu_Dockerfile`: trust the content, and let
        # the other kinds read what is not a Dockerfile (a manifest named `eks_Dockerfile.job`)
        return True if _looks_like_dockerfile(text) else None
    return None


def _looks_like_dockerfile(text: str) -> bool:
    """The first instruction is FROM or ARG (after comments and parser directives)."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        return bool(_FIRST_INSTRUCTION.match(stripped))
    return False
