"""GPU container command lines in scripts, Makefiles, documentation and CI files.

A file of kind `commands` is read as the shell text it holds: a whole shell script,
Makefile recipe lines, the shell-like fenced blocks of Markdown and the code blocks
of reStructuredText (a console block's `$ ` prompts mark its commands), and the
`run:` steps, `script:` lines and job images of GitHub Actions and GitLab CI files.
Each `docker|podman|nerdctl run|create`, `ctr run`, `kubectl run` and `crictl pull` becomes a
ContainerCommand whose words keep their offsets in the file.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from gpulint.formats.shell import Word, split_commands
from gpulint.model import Document, LineIndex, Node
from gpulint.regex import lazy

ENGINES = ("docker", "podman", "nerdctl", "nvidia-docker")
# A file is worth reading only when it names a container tool and something GPU-ish.
_TOOL_HINT = lazy(r"\b(?:docker|podman|nerdctl|ctr|crictl|kubectl)\b")
_GPU_HINTS = ("--gpus", "nvidia", "pytorch/pytorch")
_SHELLS = lazy(r"^#!\s*\S*/(?:env\s+)?(?:ba|z|k|da)?sh\b")
_FENCE = lazy(r"^([ \t]*)(`{3,}|~{3,})[ \t]*\{?\.?([\w+-]*)[^\n]*$", re.MULTILINE)
_SHELL_LANGUAGES = {"", "sh", "bash", "shell", "console", "zsh", "shell-session", "shellsession",
                    "terminal", "bash-session"}
_PROMPT = lazy(r"[ \t]*(?:\([\w.-]+\)[ \t]*)?[$%][ \t]+")
# a paragraph line ending in `::` (not a directive's `.. name::`) opens a literal block
_RST_LITERAL = lazy(r"(?m)^([ \t]*)(?!\.\. )\S[^\n]*::[ \t]*\n")
_RST_DIRECTIVE = lazy(r"^([ \t]*)\.\.[ \t]+(?:code-block|code|sourcecode|prompt)::[ \t]*([\w-]*)",
                            re.MULTILINE)


def worth_reading(text: str) -> bool:
    """The cheap test that keeps documentation without GPU commands free to lint."""
    return any(hint in text for hint in _GPU_HINTS) and _TOOL_HINT.search(text) is not None


def is_shell_script(text: str) -> bool:
    return _SHELLS.match(text) is not None


@dataclass(frozen=True)
class Flag:
    name: str  # "--gpus", "-e"
    word: Word
    value: Word | None  # None for boolean flags; for `--name=value`, the part after `=`
    text: str | None  # the value as the program sees it


@dataclass
class ContainerCommand:
    tool: str  # docker, podman, nerdctl, nvidia-docker, ctr, crictl, kubectl
    action: str  # run, create; `pull` for crictl, whose containers come from JSON files
    words: list[Word]
    flags: list[Flag] = field(default_factory=list)
    image: Word | None = None

    def flag(self, *names: str) -> list[Flag]:
        return [f for f in self.flags if f.name in names]

    @property
    def label(self) -> str:
        return f"`{self.tool} {self.action}`"


# ------------------------------------------------------------------ where the shell text is


def shell_regions(name: str, text: str, index: LineIndex) -> list[tuple[int, int, bool]]:
    """(start, end, newlines end commands) of the shell text in a file."""
    lower = posixpath.basename(name).lower()
    if lower.endswith((".md", ".markdown")):
        return _markdown(text)
    if lower.endswith(".rst"):
        return _rst(text)
    if lower in ("makefile", "gnumakefile") or lower.endswith(".mk"):
        return _makefile(text)
    if lower.endswith((".yml", ".yaml")):
        return _ci_yaml(text, index)
    return [(0, len(text), True)]


def _markdown(text: str) -> list[tuple[int, int, bool]]:
    regions = []
    pos = 0
    while True:
        opening = _FENCE.search(text, pos)
        if opening is None:
            return regions
        fence = opening[2]
        closing = re.compile(r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$",
                             re.MULTILINE)
        body_start = min(opening.end() + 1, len(text))
        close = closing.search(text, body_start)
        body_end = close.start() if close else len(text)
        if opening[3].lower() in _SHELL_LANGUAGES:
            regions.extend(_prompted(text, body_start, body_end))
        pos = close.end() if close else len(text)


def _prompted(text: str, start: int, end: int) -> list[tuple[int, int, bool]]:
    """A block's commands: the lines after `$ ` prompts (with their continuation lines)
    when it has prompts, else the whole block."""
    lines = []
    offset = start
    for line in text[start:end].split("\n"):
        lines.append((offset, line))
        offset += len(line) + 1
    if not any(_PROMPT.match(line) for _, line in lines):
        return [(start, end, True)]
    regions = []
    i = 0
    while i < len(lines):
        begin, line = lines[i]
        prompt = _PROMPT.match(line)
        if prompt is None:
            i += 1
            continue
        last = i
        while lines[last][1].rstrip().endswith("\\") and last + 1 < len(lines):
            last += 1
        regions.append((begin + prompt.end(), lines[last][0] + len(lines[last][1]), True))
        i = last + 1
    return regions


def _rst(text: str) -> list[tuple[int, int, bool]]:
    """Shell `code-block` directives, and literal blocks (a paragraph ending in `::`); in
    either, `$ ` prompts mark the commands, as in a console block."""
    regions = []
    for match in _RST_DIRECTIVE.finditer(text):
        if match[2].lower() not in _SHELL_LANGUAGES:
            continue
        start = text.find("\n", match.end())
        if start >= 0:
            regions.extend(_prompted(text, start + 1, _indented_end(text, start, len(match[1]))))
    for match in _RST_LITERAL.finditer(text):
        start = match.end() - 1
        regions.extend(_prompted(text, start + 1, _indented_end(text, start, len(match[1]))))
    return regions


def _indented_end(text: str, start: int, indent: int) -> int:
    """Where the block indented deeper than `indent` after offset `start` (a newline) ends."""
    end = start + 1
    for line in text[start + 1:].split("\n"):
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        end += len(line) + 1
    return min(end, len(text))


def _makefile(text: str) -> list[tuple[int, int, bool]]:
    """Recipe lines (a tab first), with their continuation lines."""
    regions = []
    offset = 0
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        start = offset
        last = i
        while lines[last].rstrip().endswith("\\") and last + 1 < len(lines):
            last += 1
        length = sum(len(lines[j]) + 1 for j in range(i, last + 1))
        if line.startswith("\t"):
            body = start + 1
            while body < start + len(line) and text[body] in "@-+ \t":
                body += 1
            regions.append((body, start + length - 1, True))
        offset += length
        i = last + 1
    return regions


def _ci_yaml(text: str, index: LineIndex) -> list[tuple[int, int, bool]]:
    """The shell of GitHub Actions `run:` steps and GitLab CI `script:` lines."""
    # PyYAML: only for YAML text
    from gpulint.formats.yamlpos import parse_yaml_documents

    regions = []
    for root in parse_yaml_documents(text, index):
        for node in _ci_scripts(root):
            region = scalar_region(text, index, node)
            if region is not None:
                regions.append(region)
    return regions


_SCRIPT_KEYS = ("script", "before_script", "after_script")


def _ci_scripts(node: Node | None):
    if node is None or node.is_scalar:
        return
    for key, child in node.items():
        if key == "run" and isinstance(child.value, str):
            yield child
        elif key in _SCRIPT_KEYS:
            yield from (item for item in (child.value if child.is_seq else [child])
                        if isinstance(item.value, str))
        elif not child.is_scalar:
            yield from _ci_scripts(child)
    for child in node.value if node.is_seq else ():
        yield from _ci_scripts(child)


def scalar_region(text: str, index: LineIndex, node: Node) -> tuple[int, int, bool] | None:
    """Where a YAML string's text lies in the file, when reading the file there gives
    the same shell words: literal and folded blocks, plain scalars, quoted ones
    without escapes."""
    start, end = index.offsets(node.span)
    first = text[start] if start < len(text) else ""
    if first in "|>":
        body = text.find("\n", start)
        return (body + 1, end, first == "|") if 0 <= body < end else None
    if first in "'\"":
        inner = text[start + 1:end - 1]
        if "\\" in inner or first * 2 in inner:
            return None
        return start + 1, end - 1, False
    return start, end, False


# ------------------------------------------------------------------ which commands run containers

# Flags of `run`/`create` that take no value (docker, podman, nerdctl); any other flag
# takes the next word unless written `--flag=value`.
_BOOLEAN = {
    "--rm", "--privileged", "--init", "--read-only", "--publish-all", "--detach", "--interactive",
    "--tty", "--sig-proxy", "--no-healthcheck", "--oom-kill-disable", "--help", "--quiet",
    "--disable-content-trust", "--use-api-socket", "--replace", "--rmi", "--no-hosts",
    "--env-host", "--read-only-tmpfs", "--http-proxy", "--tls-verify", "--passwd", "--no-hostname",
    "--net-host", "--null-io", "--cni", "--privileged-without-host-devices", "--rootfs",
    "--systemd-cgroup", "--all-platforms", "--remote", "-d", "-i", "-t", "-P", "-q", "--attach-stdin",
}
_BOOLEAN_SHORT = set("ditPq")
_GLOBAL_WITH_VALUE = {"-r", "--runtime-endpoint", "-i", "--image-endpoint", "-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "-n",
                      "--namespace", "-a", "--address", "--snapshotter", "--cgroup-manager", "--root",
                      "--runroot", "--connection", "--url", "--identity", "--storage-driver",
                      "--tlscacert", "--tlscert", "--tlskey"}
_WRAPPERS = {"sudo", "time", "exec", "nohup", "command", "env", "eval"}


def container_commands(text: str, regions: list[tuple[int, int, bool]]) -> list[ContainerCommand]:
    out = []
    for start, end, newline_ends in regions:
        for words in split_commands(text, start, end, newline_ends):
            command = _container_command(words)
            if command is not None:
                out.append(command)
    return out


def _container_command(words: list[Word]) -> ContainerCommand | None:
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
        _read_flags(command, words, i + 1)
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
        _read_flags(command, words, i + 1, kubectl=True)
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


def _read_flags(command: ContainerCommand, words: list[Word], i: int, kubectl: bool = False) -> None:
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


def parse_commands(doc: Document, text: str) -> list[ContainerCommand]:
    commands = container_commands(text, shell_regions(doc.path, text, doc.index))
    if doc.path.lower().endswith((".yml", ".yaml")):
        commands += _ci_containers(text, doc.index)
    return commands


def _ci_containers(text: str, index: LineIndex) -> list[ContainerCommand]:
    """The job images of CI files as the `docker create` the runner does: GitHub Actions
    `container:` (its `options` are `docker create` flags) and `services:`, GitLab CI
    `image:` and `services:`."""
    # PyYAML: only for YAML text
    from gpulint.formats.yamlpos import parse_yaml_documents

    out = []
    for root in parse_yaml_documents(text, index):
        jobs = root.get("jobs") if root is not None and root.is_map else None
        if jobs is not None and jobs.is_map:  # GitHub Actions
            for _, job in jobs.items():
                out += _ci_images(text, index, job.get("container") if job.is_map else None, "options")
                services = job.get("services") if job.is_map else None
                for _, service in services.items() if services is not None else ():
                    out += _ci_images(text, index, service, "options")
        elif root is not None and root.is_map:  # GitLab CI: every job, and the defaults
            for key, job in root.items():
                if not job.is_map:
                    continue
                out += _ci_images(text, index, job.get("image"), None, "name")
                for service in job.value.get("services").value if job.get("services") is not None \
                        and job.get("services").is_seq else ():
                    out += _ci_images(text, index, service, None, "name")
            out += _ci_images(text, index, root.get("image"), None, "name")
    return out


def _ci_images(text: str, index: LineIndex, node: Node | None, options: str | None,
               name_key: str = "image") -> list[ContainerCommand]:
    """One job or service container: an image string, or a mapping with its image."""
    if node is None:
        return []
    image = node if node.is_scalar else node.get(name_key) if node.is_map else None
    if image is None or not isinstance(image.value, str):
        return []
    command = ContainerCommand("docker", "create", [])  # what the runner does with it
    region = scalar_region(text, index, image)
    written = Word(image.value.strip(), region[0], region[1], expands="$" in image.value) \
        if region is not None else None
    extra = node.get(options) if options and node.is_map else None
    region = scalar_region(text, index, extra) if extra is not None and isinstance(extra.value, str) else None
    for words in split_commands(text, *region) if region is not None else ():
        _read_flags(command, words, 0)
    command.image = written
    return [command] if command.image is not None or command.flags else []


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


def gpu_command_images(doc: Document) -> list[tuple[str, object]]:
    """(image, where) of the command lines that give their container GPUs."""
    out = []
    for command in doc.tree or ():
        word = literal_image(command)
        if word is not None and gpu_request(command) is not None:
            out.append((word.text, doc.index.span(word.start, word.end)))
    return out


def parse(text: str, doc: Document) -> list[ContainerCommand]:
    return parse_commands(doc, text)
