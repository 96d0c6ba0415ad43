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
from gpulint.formats.shell import Word
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


# where the file installs k3s or RKE2 itself (their install scripts, or the variables they read)
RANCHER = "commands.rancher"
_INSTALLER = re.compile(r"https?://get\.(k3s|rke2)\.io/?")
_INSTALL_ENV = re.compile(r"INSTALL_(K3S|RKE2)_[A-Z_]+=")
# k3s/RKE2 told to use Docker or a containerd of the node's own: their socket is not theirs then
_OWN_RUNTIME = ("--docker", "container-runtime-endpoint")


def rancher_install(commands) -> tuple[str, Word] | None:
    """("k3s" or "rke2", the word that says so) where the commands install k3s or RKE2 with the
    containerd they bring (`curl -sfL https://get.k3s.io | sh -`, `INSTALL_RKE2_VERSION=...`);
    None where they do not, or tell it to use another runtime."""
    found = None
    for words in commands:
        for word in words:
            if any(own in word.text for own in _OWN_RUNTIME):
                return None
            match = _INSTALLER.fullmatch(word.text) or _INSTALL_ENV.match(word.text)
            if match is not None and found is None:
                found = (match[1].lower(), word)
    return found


def helm_lines(commands) -> list[HelmCommand]:
    """The `helm install|upgrade` lines of the gpu-operator and DRA driver charts among the
    commands' words; a line read once per CI matrix combination with the same words counts once
    (two lines alike are two)."""
    out: dict[tuple, HelmCommand] = {}
    for words in commands:
        command = _helm(words)
        if command is not None:
            out.setdefault((command.chart, command.chart_word.start, command.version, command.settings), command)
    return list(out.values())


# `helm install|upgrade` flags that take no value (helm v3 and v4 `install --help`, `upgrade
# --help`; `--dry-run`, `--wait` of v4 and `--server-side` take one only as `--flag=value`):
# every other flag takes the next word unless written `--flag=value`
_BOOLS = frozenset({
    "--atomic", "--create-namespace", "--dependency-update", "--devel", "--disable-openapi-validation",
    "--dry-run", "--enable-dns", "--force", "--force-replace", "--force-conflicts", "-g", "--generate-name",
    "--hide-notes", "--hide-secret", "--insecure-skip-tls-verify", "--no-hooks", "--pass-credentials",
    "--plain-http", "--render-subchart-notes", "--replace", "--skip-crds", "--skip-schema-validation",
    "--take-ownership", "--verify", "--wait", "--wait-for-jobs", "--debug", "--kube-insecure-skip-tls-verify",
    "-i", "--install", "--cleanup-on-fail", "--reset-values", "--reuse-values", "--reset-then-reuse-values",
    "--rollback-on-failure", "--server-side", "--help", "-h",
})


def _arguments(words: list[Word]) -> list[Word]:
    """The words of a helm command line that are not flags or flag values (release, chart)."""
    out, j = [], 0
    while j < len(words):
        text = words[j].text
        if text == "--":
            return out + words[j + 1:]
        if text.startswith("-") and len(text) > 1:
            flag = text.partition("=")[0]
            # `--flag=value`, `-nNAMESPACE` and the flags without a value stand alone
            alone = "=" in text or flag in _BOOLS or (not text.startswith("--") and len(text) > 2)
            j += 1 if alone else 2
            continue
        out.append(words[j])
        j += 1
    return out


def chart_word(words: list[Word]) -> tuple[str | None, Word | None]:
    """(chart name of CHARTS, the word naming it) of `helm install|upgrade` with the words after
    the subcommand: `install [NAME] CHART` (no NAME with `--generate-name`), `upgrade RELEASE
    CHART`; flags and their values may come anywhere. A chart reference held in a variable is
    known by the release name instead (`helm upgrade -i gpu-operator "$CHART"`)."""
    arguments = _arguments(words)
    generated = any(w.text in ("-g", "--generate-name") for w in words)
    at = 0 if generated else 1
    chart = arguments[at] if len(arguments) > at else arguments[-1] if arguments else None
    if chart is not None and "$" not in chart.text:
        return next(((name, chart) for name, pattern in CHARTS.items() if pattern.search(chart.text)),
                    (None, None))
    return next(((name, w) for name, pattern in CHARTS.items() for w in arguments if pattern.search(w.text)),
                (None, None))


def _helm(words: list[Word]) -> HelmCommand | None:
    texts = [w.text for w in words]
    if "helm" not in texts:
        return None
    i = texts.index("helm")
    if i + 1 >= len(words) or texts[i + 1] not in ("install", "upgrade"):
        return None
    chart, chart_word_ = chart_word(words[i + 2:])
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
    return HelmCommand(chart, chart_word_, version, version_word, tuple(settings), values_files)


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
        rancher = rancher_nodes(ctx) or _installed(doc)
        missing_at = entries[0].name_at if entries else doc.index.span(command.chart_word.start,
                                                                        command.chart_word.end)
        if not entries and (rancher is None or command.values_files or not _configures_runtime(command)):
            continue  # values files may set toolkit.env; a toolkit that configures no runtime needs none
        judged = gpu_operator.judged_release(ctx.settings, command.version,
                                             f"`--version {command.version}` of the helm command")
        stated = [s.value for s in command.settings if s.key == "toolkit.version"]
        deployed = Toolkit(stated[-1], "`--set toolkit.version`") if stated else values_toolkit(None, judged)
        yield from emit(doc, ctx, judge_env(entries, deployed, rancher, missing_at))


def _installed(doc: Document) -> str | None:
    """Words on how the file shows its nodes run k3s/RKE2: it installs them."""
    found = doc.cache.get(RANCHER)
    if found is None:
        return None
    name, word = found
    line = doc.index.span(word.start, word.end).line
    return f"this file installs {'k3s' if name == 'k3s' else 'RKE2'} (`{word.text}`, line {line})"


def _configures_runtime(command: HelmCommand) -> bool:
    """Whether the line's toolkit configures the node's containerd: not when it is disabled,
    in NRI plugin mode, or told the nodes run another runtime."""
    said = {s.key: s.value.strip().lower() for s in command.settings}
    return said.get("toolkit.enabled") != "false" and said.get("cdi.nriPluginEnabled") != "true" \
        and said.get("operator.defaultRuntime", "containerd") == "containerd"


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
