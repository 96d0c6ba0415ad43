"""The file kinds gpulint reads, registered here and nowhere else.

Each kind is a folder: how a file of it is recognised (`recognise.py`), parsed
(`parse.py`), what it means (`facts.py`) and its rules (`checks.py`). A kind imports
the core, `formats/`, `knowledge/` and `common/`, never another kind: facts that join
kinds live in `crossfile/` and reach a kind's checks through `ctx.fact(...)`.
"""

from __future__ import annotations

from functools import lru_cache

from gpulint.formats.template import strip_template_suffix
from gpulint.kinds import (
    commands,
    compose,
    containerd,
    daemon_json,
    devcontainer,
    device_plugin,
    dockerfile,
    dra_values,
    helmfile,
    kubernetes,
    mig_config,
    node,
    operator_values,
    systemd,
    toolkit,
)
from gpulint.registry import Kind, resolve

# in the order `--kind` lists them
KINDS: tuple[Kind, ...] = (containerd.KIND, daemon_json.KIND, dockerfile.KIND, kubernetes.KIND,
                           operator_values.KIND, device_plugin.KIND, mig_config.KIND, dra_values.KIND, helmfile.KIND,
                           toolkit.TOOLKIT,
                           toolkit.CDI, compose.KIND,
                           commands.KIND, devcontainer.KIND, systemd.KIND)
NODE = node.KIND  # `gpulint doctor`'s live node
NAMES = tuple(k.name for k in KINDS)
BY_NAME = {k.name: k for k in KINDS + (NODE,)}
_ASKED = sorted(KINDS, key=lambda k: k.precedence)
# names never read for their content, whatever it holds
_NOT_BY_CONTENT = ("pyproject.toml",)


def _plain(name: str) -> str:
    return strip_template_suffix(name)[0].lower()


# Telling a file's kind asks its name two or three times (whether the file can wait to be
# read, then reading it): the answers by name alone are kept for the last names asked.
@lru_cache(maxsize=256)
def kind_by_name(name: str, folder: str = "") -> str | None:
    """The kind the file's name, or its name in the folder holding it, makes it."""
    lower = _plain(name)
    found = next((k.name for k in _ASKED if k.by_name is not None and k.by_name(lower)), None)
    if found is None and folder:
        found = next((k.name for k in _ASKED if k.by_folder is not None and k.by_folder(folder.lower(), lower)),
                     None)
    return found


@lru_cache(maxsize=256)
def may_need_content(name: str) -> bool:
    lower = _plain(name)
    if "." not in lower and lower != name.lower():
        return True  # a template named without the extension of what it renders (`kubeadm.template`)
    return any(k.wants is not None and k.wants(lower) for k in _ASKED)


def kind_by_content(name: str, text: str) -> str | None:
    lower = _plain(name)
    if lower in _NOT_BY_CONTENT:
        return None
    for kind in _ASKED:
        verdict = kind.by_content(lower, text) if kind.by_content is not None else None
        if verdict is not None:
            return kind.name if verdict else None
    return None


def classify(name: str, text: str | None, folder: str = "") -> str | None:
    kind = kind_by_name(name, folder)
    if kind is None and text is not None and (may_need_content(name) or "." not in name):
        kind = kind_by_content(name, text)
    return kind


# Readers that refuse a file gpulint decodes from UTF-16 or UTF-32 (it reads both when a byte
# order mark says so). kubectl reads UTF-16 manifests with a BOM (kubernetes/kubernetes#39008)
# and dockerd 23.0 and later a UTF-16 daemon.json (moby/moby#44790); YAML readers (go-yaml)
# detect the BOM; a TOML file must be UTF-8, and `docker build` skips a UTF-8 BOM only.
# Neither kubectl nor dockerd reads UTF-32. Scripts and documentation (`commands`) are judged
# for the command lines they hold, whatever their encoding.
_UTF8_ONLY = {
    "dockerfile": "`docker build` reads a Dockerfile as UTF-8 only and fails on its first line",
    "containerd": "containerd refuses it: a TOML file must be UTF-8",
    "nvidia-toolkit": "the NVIDIA Container Toolkit refuses it: a TOML file must be UTF-8",
    "systemd": "systemd reads unit files as UTF-8 text only",
}


def encoding_refused(kind: str, encoding: str) -> str | None:
    """Why the reader of `kind` refuses a file in `encoding` (utf-16-le ...), or None."""
    if encoding == "utf-8" or kind == "commands":
        return None
    if kind in _UTF8_ONLY:
        return _UTF8_ONLY[kind]
    if encoding.startswith("utf-32"):
        return "kubectl, dockerd and YAML readers read UTF-8 and UTF-16 with a byte order mark, not UTF-32"
    return None


def families(names) -> list[str]:
    """The check modules of the kinds named (each once, in registry order)."""
    return list(dict.fromkeys(m for k in KINDS + (NODE,) if k.name in names for m in k.families))


def parser(name: str):
    """The parser of the kind named: (text, document) -> tree."""
    return resolve(BY_NAME[name].parse)


def parse_text(name: str, text: str, doc):
    """The tree of `text` read as the kind named, by the kind's own parser."""
    return parser(name)(text, doc)
