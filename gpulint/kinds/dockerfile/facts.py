"""What each stage of a Dockerfile is built on, and what its instructions do.

Shared by the Dockerfile families (GL3xx, GL4xx) and the CUDA/driver family
(GL6xx). For every stage: the image at the root of its `FROM <stage>` chain
(global ARG defaults substituted), the CUDA image it is (via
`gpulint.knowledge.images.cuda_image`), CUDA version hints from `ENV
CUDA_VERSION` / `NVIDIA_REQUIRE_CUDA` for custom bases, its environment (ENV is
inherited along `FROM <stage>` chains but never crosses an unrelated `FROM`),
the shell commands of its RUN instructions and the packages they install.

Rules start from `facts(doc)` (every stage) and ask the functions below about a
stage; `stage_cuda(doc, stage)` and `final_stage_cuda(doc)` give the CUDA a stage
(or the shipped one) is built on. The stage facts are computed once per document
and memoised on `doc.cache`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpulint import numbers
from gpulint.kinds.dockerfile.parse import (
    Dockerfile,
    Instruction,
    Stage,
    arg_pairs,
    expand,
)
from gpulint.knowledge.images import cuda_image, parse_image_ref, tag_status
from gpulint.knowledge.images import jetson_image as jetson_reference
from gpulint.model import Document, Span
from gpulint.numbers import whole
from gpulint.record import Frozen, Record, freeze, replace
from gpulint.regex import lazy, may_match

_CACHE_KEY = "dockerfile_facts"
_VAR = lazy(r"\$\{?[A-Za-z_]")
_VERSION = lazy(r"(\d+)\.(\d+)(?:\.(\d+))?")
REQUIRE_CUDA = lazy(r"cuda\s*>=\s*(\d+)\.(\d+)")  # the X.Y an NVIDIA_REQUIRE_CUDA asks for


# ---------------------------------------------------------------- the model


class EnvValue(Frozen):
    __slots__ = ("name", "value", "instruction", "span", "name_span", "written")

    name: str
    value: str  # quotes removed; variables expanded in StageFacts.env and .assignments
    instruction: Instruction
    span: Span  # the value's position (the name's when the value is empty)
    name_span: Span
    written: str  # the value as written, quotes removed, variables not expanded

    def __init__(self, name: str, value: str, instruction: Instruction, span: Span, name_span: Span,
                 written: str = "") -> None:
        freeze(self, name, value, instruction, span, name_span, written)


class CudaVersion(Frozen):
    """The CUDA a stage is built on.

    version: "12.4.1" or "12.4" (NGC months, pytorch tags and `cuda>=X.Y` give no patch);
    source: "image" (from the base image tag) or "env" (a custom base's ENV);
    image: the CudaImage when the source is the image; where: what to point a
    related location at (the FROM image, or the ENV value).
    """

    __slots__ = ("version", "major_minor", "source", "image", "where")

    version: str
    major_minor: tuple[int, int]
    source: str
    image: object | None  # gpulint.knowledge.images.CudaImage
    where: Span

    def __init__(self, version: str, major_minor: tuple[int, int], source: str, image: object | None,
                 where: Span) -> None:
        freeze(self, version, major_minor, source, image, where)

    @property
    def major(self) -> int:
        return self.major_minor[0]


class Command(Record):
    """One simple shell command of a RUN: its words, variables expanded."""

    __slots__ = ("words", "raw", "instruction", "name")
    _memo = ("name",)

    words: list[str]
    raw: list[str]  # the words as written (for locating them in the file)
    instruction: Instruction
    # command_name's answer, asked for by many rules of every command: worked out once
    name: tuple[str, list[str]] | None

    def __init__(self, words: list[str], raw: list[str], instruction: Instruction,
                 name: tuple[str, list[str]] | None = None) -> None:
        self.words = words
        self.raw = raw
        self.instruction = instruction
        self.name = name


class Package(Frozen):
    __slots__ = ("manager", "name", "raw", "command")

    manager: str  # apt, yum, pip, conda, apk, zypper
    name: str  # expanded
    raw: str  # as written
    command: Command

    def __init__(self, manager: str, name: str, raw: str, command: Command) -> None:
        freeze(self, manager, name, raw, command)


class StageFacts(Record):
    __slots__ = ("stage", "chain", "image", "scratch", "cuda_image", "env", "assignments", "commands",
                 "packages", "ancestors", "runfiles", "cuda_builds", "l4t", "plain")
    _unshown = ("ancestors",)
    _memo = ("runfiles", "cuda_builds", "l4t", "plain")

    stage: Stage
    chain: list[Stage]  # this stage, then the stages it is built FROM, root last
    image: str | None  # the root image reference; None when unresolved or `scratch`
    scratch: bool
    cuda_image: object | None  # CudaImage of the root image
    # effective ENV at the end, values expanded as the builder does (`${GPUS:-all}` -> `all`)
    env: dict[str, EnvValue]
    # the stage's own ENV assignments in order, each expanded with what was set before it
    assignments: list[EnvValue]
    commands: list[Command]  # own RUN commands
    packages: list[Package]  # own installs
    # facts of the stages `chain` builds on, nearest first: not this stage's own, so that the
    # facts form no cycle and reference counting frees them once the file is checked
    ancestors: list["StageFacts"]
    # the answers of runfiles, cuda_builds, l4t_base and plain_image, asked for by several
    # rules: worked out once
    runfiles: list["Runfile"] | None
    cuda_builds: list["Hit"] | None
    l4t: bool | None
    plain: bool | None

    def __init__(self, stage: Stage, chain: list[Stage], image: str | None, scratch: bool,
                 cuda_image: object | None, env: dict[str, EnvValue] | None = None,
                 assignments: list[EnvValue] | None = None, commands: list[Command] | None = None,
                 packages: list[Package] | None = None, ancestors: list["StageFacts"] | None = None) -> None:
        self.stage = stage
        self.chain = chain
        self.image = image
        self.scratch = scratch
        self.cuda_image = cuda_image
        self.env = {} if env is None else env
        self.assignments = [] if assignments is None else assignments
        self.commands = [] if commands is None else commands
        self.packages = [] if packages is None else packages
        self.ancestors = [] if ancestors is None else ancestors
        self.runfiles = None
        self.cuda_builds = None
        self.l4t = None
        self.plain = None

    @property
    def family(self) -> list["StageFacts"]:
        """The facts of `chain`: this stage's, then those of the stages it is built on."""
        return [self, *self.ancestors]

    @property
    def known(self) -> bool:
        """The base image is known (resolved), so "not CUDA" is a fact, not a guess."""
        return self.image is not None or self.scratch

    @property
    def root(self) -> Stage:
        return self.chain[-1]

    def chain_commands(self) -> list[Command]:
        """RUN commands of this stage and the stages it is built on."""
        return [c for f in self.family for c in f.commands]

    def chain_packages(self) -> list[Package]:
        return [p for f in self.family for p in f.packages]


class Facts(Record):
    __slots__ = ("doc", "dockerfile", "stages")

    doc: Document
    dockerfile: Dockerfile
    stages: list[StageFacts]

    def __init__(self, doc: Document, dockerfile: Dockerfile, stages: list[StageFacts]) -> None:
        self.doc = doc
        self.dockerfile = dockerfile
        self.stages = stages

    @property
    def final(self) -> StageFacts | None:
        return self.stages[-1] if self.stages else None


# ---------------------------------------------------------------- entry points


def facts(doc: Document) -> Facts:
    """Per-stage facts of a Dockerfile document, computed once."""
    cached = doc.cache.get(_CACHE_KEY)
    if cached is None:
        cached = doc.cache[_CACHE_KEY] = _build(doc)
    return cached


def stage_facts(doc: Document, stage: Stage) -> StageFacts:
    return facts(doc).stages[stage.index]


def stage_cuda(doc: Document, stage: Stage) -> CudaVersion | None:
    """The CUDA version `stage` is built on: from its root image (nvidia/cuda, NGC
    framework and pytorch/pytorch tags), else from `ENV CUDA_VERSION` or
    `NVIDIA_REQUIRE_CUDA` set along its chain (custom CUDA bases). None when
    neither says."""
    sf = stage_facts(doc, stage)
    if sf.cuda_image is not None:
        img = sf.cuda_image
        return CudaVersion(img.cuda, img.cuda_major_minor, "image", img, sf.root.image_span)
    for name in ("CUDA_VERSION", "NVIDIA_REQUIRE_CUDA"):
        env = sf.env.get(name)
        pattern = _VERSION if name == "CUDA_VERSION" else REQUIRE_CUDA
        match = pattern.search(env.value) if env is not None else None
        if match:
            version = match[0] if name == "CUDA_VERSION" else f"{match[1]}.{match[2]}"
            return CudaVersion(version, (whole(match[1]), whole(match[2])), "env", None, env.span)
    return None


def final_stage_cuda(doc: Document) -> CudaVersion | None:
    """The CUDA version of the stage the image ships (the last one)."""
    final = facts(doc).final
    return stage_cuda(doc, final.stage) if final is not None else None


# ---------------------------------------------------------------- building


def _build(doc: Document) -> Facts:
    df: Dockerfile = doc.tree
    out: list[StageFacts] = []
    for stage in df.stages:
        chain = _chain(df, stage)
        root = chain[-1]
        resolved = root.resolved.strip()
        scratch = resolved.lower() == "scratch"
        image = None if scratch or not resolved or _VAR.search(resolved) else resolved
        sf = StageFacts(stage, chain, image, scratch, cuda_image(image) if image else None)
        parent = out[chain[1].index] if len(chain) > 1 else None
        sf.env = dict(parent.env) if parent is not None else {}
        variables: dict[str, str | None] = {}
        # what `$NAME` means at this point: ENV wins over an ARG of the same name
        known: dict[str, str | None] = {k: v.value for k, v in sf.env.items()}
        for ins in stage.instructions:
            if ins.keyword == "ENV":
                for env in env_values(doc, ins):
                    if "$" in env.value:  # else expand leaves it as it is
                        env = replace(env, value=expand(env.value, known))
                    sf.env[env.name] = env
                    known[env.name] = env.value
                    sf.assignments.append(env)
            elif ins.keyword == "ARG":
                declared = _stage_args(ins, variables, df.global_args)
                variables.update(declared)
                known.update((k, v) for k, v in declared.items() if k not in sf.env)
            elif ins.keyword == "RUN":
                commands = run_commands(ins, known)
                sf.commands.extend(commands)
                sf.packages.extend(p for c in commands for p in installed_packages(c))
        sf.ancestors = [out[s.index] for s in chain[1:]]
        out.append(sf)
    return Facts(doc, df, out)


def _stage_args(ins: Instruction, variables: dict, global_args: dict) -> dict[str, str | None]:
    """The variables an ARG inside a stage declares. A global ARG is visible in a stage
    only once the stage declares it again (`ARG CUDA_VERSION`), with the global default."""
    out = {}
    for name, default in arg_pairs(ins.value):
        if default is None:
            out[name] = global_args.get(name)
        else:  # expand leaves a default without `$` as it is
            out[name] = expand(default, {**variables, **out}) if "$" in default else default
    return out


def _chain(df: Dockerfile, stage: Stage) -> list[Stage]:
    """The stage and the stages it builds on, root last. `FROM base-${TARGETARCH}`
    follows the named stages it can match when they all share one root."""
    chain = [stage]
    seen = {stage.index}
    current = stage
    while True:
        parent = _parent(df, current)
        if parent is None or parent.index in seen:
            return chain
        chain.append(parent)
        seen.add(parent.index)
        current = parent


def _parent(df: Dockerfile, stage: Stage) -> Stage | None:
    if stage.parent is not None:
        return df.stages[stage.parent]
    if not _VAR.search(stage.resolved):
        return None
    parts = _ANY_VAR.split(stage.resolved.lower())
    pattern = re.compile(".+".join(re.escape(p) for p in parts))
    matches = [s for s in df.stages[: stage.index] if s.name and pattern.fullmatch(s.name)]
    roots = {df.root(s).resolved for s in matches}
    return matches[0] if matches and len(roots) == 1 else None


_ANY_VAR = lazy(r"\$(?:\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)")


# ---------------------------------------------------------------- ENV


def env_values(doc: Document, ins: Instruction) -> list[EnvValue]:
    """The assignments of one ENV instruction, with positions: `ENV A=1 B="x y"`
    and the legacy `ENV NAME value with spaces` form."""
    text = doc.text
    words = _words(text, keyword_end(doc, ins), ins.end)
    if not words:
        return []
    first_text, first_start, first_end = words[0]
    if "=" not in first_text:  # legacy form: the rest of the line is the value
        name = first_text
        rest = [w for w in words[1:]]
        value = " ".join(w[0] for w in rest)
        name_span = doc.index.span(first_start, first_end)
        span = doc.index.span(rest[0][1], rest[-1][2]) if rest else name_span
        return [EnvValue(name, value, ins, span, name_span, value)]
    out = []
    index = doc.index
    for word, start, end in words:
        name, _, value = word.partition("=")
        raw = text[start:end]
        value_start = start + raw.find("=") + 1
        name_span = index.span(start, start + len(raw.partition("=")[0]))
        span = index.span(value_start, end) if end > value_start else name_span
        out.append(EnvValue(name, value, ins, span, name_span, value))
    return out


# A word of an ENV or LABEL instruction as Docker's reader takes it: pieces of bare text,
# "..." (backslash escapes inside; to the end of the text when not closed), '...' (the same)
# and backslash escapes, up to a blank or a backslash-newline outside quotes.
_ENV_WORD = lazy(r"""(?:[^ \t\r\n"'\\]+|"(?:\\.?|[^"\\])*"?|'[^']*'?|\\(?![\r\n]).?)+""", re.DOTALL)
_ENV_PIECE = lazy(r"""'([^']*)'?|"((?:\\.?|[^"\\])*)"?|\\(.?)|([^'"\\]+)""", re.DOTALL)
_ESCAPED = lazy(r"\\(.)", re.DOTALL)


def _words(text: str, start: int, end: int) -> list[tuple[str, int, int]]:
    """Split text[start:end] into words as Docker does for ENV/LABEL: quotes group,
    backslash escapes, a backslash-newline continues the line. Returns (word without
    quotes, start offset, end offset)."""
    out = []
    for match in _ENV_WORD.finditer(text, start, end):
        word = match[0]
        if "'" in word or '"' in word or "\\" in word:
            word = _env_unquote(word)
        out.append((word, match.start(), match.end()))
    return out


def _env_unquote(word: str) -> str:
    parts = []
    for piece in _ENV_PIECE.finditer(word):
        kind = piece.lastindex
        if kind == 1:
            parts.append(piece[1])
        elif kind == 2:  # a lone backslash at the end of an unclosed "... stays
            parts.append(_ESCAPED.sub(r"\1", piece[2]))
        elif kind == 3:  # so does one at the end of the text
            parts.append(piece[3] or "\\")
        else:
            parts.append(piece[4])
    return "".join(parts)


# ---------------------------------------------------------------- RUN commands

_OPERATORS = {"&&", "||", ";", "|", "&", "(", ")", ";;", "|&", "\n"}
_HEREDOC_MARK = lazy(r"<<-?[\"']?[A-Za-z_][A-Za-z0-9_]*[\"']?")


def run_commands(ins: Instruction, variables: dict[str, str | None]) -> list[Command]:
    """The simple commands of a RUN (shell or exec form; heredoc scripts included;
    `sh -c '...'` opened up)."""
    value = ins.value
    if value.lstrip().startswith("["):
        import json  # the exec form only: a run of shell-form RUNs does not load it

        try:
            words = json.loads(value)
        except ValueError:
            words = None
        if isinstance(words, list) and all(isinstance(w, str) for w in words):
            return _nested([Command([expand(w, variables) for w in words], list(words), ins)],
                           variables)
    flags = ins.flags
    for name, val in flags.items():  # drop `--mount=...` and friends
        value = value.replace(f"--{name}={val}" if val else f"--{name}", "", 1)
    script = _HEREDOC_MARK.sub("", value) if "<<" in value else value
    return _nested(_split(script, ins, variables), variables)


def _nested(commands: list[Command], variables) -> list[Command]:
    out = []
    for cmd in commands:
        out.append(cmd)
        words = cmd.words
        if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in ("sh", "bash") and "-c" in words[1:-1]:
            script = words[words.index("-c") + 1]
            out.extend(_split(script, cmd.instruction, variables))
    return out


def _split(script: str, ins: Instruction, variables) -> list[Command]:
    tokens = _tokens(script)
    out, current = [], []
    for tok in tokens:
        if tok in _OPERATORS:
            if current:
                out.append(current)
            current = []
        else:
            current.append(tok)
    if current:
        out.append(current)
    return [Command([expand(w, variables) if "$" in w else w for w in words], words, ins) for words in out]


_SUBSTITUTION = lazy(r"\$\((?:[^()]|\([^()]*\))*\)|`[^`]*`")


# The words of a RUN script as `shlex.shlex(posix=True, punctuation_chars=";&|()")` with
# `whitespace_split` reads them, matched by whole pieces rather than one character at a time,
# all at once: a run of operator characters, a comment (to the end: newlines are `;` by then),
# a word made of bare text, '...', "..." and backslash escapes, or else the one character no
# token starts with (an unbalanced quote, a trailing backslash: no word is that character).
_TOKEN = lazy(r"""[;&|()]+|\#|(?:[^ \t\r\n;&|()'"\\\#]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+|[^ \t\r\n]""",
              re.DOTALL)
_PIECE = lazy(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)|([^'"\\]+)""", re.DOTALL)
_IN_DOUBLE = lazy(r"""\\(["\\])""")


def _tokens(script: str) -> list[str]:
    if "$(" in script or "`" in script:  # `$(nproc)` is one word to the command around it
        script = _SUBSTITUTION.sub("SUBST", script)
    tokens = _TOKEN.findall(script.replace("\n", " ; "))
    if "'" not in script and '"' not in script and "\\" not in script:
        # nothing quoted or escaped: each token is a word as it is, up to a comment
        return tokens[:tokens.index("#")] if "#" in tokens else tokens
    out: list[str] = []
    for token in tokens:
        if token == "#":
            break
        if "'" in token or '"' in token or "\\" in token:
            if len(token) == 1:  # unbalanced quotes or a trailing backslash: fall back to plain words
                return re.findall(r"&&|\|\||[;|&()]|[^\s;|&()]+", script)
            token = _unquote(token)
        out.append(token)
    return out


def _unquote(word: str) -> str:
    parts = []
    for single, double, escaped, bare in _PIECE.findall(word):
        if bare:
            parts.append(bare)
        elif escaped:
            parts.append(escaped)
        elif double:
            parts.append(_IN_DOUBLE.sub(r"\1", double))
        else:
            parts.append(single)
    return "".join(parts)


_ASSIGNMENT = lazy(r"[A-Za-z_][A-Za-z0-9_]*=.*")
_PIP = lazy(r"pip[0-9.]*")


def command_name(cmd: Command) -> tuple[str, list[str]]:
    """The program a command runs and its arguments, past `sudo`, `env` and
    leading VAR=value assignments (the arguments are shared: do not change them)."""
    if cmd.name is None:
        cmd.name = _command_name(cmd.words)
    return cmd.name


def _command_name(words: list[str]) -> tuple[str, list[str]]:
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("sudo", "env", "exec", "time", "nohup") or "=" in word and _ASSIGNMENT.fullmatch(word):
            i += 1
            continue
        if word == "-E" and i and words[i - 1] == "sudo":
            i += 1
            continue
        return word.rsplit("/", 1)[-1], words[i + 1:]
    return "", []


_APT = {"apt-get", "apt", "aptitude"}
_RPM = {"yum", "dnf", "microdnf", "tdnf"}
_PIP_VALUE_OPTIONS = {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url",
                      "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix",
                      "--root", "--upgrade-strategy", "--platform", "--python-version",
                      "--only-binary", "--no-binary", "--trusted-host", "-e", "--editable",
                      "--src", "--cache-dir", "--python", "-C", "--config-settings"}
_APT_VALUE_OPTIONS = {"-o", "-t", "--target-release", "-c", "--option"}
_RPM_VALUE_OPTIONS = {"--enablerepo", "--disablerepo", "--setopt", "--repo", "--releasever",
                      "--installroot", "-x", "--exclude", "--repofrompath"}
_CONDA_VALUE_OPTIONS = {"-c", "--channel", "-n", "--name", "-p", "--prefix", "--file"}
# the programs installed_packages reads besides pip (pip*, python* -m pip)
_MANAGERS = _APT | _RPM | {"uv", "zypper", "apk", "conda", "mamba", "micromamba"}


def pip_arguments(cmd: Command) -> list[str] | None:
    """The words after `pip install` (pip, pip3, python -m pip, uv pip), or None."""
    name, args = command_name(cmd)
    if name.startswith("python") and args[:2] == ["-m", "pip"]:
        args = args[2:]
    elif name == "uv" and args[:1] == ["pip"]:
        args = args[1:]
    elif not _PIP.fullmatch(name):
        return None
    return args[1:] if args[:1] == ["install"] else None


def installed_packages(cmd: Command) -> list[Package]:
    """Packages a command installs, by package manager."""
    name, args = command_name(cmd)
    if name not in _MANAGERS and not name.startswith(("pip", "python")):
        return []  # no package manager runs (nor pip: pip_arguments would say None)
    pip_args = pip_arguments(cmd)
    if pip_args is not None:
        return _packages(cmd, "pip", pip_args, _PIP_VALUE_OPTIONS)
    if name in _APT and "install" in args:
        return _packages(cmd, "apt", args[args.index("install") + 1:], _APT_VALUE_OPTIONS)
    if name in _RPM:
        for verb in ("install", "reinstall"):
            if verb in args:
                rest = args[args.index(verb) + 1:]
                return _packages(cmd, "yum", rest, _RPM_VALUE_OPTIONS)
    if name == "zypper":
        for verb in ("install", "in"):
            if verb in args:
                return _packages(cmd, "zypper", args[args.index(verb) + 1:], {"-r", "--repo"})
    if name == "apk" and "add" in args:
        return _packages(cmd, "apk", args[args.index("add") + 1:], {"-X", "--repository"})
    if name in ("conda", "mamba", "micromamba") and "install" in args:
        return _packages(cmd, "conda", args[args.index("install") + 1:], _CONDA_VALUE_OPTIONS)
    return []


def _packages(cmd: Command, manager: str, args: list[str], value_options: set[str]) -> list[Package]:
    out = []
    skip = False
    offset = len(cmd.words) - len(args)
    for i, word in enumerate(args):
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in value_options
            continue
        raw = cmd.raw[offset + i] if offset + i < len(cmd.raw) else word
        out.append(Package(manager, word, raw, cmd))
    return out


# (pattern, whether the digits end in the minor: cu118 and cupy-cuda102 do, cu12 does not)
_WHEELS = (
    (lazy(r"cupy-cuda(?P<v>\d+)(?P<x>x?)(?![\w-])", re.I), True),
    (lazy(r"nvidia-[a-z-]+-cu(?P<v>\d+)(?![\w-])", re.I), False),
    (lazy(r"(?:torch|torchvision|torchaudio)[=<>~!]=?[\w.]+\+cu(?P<v>\d+)$", re.I), True),
    (lazy(r"jax(?:lib)?\[cuda(?P<v>\d+)", re.I), False),
    (lazy(r"https?://\S+/whl/(?:nightly/)?cu(?P<v>\d+)/?$"), True),
    (lazy(r"https?://\S+/(?:torch|torchvision|torchaudio)-[^/\s]*(?:%2B|\+)cu(?P<v>\d+)[^/\s]*\.whl$",
                re.I), True),
    (lazy(r"mxnet-cu(?P<v>\d+)(?:mkl)?(?![\w-])", re.I), True),
)


def cuda_wheels(cmd: Command) -> list[tuple[str, int]]:
    """(word, CUDA major) for each CUDA-suffixed package or index URL a `pip install`
    names: `cupy-cuda12x`, `nvidia-cublas-cu12`, `torch==2.3.0+cu121`, `jax[cuda12]`,
    `mxnet-cu112`, `--index-url https://download.pytorch.org/whl/cu121` and wheel URLs
    such as `.../torch-1.6.0%2Bcu101-cp38-cp38-linux_x86_64.whl`. Variables are expanded
    to judge the word; the word is returned as written, to point at."""
    args = pip_arguments(cmd) or []
    offset = len(cmd.words) - len(args)
    out = []
    for i, word in enumerate(args):
        raw = cmd.raw[offset + i] if offset + i < len(cmd.raw) else word
        if word.startswith("--") and "=" in word:  # --extra-index-url=https://...
            word, raw = word.split("=", 1)[1], raw.split("=", 1)[-1]
        if "cu" not in word.lower():  # every pattern needs it: most words are not tried (nor compiled)
            continue
        for pattern, with_minor in _WHEELS:
            match = pattern.match(word)
            if match:
                digits = match["v"]
                whole = not with_minor or match.groupdict().get("x")
                out.append((raw, numbers.whole(digits if whole else digits[:-1])))
                break
    return out


# ---------------------------------------------------------------- positions


def locate(doc: Document, ins: Instruction, needle: str, after: int | None = None) -> Span:
    """The span of `needle` inside an instruction (first occurrence at or after
    `after`); the whole instruction when it is not written there literally."""
    start = ins.start if after is None else after
    at = doc.text.find(needle, start, ins.end) if needle else -1
    if at < 0:
        return doc.index.span(ins.start, ins.end)
    return doc.index.span(at, at + len(needle))


def word_offsets(doc: Document, ins: Instruction, word: str) -> tuple[int, int] | None:
    """Offsets of `word` standing alone (not inside a longer name or path) in an instruction."""
    pattern = re.compile(r"(?<![\w./${-])" + re.escape(word) + r"(?![\w.}-])")
    match = pattern.search(doc.text, ins.start, ins.end)
    return (match.start(), match.end()) if match else None


def package_span(doc: Document, package: Package) -> Span:
    """Where an installed package is named: the word itself, not a longer name holding it."""
    at = word_offsets(doc, package.command.instruction, package.raw)
    if at is None:
        return locate(doc, package.command.instruction, package.raw)
    return doc.index.span(*at)


_KEYWORD = lazy(r"\s*[A-Za-z]+")


def keyword_end(doc: Document, ins: Instruction) -> int:
    """Offset just after the instruction's keyword (`RUN`, `ENV`, ...)."""
    match = _KEYWORD.match(doc.text, ins.start, ins.end)
    return match.end() if match else ins.start


# ---------------------------------------------------------------- what a stage does


class Hit(Frozen):
    """Evidence found in an instruction: `text` is written there (to point at);
    `label` says what it is in a message (defaults to `text`)."""

    __slots__ = ("instruction", "text", "label")

    instruction: Instruction
    text: str
    label: str

    def __init__(self, instruction: Instruction, text: str, label: str = "") -> None:
        freeze(self, instruction, text, label)

    @property
    def shown(self) -> str:
        return self.label or f"`{self.text}`"


def program_word(cmd: Command) -> str:
    """The program word of a command as written (`/usr/local/cuda/bin/nvcc`)."""
    name, args = command_name(cmd)
    index = len(cmd.words) - len(args) - 1
    return cmd.raw[index] if 0 <= index < len(cmd.raw) else name


_CMAKE_CUDA = lazy(r"-D(?:CMAKE_CUDA_\w+|CUDA_TOOLKIT_ROOT_DIR|CUDAToolkit_ROOT)=|"
                         r"-D\w*(?:CUDA|CUBLAS)\w*=(?:ON|1|TRUE|YES)$", re.IGNORECASE)
_MAKE_CUDA = lazy(r"(?:CUDA_HOME|CUDA_PATH|NVCC|NVCC_GENCODE)=")
_CUDA_HEADER = lazy(r"#\s*include\s*[<\"](?:cuda|cuda_runtime|cuda_runtime_api|cublas_v2|"
                          r"cublas|cufft|curand|cusparse|cusolverDn|cudnn|nccl|npp|nvjpeg)\.h[>\"]")
_EXTENSION_ENV = ("TORCH_CUDA_ARCH_LIST", "FORCE_CUDA")
# Horovod is published as a source distribution only: `pip install horovod` compiles it,
# and with GPU operations requested (HOROVOD_GPU_OPERATIONS=NCCL ...) it builds its CUDA
# kernels with nvcc.
_HOROVOD_GPU_ENV = ("HOROVOD_GPU", "HOROVOD_GPU_OPERATIONS", "HOROVOD_GPU_ALLREDUCE", "HOROVOD_GPU_BROADCAST")


def cuda_builds(sf: StageFacts) -> list[Hit]:
    """Where a stage's own RUN instructions compile CUDA code: `nvcc`, CMake with
    CUDA options, `make` pointed at a CUDA toolkit, CUDA extension builds
    (`setup.py` or `pip install` with TORCH_CUDA_ARCH_LIST or FORCE_CUDA set), and
    sources written in the RUN (heredocs, `echo` lines) that include CUDA headers."""
    if sf.cuda_builds is None:
        sf.cuda_builds = _cuda_builds(sf)
    return list(sf.cuda_builds)  # the caller's own list (native_builds adds to it)


def _cuda_builds(sf: StageFacts) -> list[Hit]:
    out = []
    horovod_env = any(k in sf.env for k in _HOROVOD_GPU_ENV)
    extension_env = any(k in sf.env for k in _EXTENSION_ENV)
    for cmd in sf.commands:
        name, args = command_name(cmd)
        if name == "nvcc":
            out.append(Hit(cmd.instruction, program_word(cmd)))
            continue
        if name in ("cmake", "make"):
            pattern = _CMAKE_CUDA if name == "cmake" else _MAKE_CUDA
            word = next((w for w in args if pattern.match(w)), None)
            if word is not None:
                setting = word.split("=", 1)[0] + "="
                out.append(Hit(cmd.instruction, setting, f"`{name} {setting}...`"))
            continue
        if not name.startswith(("python", "pip", "uv")):
            continue  # no pip install (pip_arguments) and no setup.py: neither build below
        # variables set for the command alone (`FORCE_CUDA=1 pip install ...`)
        inline = {w.split("=", 1)[0] for w in cmd.words[: len(cmd.words) - len(args)] if "=" in w}
        if (horovod_env or not inline.isdisjoint(_HOROVOD_GPU_ENV)) and \
                any(w.lower().startswith("horovod") for w in pip_arguments(cmd) or ()):
            word = program_word(cmd)
            out.append(Hit(cmd.instruction, word, f"`{word}` (a Horovod GPU build)"))
        elif (extension_env or not inline.isdisjoint(_EXTENSION_ENV)) and _source_build(cmd):
            word = program_word(cmd)
            out.append(Hit(cmd.instruction, word, f"`{word}` (a CUDA extension build, "
                                                  f"TORCH_CUDA_ARCH_LIST or FORCE_CUDA set)"))
    if not may_match(_CUDA_HEADER, stage_text(sf.stage, ("RUN",))):
        return out
    seen = {h.instruction.start for h in out}
    for ins in sf.stage.instructions:
        match = _CUDA_HEADER.search(ins.value) if ins.keyword == "RUN" else None
        if match and ins.start not in seen:
            out.append(Hit(ins, match[0]))
    return out


def _source_build(cmd: Command) -> bool:
    """`setup.py build/install/develop/bdist_wheel`, or a pip install that builds from
    source (a local path, a git URL, `--no-build-isolation`, `--no-binary`)."""
    name, args = command_name(cmd)
    if name.startswith("python") and "setup.py" in args:
        return bool({"build", "build_ext", "install", "develop", "bdist_wheel"} & set(args))
    pip_args = pip_arguments(cmd)
    return pip_args is not None and any(
        a in ("--no-build-isolation", "-e", "--editable", "--no-binary") or a.startswith(
            ("git+", ".", "/", "--no-binary=")) for a in pip_args)


_NATIVE_BUILDERS = {"cmake", "make", "ninja", "meson", "gcc", "g++", "cc", "c++", "clang",
                    "clang++", "nvcc", "bazel", "cargo"}


def native_builds(sf: StageFacts) -> list[Hit]:
    """CUDA builds plus any compiler or build-system run (binaries tied to the OS)."""
    out = cuda_builds(sf)
    for cmd in sf.commands:
        name, args = command_name(cmd)
        if name in _NATIVE_BUILDERS or (name.startswith("python") and "setup.py" in args):
            out.append(Hit(cmd.instruction, program_word(cmd)))
    return out


# canonical library names of gpulint.knowledge.images, by linker flag
_LINK_FLAGS = {
    "cublas": "cublas", "cublasLt": "cublas", "cufft": "cufft", "cufftw": "cufft",
    "curand": "curand", "cusolver": "cusolver", "cusparse": "cusparse", "nvjpeg": "nvjpeg",
    "nccl": "nccl", "cudnn": "cudnn", "nvToolsExt": "nvtx", "nvinfer": "tensorrt",
}
_LINK = lazy(r"(?:-l|\bCUDA::)(cublasLt|cublas|cufftw|cufft|curand|cusolver|cusparse|"
                   r"npp\w*|nvjpeg|nccl|cudnn|nvToolsExt|nvinfer)\b(?!_static)")


def linked_libraries(sf: StageFacts) -> dict[str, Hit]:
    """CUDA libraries a stage's RUN instructions link dynamically (`-lcublas`,
    CMake `CUDA::cublas`), by canonical name, with where the first link is."""
    out: dict[str, Hit] = {}
    if not may_match(_LINK, stage_text(sf.stage, ("RUN",))):
        return out
    for ins in sf.stage.instructions:
        if ins.keyword != "RUN":
            continue
        for match in _LINK.finditer(ins.value):
            flag = match[1]
            name = "npp" if flag.startswith("npp") else _LINK_FLAGS[flag]
            out.setdefault(name, Hit(ins, match[0]))
    return out


# What installing a package (or copying a path) brings, by canonical library name.
_PACKAGE_LIBRARY_PATTERNS = (
    (r"(lib)?cublas", {"cublas"}), (r"(lib)?cufft", {"cufft"}),
    (r"(lib)?curand", {"curand"}), (r"(lib)?cusolver", {"cusolver"}),
    (r"(lib)?cusparse", {"cusparse"}), (r"(lib)?npp", {"npp"}),
    (r"(lib)?nvjpeg", {"nvjpeg"}), (r"(lib)?nccl", {"nccl"}),
    (r"(lib)?cudnn", {"cudnn"}), (r"(lib)?nvinfer|tensorrt", {"tensorrt"}),
    (r"nvidia-(cublas|cufft|curand|cusolver|cusparse|npp|nvjpeg|nccl|cudnn)", None),
    (r"cuda-cudart|nvidia-cuda-runtime|cuda-runtime|cudart", {"cudart"}),
    (r"cuda-libraries|cuda-toolkit|cudatoolkit|cuda-\d+-\d+$|cuda$",
     {"cudart", "cublas", "cufft", "curand", "cusolver", "cusparse", "npp", "nvjpeg", "nvtx"}),
    (r"torch$|torch[=<>~]|cupy-cuda", {"cudart", "cublas", "cufft", "curand",
                                        "cusolver", "cusparse", "nccl", "cudnn"}),
)
_PACKAGE_LIBRARIES = tuple((lazy(pattern), libraries) for pattern, libraries in _PACKAGE_LIBRARY_PATTERNS)
# whether one of them matches: most names match none, which one match tells
_ANY_PACKAGE_LIBRARY = lazy("|".join(f"(?:{pattern})" for pattern, _ in _PACKAGE_LIBRARY_PATTERNS))


def provided_libraries(names: list[str]) -> set[str]:
    """CUDA libraries that installing these packages (or copying these paths) adds."""
    out: set[str] = set()
    for raw in names:
        name = raw.lower().rsplit("/", 1)[-1]
        if not _ANY_PACKAGE_LIBRARY.match(name):
            continue
        for pattern, libraries in _PACKAGE_LIBRARIES:
            match = pattern.match(name)
            if match:
                out |= libraries if libraries is not None else {match[1]}
    return out


_TOOLKIT_PACKAGE = lazy(r"cuda(-toolkit|-nvcc|-compiler|-minimal-build|-libraries-dev)?"
                              r"(-\d+-\d+|-\d+\.\d+)?$|cuda-toolkit|cudatoolkit-dev|"
                              r"nvidia-cuda-nvcc")
# NVIDIA's installers: the CUDA runfile, `cuda_<version>_<bundled driver>_linux[_arch].run`
# (from CUDA 13.4 `cuda_<version>_linux.run`, without a driver), and the driver's own,
# `NVIDIA-Linux-<arch>-<version>.run`.
_CUDA_RUNFILE = lazy(r"cuda_(\d+)\.(\d+)(?:\.\d+)?_(?:(\d+\.\d+(?:\.\d+)?)_)?linux[\w.-]*\.run$")
_CUDA_RUNFILE_NAMED = lazy(r"cuda_[^/\s]*linux[^/\s]*\.run$")  # the version behind a variable
_DRIVER_RUNFILE = lazy(r"NVIDIA-Linux-[\w.${}-]+\.run$")
_SHELLS = ("sh", "bash", "dash")


class Runfile(Frozen):
    """One run of an NVIDIA installer in a RUN: `sh cuda_12.4.1_550.54.15_linux.run --silent`
    or `./NVIDIA-Linux-x86_64-570.133.20.run -s`."""

    __slots__ = ("command", "written", "word", "name", "product", "args", "cuda", "bundled")

    command: Command
    written: str  # the installer's file name as written, to point at
    word: int  # the index of the word that names it in `command.raw`
    name: str  # the file name, variables expanded
    product: str  # "cuda" or "driver"
    args: tuple[str, ...]  # the installer's own options
    cuda: tuple[int, int] | None  # the CUDA runfile's version, when its name says
    bundled: str | None  # the driver a CUDA runfile name says it bundles

    def __init__(self, command: Command, written: str, word: int, name: str, product: str,
                 args: tuple[str, ...], cuda: tuple[int, int] | None = None, bundled: str | None = None) -> None:
        freeze(self, command, written, word, name, product, args, cuda, bundled)

    def has(self, *options: str) -> bool:
        """Whether one of `options` is given (`--toolkit`, `--extract=/tmp/x` as `--extract`)."""
        return any(a.split("=", 1)[0] in options for a in self.args)

    @property
    def installs(self) -> bool:
        """Whether it installs at all: `--extract` (CUDA), `-x`/`--extract-only`, `--info`,
        `--check` (the driver's, a makeself archive) and `--help` only unpack or print."""
        return not self.has("--extract", "-x", "--extract-only", "--info", "--check", "--help", "-h",
                            "--list", "--uninstall")

    @property
    def chosen(self) -> set[str]:
        """The CUDA runfile's components asked for; none means its default selection,
        which includes the bundled driver."""
        return {a.split("=", 1)[0] for a in self.args} & {"--driver", "--toolkit", "--samples"}

    def installs_toolkit(self) -> bool:
        return self.product == "cuda" and self.installs and (not self.chosen or "--toolkit" in self.chosen)

    def installs_driver(self) -> bool:
        if not self.installs:
            return False
        if self.product == "driver":
            return True
        # a name that gives the version and no driver: a runfile without one (CUDA 13.4 on)
        bundles = self.bundled is not None or self.cuda is None
        return bundles and (not self.chosen or "--driver" in self.chosen)


def runfiles(sf: StageFacts) -> list[Runfile]:
    """The NVIDIA installers a stage's own RUN commands run, as the program
    (`./cuda_...run`, `/tmp/NVIDIA-Linux-...run`) or as a shell's script; one saved under
    another name (`wget -O cuda.run .../cuda_12.6.0_560.28.03_linux.run`) is known by
    the name in its address."""
    if sf.runfiles is None:
        sf.runfiles = _runfiles(sf)
    return sf.runfiles


def _runfiles(sf: StageFacts) -> list[Runfile]:
    out = []
    saved = _saved_downloads(c for member in sf.ancestors for c in member.commands)
    for cmd in sf.commands:
        name, args = command_name(cmd)
        if name in _SAVED_AS:
            saved.update(_saved_downloads([cmd]))  # the latest download under a name counts
        if name in _SHELLS:
            script = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
            if script is None or "-c" in args[:script]:
                continue  # `sh -c '...'`: its commands are commands of the RUN already
            name, args = args[script].rsplit("/", 1)[-1], args[script + 1:]
        index = len(cmd.words) - len(args) - 1
        written = name
        name = saved.get(name, name)
        if ".run" not in name:  # none of the installers' names
            continue
        if 0 <= index < len(cmd.raw):
            written = cmd.raw[index].rsplit("/", 1)[-1]
        cuda = _CUDA_RUNFILE.match(name)
        if cuda is not None:
            out.append(Runfile(cmd, written, index, name, "cuda", tuple(args),
                               (whole(cuda[1]), whole(cuda[2])), cuda[3]))
        elif _CUDA_RUNFILE_NAMED.match(name):
            out.append(Runfile(cmd, written, index, name, "cuda", tuple(args)))
        elif _DRIVER_RUNFILE.match(name):
            out.append(Runfile(cmd, written, index, name, "driver", tuple(args)))
    return out


# Where a download is saved: wget's `-O FILE` / `--output-document=FILE`, curl's `-o FILE`
# / `--output FILE` (curl's `-O` takes the address's own name; wget's `-o` is its log).
_SAVED_AS = {"wget": ("-O", "--output-document"), "curl": ("-o", "--output")}


def _saved_downloads(commands: Iterable[Command]) -> dict[str, str]:
    """{saved file name: the runfile name of its address} for the NVIDIA installers the
    commands download under another name."""
    out = {}
    for cmd in commands:
        program, args = command_name(cmd)
        options = _SAVED_AS.get(program)
        if options is None:
            continue
        target = address = None
        for i, arg in enumerate(args):
            option, equals, value = arg.partition("=")
            if arg in options and i + 1 < len(args):
                target = args[i + 1]
            elif equals and option == options[1]:
                target = value
            elif "://" in arg:
                address = arg.rsplit("/", 1)[-1]
        if target and address and _RUNFILE_ADDRESS.match(address):
            out[target.rsplit("/", 1)[-1]] = address if address.endswith(".run") else address + ".run"
    return out


# an installer's address: older CUDA runfiles were published without `.run`
_RUNFILE_ADDRESS = lazy(r"(cuda_[^/\s]*linux[^/\s]*|NVIDIA-Linux-[^/\s]+\.run)$")


def installs_toolkit(sf: StageFacts) -> bool:
    """The stage (or a stage it is built on) installs a CUDA compiler itself."""
    if any(_TOOLKIT_PACKAGE.match(p.name.split("=")[0].lower()) for p in sf.chain_packages()):
        return True
    if any(r.installs_toolkit() for member in sf.family for r in runfiles(member)):
        return True
    # a COPY or ADD of the toolkit's tree (the joined text holds it only where a value does)
    return any("/usr/local/cuda" in stage_text(s, ("COPY", "ADD")) for s in sf.chain)


def copied_paths(stage: Stage) -> list[str]:
    """Source paths of the stage's COPY/ADD instructions (flags dropped)."""
    out = []
    for ins in stage.instructions:
        if ins.keyword in ("COPY", "ADD"):
            words = [w for w in ins.value.split() if not w.startswith("--")]
            out.extend(words[:-1])
    return out


# ---------------------------------------------------------------- what the image is


def cuda_variant(image, kind: str) -> str | None:
    """The `kind` ("runtime" or "devel") counterpart of a CudaImage: same CUDA version, OS
    and cuDNN/TensorRT choice (`12.9.2-cudnn-devel-ubuntu24.04` -> `...-cudnn-runtime-...`).
    An nvidia/cuda counterpart is one the tag catalog calls supported: an end-of-life one
    gives way to the supported patch release of the same CUDA minor. None where NVIDIA
    publishes no such pair (NGC frameworks, tags without an OS) or none is supported."""
    other = "devel" if kind == "runtime" else "runtime"
    tag = image.ref.tag or ""
    if image.family == "nvidia-cuda" and image.os:
        flavor = kind if image.flavor in ("base", other) else image.flavor.replace(other, kind)
        return _supported(image, image.ref.with_tag(f"{image.cuda}-{flavor}-{image.os}", "nvidia/cuda"))
    if image.family == "pytorch" and tag.endswith(other):
        return image.ref.with_tag(tag[: -len(other)] + kind)
    return None


def _supported(image, variant: str) -> str | None:
    ref = parse_image_ref(variant)
    status = tag_status(ref) if ref is not None else None
    if status is None or status.status == "supported":
        return variant
    better = ref.with_tag(status.suggestion, status.repository) if status.suggestion else None
    other = cuda_image(better) if better else None
    return better if other is not None and other.cuda_major_minor == image.cuda_major_minor else None


_MANAGEMENT_TOOL = lazy(r"dcgm|device-plugin|gpu-feature-discovery|kubelet-plugin|"
                              r"nvidia-ctk|container-toolkit|gpu-operator|mig-parted|mig-manager|"
                              r"nvidia-validator|nv-hostengine|dra-driver|nvidia-driver|"
                              r"nvidia-installer", re.IGNORECASE)
# What an ENTRYPOINT or CMD runs when the image is a GPU device plugin or exporter, or a
# packaging job that only uses a CUDA base as its operating system.
_NON_CUDA_PROGRAM = lazy(r"[\w.-]*device-plugin(?![\w.])|[\w.-]*[-_]exporter(?![\w.])|"
                               r"\b(?:rpmbuild|rpmrebuild|dpkg-deb|dpkg-buildpackage|debuild)\b")
_TRUE = ("1", "t", "true")


def not_cuda_workload(doc: Document) -> Hit | None:
    """Evidence that the image manages GPUs or never runs CUDA on them, from what the
    Dockerfile says; None for an ordinary CUDA workload. Workload rules (GL307, GL313,
    GL601) stay quiet for such images. The evidence, in order:

    - a GPU-management tool or driver container named by the shipped stage's
      ENTRYPOINT, CMD, LABEL or COPY/ADD, or a management package it installs;
    - `NVIDIA_DISABLE_REQUIRE=true` together with `NVIDIA_VISIBLE_DEVICES=all`, the way
      device plugins and GPU exporters run (they must see every GPU on any driver);
    - an ENTRYPOINT or CMD that runs a device plugin, an exporter or a packaging tool
      (rpmbuild, rpmrebuild, dpkg-deb);
    - NVIDIA_DRIVER_CAPABILITIES=utility alone: the runtime then mounts NVML and
      nvidia-smi but not libcuda, so the image can only use NVML (graphics or video
      capabilities make it a GPU workload of another kind, still judged).

    Deleting the image's cuda-compat libraries is no such evidence on its own: CUDA
    workloads do it too, to keep forward compatibility from being forced on them
    (NCCL test images on EFA purge `cuda-compat-*`)."""
    final = facts(doc).final
    if final is None:
        return None
    hit = _final_mention(doc, _MANAGEMENT_TOOL)
    if hit is not None:
        return replace(hit, label=f"`{hit.text}` (a GPU-management tool)")
    for package in final.chain_packages():
        if _MANAGEMENT_PACKAGE.match(package.name):
            return Hit(package.command.instruction, package.raw,
                       f"`{package.raw}` (a GPU-management package)")
    disable, visible = final.env.get("NVIDIA_DISABLE_REQUIRE"), final.env.get("NVIDIA_VISIBLE_DEVICES")
    if disable is not None and visible is not None and disable.value.strip().lower() in _TRUE \
            and visible.value.strip() == "all":
        return Hit(disable.instruction, "NVIDIA_DISABLE_REQUIRE", "`NVIDIA_DISABLE_REQUIRE=true` with "
                   "`NVIDIA_VISIBLE_DEVICES=all` (how device plugins and GPU exporters run)")
    hit = first_mention(final.chain, ("ENTRYPOINT", "CMD"), _NON_CUDA_PROGRAM)
    if hit is not None:
        return replace(hit, label=f"`{hit.text}` (a device plugin, exporter or packaging tool)")
    caps = final.env.get("NVIDIA_DRIVER_CAPABILITIES")
    named = {c.strip().lower() for c in caps.value.split(",")} - {""} if caps is not None else set()
    if named and named <= {"utility"}:  # empty means the default, compute,utility
        return Hit(caps.instruction, "NVIDIA_DRIVER_CAPABILITIES",
                   f"`NVIDIA_DRIVER_CAPABILITIES={caps.value}` (no `compute`: NVML only, no libcuda)")
    return None


_REMOVE_VERBS = {"purge", "remove", "autoremove", "erase"}
_PACKAGE_TOOLS = {"apt-get", "apt", "dnf", "yum", "microdnf", "zypper"}
_COMPAT_DIR = lazy(r"^/usr/local/cuda(?:-[\d.]+)?/compat/?(?:\*|lib\*?)?$")


def compat_removed(doc: Document) -> Hit | None:
    """Where the shipped stage (or a stage it is built on) deletes the base image's
    cuda-compat libraries: a package manager removing `cuda-compat-*`, `rpm -e`, or
    `rm` of `/usr/local/cuda*/compat`. Such an image keeps its `NVIDIA_REQUIRE_CUDA`
    but can no longer run through forward compatibility."""
    final = facts(doc).final
    if final is None:
        return None
    for cmd in final.chain_commands():
        program, args = command_name(cmd)
        removing = (program in _PACKAGE_TOOLS and _REMOVE_VERBS & set(args)) or \
            (program == "rpm" and any(a.startswith("-e") for a in args))
        if not removing and program != "rm":
            continue  # no word of it removes anything
        offset = len(cmd.words) - len(args)
        for word, raw in zip(args, cmd.raw[offset:]):
            if removing and word.startswith("cuda-compat") or program == "rm" and _COMPAT_DIR.match(word):
                return Hit(cmd.instruction, raw, f"`{raw}`")
    return None


# How a Dockerfile builds the CUDA layer of a Jetson image: NVIDIA's Jetson package
# repository, L4T packages, the Tegra driver directory.
_JETSON_BUILD = lazy(r"repo\.download\.nvidia\.com/jetson|\bnvidia-l4t-[\w-]+|"
                           r"/usr/lib/aarch64-linux-gnu/tegra\b|\bNVIDIA_REQUIRE_JETPACK\b")


def jetson_image(doc: Document) -> Hit | None:
    """Evidence that the shipped image is a Jetson (L4T) image: built on an L4T image
    (`nvcr.io/nvidia/l4t-*`, `deepstream-l4t`, `dustynv/*`) or building the CUDA layer of
    one itself. Jetson GPUs are integrated: the runtime mounts the driver files its CSV
    lists name (whatever NVIDIA_DRIVER_CAPABILITIES says) and containers run with
    `--runtime nvidia`, with no device-plugin accounting to bypass."""
    final = facts(doc).final
    return jetson_stage(final) if final is not None else None


def jetson_stage(sf: StageFacts) -> Hit | None:
    """Evidence that a stage builds a Jetson (L4T) image (see jetson_image)."""
    if l4t_base(sf):
        return Hit(sf.root.from_instruction, sf.root.image, f"the L4T base `{sf.image}`")
    return first_mention(sf.chain, ("RUN", "ENV", "ARG", "COPY", "ADD"), _JETSON_BUILD)


def l4t_base(sf: StageFacts) -> bool:
    """The stage is built on one of NVIDIA's Jetson images or dusty-nv's (jetson-containers)."""
    if sf.l4t is None:
        sf.l4t = bool(sf.image) and jetson_reference(sf.image) is not None
    return sf.l4t


_L4T_RELEASE = lazy(r"(?:^|[-_])r(\d+)\.(\d+)")


def l4t_release(sf: StageFacts) -> tuple[int, int] | None:
    """The L4T release an L4T base's tag names (`r32.7.1` -> (32, 7)); None when it names none."""
    ref = parse_image_ref(sf.image) if sf.image and l4t_base(sf) else None
    match = _L4T_RELEASE.search(ref.tag or "") if ref is not None else None
    return (whole(match[1]), whole(match[2])) if match else None


_DRIVER_CONTAINER = lazy(r"nvidia-driver|nvidia-installer|driver container|vgpu-manager",
                               re.IGNORECASE)


def driver_container(doc: Document) -> Hit | None:
    """Evidence that the image is a driver container (GPU Operator driver, vGPU
    manager), the one kind of image that ships the driver, to install it on the host."""
    return _final_mention(doc, _DRIVER_CONTAINER)


def _final_mention(doc: Document, pattern: re.Pattern) -> Hit | None:
    """The first ENTRYPOINT, CMD, LABEL or COPY/ADD of the shipped stage (or a stage it
    is built on) that `pattern` finds something in."""
    final = facts(doc).final
    return first_mention(final.chain if final is not None else (),
                         ("ENTRYPOINT", "CMD", "LABEL", "COPY", "ADD"), pattern)


def stage_text(stage: Stage, keywords: tuple[str, ...]) -> str:
    """The values of a stage's instructions with one of `keywords`, joined: where the literal
    sieve (`may_match`) rules a pattern out in it, the pattern can match in none of them, and
    the instructions need not be sieved one by one."""
    texts = stage._texts
    if texts is None:
        texts = stage._texts = {}
    text = texts.get(keywords)
    if text is None:
        text = texts[keywords] = "\n".join([i.value for i in stage.instructions if i.keyword in keywords])
    return text


def run_mentions(stage: Stage, pattern: re.Pattern) -> Iterable[tuple[Instruction, re.Match]]:
    """(RUN instruction, what `pattern` finds first in it) for each of a stage's RUNs it finds something in."""
    if not may_match(pattern, stage_text(stage, ("RUN",))):
        return
    for ins in stage.instructions:
        match = pattern.search(ins.value) if ins.keyword == "RUN" and may_match(pattern, ins.value) else None
        if match:
            yield ins, match


def first_mention(stages: Iterable[Stage], keywords: tuple[str, ...], pattern: re.Pattern) -> Hit | None:
    """What `pattern` finds in the first instruction of `stages` with one of `keywords`."""
    for stage in stages:
        if not may_match(pattern, stage_text(stage, keywords)):
            continue
        for ins in stage.instructions:
            if ins.keyword in keywords and may_match(pattern, ins.value):
                match = pattern.search(ins.value)
                if match:
                    return Hit(ins, match[0])
    return None


_MANAGEMENT_PACKAGE = lazy(r"datacenter-gpu-manager|nvidia-container-toolkit|"
                                 r"libnvidia-container")


# Images that are an operating system or a language runtime and nothing more:
# a stage on one of these has no CUDA unless it installs it.
_PLAIN_IMAGES = lazy(
    r"(library/)?(ubuntu|debian|alpine|centos|rockylinux|almalinux|fedora|amazonlinux|busybox|"
    r"oraclelinux|opensuse/leap|python|golang|node|openjdk|eclipse-temurin|rust|buildpack-deps)$|"
    r"(redhat/)?ubi\d+(/ubi|/ubi-minimal|/ubi-micro)?$|rockylinux/rockylinux|"
    r"distroless/\w+|nvidia/distroless/\w+|nvidia/base/ubuntu")


def plain_image(sf: StageFacts) -> bool:
    """The stage's root image is a plain OS or language image (no CUDA inside)."""
    if sf.plain is None:
        ref = parse_image_ref(sf.image) if sf.image else None
        sf.plain = ref is not None and bool(_PLAIN_IMAGES.fullmatch(ref.repository))
    return sf.plain


def is_nvidia_image(image: str | None) -> bool:
    """An image published by NVIDIA (nvidia/* on Docker Hub, nvcr.io/nvidia/*)."""
    ref = parse_image_ref(image) if image else None
    if ref is None:
        return False
    return ref.repository.startswith("nvidia/") and (ref.is_docker_hub or ref.registry == "nvcr.io")


_CODENAMES = {"bionic": ("ubuntu", "18.04"), "focal": ("ubuntu", "20.04"),
              "jammy": ("ubuntu", "22.04"), "noble": ("ubuntu", "24.04"),
              "oracular": ("ubuntu", "24.10"), "plucky": ("ubuntu", "25.04"),
              "questing": ("ubuntu", "25.10"),
              "buster": ("debian", "10"), "bullseye": ("debian", "11"),
              "bookworm": ("debian", "12"), "trixie": ("debian", "13")}
_GLIBC = {("ubuntu", "18.04"): 2.27, ("ubuntu", "20.04"): 2.31, ("ubuntu", "22.04"): 2.35,
          ("ubuntu", "24.04"): 2.39, ("debian", "10"): 2.28, ("debian", "11"): 2.31,
          ("debian", "12"): 2.36, ("debian", "13"): 2.41, ("el", "7"): 2.17, ("el", "8"): 2.28,
          ("el", "9"): 2.34, ("el", "10"): 2.39}
_EL = ("rockylinux", "ubi", "centos", "almalinux", "oraclelinux", "rhel")


def image_os(sf: StageFacts) -> tuple[str, str] | None:
    """(distribution, release) of a stage's root image: ("ubuntu", "22.04"),
    ("debian", "12"), ("el", "9") for the RHEL family, ("alpine", "3.19"); None
    when the reference does not say."""
    if sf.cuda_image is not None and sf.cuda_image.os:
        return _os_name(sf.cuda_image.os)
    ref = parse_image_ref(sf.image) if sf.image else None
    if ref is None:
        return None
    base = ref.repository.rsplit("/", 1)[-1]
    tag = (ref.tag or "").lower()
    for codename, os_name in _CODENAMES.items():
        if codename in tag:
            return os_name
    if base in ("ubuntu", "debian", "alpine") and re.match(r"\d+(\.\d+)?", tag):
        return base, re.match(r"\d+(\.\d+)?", tag)[0] if base != "debian" else tag.split(".")[0]
    if base in _EL and re.match(r"\d+", tag):
        return "el", re.match(r"\d+", tag)[0]
    match = re.match(r"ubi(\d+)", ref.repository.split("/")[0]) or re.match(r"ubi(\d+)", base)
    if match:
        return "el", match[1]
    return None


def _os_name(suffix: str) -> tuple[str, str] | None:
    match = re.match(r"([a-z]+?)(\d+(?:\.\d+)?)$", suffix)
    if not match:
        return None
    distro = "el" if match[1] in _EL else match[1]
    return distro, match[2]


def glibc(os_name: tuple[str, str]) -> float | None:
    return _GLIBC.get(os_name)
