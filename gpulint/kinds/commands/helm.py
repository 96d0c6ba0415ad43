"""`helm install|upgrade ... gpu-operator --set k=v` lines: each `--set` key judged against
the gpu-operator chart of the release `--version` names (GL483), and a `--set` env value
that Helm types as a boolean or number where the ClusterPolicy takes a string (GL484);
`helm install|upgrade ... nvidia-device-plugin` lines whose `config.default` names a config
the chart never deploys (GL458); gpu-operator lines whose `toolkit.env` and `devicePlugin.env`
settings disagree on how GPUs reach containers (GL814).

Helm's `--set` types its values (strvals): `true`/`false` become booleans and integers
numbers; `--set-string` keeps every value a string."""

from __future__ import annotations

import re

from gpulint.common.device_lists import CDI_DEFAULT_FROM, Env, mismatch
from gpulint.common.operator_chart import first_unread, known_keys, unknown_key_message
from gpulint.common.runtimes import plugin_runtime_gap
from gpulint.formats.shell import Word, split_commands
from gpulint.formats.template import is_placeholder
from gpulint.knowledge import gpu_operator
from gpulint.model import Document
from gpulint.record import Frozen, freeze
from gpulint.registry import Context, check, finding
from gpulint.spelling import closest_key

CACHE = "commands.helm"
_INDEX = re.compile(r"\[(\d+)\]")
_DOT = re.compile(r"(?<!\\)\.")  # `\.` is a dot in a key
_INTEGER = re.compile(r"[-+]?(0|[1-9]\d*)")
_CHART = re.compile(r"(^|/)gpu-operator(-v?[\d.]+\.tgz)?$")
_ENV = re.compile(r"(toolkit|devicePlugin)\.env\[(\d+)\]\.(name|value)")
_PLUGIN_CHART = re.compile(r"(^|/)nvidia-device-plugin(-v?[\d.]+\.tgz)?$")
# flags that give the chart values gpulint does not see
_VALUE_FILES = ("-f", "--values")


class Setting(Frozen):
    __slots__ = ("key", "value", "start", "typed")

    key: str
    value: str
    start: int  # offsets of `key=value` in the file
    typed: bool  # `--set` (True) or `--set-string`

    def __init__(self, key: str, value: str, start: int, typed: bool) -> None:
        freeze(self, key, value, start, typed)


class HelmCommand(Frozen):
    __slots__ = ("chart", "chart_word", "version", "version_word", "settings", "value_files")

    chart: str  # "gpu-operator" | "nvidia-device-plugin"
    chart_word: Word
    version: str | None
    version_word: Word | None
    settings: tuple[Setting, ...]  # `--set`, `--set-string` and `--set-file` pairs
    value_files: bool  # `-f`/`--values` give it values of files

    def __init__(self, chart: str, chart_word: Word, version: str | None, version_word: Word | None,
                 settings: tuple[Setting, ...], value_files: bool) -> None:
        freeze(self, chart, chart_word, version, version_word, settings, value_files)


def helm_commands(text: str, regions) -> list[HelmCommand]:
    """The `helm install|upgrade` lines of the gpu-operator and device plugin charts in the
    shell regions."""
    out = []
    for start, end, newline_ends in regions:
        for words in split_commands(text, start, end, newline_ends):
            command = _helm(words)
            if command is not None:
                out.append(command)
    return out


def _helm(words: list[Word]) -> HelmCommand | None:
    texts = [w.text for w in words]
    if "helm" not in texts:
        return None
    i = texts.index("helm")
    if i + 1 >= len(words) or texts[i + 1] not in ("install", "upgrade"):
        return None
    chart_word = next((w for w in words[i + 2:] if _CHART.search(w.text)), None)
    chart = "gpu-operator"
    if chart_word is None:
        chart_word = next((w for w in words[i + 2:] if _PLUGIN_CHART.search(w.text)), None)
        chart = "nvidia-device-plugin"
    if chart_word is None:
        return None
    settings, version, version_word, value_files = [], None, None, False
    j = i + 2
    while j < len(words):
        word, text = words[j], texts[j]
        flag, equals, inline = text.partition("=")
        value_files = value_files or flag in _VALUE_FILES or text.startswith("-f") and len(text) > 2
        if flag in ("--set", "--set-string", "--set-file", "--version"):
            value_word = None if equals else (words[j + 1] if j + 1 < len(words) else None)
            value = inline if value_word is None else value_word.text
            offset = word.start + len(flag) + 1 if value_word is None else value_word.start
            j += 1 if value_word is None else 2
            if flag == "--version":
                version, version_word = value, value_word or word
                continue
            if (value_word or word).quoted:
                offset += 1  # past the opening quote (a quote inside the word is rarer)
            for at, part in _pairs(value):
                key, _, val = part.partition("=")
                settings.append(Setting(key, val, offset + at, flag == "--set"))
            continue
        j += 1
    return HelmCommand(chart, chart_word, version, version_word, tuple(settings), value_files)


def _pairs(value: str) -> list[tuple[int, str]]:
    """`a=1,b=2` -> [(0, "a=1"), (4, "b=2")]: each pair with where it starts (a `{x,y}` list
    and `\\,` stay in their value)."""
    out, depth, start, escaped = [], 0, 0, False
    for i, char in enumerate(value):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            out.append((start, value[start:i]))
            start = i + 1
    out.append((start, value[start:]))
    return [(at, part) for at, part in out if "=" in part]


def _typed(value: str) -> str | None:
    """The JSON type Helm's `--set` gives a value other than a string, if any."""
    if value in ("true", "false"):
        return "boolean"
    return "integer" if _INTEGER.fullmatch(value) else None


@check("GL483", "GL484", kinds=("commands",))
def helm_settings(doc: Document, ctx: Context):
    for command in doc.cache.get(CACHE, ()):
        if command.chart != "gpu-operator":
            continue
        where = f"`--version {command.version}` of the helm command"
        judged = gpu_operator.judged_release(ctx.settings, command.version, where)
        data = gpu_operator.release_data(judged.tag)
        for setting in command.settings:
            key_span = doc.index.span(setting.start, setting.start + len(setting.key))
            steps = tuple(_DOT.split(setting.key))
            path = tuple(_INDEX.sub("", step) for step in steps)
            if not all(path) or path[0] == "global":
                continue
            depth = first_unread(data["values"], path)
            if depth is not None:
                near = closest_key(path[depth], known_keys(data["values"], path[:depth]) or ())
                yield finding(doc, "GL483", key_span,
                              unknown_key_message(".".join(path[:depth + 1]), judged, near))
                continue
            message = _refused(data, steps, setting)
            if message:
                yield finding(doc, "GL484", key_span,
                              f"`--set` makes `{setting.value}` a {_typed(setting.value)} and the chart copies it "
                              f"into the ClusterPolicy, where the API server refuses it (`{message}`); "
                              f"`--set-string` keeps it a string; judged by {judged.words()}")


def _refused(data: dict, steps: tuple, setting: Setting) -> str | None:
    """The API server's words for a typed `--set` value in a value the chart copies into
    the ClusterPolicy whose field there takes a string."""
    got = _typed(setting.value) if setting.typed else None
    if got is None:
        return None
    path: list = []
    for step in steps:
        name, *indexes = _INDEX.split(step)
        path.append(name)
        path.extend(int(i) for i in indexes if i)
    names = [p for p in path if isinstance(p, str)]
    if not any(".".join(names[:n]) in data["values"]["policy"] for n in range(1, len(names) + 1)):
        return None
    field = gpu_operator.schema_at(data.get("ClusterPolicy"), ("spec", *path))
    if not field or field.get("type") != "string":
        return None
    shown = "spec" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return f'{shown}: Invalid value: "{got}": {shown} in body must be of type string: "{got}"'


@check("GL458", kinds=("commands",))
def plugin_default_without_configs(doc: Document, ctx: Context):
    """The device plugin chart deploys its config manager, and reads `config.default`, only
    with `config.map` (configs it writes into a ConfigMap) or `config.name` (a ConfigMap of
    the user's); with neither, the default names nothing and the plugin runs without a config
    (templates/_helpers.tpl: nvidia-device-plugin.configMapName is empty)."""
    for command in doc.cache.get(CACHE, ()):
        if command.chart != "nvidia-device-plugin" or command.value_files:
            continue
        keys = {setting.key for setting in command.settings}
        default = next((s for s in command.settings if s.key == "config.default" and s.value), None)
        if default is None or "config.name" in keys or any(k.startswith("config.map.") for k in keys):
            continue
        yield finding(doc, "GL458", doc.index.span(default.start, default.start + len(default.key) + 1 + len(default.value)),
                      f"`config.default={default.value}` without `config.map` or `config.name`: the device "
                      f"plugin chart deploys no config at all then, so the default names nothing and the "
                      f"plugin runs with its built-in settings (no time-slicing or MPS); a ConfigMap created "
                      f"beforehand is named with `config.name={default.value}`, and `config.default` picks "
                      f"one of its keys")


@check("GL703", kinds=("commands",))
def plugin_chart_without_nvidia_runtime(doc: Document, ctx: Context):
    """The device plugin chart sets the DaemonSet's `runtimeClassName` only from its value of
    that name; on nodes whose containerd runs pods with runc by default the plugin then gets
    no driver libraries (GL703 of a DaemonSet, for the chart's)."""
    gap = plugin_runtime_gap(ctx.fact("node-configs"))
    if gap is None:
        return
    for command in doc.cache.get(CACHE, ()):
        if command.chart != "nvidia-device-plugin" or command.value_files \
                or any(s.key == "runtimeClassName" for s in command.settings):
            continue
        word = command.chart_word
        yield finding(doc, "GL703", doc.index.span(word.start, word.end),
                      gap.message("the device plugin chart is installed without `runtimeClassName`",
                                  f"add `--set runtimeClassName={gap.handler}`"), related=gap.where())



def _envs(command: HelmCommand) -> dict[str, Env]:
    """`--set toolkit.env[i].name=N,toolkit.env[i].value=V` (and devicePlugin's) as the two
    components' env maps, each value with its setting."""
    entries: dict[tuple[str, str], dict[str, Setting]] = {}
    for setting in command.settings:
        match = _ENV.fullmatch(setting.key)
        if match:
            entries.setdefault((match[1], match[2]), {})[match[3]] = setting
    envs: dict[str, Env] = {"toolkit": {}, "devicePlugin": {}}
    for (component, _), parts in entries.items():
        name, value = parts.get("name"), parts.get("value")
        if name is not None and value is not None and name.value.strip():
            envs[component][name.value.strip()] = (value.value.strip().lower(), value)
    return envs


@check("GL814", kinds=("commands",))
def operator_device_list_mismatch(doc: Document, ctx: Context):
    for command in doc.cache.get(CACHE, ()):
        if command.chart != "gpu-operator" or command.value_files:
            continue
        keys = {setting.key: setting for setting in command.settings}
        if "devicePlugin.config.name" in keys or any(is_placeholder(s.value) for s in command.settings):
            continue
        if any(keys[k].value.strip().lower() == "false" for k in ("toolkit.enabled", "devicePlugin.enabled")
               if k in keys):
            continue  # a toolkit or plugin the operator does not deploy does not read this env
        cdi = keys.get("cdi.enabled")
        if cdi is not None:
            if cdi.value.strip().lower() != "false":
                continue
        elif gpu_operator.judged_release(ctx.settings, command.version,
                                         f"`--version {command.version}` of the helm command"
                                         ).at_least(*CDI_DEFAULT_FROM):
            continue
        envs = _envs(command)
        problem = mismatch(envs["toolkit"], envs["devicePlugin"],
                           "with `--set devicePlugin.env[N].name=DEVICE_LIST_STRATEGY` and "
                           "`devicePlugin.env[N].value=volume-mounts`")
        if problem is not None:
            setting = problem[0]
            yield finding(doc, "GL814", doc.index.span(setting.start, setting.start + len(setting.key) + 1
                                                       + len(setting.value)), problem[1])
