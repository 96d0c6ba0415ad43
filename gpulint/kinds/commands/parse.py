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

from gpulint.formats.shell import split_commands
from gpulint.kinds.commands.ci import ci_commands, ci_regions
from gpulint.kinds.commands.combinations import combination
from gpulint.kinds.commands.command import (
    ContainerCommand,
    container_command,
    gpu_request,
    literal_image,
)
from gpulint.model import Document, LineIndex
from gpulint.regex import lazy

# A file is worth reading only when it names a container tool and something GPU-ish.
_TOOL_HINT = lazy(r"\b(?:docker|podman|nerdctl|ctr|crictl|kubectl)\b")
_HELM_HINT = lazy(r"\bhelm\s+(?:install|upgrade)\b")
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


def worth_reading(text: str, ci: bool = False) -> bool:
    """The cheap test that keeps documentation without GPU commands free to lint; a CI
    file's jobs run in containers (`image:`, `container:`) without naming a tool."""
    return (any(hint in text for hint in _GPU_HINTS) and (ci or _TOOL_HINT.search(text) is not None)) \
        or (("gpu-operator" in text or "dra-driver" in text or "nvidia-device-plugin" in text) and _HELM_HINT.search(text) is not None)


def is_shell_script(text: str) -> bool:
    return _SHELLS.match(text) is not None


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
        return ci_regions(text, index)
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


# ------------------------------------------------------------------ which commands run containers


def container_commands(text: str, regions: list[tuple[int, int, bool]]) -> list[ContainerCommand]:
    out = []
    for start, end, newline_ends in regions:
        for words in split_commands(text, start, end, newline_ends):
            command = container_command(words)
            if command is not None:
                out.append(command)
    return out


def parse_commands(doc: Document, text: str) -> list[ContainerCommand]:
    # the helm lines installing NVIDIA's charts, for gpulint.kinds.commands.helm
    helm = "gpu-operator" in text or "dra-driver" in text or "nvidia-device-plugin" in text
    if doc.path.lower().endswith((".yml", ".yaml")):
        # a CI step's helm line is read with the matrix and `env:` values the runner puts in
        lines: list | None = [] if helm else None
        commands = ci_commands(text, doc.index, lines)
        if lines:
            from gpulint.kinds.commands.helm import (
                CACHE,
                RANCHER,
                helm_lines,
                rancher_install,
            )

            doc.cache[CACHE] = helm_lines(lines)
            doc.cache[RANCHER] = rancher_install(lines)
        return commands
    regions = shell_regions(doc.path, text, doc.index)
    if helm:
        from gpulint.kinds.commands.helm import (
            CACHE,
            RANCHER,
            helm_lines,
            rancher_install,
        )

        lines = [words for start, end, newline_ends in regions
                 for words in split_commands(text, start, end, newline_ends)]
        doc.cache[CACHE] = helm_lines(lines)
        doc.cache[RANCHER] = rancher_install(lines)
    return container_commands(text, regions)


def gpu_command_images(doc: Document) -> list[tuple]:
    """(image, where, the matrix combination it is read with, where its values are
    written) of the command lines that give their container GPUs."""
    out = []
    for command in doc.tree or ():
        word = literal_image(command)
        if word is not None and gpu_request(command) is not None:
            out.append((word.text, doc.index.span(word.start, word.end), *combination(doc, command, word)))
    return out


def parse(text: str, doc: Document) -> list[ContainerCommand]:
    return parse_commands(doc, text)
