"""The container toolkit's `toolkit.env` settings the GPU Operator passes on, judged for the node
layout they describe (GL489-GL492): chart values, a ClusterPolicy's `spec.toolkit.env`, a
HelmChart's `valuesContent` and `helm --set toolkit.env[i]...` lines all come here as `EnvEntry`s.
The facts and their sources are in `knowledge/toolkit_layout`."""

from __future__ import annotations

import re

from gpulint.formats.template import is_placeholder
from gpulint.knowledge import toolkit_layout as layout
from gpulint.model import Document, Node, Span
from gpulint.record import Frozen, freeze
from gpulint.registry import finding, related
from gpulint.spelling import closest_key

_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


class EnvEntry(Frozen):
    """One `{name, value}` of `toolkit.env`: the value None when absent or not a plain string
    (a template expression, a `valueFrom`); `at` is where a finding on the value points (the
    name where there is no value)."""

    __slots__ = ("name", "value", "name_at", "at")

    name: str
    value: str | None
    name_at: Span
    at: Span

    def __init__(self, name: str, value: str | None, name_at: Span, at: Span) -> None:
        freeze(self, name, value, name_at, at)


class Toolkit(Frozen):
    """The toolkit release the operator deploys: its version (None when not known) and words on
    where that comes from."""

    __slots__ = ("version", "words")

    version: tuple[int, int, int] | None
    words: str

    def __init__(self, tag: str | None, source: str) -> None:
        match = _VERSION.match(tag or "")
        freeze(self, tuple(map(int, match.groups())) if match else None, f"toolkit {tag} ({source})")


def _text(node: Node | None) -> str | None:
    if node is None or not node.is_scalar or node.value is None:
        return None
    text = node.str()
    return None if text is None or is_placeholder(text) or "$" in text else text.strip()


def env_entries(env: Node | None) -> list[EnvEntry]:
    """The entries of a `toolkit.env` list as written in YAML."""
    out = []
    for item in env.value if env is not None and env.is_seq else ():
        name = item.get("name") if item.is_map else None
        text = _text(name)
        if text is None:
            continue
        value = item.get("value")
        out.append(EnvEntry(text, _text(value), name.span, (value or name).span))
    return out


def _last(entries: list[EnvEntry], names: tuple[str, ...]) -> EnvEntry | None:
    """The entry the operator takes for a setting: the first name of `names` that is set (the
    last entry of that name, as a container's env keeps the last)."""
    for name in names:
        found = [e for e in entries if e.name == name]
        if found:
            return found[-1]
    return None


class Judgement(Frozen):
    """What GL489-GL492 say of one `toolkit.env`: `severity` "" for the rule's own, `about` the
    node path of the containerd file it concerns ("" none)."""

    __slots__ = ("code", "at", "message", "severity", "about")

    code: str
    at: Span
    message: str
    severity: str
    about: str

    def __init__(self, code: str, at: Span, message: str, severity: str = "", about: str = "") -> None:
        freeze(self, code, at, message, severity, about)


def judge_env(entries: list[EnvEntry], toolkit: Toolkit, rancher: str | None = None,
              missing_at: Span | None = None) -> list[Judgement]:
    """What GL489-GL492 say of one `toolkit.env`. `rancher`: words on why the nodes are known to
    run k3s/RKE2, if they are; `missing_at`: where a finding on a setting the env lacks points."""
    out: list[Judgement] = []
    config = _last(entries, layout.CONFIG_NAMES)
    socket = _last(entries, layout.SOCKET_NAMES)
    path = config.value if config is not None else None
    if path and layout.TEMPLATE.fullmatch(path):
        out.append(Judgement("GL489", config.at, _template_message(config), about=path))
    elif path and layout.GENERATED.fullmatch(path):
        out.append(Judgement("GL490", config.at, _generated_message(config), about=path))
    if path and (layout.TEMPLATE.fullmatch(path) or layout.GENERATED.fullmatch(path)):
        out.extend(_socket_finding(f"`{config.name}` names a k3s/RKE2 containerd config ({path})", socket,
                                   config.at, path))
    elif rancher and missing_at is not None and socket is None:
        # a socket set on purpose may be a containerd of the node's own that k3s uses through
        # --container-runtime-endpoint; one left at the default is the operator's guess
        out.extend(_socket_finding(f"the nodes run k3s/RKE2 ({rancher})", socket, missing_at, ""))
    for entry in entries:
        unread = _unread(entry, toolkit)
        if unread is not None:
            out.append(Judgement("GL492", entry.name_at, unread))
        elif entry.name in layout.CONFIG_SOURCE_NAMES and entry.value is not None:
            out.extend(_config_source(entry))
    return out


def _unread(entry: EnvEntry, toolkit: Toolkit) -> str | None:
    """Words on why the deployed toolkit ignores `entry`, if it does: a name of other releases
    only, or a near miss of a name some release reads."""
    data = layout.env_names()
    names, operator = data["names"], data["operator_reads"]
    if entry.name in operator:
        return None
    span = names.get(entry.name)
    if span is None:
        near = closest_key(entry.name, sorted(set(names) | set(operator)))
        return None if near is None else (
            f"no container toolkit release reads `{entry.name}` (did you mean `{near}`?): the toolkit ignores "
            f"the setting without a word")
    version = toolkit.version
    if version is None or version < layout.release_key(data["oldest"]):
        return None
    first, last = span
    if version < layout.release_key(first):
        when = f"read from toolkit {first}"
    elif last is not None and version > layout.release_key(last):
        when = f"last read by toolkit {last}"
    else:
        return None
    return (f"the GPU Operator deploys {toolkit.words}, which does not read `{entry.name}` ({when}): the "
            f"setting is ignored without a word")


def _template_message(config: EnvEntry) -> str:
    return (f"`{config.name}` names a k3s/RKE2 containerd template ({config.value}), which the container "
            f"toolkit reads and writes as plain TOML: a template with `{{{{ ... }}}}` (the `{{{{ template "
            f"\"base\" . }}}}` k3s documents) stops it with `unable to load config: ... keys cannot contain "
            f"{{ character`, and a template that does not exist is written holding only what the toolkit adds, "
            f"which k3s/RKE2 render as the node's whole containerd config at the next start (no CNI); leave "
            f"`CONTAINERD_CONFIG` unset and set only `CONTAINERD_SOCKET={layout.K3S_SOCKET}`: k3s and RKE2 "
            f"add the runtime the toolkit installs to the config they generate")


def _generated_message(config: EnvEntry) -> str:
    return (f"`{config.name}` names the containerd config k3s/RKE2 generate ({config.value}) and rewrite at "
            f"every start, and the toolkit's restart of containerd restarts them: what the toolkit writes there "
            f"(the default runtime of `CONTAINERD_SET_AS_DEFAULT`, the `imports` of its drop-in) is lost; leave "
            f"`CONTAINERD_CONFIG` unset (k3s and RKE2 add the NVIDIA runtimes themselves) and make `nvidia` the "
            f"default with `default-runtime: nvidia` in the k3s/RKE2 config.yaml")


def _socket_finding(why: str, socket: EnvEntry | None, missing_at: Span, about: str):
    value = socket.value if socket is not None else None
    if socket is not None and value is None:
        return  # a socket gpulint cannot read
    if value is not None and layout.is_rancher_socket(value):
        return
    said = f"`CONTAINERD_SOCKET={value}`" if socket is not None else \
        f"`CONTAINERD_SOCKET` unset, the operator's default {layout.DEFAULT_SOCKET}"
    yield Judgement("GL491", socket.at if socket is not None else missing_at,
           f"{why} but the toolkit restarts the containerd at another socket ({said}): k3s and RKE2 serve "
           f"theirs at {layout.K3S_SOCKET}, so the toolkit signals another daemon or none (`unable to restart "
           f"containerd: unable to dial`) and the node's containerd never loads the NVIDIA runtime; set "
           f"`CONTAINERD_SOCKET={layout.K3S_SOCKET}`", about=about)


def _config_source(entry: EnvEntry):
    offset = 0
    for part in entry.value.split(","):
        source = part.split("=", 1)[0].strip()
        if source and source not in layout.CONFIG_SOURCES:
            word = part.strip()
            near = closest_key(source, layout.CONFIG_SOURCES)
            meant = f" (did you mean `{near}`?)" if near else ""
            yield Judgement("GL492", _within(entry.at, entry.value, offset + part.index(word), len(word)),
                            f"`{entry.name}` takes `command`, `file` and `file=<path>`{meant}: the toolkit stops with "
                            f"`unable to load config: unsupported config source \"{word}\"` and configures no "
                            f"NVIDIA runtime", "error")
            return
        offset += len(part) + 1


def _within(at: Span, value: str, start: int, length: int) -> Span:
    """The span of `value[start:start + length]` where `at` holds `value` on one line, bare or in
    quotes; `at` itself where it holds it otherwise (escapes, a block, a --set word)."""
    width = at.end_column - at.column + 1  # a Span's end is its last character
    if at.line != at.end_line or width not in (len(value), len(value) + 2):
        return at
    column = at.column + (width - len(value)) // 2 + start
    return Span(at.line, column, at.line, column + length - 1)


def values_toolkit(values: Node | None, judged) -> Toolkit:
    """The toolkit chart values (None: the chart's own) deploy: `toolkit.version`, else the
    default of the chart of the judged release (a `gpu_operator.Judged`)."""
    stated = _text(values.get("toolkit", "version")) if values is not None else None
    if stated:
        return Toolkit(stated, "`toolkit.version`")
    default = judged.data["values"].get("toolkit_version")
    return Toolkit(default, f"the chart's default of {judged.words()}")


def configures_runtime(root: Node | None) -> bool:
    """Whether chart values or a ClusterPolicy's spec (`root`) have the toolkit configure the
    node's containerd: not when the toolkit is disabled, nor in NRI plugin mode (the toolkit
    then leaves the runtime config and socket alone)."""
    if root is None or not root.is_map:
        return True
    return _text(root.get("toolkit", "enabled")) != "false" and _text(root.get("cdi", "nriPluginEnabled")) != "true"


def missing_at(root: Node | None) -> Span | None:
    """Where a finding on a setting `toolkit.env` lacks points: the env list, else the `toolkit` key."""
    toolkit = root.get("toolkit") if root is not None and root.is_map else None
    if toolkit is None:
        return None
    env = toolkit.get("env")
    return env.anchor if env is not None else toolkit.anchor


def judge_values_env(values: Node, judged, rancher: str | None = None) -> list[Judgement]:
    """GL489-GL492 on the `toolkit.env` of chart values (a file, or a HelmChart's valuesContent)."""
    if not values.is_map or not configures_runtime(values):
        return []
    return judge_env(env_entries(values.get("toolkit", "env")), values_toolkit(values, judged), rancher,
                     missing_at(values))


_RANCHER_PATH = re.compile(r"(?:^|/)agent/etc/containerd/")


def _rancher_file(ctx) -> Document | None:
    """A linted containerd config or template under k3s/RKE2's `<data-dir>/agent/etc/containerd/`."""
    for doc in ctx.of_kind("containerd"):
        if _RANCHER_PATH.search(doc.path.replace("\\", "/")):
            return doc
    return None


def rancher_nodes(ctx) -> str | None:
    """Words on why the linted files show k3s/RKE2 nodes, if they do."""
    found = _rancher_file(ctx)
    return None if found is None else f"the linted {found.path}"


def _node_file(ctx, path: str) -> Document | None:
    """The linted containerd file at the node path `path` (a tree of a node's files, `path`
    under any folder)."""
    for doc in ctx.of_kind("containerd"):
        if ("/" + doc.path.replace("\\", "/")).endswith(path):
            return doc
    return None


def emit(doc: Document, ctx, judgements: list[Judgement]):
    """The findings of `judgements` on `doc`, each with the linted containerd file it concerns."""
    for judgement in judgements:
        about = _node_file(ctx, judgement.about) if judgement.about else \
            _rancher_file(ctx) if judgement.code == "GL491" else None
        words = "the k3s/RKE2 containerd file it names"
        if about is not None and judgement.code == "GL489" and "{{" in about.text:
            words = "the linted template: its `{{ ... }}` is no TOML"
        elif about is not None and not judgement.about:
            words = "a k3s/RKE2 containerd file of the nodes"
        yield finding(doc, judgement.code, judgement.at, judgement.message, severity=judgement.severity or None,
                      related=[related(about, Span.point(1, 1), words)] if about is not None else [])


_SET_KEY = re.compile(r"toolkit\.env\[(\d+)\]\.(name|value)")


def set_entries(pairs) -> list[EnvEntry]:
    """The `toolkit.env` entries Helm's `--set` keys make: `pairs` are (key, value, where the
    value is) of `toolkit.env[i].name=...` and `toolkit.env[i].value=...` among others."""
    names: dict[int, tuple[str, Span]] = {}
    values: dict[int, tuple[str, Span]] = {}
    for key, value, at in pairs:
        match = _SET_KEY.fullmatch(key)
        if match is not None and value is not None:
            (names if match[2] == "name" else values)[int(match[1])] = (value, at)
    out = []
    for index in sorted(names):
        name, name_at = names[index]
        value, at = values.get(index, (None, name_at))
        if not is_placeholder(name) and "$" not in name:
            plain = None if value is None or is_placeholder(value) or "$" in value else value.strip()
            out.append(EnvEntry(name.strip(), plain, name_at, at))
    return out
