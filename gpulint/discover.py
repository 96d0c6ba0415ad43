"""Walking paths and deciding what kind of file each one is.

The kind comes from the name and, for TOML/JSON/YAML, from the content: a
`pyproject.toml` is not a containerd config and a `values.yaml` is not a
Kubernetes manifest, whatever their extensions say.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gpulint.regex import lazy
from gpulint.template import TEMPLATE_SUFFIXES

KINDS = ("containerd", "daemon-json", "dockerfile", "kubernetes", "gpu-operator-values", "nvidia-toolkit",
         "cdi", "compose", "commands")
DEFAULT_EXCLUDES = (".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build")
_CONTENT_SUFFIXES = (".toml", ".json", ".yaml", ".yml")
# names that mention Dockerfile but hold something else (docs, scripts, backups)
_NOT_DOCKERFILE = _CONTENT_SUFFIXES + (
    ".md", ".rst", ".txt", ".adoc", ".html", ".py", ".sh", ".go", ".rs", ".js", ".ts", ".java",
    ".c", ".cc", ".cpp", ".h", ".xml", ".ini", ".cfg", ".lock", ".bak", ".orig", ".patch",
    ".diff", ".swp", ".dockerignore")
MAX_BYTES = 4 * 1024 * 1024

_CONTAINERD_TABLE = lazy(
    r"^\s*\[+\s*(?:plugins|grpc|ttrpc|debug|metrics|cgroup|proxy_plugins|stream_processors"
    r"|timeouts|server)\b", re.MULTILINE)
_CONTAINERD_KEY = lazy(
    r"^\s*(?:imports|disabled_plugins|required_plugins|oom_score|plugin_dir)\s*=", re.MULTILINE)
_DOCKERD_KEYS = lazy(
    r'"(runtimes|default-runtime|exec-opts|log-driver|log-opts|storage-driver|data-root|graph'
    r'|registry-mirrors|insecure-registries|live-restore|cgroup-parent|default-ulimits'
    r'|node-generic-resources|features|builder|dns|bip|iptables|userns-remap)"\s*:')
# The GPU Operator chart's values: a top-level `driver` table beside its other components.
_OPERATOR_DRIVER = lazy(r"^driver:\s*(#.*)?$", re.MULTILINE)
_OPERATOR_PARTS = lazy(
    r"^(operator|toolkit|devicePlugin|dcgmExporter|dcgm|gfd|migManager|validator|nfd|mig"
    r"|vgpuManager|sandboxDevicePlugin|nodeStatusExporter|cdi|psa|daemonsets):\s*(#.*)?$",
    re.MULTILINE)
# The NVIDIA Container Toolkit's config.toml; its packaging ships one per distribution
# (`config.toml.debian`, `config.toml.rpm-yum`).
_TOOLKIT_TABLE = lazy(
    r"^\s*\[\s*(?:nvidia-container-cli|nvidia-container-runtime|nvidia-ctk)\s*[\].]", re.MULTILINE)
_TOOLKIT_VARIANT = lazy(r"\.toml\.[a-z0-9_-]+$")
_CDI_VERSION = lazy(r"^[\"']?cdiVersion[\"']?\s*:", re.MULTILINE)
# Compose: a top-level `services` mapping whose entries run images
_COMPOSE_SERVICES = lazy(r"^services:[ \t]*(#.*)?$", re.MULTILINE)
_COMPOSE_SERVICE_KEY = lazy(
    r"^[ \t]+(image|build|deploy|runtime|gpus|extends|devices|container_name|environment|volumes):",
    re.MULTILINE)
_FIRST_ENTRY = lazy(r"\n(?:[ \t]*(?:#.*)?\n)*[ \t]+([^\s#-][^:\n]*):[ \t]*(#.*)?(\n|$)")
_COMPOSE_NAME = lazy(r"^(docker-compose.*|compose(\.[^/]+)?|.*\.compose)\.ya?ml$")
# GitHub Actions workflows and GitLab CI files, whose steps run shell commands
_WORKFLOW = lazy(r"^jobs:[ \t]*(#.*)?$", re.MULTILINE)
_SCRIPT_SUFFIXES = (".sh", ".bash", ".md", ".markdown", ".rst", ".mk")
_MAKEFILES = ("makefile", "gnumakefile")
_FIRST_INSTRUCTION = lazy(r"(?i)(FROM|ARG)\s")
_K8S_API = lazy(r"^\s*(?:-\s+)?[\"']?apiVersion[\"']?\s*:", re.MULTILINE)
_K8S_KIND = lazy(r"^\s*(?:-\s+)?[\"']?kind[\"']?\s*:", re.MULTILINE)


def strip_template_suffix(name: str) -> tuple[str, bool]:
    lower = name.lower()
    for suffix in TEMPLATE_SUFFIXES:
        if lower.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], True
    return name, False


def kind_by_name(name: str) -> str | None:
    base, _ = strip_template_suffix(name)
    lower = base.lower()
    if lower in ("dockerfile", "containerfile") or lower.startswith(("dockerfile.", "containerfile.")) \
            or lower.endswith(".dockerfile") or lower.startswith("containerfile"):
        return "dockerfile"
    if lower == "daemon.json" or (lower.endswith(".json") and "daemon" in lower):
        return "daemon-json"
    if _COMPOSE_NAME.match(lower):
        return "compose"
    return None


def may_need_content(name: str) -> bool:
    base, _ = strip_template_suffix(name)
    lower = base.lower()
    return lower.endswith(_CONTENT_SUFFIXES + _SCRIPT_SUFFIXES + (".part",)) or lower in _MAKEFILES \
        or "dockerfile" in lower or "containerfile" in lower or bool(_TOOLKIT_VARIANT.search(lower))


def may_be_script(path: Path) -> bool:
    """A file without an extension that starts with a shell shebang (read 64 bytes)."""
    if "." in path.name or not path.is_file():  # opening a FIFO would block
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
    except OSError:
        return False
    return head.startswith(b"#!") and b"sh" in head.split(b"\n", 1)[0]


def _looks_like_dockerfile(text: str) -> bool:
    """The first instruction is FROM or ARG (after comments and parser directives)."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        return bool(_FIRST_INSTRUCTION.match(stripped))
    return False


def kind_by_content(name: str, text: str) -> str | None:
    base, _ = strip_template_suffix(name)
    lower = base.lower()
    suffixed = re.search(r"(dockerfile|containerfile)\.[^.]+$", lower)  # `x_Dockerfile.cpp`
    if ("dockerfile" in lower or "containerfile" in lower) and (
            suffixed or not lower.endswith(_NOT_DOCKERFILE)):
        # names such as `Dockerfile-minimal` or `gpu_Dockerfile`: trust the content
        return "dockerfile" if _looks_like_dockerfile(text) else None
    if _TOOLKIT_VARIANT.search(lower):
        return "nvidia-toolkit" if _TOOLKIT_TABLE.search(text) else None
    if lower.endswith((".toml", ".part")):  # Talos merges CRI fragments named *.part
        if lower == "pyproject.toml":
            return None
        if _TOOLKIT_TABLE.search(text):
            return "nvidia-toolkit"
        if _CONTAINERD_TABLE.search(text) or _CONTAINERD_KEY.search(text):
            return "containerd"
        return None
    if lower.endswith(".json"):
        stripped = text.lstrip("\ufeff \t\r\n")
        if stripped.startswith("{") and '"cdiVersion"' in text:
            return "cdi"
        if stripped.startswith("{") and '"apiVersion"' in text and '"kind"' in text:
            return "kubernetes"
        keys = set(_DOCKERD_KEYS.findall(text)) if stripped.startswith("{") else set()
        # the runtime keys alone, or two other dockerd options, make a daemon.json
        if keys & {"runtimes", "default-runtime"} or len(keys) >= 2:
            return "daemon-json"
        return None
    if lower.endswith((".yaml", ".yml")):
        if _CDI_VERSION.search(text):
            return "cdi"
        if _K8S_API.search(text) and _K8S_KIND.search(text):
            return "kubernetes"
        if _OPERATOR_DRIVER.search(text) and len({m[1] for m in _OPERATOR_PARTS.finditer(text)}) >= 2:
            return "gpu-operator-values"
        if lower == ".gitlab-ci.yml" or _WORKFLOW.search(text):
            return "commands" if _commands_worth_reading(text) else None
        if _is_compose(text):
            return "compose"
        return None
    if lower.endswith(_SCRIPT_SUFFIXES) or lower in _MAKEFILES or "." not in lower:
        if "." not in lower and lower not in _MAKEFILES:
            from gpulint.parse.commands import is_shell_script

            if not is_shell_script(text):
                return None
        return "commands" if _commands_worth_reading(text) else None
    return None


def _is_compose(text: str) -> bool:
    """A top-level `services` mapping (not a list, as in GitLab CI) with service keys."""
    found = _COMPOSE_SERVICES.search(text)
    if found is None or _FIRST_ENTRY.match(text, found.end()) is None:
        return False
    return _COMPOSE_SERVICE_KEY.search(text, found.end()) is not None


def _commands_worth_reading(text: str) -> bool:
    from gpulint.parse.commands import worth_reading

    return worth_reading(text)


def walk(paths: list[str], patterns: tuple[str, ...], *, base: Path | None = None,
         gitignore: bool = True, force_exclude: bool = False) -> list[Path]:
    """Every file under `paths`, excluded and git-ignored ones left out, in a stable order.

    A file named on the command line is linted even when a pattern or .gitignore
    matches it, unless `force_exclude` (pre-commit names files one by one).
    """
    from gpulint.ignore import Excludes, GitIgnores

    excludes = Excludes(patterns, base or Path.cwd())
    ignores = GitIgnores() if gitignore else None

    def left_out(path: str, is_dir: bool, anchor: str, walked: bool = True) -> bool:
        return excludes.matches(path, is_dir, anchor, walked) or (
            ignores is not None and ignores.ignored(path, is_dir, walked))

    found: list[Path] = []
    seen: set[str] = set()
    for raw in paths:
        root = Path(raw)
        top = os.path.abspath(root)
        if root.is_file():
            if force_exclude and left_out(top, False, excludes.base, walked=False):
                continue
            candidates = [root]
        elif root.is_dir():
            candidates = []
            anchor = excludes.anchor(top)
            for dirpath, dirnames, filenames in os.walk(root):
                absdir = os.path.abspath(dirpath)
                dirnames[:] = sorted(d for d in dirnames
                                     if not left_out(os.path.join(absdir, d), True, anchor))
                candidates.extend(Path(dirpath, f) for f in sorted(filenames)
                                  if not left_out(os.path.join(absdir, f), False, anchor))
        else:
            raise FileNotFoundError(raw)
        for path in candidates:
            key = os.path.abspath(path)
            if key not in seen:
                seen.add(key)
                found.append(path)
    return found


def _rel(path: Path) -> str:
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive on Windows
        return path.as_posix()


def display_path(path: Path | str) -> str:
    return _rel(Path(path))
