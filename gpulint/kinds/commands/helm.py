"""`helm install|upgrade ... gpu-operator --set k=v` lines: each `--set` key judged against
the gpu-operator chart of the release `--version` names (GL483), a `--set` env value
that Helm types as a boolean or number where the ClusterPolicy takes a string (GL484), and the
container toolkit's node layout settings among `toolkit.env[i]` (GL489-GL492).

Helm's `--set` types its values (strvals): `true`/`false` become booleans and integers
numbers; `--set-string` keeps every value a string."""

from __future__ import annotations

import re

from gpulint.common.operator_chart import judge_setting
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
_CHART = re.compile(r"(^|/)gpu-operator(-v?[\d.]+\.tgz)?$")


class Setting(Frozen):
    __slots__ = ("key", "value", "start", "typed")

    key: str
    value: str
    start: int  # offsets of `key=value` in the file
    typed: bool  # `--set` (True) or `--set-string`

    def __init__(self, key: str, value: str, start: int, typed: bool) -> None:
        freeze(self, key, value, start, typed)


class HelmCommand(Frozen):
    __slots__ = ("version", "version_word", "settings")

    version: str | None
    version_word: Word | None
    settings: tuple[Setting, ...]

    def __init__(self, version: str | None, version_word: Word | None, settings: tuple[Setting, ...]) -> None:
        freeze(self, version, version_word, settings)


def helm_commands(text: str, regions) -> list[HelmCommand]:
    """The `helm install|upgrade` lines of the gpu-operator chart in the shell regions."""
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
    if i + 1 >= len(words) or texts[i + 1] not in ("install", "upgrade") \
            or not any(_CHART.search(t) for t in texts[i + 2:]):
        return None
    settings, version, version_word = [], None, None
    j = i + 2
    while j < len(words):
        word, text = words[j], texts[j]
        flag, equals, inline = text.partition("=")
        if flag in ("--set", "--set-string", "--version"):
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
    return HelmCommand(version, version_word, tuple(settings))


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
        where = f"`--version {command.version}` of the helm command"
        judged = gpu_operator.judged_release(ctx.settings, command.version, where)
        for setting in command.settings:
            said = judge_setting(setting.key, setting.value, setting.typed, judged)
            if said is not None:
                code, _, message = said
                yield finding(doc, code, doc.index.span(setting.start, setting.start + len(setting.key)), message)


@check("GL489", "GL490", "GL491", "GL492", kinds=("commands",))
def helm_toolkit_env(doc: Document, ctx: Context):
    for command in doc.cache.get(CACHE, ()):
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


