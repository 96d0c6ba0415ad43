"""A container command line read from its shell words: which tool runs which image with
which flags, each word keeping its place in the file."""

from __future__ import annotations

import posixpath
import re

from gpulint.common.containers import FLAGS_WITHOUT_VALUE, SHORT_FLAGS_WITHOUT_VALUE
from gpulint.formats.shell import Word
from gpulint.record import Frozen, Record, freeze

ENGINES = ("docker", "podman", "nerdctl", "nvidia-docker")


class Flag(Frozen):
    __slots__ = ("name", "word", "value", "text")

    name: str  # "--gpus", "-e"
    word: Word
    value: Word | None  # None for boolean flags; for `--name=value`, the part after `=`
    text: str | None  # the value as the program sees it

    def __init__(self, name: str, word: Word, value: Word | None, text: str | None) -> None:
        freeze(self, name, word, value, text)


class ContainerCommand(Record):
    __slots__ = ("tool", "action", "words", "flags", "image", "job", "matrix", "unexpanded")

    tool: str  # docker, podman, nerdctl, nvidia-docker, ctr, crictl, kubectl
    action: str  # run, create; `pull` for crictl, whose containers come from JSON files
    words: list[Word]
    flags: list[Flag]
    image: Word | None
    # in a CI job with a matrix: the values put into its words (matrix.Use), and the job
    job: str | None
    matrix: tuple
    unexpanded: object  # the job's matrix (matrix.Matrix) that is not expanded

    def __init__(self, tool: str, action: str, words: list[Word], flags: list[Flag] | None = None,
                 image: Word | None = None, job: str | None = None, matrix: tuple = (),
                 unexpanded: object = None) -> None:
        self.tool = tool
        self.action = action
        self.words = words
        self.flags = [] if flags is None else flags
        self.image = image
        self.job = job
        self.matrix = matrix
        self.unexpanded = unexpanded

    def flag(self, *names: str) -> list[Flag]:
        return [f for f in self.flags if f.name in names]

    @property
    def label(self) -> str:
        return f"`{self.tool} {self.action}`"

    @property
    def first_word(self) -> Word:
        """Where the command is written (a CI job image has no words of its own)."""
        return self.words[0] if self.words else self.image or self.flags[0].word

# Flags of `run`/`create` that take no value (docker, podman, nerdctl); any other flag
# takes the next word unless written `--flag=value`.
_BOOLEAN = FLAGS_WITHOUT_VALUE
_BOOLEAN_SHORT = SHORT_FLAGS_WITHOUT_VALUE
_GLOBAL_WITH_VALUE = {"-r", "--runtime-endpoint", "-i", "--image-endpoint", "-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "-n",
                      "--namespace", "-a", "--address", "--snapshotter", "--cgroup-manager", "--root",
                      "--runroot", "--connection", "--url", "--identity", "--storage-driver",
                      "--tlscacert", "--tlscert", "--tlskey"}
_WRAPPERS = {"sudo", "time", "exec", "nohup", "command", "env", "eval"}


def container_command(words: list[Word]) -> ContainerCommand | None:
    i = _skip_prefix(words)
    if i >= len(words):
        return None
    tool = posixpath.basename(words[i].text)
    i += 1
    while i < len(words) and words[i].text.startswith("-"):  # global flags
        if "=" not in words[i].text and words[i].text in _GLOBAL_WITH_VALUE:
            i += 1
        i += 1
    if i >= len(words):
        return None
    action = words[i].text
    if tool in ENGINES and action == "container" and i + 1 < len(words):
        i += 1
        action = words[i].text
    if tool in ENGINES and action in ("run", "create") or tool == "ctr" and action == "run":
        command = ContainerCommand(tool, action, words)
        read_flags(command, words, i + 1)
        return command
    if tool == "crictl" and action == "pull":
        # `crictl run`/`create` take their image and devices from JSON config files, and
        # `runp --runtime` names a containerd handler, not a daemon.json runtime: only the
        # image a node pulls is judged here
        command = ContainerCommand(tool, action, words)
        takes_value = {"--creds", "--auth", "-a", "--username", "-u", "--pod-config", "-p", "--annotation"}
        j = i + 1
        while j < len(words):
            if words[j].text in takes_value:
                j += 2
                continue
            if words[j].text.startswith("-"):
                j += 1
                continue
            command.image = words[j]
            break
        return command if command.image is not None else None
    if tool == "kubectl" and action == "run":
        command = ContainerCommand(tool, action, words)
        read_flags(command, words, i + 1, kubectl=True)
        image = command.flag("--image")
        command.image = image[0].value if image and image[0].value is not None else None
        return command
    return None


def _skip_prefix(words: list[Word]) -> int:
    """Past `VAR=value` assignments and wrappers such as `sudo -E` or `time`."""
    i = 0
    while i < len(words):
        text = words[i].text
        if re.match(r"[A-Za-z_]\w*=", text):
            i += 1
        elif text in _WRAPPERS:
            i += 1
            while i < len(words) and words[i].text.startswith("-"):
                i += 1
        else:
            return i
    return i


def read_flags(command: ContainerCommand, words: list[Word], i: int, kubectl: bool = False) -> None:
    while i < len(words):
        word = words[i]
        text = word.text
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            if kubectl:  # kubectl's flags may follow the pod name
                i += 1
                continue
            break
        name, eq, value = text.partition("=")
        if not text.startswith("--") and len(text) > 2 and text[1] not in _BOOLEAN_SHORT:
            # `-p8080:80`, `-eNAME=value`: a short flag with its value attached
            command.flags.append(Flag(text[:2], word, _part(word, 2, text[2:]), text[2:]))
        elif eq:
            command.flags.append(Flag(name, word, _part(word, len(name) + 1, value), value))
        elif name in _BOOLEAN or (not name.startswith("--") and len(name) > 2
                                  and set(name[1:]) <= _BOOLEAN_SHORT):
            command.flags.append(Flag(name, word, None, None))
        elif not name.startswith("--") and len(name) > 2 and set(name[1:-1]) <= _BOOLEAN_SHORT:
            # `-itv` / `-ite`: booleans, then one flag that takes the next word
            nxt = words[i + 1] if i + 1 < len(words) else None
            command.flags.append(Flag("-" + name[-1], word, nxt, nxt.text if nxt else None))
            i += 1
        else:
            nxt = words[i + 1] if i + 1 < len(words) else None
            command.flags.append(Flag(name, word, nxt, nxt.text if nxt else None))
            i += 1
        i += 1
    if not kubectl and i < len(words):
        command.image = words[i]


def _part(word: Word, skip: int, text: str) -> Word:
    """The value inside a flag word (`--gpus=all`, `-eNAME=value`), `skip` characters in."""
    at = min(word.start + skip, word.end)
    return Word(text, at, word.end, word.quoted, word.expands)


def gpu_request(command: ContainerCommand) -> str | None:
    """How a command gives its container GPUs (None: it does not)."""
    if command.tool == "nvidia-docker":
        return "`nvidia-docker`"
    for flag in command.flag("--gpus"):
        if flag.text is not None and (command.tool == "ctr" or flag.text.strip() != "0"):
            return f"`--gpus {flag.text}`"
    for flag in command.flag("--runtime"):
        if flag.text is not None and flag.text.strip().startswith("nvidia"):
            return f"`--runtime {flag.text}`"
    for flag in command.flag("--device"):
        if flag.text is not None and flag.text.startswith("nvidia.com/gpu"):
            return f"`--device {flag.text}`"
    return None


def literal_image(command: ContainerCommand) -> Word | None:
    """The command's image when it is written out (not a variable the shell expands)."""
    word = command.image
    return word if word is not None and word.text and not word.expands else None

