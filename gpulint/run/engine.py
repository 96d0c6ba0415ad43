"""One run: discover -> classify -> parse -> check -> filter.

Every stage is a plain function over plain data; reporting happens afterwards
from the Result alone.
"""

from __future__ import annotations

import errno
import fnmatch
import importlib
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from gpulint import catalog, crossfile, kinds
from gpulint.crossfile.imagemap import mapped_paths
from gpulint.formats import documents
from gpulint.formats.documents import MAX_BYTES
from gpulint.formats.template import strip_template_suffix
from gpulint.model import (
    NO_SUPPRESSIONS,
    RELEASED,
    SEVERITY_RANK,
    Document,
    Edit,
    Finding,
    Fix,
    Span,
    Suppression,
)
from gpulint.paths import display_path
from gpulint.record import Record
from gpulint.registry import CHECKS, Context, resolve
from gpulint.run import parallel, watchdog
from gpulint.run.config import Settings
from gpulint.run.discover import may_be_script, walk
from gpulint.run.suppress import find_suppressions
from gpulint.stored import seen_paths


class Source(Record):
    """A file to lint: a path on disk, or text read from stdin under a given name."""

    __slots__ = ("_path", "text", "kind", "display", "named", "truncated")

    # kept as a string, the Path made when asked: a run holds one Source per file, and in
    # each of its worker processes again, where a Path with its parts costs 0.7 KB
    _path: str
    text: bytes | None  # set for stdin and for in-memory fixed text
    kind: str | None  # a forced kind
    display: str | None  # how to show the path (default: relative to the current folder)
    named: bool  # named on the command line (or stdin), not found by walking a folder
    truncated: bool  # stdin past the size limit: `text` holds its first bytes only

    def __init__(self, path: Path | str, text: bytes | None = None, kind: str | None = None,
                 display: str | None = None, named: bool = False, truncated: bool = False) -> None:
        self._path = os.fspath(path)
        self.text = text
        self.kind = kind
        self.display = display
        self.named = named
        self.truncated = truncated

    @property
    def path(self) -> Path:
        return Path(self._path)

    @property
    def where(self) -> str:
        """The path as a string (what reading and telling the kind use: no Path per file)."""
        return self._path

    @property
    def names(self) -> tuple[str, str]:
        """The file's name and the name of the folder holding it (what a kind is told by)."""
        folder, name = os.path.split(self._path)
        return name, os.path.basename(folder)


class Result(Record):
    __slots__ = ("findings", "documents", "files_checked", "files_skipped", "files_not_checked",
                 "internal_errors", "baselined")

    findings: list[Finding]  # sorted; suppressed ones carry `suppressed`
    documents: list[Document]
    files_checked: int
    files_skipped: int  # none of gpulint's kinds
    files_not_checked: int  # of a kind gpulint reads (or named), not checked: GL006, GL001, GL004
    internal_errors: list[str]
    baselined: int  # findings left out because the baseline knows them

    def __init__(self, findings: list[Finding], documents: list[Document], files_checked: int = 0,
                 files_skipped: int = 0, files_not_checked: int = 0, internal_errors: list[str] | None = None,
                 baselined: int = 0) -> None:
        self.findings = findings
        self.documents = documents
        self.files_checked = files_checked
        self.files_skipped = files_skipped
        self.files_not_checked = files_not_checked
        self.internal_errors = [] if internal_errors is None else internal_errors
        self.baselined = baselined

    @property
    def active(self) -> list[Finding]:
        return [f for f in self.findings if f.suppressed is None]


class Options(Record):
    __slots__ = ("inline_suppressions", "kind", "facts", "around", "context", "jobs", "stream")

    inline_suppressions: bool
    kind: str | None
    facts: dict  # --driver, --gpu-class
    # files of the project around the linted ones: cross-file checks read them, and
    # nothing is reported on them (pre-commit names only the changed files)
    around: list[Source]
    # the same, parsed already by the caller, which keeps them between runs (the language
    # server's workspace index): each one `context_document` gave
    context: list[Document]
    jobs: int | None  # processes for the per-file work, this one included (None: as many as CPUs)
    # called with each file's findings, post-processed, as soon as the file is checked (and
    # once more at the end with what only the whole set shows): a streamed report
    stream: Callable[[list[Finding], list[Document]], None] | None

    def __init__(self, inline_suppressions: bool = True, kind: str | None = None, facts: dict | None = None,
                 around: list[Source] | None = None, context: list[Document] | None = None,
                 jobs: int | None = None, stream: Callable | None = None) -> None:
        self.inline_suppressions = inline_suppressions
        self.kind = kind
        self.facts = {} if facts is None else facts
        self.around = [] if around is None else around
        self.context = [] if context is None else context
        self.jobs = jobs
        self.stream = stream


def enabled_codes(settings: Settings) -> frozenset[str]:
    rules = catalog.rule_index()
    if settings.select is None:
        codes = set(rules)
    else:
        codes = {c for s in settings.select for c in catalog.resolve_selector(s)}
    codes |= {c for s in settings.extend_select for c in catalog.resolve_selector(s)}
    codes -= {c for s in settings.ignore for c in catalog.resolve_selector(s)}
    if not settings.preview:
        codes = {c for c in codes if not rules[c].preview}
    return frozenset(codes)


def collect_sources(paths: list[str], settings: Settings) -> list[Source]:
    named: set[str] = set()
    found = walk(paths, settings.excludes, base=settings.base, gitignore=settings.respect_gitignore,
                 force_exclude=settings.force_exclude, named=named)
    return [Source(p, named=os.path.abspath(p) in named) for p in found]


def load(source: Source, forced_kind: str | None,
         max_bytes: int = MAX_BYTES) -> tuple[Document | None, Finding | None]:
    """The file read and classified, not yet parsed: a Document (None when the file is not
    one gpulint reads), and a finding on it, or None. A file of a kind gpulint reads, or one
    named on the command line, that gpulint cannot or will not read becomes a document
    marked `unread` with its GL006 (GL001 for bytes that are not text); a file whose reader
    refuses its encoding is read all the same, with a GL001 that says so."""
    path = source.where
    name, folder = source.names
    display = source.display or display_path(path)
    data = source.text
    if data is None:
        name_kind = forced_kind or kinds.kind_by_name(name, folder)
        if name_kind is None and not source.named and not kinds.may_need_content(name) \
                and not may_be_script(path):
            return None, None
        try:
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block the run
                return _not_checked(source, display, name_kind, "it is not a regular file")
            if info.st_size > max_bytes:
                kind = name_kind or _kind_of_head(source, min(max_bytes, HEAD_BYTES))
                return _not_checked(source, display, kind, _too_large(info.st_size, max_bytes))
            data = _read(path, info.st_size)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                why = "it is a symbolic link that loops"
            elif os.path.islink(path) and not os.path.exists(path):
                why = "it is a link to nothing"
            else:
                why = f"it could not be read ({exc.strerror or exc})"
            return _not_checked(source, display, name_kind, why)
    elif len(data) > max_bytes:
        why = (f"it has more than {max_bytes:,} bytes, the limit (raise it with `--max-file-size` or "
               f"`max-file-size` in the configuration)") if source.truncated \
            else _too_large(len(data), max_bytes)
        return _not_checked(source, display, forced_kind or source.kind, why)
    kind = source.kind or forced_kind
    try:
        text, bom, crlf, encoding = documents.decode(data)
    except UnicodeDecodeError as exc:
        # bytes that are not text: a file of a kind by its name, or whose content still shows
        # a kind's markers, is GL001; one named on the command line GL006; any other is
        # none of gpulint's (a binary .json in a folder walked)
        kind = kind or kinds.classify(name, data.decode("utf-8", "replace"), folder)
        if kind is None:
            return _not_checked(source, display, None,
                                f"it is not text: not UTF-8 (byte {exc.start}), and no UTF-16 or "
                                f"UTF-32 byte order mark")
        doc = Document(display, _absolute(path), kind, "", unread=True)
        return doc, Finding("GL001", "", "", display, Span.point(1, 1),
                            f"the file is not UTF-8 text (byte {exc.start}), so it was not checked")
    kind = kind or kinds.classify(name, text, folder)
    if kind is None:
        return None, None
    _, templated = strip_template_suffix(name)
    doc = Document(display, _absolute(path), kind, text, templated=templated,
                   bom=bom, crlf=crlf, encoding=encoding)
    refused = kinds.encoding_refused(kind, encoding)
    if refused is not None:
        name = encoding[:6].upper()
        return doc, Finding("GL001", "", "", display, Span.point(1, 1),
                            f"the file is {name} (with a byte order mark): {refused}; save it as UTF-8")
    return doc, None


def _read(path: str, size: int) -> bytes:
    """The bytes of the regular file at `path`, `size` of them by its stat: one `read` where
    `open(...).read()` makes a buffered reader and asks the size again (a large run reads
    most of its files twice); to its end where it has grown since."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        data = os.read(fd, size + 1)
        if len(data) > size:
            chunks = [data]
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
            data = b"".join(chunks)
        return data
    finally:
        os.close(fd)


# How much of a file over the size limit is read to tell its kind by content.
HEAD_BYTES = 64 * 1024

# From how many files a run with worker processes keeps of each shared file only the part
# other files' checks read (`_narrow`), and parses the whole file again in its turn. Whole
# trees take some 10-20 KB a shared file in every process (about a quarter of a tree's files
# are shared), so a run of 20,000 files saves some 30 MB a process by narrowing; the second
# parse costs about a tenth of a run's CPU, which buys a smaller run, or a run in one
# process, no memory it needs.
NARROW_FROM_FILES = 10_000


def _absolute(path: str) -> str:
    """os.path.abspath, sharing the string of a path written so already (a tree named by its
    absolute path): a run keeps one per file."""
    found = os.path.abspath(path)
    return path if found == path else found


def _kind_of_head(source: Source, size: int) -> str | None:
    """The kind the first `size` bytes of a file show (a 10 MB pod.yaml is a manifest)."""
    try:
        with open(source.where, "rb") as handle:
            head = handle.read(size)
    except OSError:
        return None
    try:
        text = documents.decode(head)[0]
    except UnicodeDecodeError:  # cut inside a character, or not text
        text = head.decode("utf-8", "replace")
    name, folder = source.names
    return kinds.classify(name, text, folder)


def _too_large(size: int, limit: int) -> str:
    return (f"it has {size:,} bytes, more than the limit of {limit:,} (raise it with "
            f"`--max-file-size` or `max-file-size` in the configuration)")


def _not_checked(source: Source, display: str, kind: str | None,
                 why: str) -> tuple[Document | None, Finding | None]:
    """The document of a file gpulint does not read, and its GL006: an error for a file named
    on the command line (or stdin), the rule's own severity for one found in a folder."""
    name, folder = source.names
    kind = kind or kinds.classify(name, None, folder)
    if kind is None and not source.named:  # a name gpulint reads only for what is inside: skipped
        return None, None
    doc = Document(display, _absolute(source.where), kind or "", "", unread=True)
    return doc, not_checked_finding(display, why, source.named)


def not_checked_finding(display: str, why: str, named: bool) -> Finding:
    return Finding("GL006", "", "error" if named else "", display, Span.point(1, 1),
                   f"file not checked: {why}")


def run(sources: list[Source], settings: Settings, options: Options) -> Result:
    with parallel.few_collections():
        return _run(sources, settings, options)


def _run(sources: list[Source], settings: Settings, options: Options) -> Result:
    enabled = enabled_codes(settings)
    # Files whose facts other files' checks consult are parsed first and kept (whole, or the
    # part those checks read: `_narrow`). Every other file is read again, parsed, checked and
    # let go in turn (in worker processes for a large set): a run holds the trees of the
    # shared files, and the text of the files with something to report, only.
    mapped = mapped_paths(settings)
    node_run = "node" in options.facts
    docs: list[Document] = []
    read_from: list[Source] = []
    shared: list[Document] = []
    raw: list[Finding] = []
    # what each document is to the per-file step (`_KEPT` ...): a byte each, where a set of
    # the documents' ids held some 70 bytes each in every process of a large run
    marks = bytearray()
    skipped = 0
    with_workers = parallel.workers_for(len(sources), options.jobs) > 1
    # narrowed in a large run with workers: each process holds the shared files (a forked
    # worker's memory counts the pages it shares), one process holds them once
    classify = _Classify(options.kind, settings.max_file_size, settings.file_timeout, mapped, node_run,
                         narrow=with_workers and len(sources) >= NARROW_FROM_FILES)
    errors: list[str] = []
    # a shared file is parsed (and narrowed) where its kind is told: in the workers too, for a
    # large set, so no process waits while one parses them all; what is kept of it comes
    # back with its document
    warm_up = _WarmUp(settings, options, enabled) if with_workers else None
    for source, told in zip(sources, parallel.iterate_in_order(classify, sources, options.jobs)):
        doc, early, is_shared, deferred = told.doc, told.early, told.shared, told.deferred
        if doc is None:
            skipped += 1
            continue
        if doc.abspath == source.where:  # one string for both (a document sent back from a worker has its own)
            doc.abspath = source.where
        docs.append(doc)
        read_from.append(source)
        if warm_up is not None:
            warm_up(doc, source, is_shared)
        if early is not None:
            raw.append(early)
        mark = _UNREAD_YET if deferred else 0
        if is_shared:
            shared.append(doc)
            raw.extend(told.found)
            errors.extend(told.failed)
            mark |= _KEPT | (_NARROWED if told.narrowed else 0)
        else:
            # nothing read, nothing memoised until the file's turn (`_Step`): no memo and no
            # suppressions of its own to hold meanwhile
            doc.cache, doc.suppressions = RELEASED, NO_SUPPRESSIONS
        marks.append(mark)
    around = _around(options, mapped, node_run) + list(options.context)
    # the rule families of the linted kinds only: those of the files around would run
    # nothing that is kept (see _idle_families)
    load_checks({d.kind for d in docs})
    context = Context([d for d in shared if d.tree is not None] + around, settings,
                      dict(options.facts), enabled, providers=dict(crossfile.FACTS))
    step = _Step(context, _file_checks(enabled), docs, read_from, marks, options.kind, settings.max_file_size,
                 settings.file_timeout)
    streamed = _Streamed(options.stream, raw, settings, options, enabled, sources)
    # the documents by their place in `docs`: a tuple per file would be held by every process
    for doc, outcome in zip(docs, parallel.iterate_in_order(step, range(len(docs)), options.jobs)):
        outcome.update(doc)
        raw.extend(outcome.findings)
        errors.extend(outcome.errors)
        streamed.file_done(doc, outcome.findings)
    idle = _idle_families(docs, around)
    for chk in CHECKS:
        if chk.project and enabled.intersection(chk.codes) and chk.fn.__module__ not in idle:
            try:
                raw.extend(chk.fn(context) or ())
            except Exception:  # a broken check must not stop the other files
                errors.append(f"internal error in check {chk.fn.__name__} ({', '.join(chk.codes)}) "
                              f"on the linted set:\n{_trace()}")
    if not _config_linted(sources, settings):
        # the configuration's own findings belong to runs that lint it (a directory
        # holding it, or its name), not to a pre-commit call on other files
        config = os.path.abspath(settings.path) if settings.path else None
        raw = [f for f in raw if os.path.abspath(f.path) != config]
    if around:
        # a file of the index that no check asked for was never unpickled: nothing is on it
        outside = seen_paths(around)
        raw = [f for f in raw if f.path not in outside]
    findings = postprocess(raw, docs, settings, options, enabled)
    templated = {d.path for d in docs if d.templated}
    for f in findings:
        if f.path in templated:  # positions survive neutralising; rewritten text would not
            f.fix = None
    streamed.rest(findings, docs)
    not_checked = sum(1 for d in docs if d.unread or (d.templated and not d.parsed))
    return Result(findings, docs, files_checked=len(docs) - not_checked, files_skipped=skipped,
                  files_not_checked=not_checked,
                  internal_errors=list(dict.fromkeys(errors)))  # a missing parser: said once


class _Streamed:
    """Each file's findings handed to `options.stream` as soon as the file is checked: those
    on the file itself, post-processed as the whole run's are (selection, suppressions).
    What the whole set shows (project checks, findings a file's checks place on another
    file) follows at the end, so the stream holds exactly the run's findings."""

    def __init__(self, stream, raw: list[Finding], settings: Settings, options: Options,
                 enabled: frozenset[str], sources: list[Source]) -> None:
        self.stream = stream
        self.sent: set[tuple] = set()
        if stream is None:
            return
        self.settings, self.options, self.enabled = settings, options, enabled
        # findings made while reading and classifying, by file (GL001, files not checked)
        self.early: dict[str, list[Finding]] = {}
        for f in raw:
            self.early.setdefault(f.path, []).append(f)
        config = os.path.abspath(settings.path) if settings.path and not _config_linted(sources, settings) else None
        self.held = {config} if config else set()  # the configuration's findings, judged at the end

    def file_done(self, doc: Document, found: list[Finding]) -> None:
        if self.stream is None or os.path.abspath(doc.path) in self.held:
            return
        own = self.early.pop(doc.path, []) + [f for f in found if f.path == doc.path]
        out = postprocess(own, [doc], self.settings, self.options, self.enabled)
        for f in out:
            if doc.templated:
                f.fix = None
            self.sent.add(_identity(f))
        if out:
            self.stream(out, [doc])

    def rest(self, findings: list[Finding], docs: list[Document]) -> None:
        if self.stream is not None:
            self.stream([f for f in findings if _identity(f) not in self.sent], docs)


def _identity(f: Finding) -> tuple:
    return (f.code, f.path, f.span, f.message)


def load_checks(kind_names: set[str]) -> None:
    """Import the rule families that concern these kinds (importing one registers its
    checks): linting one Dockerfile does not pay for the Kubernetes rules."""
    for module in kinds.families(kind_names) + crossfile.families(kind_names):
        importlib.import_module(module)


def _file_checks(enabled: frozenset[str]) -> dict[str, list]:
    """Kind -> the enabled per-file checks of the rule families loaded so far, in registry
    order."""
    by_kind: dict[str, list] = {}
    for chk in CHECKS:
        if not chk.project and enabled.intersection(chk.codes):
            for kind in chk.kinds:
                by_kind.setdefault(kind, []).append(chk)
    return by_kind


class _Classify(Record):
    """Telling a file's kind, and whether other files' checks consult it (in worker processes
    for a large set), a shared file parsed then (`_Told`). Only a shared document keeps its
    text."""

    __slots__ = ("forced_kind", "max_bytes", "timeout", "mapped", "node_run", "narrow")

    forced_kind: str | None
    max_bytes: int
    timeout: float | None
    mapped: set[str]
    node_run: bool
    narrow: bool  # keep of a shared file only what other files' checks read (`_narrow`), its text packed

    def __init__(self, forced_kind: str | None, max_bytes: int, timeout: float | None, mapped: set[str],
                 node_run: bool, narrow: bool = True) -> None:
        self.forced_kind = forced_kind
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.mapped = mapped
        self.node_run = node_run
        self.narrow = narrow

    def __call__(self, source: Source) -> _Told:
        doc = _unread_yet(source, self.forced_kind, self.mapped, self.node_run)
        if doc is not None:  # its name tells all: read once, in its turn
            return _Told(doc, None, False, True)
        try:  # telling a file's kind reads its content: within the file's budget too
            with watchdog.budget(self.timeout):
                doc, early = load(source, self.forced_kind, self.max_bytes)
        except watchdog.FileTimeout:
            # reported even where its kind is still unknown: it was read as a candidate
            display = source.display or display_path(source.where)
            doc = Document(display, _absolute(source.where),
                           self.forced_kind or kinds.kind_by_name(*source.names) or "",
                           "", unread=True)
            early = not_checked_finding(display, f"it took longer than {self.timeout:g} s to read "
                                                 f"and tell its kind (raise the limit with `--file-timeout` "
                                                 f"or `file-timeout` in the configuration)", source.named)
        if doc is None:
            return _Told(None, None, False, False)
        if doc.unread or not _shared(doc, self.mapped, self.node_run):
            doc.text = ""  # read again when its turn comes
            return _Told(doc, early, False, False)
        told = _Told(doc, early, True, False)
        try:
            with watchdog.budget(self.timeout):
                told.found, told.failed = _parse(doc)
        except watchdog.FileTimeout:
            doc.tree, doc.unread = None, True
            told.found = [_too_slow(doc.path, self.timeout, source.named)]
        # in a large run, what only the file's own checks read is let go at once, before it is
        # sent back and before worker processes are forked, each holding the shared files: the
        # whole tree is parsed again in its turn
        told.narrowed = self.narrow and _narrow(doc)
        if self.narrow:  # and its text held packed, its line starts counted
            doc.pack()
        return told


class _Told(Record):
    """What telling a file's kind gives: its document (None: none of gpulint's kinds), a
    finding on reading it, whether other files' checks consult it (then parsed, and maybe
    narrowed, already: what parsing found), whether it is read only in its turn."""

    __slots__ = ("doc", "early", "shared", "deferred", "found", "failed", "narrowed")

    doc: Document | None
    early: Finding | None
    shared: bool
    deferred: bool
    found: list[Finding]
    failed: list[str]
    narrowed: bool

    def __init__(self, doc: Document | None, early: Finding | None, shared: bool, deferred: bool,
                 found: list[Finding] | None = None, failed: list[str] | None = None,
                 narrowed: bool = False) -> None:
        self.doc = doc
        self.early = early
        self.shared = shared
        self.deferred = deferred
        self.found = [] if found is None else found
        self.failed = [] if failed is None else failed
        self.narrowed = narrowed


def _unread_yet(source: Source, forced_kind: str | None, mapped: set[str], node_run: bool) -> Document | None:
    """The document of a file on disk whose kind its name (or `--kind`) gives and whose kind
    other files' checks consult by no property of its text, with its text not read yet: it is
    read once, when its turn comes (and reported then, when it cannot be). None for any other
    file, which is read now to tell its kind or whether it is shared."""
    if source.text is not None:
        return None
    path = source.where
    name, folder = source.names
    kind = forced_kind or kinds.kind_by_name(name, folder)
    if kind is None:
        return None
    abspath = _absolute(path)
    if not never_shared(kind, abspath, mapped, node_run):
        return None
    _, templated = strip_template_suffix(name)
    return Document(source.display or display_path(path), abspath, kind, "", templated=templated)


def never_shared(kind: str, abspath: str, mapped: set[str], node_run: bool = False) -> bool:
    """Whether a file of `kind` at `abspath` is one other files' checks do not consult, by
    no property of its text (a Dockerfile no image mapping names, a Compose file)."""
    shared = kinds.BY_NAME[kind].shared
    return shared == "never" or (shared == "if-mapped" and abspath not in mapped) \
        or (shared == "in-doctor" and not node_run)


def _idle_families(docs: list[Document], around: list[Document]) -> set[str]:
    """The rule families loaded only for the files read around the linted ones: a kind's
    project checks report on files of that kind only (what joins kinds lives in
    `crossfile/`), and nothing is reported on the files around, so they would find nothing
    that is kept (one changed Dockerfile does not judge every containerd config around)."""
    linted = {d.kind for d in docs}
    # the toolkit's config and CDI specs share theirs; a family that joins kinds reports on
    # the kinds it is imported for (`crossfile.FAMILIES`)
    live = set(kinds.families(linted)) | set(crossfile.families(linted))
    others = {d.kind for d in around} - linted
    return (set(kinds.families(others)) | set(crossfile.families(others))) - live


def _shared(doc: Document, mapped: set[str], node_run: bool) -> bool:
    """Whether other files' checks consult `doc`: a node config always; a manifest that
    defines a shared object (a RuntimeClass ...); a Dockerfile an image mapping names; a
    CDI spec in a run on a node, where the node's driver is what it is compared with."""
    kind = kinds.BY_NAME[doc.kind]
    if kind.shared == "if-defines":
        return resolve(kind.defines_shared)(doc.text)
    if kind.shared == "if-mapped":
        return doc.abspath in mapped
    if kind.shared == "in-doctor":
        return node_run
    return kind.shared == "always"


def _parse(doc: Document) -> tuple[list[Finding], list[str]]:
    """documents.parse, and what may go wrong past the parsers' own errors: the package that
    parses this kind is not installed (GL006 for the file and an error for the run), or a
    bug (an error naming the file); either way the other files are still checked."""
    try:
        finding = documents.parse(doc, kinds.parser(doc.kind), kinds.BY_NAME[doc.kind].templated)
    except documents.ParserMissing as exc:
        doc.tree, doc.unread = None, True
        return ([Finding("GL006", "", "", doc.path, Span.point(1, 1),
                         f"file not checked: `{exc.package}`, the package gpulint parses it "
                         f"with, is not installed")],
                [f"files not checked: the `{exc.package}` package is not installed "
                 f"(`pip install {exc.package}`, or reinstall gpulint with its dependencies)"])
    except Exception:
        doc.tree = None
        return [], [f"internal error while parsing {doc.path}:\n{_trace()}"]
    return ([finding] if finding is not None else []), []


class _Outcome(Record):
    """What a run keeps of one checked document (sent back from a worker process)."""

    __slots__ = ("findings", "errors", "suppressions", "parsed", "templated", "text", "unread", "encoding")

    findings: list[Finding]
    errors: list[str]
    suppressions: list[Suppression]
    parsed: bool
    templated: bool
    text: str | bytes | None  # None: the document was not read again here; bytes: packed (`Document.packed_text`)
    unread: bool  # not checked: not read, its parser missing, or past its time budget
    encoding: tuple  # bom, crlf and encoding as read: what writing fixes keeps

    def __init__(self, findings: list[Finding], errors: list[str], suppressions: list[Suppression],
                 parsed: bool, templated: bool, text: str | bytes | None, unread: bool, encoding: tuple) -> None:
        self.findings = findings
        self.errors = errors
        self.suppressions = suppressions
        self.parsed = parsed
        self.templated = templated
        self.text = text
        self.unread = unread
        self.encoding = encoding

    def update(self, doc: Document) -> None:
        doc.suppressions, doc.parsed, doc.templated = self.suppressions or NO_SUPPRESSIONS, self.parsed, self.templated
        doc.unread = self.unread
        doc.bom, doc.crlf, doc.encoding = self.encoding
        if self.text is not None:  # checked and let go (in a worker, the copy there was)
            doc.release()
            doc.text = self.text


# What a document is to the per-file step (`_Step.marks`), bit by bit:
_KEPT = 1  # shared: parsed already, and kept
_NARROWED = 2  # shared, and only a part of it kept (`_narrow`)
_UNREAD_YET = 4  # not read before its turn: its findings on reading are due


class _Step(Record):
    """The per-file work: read the file (again, when telling its kind read it; not when it is
    shared), parse it, find its
    suppressions and run the file checks, within the file's time budget; then let its tree
    go, and its text too when it has nothing to report. Called with a document's place in
    `docs`."""

    __slots__ = ("context", "file_checks", "docs", "sources", "marks", "forced_kind", "max_bytes", "timeout")

    context: Context
    file_checks: dict[str, list]  # kind -> the enabled file checks for it, in registry order
    docs: list[Document]
    sources: list[Source]  # each document's
    marks: bytearray  # each document's `_KEPT`, `_NARROWED` and `_UNREAD_YET`
    forced_kind: str | None
    max_bytes: int
    timeout: float | None  # seconds for one file (None or 0: no budget)

    def __init__(self, context: Context, file_checks: dict[str, list], docs: list[Document], sources: list[Source],
                 marks: bytearray, forced_kind: str | None, max_bytes: int, timeout: float | None = None) -> None:
        self.context = context
        self.file_checks = file_checks
        self.docs = docs
        self.sources = sources
        self.marks = marks
        self.forced_kind = forced_kind
        self.max_bytes = max_bytes
        self.timeout = timeout

    def __call__(self, place: int) -> _Outcome:
        doc, source, mark = self.docs[place], self.sources[place], self.marks[place]
        own = not mark & _KEPT
        kept = doc.tree if mark & _NARROWED else None  # what other files' checks read of it
        try:
            if doc.unread:  # not read: its GL006 or GL001 is given already
                produced, errors = [], []
            else:
                with watchdog.budget(self.timeout):
                    produced, errors = self._work(doc, source, own, mark)
        except watchdog.FileTimeout:
            # what was found before the budget ran out is left out: the file is not checked
            doc.unread, doc.suppressions = True, []
            produced, errors = [_too_slow(doc.path, self.timeout, source.named)], []
        text = None
        if own:
            doc.release()
            # the outcome takes the text to the run's process, packed, where the file has
            # something to report; the document here keeps none (a worker would keep it for
            # nothing)
            text = doc.packed_text() if produced or doc.suppressions else ""
            doc.text = ""
        else:
            if kept is not None:
                doc.narrow(kept)
            doc.repack()  # where it was packed (`_Classify`) and read again here
        return _Outcome(produced, errors, doc.suppressions, doc.parsed, doc.templated, text, doc.unread,
                        (doc.bom, doc.crlf, doc.encoding))

    def _work(self, doc: Document, source: Source, own: bool, mark: int) -> tuple[list[Finding], list[str]]:
        produced: list[Finding] = []
        errors: list[str] = []
        if own and not doc.unread:
            # its kind was told when it was first read (or by its name): telling it again from
            # the content would cost more than reading the file
            fresh, early = load(source, doc.kind or self.forced_kind, self.max_bytes)
            if fresh is None or fresh.unread:  # gone or unreadable since it was first read
                produced.extend([early] if early is not None else [])
                doc.unread = True
            else:
                doc.text, doc.bom, doc.crlf = fresh.text, fresh.bom, fresh.crlf
                doc.encoding, doc.templated = fresh.encoding, fresh.templated
                doc.cache = {}
                produced, errors = _parse(doc)
                if early is not None and mark & _UNREAD_YET:  # a refused encoding's GL001
                    produced.append(early)
        elif mark & _NARROWED:
            # the whole tree again, for its own checks (what parsing says is said already), and
            # nothing other files' checks memoised from the part kept
            doc.cache = {}
            _parse(doc)
        if not doc.unread:  # comments count even in a file that does not parse
            doc.suppressions = find_suppressions(doc)
        if doc.tree is not None:
            for chk in self.file_checks.get(doc.kind, ()):
                try:
                    produced.extend(chk.fn(doc, self.context) or ())
                except Exception:  # a broken check must not stop the other files
                    errors.append(f"internal error in check {chk.fn.__name__} "
                                  f"({', '.join(chk.codes)}) on {doc.path}:\n{_trace()}")
        return produced, errors


class _WarmUp:
    """What checks load on first use (modules, rule data, schemas, compiled patterns), loaded
    in this process while its workers tell the kinds of the files, before the workers that
    check them are forked: each then starts with it, instead of loading it again, and no
    process waits while one loads it. A copy of the first readable file of each kind (and of
    the first shared one: a RuntimeClass or a ClusterPolicy takes checks a plain manifest
    does not) is checked with no other file around; what that finds is let go."""

    def __init__(self, settings: Settings, options: Options, enabled: frozenset[str]) -> None:
        self.settings, self.options, self.enabled = settings, options, enabled
        self.seen: set[tuple[str, bool]] = set()

    def __call__(self, doc: Document, source: Source, is_shared: bool) -> None:
        key = (doc.kind, is_shared)
        if doc.unread or key in self.seen:
            return
        self.seen.add(key)
        load_checks({doc.kind})
        # no other file around: what a check memoises about the files around is not made
        # from half of them
        context = Context([], self.settings, dict(self.options.facts), self.enabled,
                          providers=dict(crossfile.FACTS))
        copy = Document(doc.path, doc.abspath, doc.kind, "", templated=doc.templated)
        step = _Step(context, _file_checks(self.enabled), [copy], [source], bytearray(1), self.options.kind,
                     self.settings.max_file_size, self.settings.file_timeout)
        step(0)


def _narrow(doc: Document) -> bool:
    """Keep of a shared document only the part other files' checks consult (`Kind.kept`),
    when that is less than its whole tree."""
    kept = kinds.BY_NAME[doc.kind].kept
    if not kept or doc.tree is None:
        return False
    part = resolve(kept)(doc)
    if part is None:
        return False
    doc.narrow(part)
    return True


def _too_slow(display: str, seconds: float | None, named: bool) -> Finding:
    return not_checked_finding(display, f"it took longer than {seconds:g} s to check (raise the limit "
                                        f"with `--file-timeout` or `file-timeout` in the configuration)",
                               named)


def _around(options: Options, mapped: set[str], node_run: bool) -> list[Document]:
    """The parsed documents of the surrounding project that other files' checks consult."""
    return [doc for doc in (context_document(s, mapped, node_run) for s in options.around) if doc is not None]


def context_document(source: Source, mapped: set[str], node_run: bool = False) -> Document | None:
    """The file parsed, when other files' checks consult it (a node config, a RuntimeClass, a
    mapped Dockerfile ...); None for any other file, and for one that does not read, which is
    left to the runs that lint it. `mapped` is `mapped_paths(settings)`."""
    try:
        doc, _ = load(source, None)
    except OSError:
        return None
    if doc is None or doc.unread or not _shared(doc, mapped, node_run):
        return None
    found, failed = _parse(doc)
    if found or failed or doc.tree is None:
        return None
    _narrow(doc)  # only other files' checks read it
    return doc


def _config_linted(sources: list[Source], settings: Settings) -> bool:
    if settings.path is None:
        return True
    config = os.path.abspath(settings.path)
    return any(os.path.abspath(s.path) == config for s in sources)


def _ignored_by_path(finding: Finding, settings: Settings) -> bool:
    if not settings.per_file_ignores:
        return False
    absolute = Path(os.path.abspath(finding.path))
    try:
        rel = absolute.relative_to(settings.base).as_posix()
    except ValueError:
        rel = finding.path
    for pattern, selectors in settings.per_file_ignores.items():
        if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(absolute.name, pattern) \
                or fnmatch.fnmatch(finding.path, pattern):
            codes = {c for s in selectors for c in catalog.resolve_selector(s)}
            if finding.code in codes:
                return True
    return False


def postprocess(raw: list[Finding], docs: list[Document], settings: Settings, options: Options,
                enabled: frozenset[str]) -> list[Finding]:
    rules = catalog.rule_index()
    by_path = {d.path: d for d in docs}
    severities = catalog.severity_by_code(settings.severity)
    out: list[Finding] = []
    seen = set()
    for f in raw:
        if f.code not in enabled or _ignored_by_path(f, settings):
            continue
        key = (f.code, f.path, f.span, f.message)
        if key in seen:
            continue
        seen.add(key)
        rule = rules[f.code]
        f.slug = rule.slug
        f.severity = severities.get(f.code) or f.severity or rule.severity
        out.append(f)
    if options.inline_suppressions:
        _mark_suppressed(out, by_path)
        extra = [f for doc in docs for f in _suppression_findings(doc, enabled, rules, severities)]
        _mark_suppressed(extra, by_path)  # GL002/GL003 can be silenced like any other code
        out.extend(extra)
    out.sort(key=lambda f: f.sort_key)
    return out


def _mark_suppressed(findings: list[Finding], by_path: dict[str, Document]) -> None:
    for f in findings:
        doc = by_path.get(f.path)
        for sup in doc.suppressions if doc is not None else ():
            if sup.first_line <= f.span.line <= sup.last_line and f.code in _codes_of(sup):
                sup.used.add(f.code)
                f.suppressed = sup.reason or ""
                break


def _codes_of(sup: Suppression) -> set[str]:
    return {c for name in sup.codes for c in _resolve_one(name)}


def _resolve_one(name: str) -> list[str]:
    """A code or slug named in a suppression; an unknown one resolves to nothing."""
    if name.upper() in catalog.rule_index():
        return [name.upper()]
    code = catalog.by_slug().get(name)
    return [code] if code else []


def _suppression_findings(doc: Document, enabled, rules, severities) -> list[Finding]:
    out = []
    for sup in doc.suppressions:
        if sup.problem is not None:
            if "GL005" in enabled:
                out.append(_general(doc, "GL005", sup.span, rules, severities,
                                    f"this suppression comment suppresses nothing: {sup.problem}"))
            continue
        unused = []
        for name in sup.codes:
            codes = _resolve_one(name)
            if not codes:
                if "GL003" in enabled:
                    start, end = sup.code_spans.get(name, (None, None))
                    span = doc.index.span(start, end) if start is not None else sup.span
                    out.append(_general(doc, "GL003", span, rules, severities,
                                        f"the suppression's "
                                        f"{catalog.unknown_selector_message(name)}"))
            elif codes[0] in enabled and codes[0] not in sup.used and codes[0] != "GL002":
                unused.append(name)
        if unused and "GL002" in enabled:
            out.append(_general(doc, "GL002", sup.span, rules, severities,
                                f"unused suppression: no {', '.join(unused)} finding here to silence",
                                _removal_fix(doc, sup, unused)))
    return out


def _general(doc, code, span, rules, severities, message, fix=None) -> Finding:
    return Finding(code, rules[code].slug, severities.get(code) or rules[code].severity,
                   doc.path, span, message, fix)


def _removal_fix(doc: Document, sup: Suppression, unused: list[str]) -> Fix | None:
    if sup.edit_range is None:
        return None
    if len(unused) == len(sup.codes):
        start, end = sup.edit_range
        return Fix("remove the unused suppression comment", (Edit(doc.abspath, start, end, ""),))
    edits = []
    text = doc.text
    for name in unused:
        start, end = sup.code_spans[name]
        # take the comma (and spaces) on one side with the code
        after = end
        while after < len(text) and text[after] in " ,":
            after += 1
        if "," in text[end:after]:
            edits.append(Edit(doc.abspath, start, after, ""))
        else:
            before = start
            while before > 0 and text[before - 1] in " ,":
                before -= 1
            edits.append(Edit(doc.abspath, before, end, ""))
    return Fix(f"remove {', '.join(unused)} from the suppression", tuple(edits))


def exit_code(result: Result, threshold: str) -> int:
    if result.internal_errors:
        return 2
    if threshold == "none":
        return 0
    floor = SEVERITY_RANK[threshold]
    return 1 if any(SEVERITY_RANK[f.severity] >= floor for f in result.active) else 0


def print_internal_errors(result: Result) -> None:
    for message in result.internal_errors:
        print(f"gpulint: {message}", file=sys.stderr)


def load_all_checks() -> None:
    """Every rule family (the rule catalog's tests and `gpulint rules` need them all)."""
    load_checks(set(kinds.BY_NAME))


def _trace() -> str:
    """The traceback being handled, for an internal error (traceback, imported only then,
    brings tokenize and linecache with it)."""
    import traceback

    return traceback.format_exc()
