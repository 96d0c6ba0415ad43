"""What the units of dockerd and containerd mean: which unit a file belongs to, the
files systemd merges for it (the unit, then its drop-ins), the `ExecStart=` command
that is left, and the daemon's flags on it with their places."""

from __future__ import annotations

import posixpath

from gpulint.kinds.systemd.parse import (
    EnvironmentFile,
    Setting,
    UnitFile,
    Word,
    split_places,
)
from gpulint.knowledge import dockerd_config
from gpulint.model import Document, Node, Span
from gpulint.record import Frozen, Record, freeze
from gpulint.regex import lazy

# where systemd reads units, highest priority first: a file in /etc hides one of the
# same name in /run or /lib (systemd.unit(5), "Unit File Load Path")
UNIT_DIRS = ("etc/systemd/system/", "run/systemd/system/", "usr/lib/systemd/system/", "lib/systemd/system/")
DAEMONS = {"dockerd": "docker.service", "containerd": "containerd.service"}
# prefixes systemd reads before an ExecStart program (systemd.service(5), "Command lines")
EXEC_PREFIXES = "-@:+!"


class Placement(Frozen):
    __slots__ = ("root", "unit", "priority", "dropin")

    root: str  # the node's file tree the unit belongs to, ending in "/"
    unit: str  # docker.service, containerd.service ...
    priority: int  # index in UNIT_DIRS; len(UNIT_DIRS) outside them
    dropin: bool

    def __init__(self, root: str, unit: str, priority: int, dropin: bool) -> None:
        freeze(self, root, unit, priority, dropin)


def placement(doc: Document) -> Placement:
    path = doc.abspath.replace("\\", "/")
    folder, name = posixpath.split(path)
    dropin = name.endswith(".conf")
    unit = name
    if dropin:
        base, owner = posixpath.split(folder)
        unit = owner[:-2] if owner.endswith(".service.d") else _unit_of_program(doc) or owner
        folder = base if owner.endswith(".service.d") else folder
    folder += "/"
    for priority, unit_dir in enumerate(UNIT_DIRS):
        if folder.endswith("/" + unit_dir):
            return Placement(folder[: -len(unit_dir)], unit, priority, dropin)
    return Placement(folder, unit, len(UNIT_DIRS), dropin)


def _unit_of_program(doc: Document) -> str | None:
    for setting in _exec_starts(doc):
        program = program_name(setting.words())
        if program in DAEMONS:
            return DAEMONS[program]
    return None


def _exec_starts(doc: Document) -> list[Setting]:
    tree = doc.tree if isinstance(doc.tree, UnitFile) else None
    return tree.get("Service", "ExecStart") if tree is not None else []


# Red Hat's docker 1.13 package (RHEL and CentOS 7, Fedora up to 28) installs dockerd as
# `dockerd-current`, a fork with flags of its own (`--add-registry`, `--signature-verification`)
FORKS = {"dockerd-current": "dockerd"}


def program_name(words: list[Word]) -> str | None:
    """The program an ExecStart command runs, by its file name (`dockerd`; a fork by the
    program it forks)."""
    name = _file_name(words)
    return FORKS.get(name, name) if name else None


def _file_name(words: list[Word]) -> str | None:
    if not words:
        return None
    return posixpath.basename(words[0].text.lstrip(EXEC_PREFIXES)) or None


class Flag(Record):
    """A flag of a daemon's command line: `name` its long name without dashes."""

    __slots__ = ("name", "written", "value", "doc", "word", "value_word")

    name: str
    written: str
    value: str | None
    doc: Document
    word: Word
    value_word: Word | None  # the separate word of its value, or the flag's own word

    def __init__(self, name: str, written: str, value: str | None, doc: Document, word: Word,
                 value_word: Word | None) -> None:
        self.name = name
        self.written = written
        self.value = value
        self.doc = doc
        self.word = word
        self.value_word = value_word

    @property
    def span(self) -> Span:
        end = self.value_word.end if self.value_word is not None else self.word.end
        return self.doc.index.span(self.word.start, end)

    @property
    def written_in(self) -> tuple[Document, Span]:
        """Where the flag is written: in the unit (`span`), or, for a flag systemd took from a
        variable an environment file sets (`$OPTIONS` of /etc/sysconfig/docker), in that file."""
        origin = self.word.origin
        if origin is None:
            return self.doc, self.span
        doc, start, end = origin
        value = self.value_word.origin if self.value_word is not None else None
        if value is not None and value[0] is doc:
            end = value[2]
        return doc, doc.index.span(start, end)

    @property
    def value_span(self) -> Span:
        word = self.value_word or self.word
        return self.doc.index.span(word.start, word.end)

    def value_node(self) -> Node:
        return Node(self.value, self.value_span, tag="str")

    def part_node(self, start: int) -> Node:
        """A node for value[start:], placed on that part where the value is written as it
        reads (no quotes or escapes), else on the whole value."""
        word = self.value_word or self.word
        written = self.doc.text[word.start:word.end]
        if self.value is None or not written.endswith(self.value):
            return self.value_node()
        begin = word.end - len(self.value) + start
        return Node(self.value[start:], self.doc.index.span(begin, word.end), tag="str")


class Command(Record):
    __slots__ = ("doc", "setting", "program", "flags", "opaque", "fork")

    doc: Document
    setting: Setting
    program: str | None
    flags: list[Flag]
    opaque: bool  # a word systemd expands ($OPTIONS): flags unseen here may be set
    fork: bool  # a vendor's fork of the program (FORKS), which may have more flags

    def __init__(self, doc: Document, setting: Setting, program: str | None, flags: list[Flag] | None = None,
                 opaque: bool = False, fork: bool = False) -> None:
        self.doc = doc
        self.setting = setting
        self.program = program
        self.flags = [] if flags is None else flags
        self.opaque = opaque
        self.fork = fork

    def get(self, name: str) -> list[Flag]:
        return [f for f in self.flags if f.name == name]


_UNSET = object()  # a DaemonUnit's command or environment not worked out yet


class DaemonUnit(Record):
    """One unit of a node as systemd merges it: its file and drop-ins in load order."""

    __slots__ = ("name", "root", "docs", "starts", "unit_linted", "reset", "in_node_tree", "env_files",
                 "_command", "_environment", "_origins")
    _memo = ("_command", "_environment", "_origins")

    name: str
    root: str
    docs: list[Document]
    starts: list[tuple[Document, Setting]]  # the ExecStart= lines left after resets
    unit_linted: bool  # the unit file itself is among the linted files
    reset: bool  # a drop-in clears ExecStart= (an empty ExecStart=)
    in_node_tree: bool  # a file of it lies in one of UNIT_DIRS (`root` is a node's /)
    env_files: dict[str, Document]  # the node's environment files, by path

    def __init__(self, name: str, root: str, docs: list[Document], starts: list[tuple[Document, Setting]],
                 unit_linted: bool, reset: bool = False, in_node_tree: bool = False,
                 env_files: dict[str, Document] | None = None) -> None:
        self.name = name
        self.root = root
        self.docs = docs
        self.starts = starts
        self.unit_linted = unit_linted
        self.reset = reset
        self.in_node_tree = in_node_tree
        self.env_files = {} if env_files is None else env_files
        self._command = self._environment = self._origins = _UNSET

    @property
    def command(self) -> Command | None:
        """The command systemd runs: the last ExecStart= left (more than one is refused)."""
        if self._command is _UNSET:
            self._command = self._read_command()
        return self._command

    def _read_command(self) -> Command | None:
        if not self.starts:
            return None
        doc, setting = self.starts[-1]
        env, complete = self.environment
        return read_command(doc, setting, env, complete, self._origins)

    @property
    def environment(self) -> tuple[dict[str, str], bool]:
        """The variables systemd substitutes in the command, and whether they are all known
        here. `Environment=` lines come first; the files `EnvironmentFile=` names are read
        after them, in order, and win. A file that is not among the linted files of the node
        may set any variable, and so may the packaged unit when it is not linted; only what
        a linted drop-in's last environment file sets is known then (it is read last)."""
        if self._environment is _UNSET:
            self._origins = {}
            self._environment = self._read_environment()
        return self._environment

    def _read_environment(self) -> tuple[dict[str, str], bool]:
        """(environment, complete); the places of the values the environment files set go
        into `_origins` (name -> (file, start, end))."""
        env: dict[str, str] = {}
        files: list[str] = []
        for doc in self.docs:
            for setting in doc.tree.get("Service", "Environment"):
                if not setting.value.strip():
                    env = {}  # an empty Environment= clears the list
                    self._origins = {}
                for word in setting.words():
                    name, equals, value = word.text.partition("=")
                    if equals and name:
                        env[name] = value
                        self._origins.pop(name, None)
            for setting in doc.tree.get("Service", "EnvironmentFile"):
                files = files + [setting.value.strip()] if setting.value.strip() else []
        complete = self.unit_linted
        if not complete:
            env, files = {}, files[-1:]
        for written in files:
            found = self.env_files.get(self.root + written.lstrip("-").lstrip("/"))
            if found is None or not isinstance(found.tree, EnvironmentFile) or found.tree.unsure:
                complete = False
                continue
            env.update((name, value) for name, (value, _, _) in found.tree.values.items())
            self._origins.update((name, (found, start, end))
                                 for name, (_, start, end) in found.tree.values.items())
        return env, complete


def linted_units(ctx) -> list[DaemonUnit]:
    """The linted units of the run, merged (once per run)."""
    return ctx.memo("systemd.units", lambda: daemon_units(ctx.of_kind("systemd")))


def daemon_units(docs: list[Document]) -> list[DaemonUnit]:
    """The linted units grouped by node tree and unit name, each merged as systemd does."""
    groups: dict[tuple[str, str], list[tuple[Placement, Document]]] = {}
    env_files = {doc.abspath.replace("\\", "/"): doc for doc in docs if isinstance(doc.tree, EnvironmentFile)}
    for doc in docs:
        if not isinstance(doc.tree, UnitFile):
            continue
        where = placement(doc)
        groups.setdefault((where.root, where.unit), []).append((where, doc))
    units = [_merge(root, name, found) for (root, name), found in groups.items()]
    for unit in units:
        unit.env_files = env_files
    return units


def _merge(root: str, name: str, found: list[tuple[Placement, Document]]) -> DaemonUnit:
    units = sorted((p.priority, d.abspath, d) for p, d in found if not p.dropin)
    # a drop-in of the same file name in a directory of higher priority hides the other
    dropins: dict[str, tuple[int, Document]] = {}
    for where, doc in found:
        if where.dropin:
            base = posixpath.basename(doc.abspath)
            if base not in dropins or where.priority < dropins[base][0]:
                dropins[base] = (where.priority, doc)
    order = ([units[0][2]] if units else []) + [dropins[b][1] for b in sorted(dropins)]
    starts: list[tuple[Document, Setting]] = []
    reset = False
    for doc in order:
        for setting in _exec_starts(doc):
            if not setting.value.strip():
                starts, reset = [], True  # an empty ExecStart= clears the list
            else:
                starts.append((doc, setting))
    tree = any(p.priority < len(UNIT_DIRS) for p, _ in found)
    return DaemonUnit(name, root, order, starts, bool(units), reset, tree)


def service_type(unit: DaemonUnit) -> str | None:
    """The unit's Type= (the last one set), None when no linted file sets it."""
    found = None
    for doc in unit.docs:
        for setting in doc.tree.get("Service", "Type"):
            found = setting.value.strip()
    return found


# containerd's flags that take a value (urfave/cli reads `-c`, `-config` and `--config`)
CONTAINERD_FLAGS = {"c": "config", "a": "address", "l": "log-level"}
CONTAINERD_VALUED = {"config", "address", "root", "state", "log-level"}


def read_command(doc: Document, setting: Setting, env: dict[str, str] | None = None,
                 complete: bool = True, origins: dict | None = None) -> Command:
    """The command of an ExecStart= line, with the flags of dockerd or containerd read as
    each reads its command line; with `env`, the variables systemd substitutes (all of
    them when `complete`: another is unset), and with `origins` where environment files
    set them."""
    words = setting.words()
    if env is not None and not _unsubstituted(words):
        words = substitute(words, env, complete, origins)
    program = program_name(words)
    command = Command(doc, setting, program, fork=_file_name(words) in FORKS)
    if program == "dockerd":
        _read_flags(command, words[1:], _dockerd_model())
    elif program == "containerd":
        _read_flags(command, words[1:], (CONTAINERD_FLAGS, frozenset(), CONTAINERD_VALUED))
    return command


def _unsubstituted(words: list[Word]) -> bool:
    """A `:` among the prefixes of the program turns substitution off (systemd.service(5))."""
    first = words[0].text if words else ""
    return ":" in first[: len(first) - len(first.lstrip(EXEC_PREFIXES))]


_WHOLE = lazy(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_BRACED = lazy(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def substitute(words: list[Word], env: dict[str, str], complete: bool = True,
               origins: dict | None = None) -> list[Word]:
    """The words after systemd's substitution (systemd.service(5), "Command lines"): a word
    that is `$NAME` becomes the value split into words (quotes respected, then removed),
    `${NAME}` the value as it is; an unset variable is empty (unless `env` is not
    `complete`: a word naming one it lacks is left as written). Substituted words keep
    the place of what was written, and a word of a value an environment file sets (`origins`)
    the place it has in that file."""
    out: list[Word] = []
    for word in words:
        if not word.expands or "%" in word.text or not complete and not _names(word.text) <= env.keys():
            out.append(word)
            continue
        whole = _WHOLE.fullmatch(word.text)
        if whole is not None:
            name = whole.group(1)
            origin = (origins or {}).get(name)
            for part, start, end in split_places(env.get(name, "")):
                out.append(Word(part, word.start, word.end, False,
                                (origin[0], origin[1] + start, origin[1] + end) if origin is not None else None))
            continue
        text = _BRACED.sub(lambda m: env.get(m.group(1), ""), word.text)
        out.append(Word(text, word.start, word.end, "$" in text))
    return out


def _names(text: str) -> set[str]:
    return {m.group(1) for pattern in (_WHOLE, _BRACED) for m in pattern.finditer(text)}


def _dockerd_model():
    _, short, bools = dockerd_config.flags(tuple(dockerd_config.applicable(None)))
    return short, bools, None


def _read_flags(command: Command, words: list[Word], model) -> None:
    """pflag's reading of a command line: `--name=value`, `--name value`, `-Xvalue`,
    `-X value`, `-X=value`; a flag that takes no value (`bools`) stands alone. `valued`,
    when given, names the flags that take a value (containerd's single-dash long names)."""
    short, bools, valued = model

    def takes_value(name: str) -> bool:
        return name in valued if valued is not None else name not in bools

    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word.expands:
            command.opaque = True
            continue
        text = word.text
        if text == "--":
            break
        if not text.startswith("-") or text == "-":
            continue
        if text.startswith("--") or (valued is not None and len(text) > 2 and text[1:].split("=")[0] in valued):
            name, equals, value = text.lstrip("-").partition("=")
            written = text[: len(text) - len(value) - len(equals)] if equals else text
        else:
            letter, rest = text[1], text[2:]
            # value-less shorthands may share a word (`-Dl debug`): each is a flag of its own
            while letter in short and short[letter] in bools and rest and rest[0] != "=":
                command.flags.append(Flag(short[letter], "-" + letter, "true", command.doc, word, None))
                letter, rest = rest[0], rest[1:]
            name = short.get(letter, letter)
            written = "-" + letter
            equals, value = ("=", rest[1:]) if rest.startswith("=") else ("=" if rest else "", rest)
        if equals:
            command.flags.append(Flag(name, written, value, command.doc, word, None))
        elif takes_value(name) and i < len(words):
            command.flags.append(Flag(name, written, words[i].text, command.doc, word, words[i]))
            command.opaque = command.opaque or words[i].expands
            i += 1
        else:
            command.flags.append(Flag(name, written, None if takes_value(name) else "true", command.doc, word, None))
