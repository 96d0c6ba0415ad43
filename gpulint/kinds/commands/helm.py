"""`helm install|upgrade ... gpu-operator --set k=v` lines: each `--set` key judged against
the gpu-operator chart of the release `--version` names (GL483), and a `--set` env value
that Helm types as a boolean or number where the ClusterPolicy takes a string (GL484).

Helm's `--set` types its values (strvals): `true`/`false` become booleans and integers
numbers; `--set-string` keeps every value a string."""

from __future__ import annotations

import re

from gpulint.common.operator_chart import first_unread, known_keys, unknown_key_message
from gpulint.formats.shell import Word, split_commands
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
    __slots__ = ("version", "version_word", "settings")

    version: str | None
    version_word: Word | None
    settings: tuple[Setting, ...]

    def __init__(self, version: str | None, version_word: Word | None, settings: tuple[Setting, ...]) -> None:
        freeze(self, version, version_word, settings)


def helm_commands(text: str, regions) -> list[HelmCommand]:
    """The `helm install|upgrade` lines of the gpu-operator chart in the shell regions."""
    return helm_lines(words for start, end, newline_ends in regions
                      for words in split_commands(text, start, end, newline_ends))


def helm_lines(commands) -> list[HelmCommand]:
    """The `helm install|upgrade` lines of the gpu-operator chart among the commands' words;
    a line read once per CI matrix combination with the same words counts once."""
    out: dict[tuple, HelmCommand] = {}
    for words in commands:
        command = _helm(words)
        if command is not None:
            out.setdefault((command.version, command.settings), command)
    return list(out.values())


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
            written = value_word or word
            if written.quoted:
                offset += 1  # past the opening quote (a quote inside the word is rarer)
            for at, part in _pairs(value):
                key, _, val = part.partition("=")
                settings.append(Setting(key, val, offset + at, flag == "--set", (written.start, written.end)))
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


def _typed(value: str) -> str | None:
    """The JSON type Helm's `--set` gives a value other than a string, if any."""
    if value in ("true", "false"):
        return "boolean"
    return "integer" if _INTEGER.fullmatch(value) else None


@check("GL483", "GL484", kinds=("commands",))
def helm_settings(doc: Document, ctx: Context):
    for command in doc.cache.get(CACHE, ()):
        where = _version_words(doc.text, command)
        judged = gpu_operator.judged_release(ctx.settings, command.version, where)
        data = gpu_operator.release_data(judged.tag)
        for setting in command.settings:
            end = setting.start + len(setting.key)
            key_span = doc.index.span(setting.start, end) if doc.text[setting.start:end] == setting.key \
                else doc.index.span(*setting.word)
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
