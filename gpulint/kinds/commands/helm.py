"""`helm install|upgrade ... gpu-operator --set k=v` lines: each `--set` key judged against
the gpu-operator chart of the release `--version` names (GL483), a `--set` env value
that Helm types as a boolean or number where the ClusterPolicy takes a string (GL484), and the
container toolkit's node layout settings among `toolkit.env[i]` (GL489-GL492). The NVIDIA DRA
driver chart's lines are read too, for the checks that join the two charts; device plugin chart
lines whose `config.default` names a config the chart never deploys (GL458) or that leave out the
NVIDIA runtime class (GL703); gpu-operator lines whose `toolkit.env` and `devicePlugin.env`
settings disagree on how GPUs reach containers (GL814).

Helm's `--set` types its values (strvals): `true`/`false` become booleans and integers
numbers; `--set-string` keeps every value a string."""

from __future__ import annotations

import re

from gpulint.common.device_lists import CDI_DEFAULT_FROM, Env, mismatch
from gpulint.common.operator_chart import (
    OPERATOR_CHART,
    gpu_cluster_refusals,
    judge_setting,
    refusal_words,
)
from gpulint.common.runtimes import plugin_runtime_gap
from gpulint.common.toolkit_env import (
    Toolkit,
    emit,
    judge_env,
    rancher_nodes,
    set_entries,
    values_toolkit,
)
from gpulint.formats.shell import Word, split_commands
from gpulint.formats.template import is_placeholder
from gpulint.knowledge import gpu_operator
from gpulint.model import Document
from gpulint.record import Frozen, freeze
from gpulint.registry import Context, check, finding

CACHE = "commands.helm"
# chart name -> how a chart reference (or release name) of it is written; the DRA driver's
# first, as it is often installed into the `gpu-operator` namespace
CHARTS = {
    # `nvidia-dra-driver-gpu` until v25.12, `dra-driver-nvidia-gpu` from v0.4
    "dra-driver": re.compile(r"(^|/)(nvidia-dra-driver-gpu|dra-driver-nvidia-gpu)(-v?[\d.]+\.tgz)?$"),
    "gpu-operator": OPERATOR_CHART,
    "nvidia-device-plugin": re.compile(r"(^|/)nvidia-device-plugin(-v?[\d.]+\.tgz)?$"),
}
_ENV = re.compile(r"(toolkit|devicePlugin)\.env\[(\d+)\]\.(name|value)")


class Setting(Frozen):
    __slots__ = ("key", "value", "start", "typed", "word")

    key: str
    value: str
    start: int  # offsets of `key=value` in the file
    typed: bool  # `--set` (True) or `--set-string`
    # offsets of the word written in the file: where a key is shown when a CI variable put
    # into the word moved it from where it is written
    word: tuple[int, int]

    def __init__(self, key: str, value: str, start: int, typed: bool, word: tuple[int, int]) -> None:
        freeze(self, key, value, start, typed, word)


class HelmCommand(Frozen):
    """chart: a name of CHARTS; chart_word: where the chart is named; values_files: whether
    `-f`/`--values` adds values this line does not show."""

    __slots__ = ("chart", "chart_word", "version", "version_word", "settings", "values_files")

    chart: str
    chart_word: Word
    version: str | None
    version_word: Word | None
    settings: tuple[Setting, ...]
    values_files: bool

    def __init__(self, chart: str, chart_word: Word, version: str | None, version_word: Word | None,
                 settings: tuple[Setting, ...], values_files: bool) -> None:
        freeze(self, chart, chart_word, version, version_word, settings, values_files)

    def setting(self, key: str) -> Setting | None:
        """The last `--set` of `key` (the one Helm keeps)."""
        return next((s for s in reversed(self.settings) if s.key == key), None)


def helm_commands(text: str, regions) -> list[HelmCommand]:
    """The `helm install|upgrade` lines of the gpu-operator and DRA driver charts in the
    shell regions."""
    return helm_lines(words for start, end, newline_ends in regions
                      for words in split_commands(text, start, end, newline_ends))


def helm_lines(commands) -> list[HelmCommand]:
    """The `helm install|upgrade` lines of the gpu-operator and DRA driver charts among the
    commands' words; a line read once per CI matrix combination with the same words counts once."""
    out: dict[tuple, HelmCommand] = {}
    for words in commands:
        command = _helm(words)
        if command is not None:
            out.setdefault((command.chart, command.version, command.settings), command)
    return list(out.values())


def _helm(words: list[Word]) -> HelmCommand | None:
    texts = [w.text for w in words]
    if "helm" not in texts:
        return None
    i = texts.index("helm")
    if i + 1 >= len(words) or texts[i + 1] not in ("install", "upgrade"):
        return None
    chart, chart_word = next(((name, w) for name, pattern in CHARTS.items() for w in words[i + 2:]
                              if pattern.search(w.text)), (None, None))
    if chart is None:
        return None
    settings, version, version_word, values_files = [], None, None, False
    j = i + 2
    while j < len(words):
        word, text = words[j], texts[j]
        flag, equals, inline = text.partition("=")
        values_files = values_files or flag in ("-f", "--values") or text.startswith("-f") and len(text) > 2
        if flag in ("--set", "--set-string", "--set-file", "--version"):
            value_word = None if equals else (words[j + 1] if j + 1 < len(words) else None)
            value = inline if value_word is None else value_word.text
            offset = word.start + len(flag) + 1 if value_word is None else value_word.start
            j += 1 if value_word is None else 2
            if flag == "--version":
                version, version_word = value, value_word or word
                continue
            written = value_word or word
            if written.quoted:
                offset += 1  # past the opening quote (a quote inside the word is rarer)
            for at, part in _pairs(value):
                key, _, val = part.partition("=")
                settings.append(Setting(key, val, offset + at, flag == "--set", (written.start, written.end)))
            continue
        j += 1
    return HelmCommand(chart, chart_word, version, version_word, tuple(settings), values_files)


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


@check("GL483", "GL484", kinds=("commands",))
def helm_settings(doc: Document, ctx: Context):
    for command in doc.cache.get(CACHE, ()):
        if command.chart != "gpu-operator":
            continue
        where = _version_words(doc.text, command)
        judged = gpu_operator.judged_release(ctx.settings, command.version, where)
        for setting in command.settings:
            said = judge_setting(setting.key, setting.value, setting.typed, judged)
            if said is not None:
                code, _, message = said
                end = setting.start + len(setting.key)
                key_span = doc.index.span(setting.start, end) if doc.text[setting.start:end] == setting.key \
                    else doc.index.span(*setting.word)
                yield finding(doc, code, key_span, message)


@check("GL489", "GL490", "GL491", "GL492", kinds=("commands",))
def helm_toolkit_env(doc: Document, ctx: Context):
    for command in doc.cache.get(CACHE, ()):
        if command.chart != "gpu-operator":
            continue
        pairs = []
        for setting in command.settings:
            start = setting.start + len(setting.key) + 1
            pairs.append((setting.key, setting.value, doc.index.span(start, start + len(setting.value))))
        entries = set_entries(pairs)
        if not entries:
            continue
        judged = gpu_operator.judged_release(ctx.settings, command.version,
                                             f"`--version {command.version}` of the helm command")
        stated = [s.value for s in command.settings if s.key == "toolkit.version"]
        deployed = Toolkit(stated[-1], "`--set toolkit.version`") if stated else values_toolkit(None, judged)
        # a line that sets no toolkit.env has nothing to point a missing socket at
        yield from emit(doc, ctx, judge_env(entries, deployed, rancher_nodes(ctx), entries[0].name_at))


@check("GL495", kinds=("commands",))
def helm_gpu_cluster_refused(doc: Document, ctx: Context):
    for command in doc.cache.get(CACHE, ()):
        if command.chart != "gpu-operator" or command.values_files:
            continue  # values files may set what the line leaves to the defaults

        def written(key: str, command=command):
            setting = command.setting(key)
            return None if setting is None else {"true": True, "false": False}.get(setting.value)

        judged = gpu_operator.judged_release(ctx.settings, command.version, f"`--version {command.version}`")
        for message, keys in gpu_cluster_refusals(written, judged):
            switch = command.setting("gpuCluster.deployCR")
            yield finding(doc, "GL495", doc.index.span(switch.start, switch.start + len(switch.key)),
                          refusal_words(message, keys, "`--set gpuCluster.deployCR=true`"))


def _version_words(text: str, command: HelmCommand) -> str:
    """How the message names the release: `--version` as written, and the value a CI runner
    put in where it is a variable."""
    where = f"`--version {command.version}` of the helm command"
    word = command.version_word
    if word is None or command.version is None:
        return where
    written = text[word.start:word.end]
    written = written.split("=", 1)[1] if written.startswith("--version=") else written
    if written.strip("\"'") == command.version:
        return where
    return f"`--version {written}` of the helm command, `{command.version}` as the CI job runs it"


@check("GL458", kinds=("commands",))
def plugin_default_without_configs(doc: Document, ctx: Context):
    """The device plugin chart deploys its config manager, and reads `config.default`, only
    with `config.map` (configs it writes into a ConfigMap) or `config.name` (a ConfigMap of
    the user's); with neither, the default names nothing and the plugin runs without a config
    (templates/_helpers.tpl: nvidia-device-plugin.configMapName is empty)."""
    for command in doc.cache.get(CACHE, ()):
        if command.chart != "nvidia-device-plugin" or command.values_files:
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
        if command.chart != "nvidia-device-plugin" or command.values_files \
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
        if command.chart != "gpu-operator" or command.values_files:
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
