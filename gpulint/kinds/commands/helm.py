"""`helm install|upgrade ... gpu-operator --set k=v` lines: each `--set` key judged against
the gpu-operator chart of the release `--version` names (GL483), a `--set` env value
that Helm types as a boolean or number where the ClusterPolicy takes a string (GL484), and the
container toolkit's node layout settings among `toolkit.env[i]` (GL489-GL492). The NVIDIA DRA
driver chart's lines are read too, for the checks that join the two charts.

Helm's `--set` types its values (strvals): `true`/`false` become booleans and integers
numbers; `--set-string` keeps every value a string."""

from __future__ import annotations

import re

from gpulint.common.operator_chart import (
    gpu_cluster_refusals,
    judge_setting,
    refusal_words,
)
from gpulint.common.toolkit_env import (
    Toolkit,
    emit,
    judge_env,
    rancher_nodes,
    set_entries,
    values_toolkit,
)
from gpulint.formats.shell import Word, split_commands
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
    "gpu-operator": re.compile(r"(^|/)gpu-operator(-v?[\d.]+\.tgz)?$"),
}


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
        if flag in ("--set", "--set-string", "--version"):
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
