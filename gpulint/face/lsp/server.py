"""The protocol side of `gpulint server`: open, changed and saved buffers are linted by the
engine (`project.py`) and their findings pushed as diagnostics, or handed over when the
client pulls them (`textDocument/diagnostic`); a change to a file other files' checks consult
(a RuntimeClass, a node's config.toml), on disk or in a buffer, re-judges the open files; a
change to the configuration reloads it.

Whatever goes wrong while serving a request (a bug in a check, a file that cannot be read)
is logged to the client, and the server goes on.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from gpulint import __version__
from gpulint.face.lsp.actions import FIX_ALL, fix_actions, fix_all, suppression_actions
from gpulint.face.lsp.diagnostics import diagnostic
from gpulint.face.lsp.hover import (
    finding_codes,
    image_markdown,
    reference_at,
    rule_markdown,
    suppression_code,
)
from gpulint.face.lsp.positions import Place
from gpulint.face.lsp.project import CONFIG_NAMES, Project, Projects
from gpulint.model import Document, Finding
from gpulint.run.engine import Result

# seconds of quiet after a keystroke before the buffer is linted again
DEBOUNCE = 0.075
# a configuration error: `path[:line:column]: message`
_CONFIG_ERROR = re.compile(r"(.+?\.toml)(?::(\d+):(\d+))?: (.*)", re.DOTALL)


@dataclass
class Linted:
    """The last run on an open file: the text it judged, and what it found."""

    version: int | None
    text: str
    result: Result
    findings: list[Finding]  # the file's own findings, not suppressed
    diagnostics: list[types.Diagnostic]  # one per finding, in the same order

    def document(self, path: str) -> Document | None:
        return next((d for d in self.result.documents if d.abspath == path and not d.unread), None)

    def diagnostic_of(self, finding: Finding) -> types.Diagnostic:
        return self.diagnostics[next(i for i, f in enumerate(self.findings) if f is finding)]


class GpulintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("gpulint", __version__,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.projects: Projects | None = None  # made once the client is initialized
        self.init_options: dict = {}
        self.linted: dict[str, Linted] = {}  # uri -> its last run
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.config_uris: set[str] = set()  # configuration files holding an error diagnostic

    # -- what the client is and holds ---------------------------------------------------------

    @property
    def pulling(self) -> bool:
        """Whether the client asks for diagnostics itself (then none are pushed)."""
        text = self.client_capabilities.text_document
        return text is not None and text.diagnostic is not None

    def log(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=f"gpulint: {message}"))

    def tell(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=f"gpulint: {message}"))
        self.log(message, kind)

    def open_uris(self) -> list[str]:
        return [uri for uri in self.workspace.text_documents if path_of(uri) is not None]

    def place(self, uri: str) -> Place:
        return Place(self.workspace.get_text_document(uri).source, self.workspace.position_codec)

    def place_of(self, path: str) -> Place | None:
        """Positions in another file: its buffer, its indexed text, else the disk."""
        uri = Path(path).as_uri()
        if uri in self.workspace.text_documents:
            return self.place(uri)
        doc = next((p.index[path] for p in self.projects.holding(path) if path in p.index), None) \
            if self.projects is not None else None
        if doc is not None:
            return Place(doc.text, self.workspace.position_codec)
        try:
            return Place(Path(path).read_text(encoding="utf-8", errors="replace"), self.workspace.position_codec)
        except OSError:
            return None

    # -- linting ------------------------------------------------------------------------------

    def lint(self, uri: str) -> Linted | None:
        """Lint the open file now (its buffer as it is) and keep the result."""
        path = path_of(uri)
        if path is None or self.projects is None:
            return None
        document = self.workspace.get_text_document(uri)
        text = document.source
        result = self.project_of(path).lint(path, text)
        for message in result.internal_errors:
            self.log(message)
        place = Place(text, self.workspace.position_codec)
        own = [f for f in result.active if os.path.abspath(f.path) == path]
        found = [diagnostic(f, place, self.place_of) for f in own]
        linted = self.linted[uri] = Linted(document.version, text, result, own, found)
        return linted

    def publish(self, uri: str) -> None:
        if self.pulling:
            return
        linted = self.lint(uri)
        if linted is not None:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, version=linted.version, diagnostics=linted.diagnostics))

    def current(self, uri: str) -> Linted | None:
        """The run on the buffer as it is now: the last one, or a new one (None for a file
        the editor has not opened)."""
        if uri not in self.workspace.text_documents:
            return None
        linted = self.linted.get(uri)
        document = self.workspace.get_text_document(uri)
        if linted is not None and linted.text == document.source:
            return linted
        self.sync(uri)
        return self.lint(uri)

    def relint(self, uris) -> None:
        """Judge these open files again: the files they consult changed."""
        for uri in uris:
            self.linted.pop(uri, None)
        if self.pulling:
            if self._refresh_supported():
                self.workspace_diagnostic_refresh(None)
            return
        for uri in uris:  # one file's failure leaves the others judged
            _guard(self, functools.partial(self.publish, uri))

    def _refresh_supported(self) -> bool:
        workspace = self.client_capabilities.workspace
        return bool(workspace is not None and workspace.diagnostics is not None
                    and workspace.diagnostics.refresh_support)

    # -- keeping the projects current ----------------------------------------------------------

    def project_of(self, path: str) -> Project:
        known = self.projects.by_root.get(self.projects.root_of(path))
        project = self.projects.of(path)
        if known is None:  # made just now
            self.tell_config(project)
        return project

    def tell_config(self, project: Project) -> None:
        if project.config_error is not None:
            self.tell(f"the configuration does not read, gpulint's defaults apply: {project.config_error}")
        self.config_diagnostic(project.config_error)

    def config_diagnostic(self, error: str | None) -> None:
        """The configuration's error as a diagnostic where it is written (at its key or value
        when the message says where); an earlier one is taken back once the file reads."""
        found = _CONFIG_ERROR.match(error or "")
        if found is None or self.pulling:
            return
        path, line, column, message = found.groups()
        uri = Path(os.path.abspath(path)).as_uri()
        place = self.place_of(os.path.abspath(path))
        start = place.position(int(line or 1), int(column or 1)) if place is not None else \
            types.Position(line=int(line or 1) - 1, character=int(column or 1) - 1)
        self.config_uris.add(uri)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[
            types.Diagnostic(range=types.Range(start=start, end=start), severity=types.DiagnosticSeverity.Error,
                             source="gpulint", message=f"{message} (gpulint's defaults apply)")]))

    def clear_config_diagnostics(self) -> None:
        for uri in self.config_uris:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        self.config_uris.clear()

    def files_of(self, projects: list[Project]) -> list[str]:
        """The open files that belong to these projects."""
        return [uri for uri in self.open_uris() if self.project_of(path_of(uri)) in projects]

    def sync(self, uri: str) -> None:
        """Take the buffer of `uri` into the projects; re-judge the other open files when what
        their checks consult changed with it."""
        path = path_of(uri)
        if path is None or self.projects is None:
            return
        self.projects.buffers[path] = self.workspace.get_text_document(uri).source
        self.project_of(path)  # made, if this is its first file, with the buffer in its index
        changed = [p for p in self.projects.holding(path) if p.refresh(path)]
        if changed:
            self.relint([u for u in self.files_of(changed) if u != uri])

    def changed_on_disk(self, paths: list[str]) -> None:
        if self.projects is None:
            return
        if any(os.path.basename(p) in (*CONFIG_NAMES, ".git") for p in paths) \
                or any(project.is_config(p) for project in self.projects.by_root.values() for p in paths):
            self.reload()
            return
        changed = []
        for project in self.projects.by_root.values():
            touched = [p for p in paths if p not in self.projects.buffers and project.refresh(p)]
            if touched:
                changed.append(project)
        if changed:
            self.relint(self.files_of(changed))

    def reload(self) -> None:
        """Start the projects afresh (which project a file belongs to may have changed too):
        each is made again, its configuration read and its index built, as its open files are
        judged again."""
        self.projects.forget()
        self.clear_config_diagnostics()
        self.relint(self.open_uris())

    def later(self, uri: str) -> None:
        """Lint `uri` once the typing stops for DEBOUNCE seconds."""
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self.timers[uri] = asyncio.get_running_loop().call_later(DEBOUNCE, self._typed, uri)

    def _typed(self, uri: str) -> None:
        self.timers.pop(uri, None)
        if uri in self.workspace.text_documents:
            _guard(self, lambda: (self.sync(uri), self.publish(uri)))

    def cancel(self, uri: str) -> None:
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()


def path_of(uri: str) -> str | None:
    """The file a document URI names (None for `untitled:` and other schemes)."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return os.path.abspath(path) if path else None


def _guard(server: GpulintServer, work, default=None):
    """Run `work`; an error in it is logged, and the server goes on."""
    try:
        return work()
    except Exception:
        server.log(f"internal error, please report it:\n{traceback.format_exc()}")
        return default


def guarded(default=None):
    def wrap(fn):
        @functools.wraps(fn)
        def handler(server, params):
            return _guard(server, lambda: fn(server, params), default)
        return handler
    return wrap


def init_facts(options, server: GpulintServer) -> dict:
    """`--driver` and `--gpu-class` from initializationOptions (`driver`, `gpuClass`); a value
    gpulint cannot use is said and left out."""
    from gpulint.crossfile.fleet import driver_version
    from gpulint.knowledge.cuda import GPU_CLASSES

    options = options if isinstance(options, dict) else {}
    facts = {}
    driver = options.get("driver")
    if driver is not None:
        if isinstance(driver, str) and driver_version(driver) == driver:
            facts["driver"] = driver
        else:
            server.tell(f"initializationOptions.driver {driver!r}: expected a driver version such as "
                        f"535.104.05 or a branch such as 535; left out")
    gpu_class = next((options[k] for k in ("gpuClass", "gpu-class", "gpu_class") if k in options), None)
    if gpu_class is not None:
        if gpu_class in GPU_CLASSES:
            facts["gpu_class"] = gpu_class
        else:
            server.tell(f"initializationOptions.gpuClass {gpu_class!r}: expected one of "
                        f"{', '.join(GPU_CLASSES)}; left out")
    return facts


def workspace_folders(server: GpulintServer) -> list[Path]:
    folders = [Path(p) for p in (path_of(f.uri) for f in server.workspace.folders.values()) if p]
    root = server.workspace.root_path
    if root and Path(root) not in folders:
        folders.append(Path(root))
    return folders


SERVER = GpulintServer()


@SERVER.feature(types.INITIALIZE)
def initialize(server: GpulintServer, params: types.InitializeParams) -> None:
    server.init_options = params.initialization_options or {}


@SERVER.feature(types.INITIALIZED)
@guarded()
def initialized(server: GpulintServer, params: types.InitializedParams) -> None:
    server.projects = Projects(workspace_folders(server), init_facts(server.init_options, server))
    watched = server.client_capabilities.workspace
    if watched is not None and watched.did_change_watched_files is not None \
            and watched.did_change_watched_files.dynamic_registration:
        # every file: which ones other files' checks consult is known only once read
        server.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
            id="gpulint-watched-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern="**/*")]))]))
    for uri in server.open_uris():  # opened before the project was ready
        server.sync(uri)
        server.publish(uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_OPEN)
@guarded()
def did_open(server: GpulintServer, params: types.DidOpenTextDocumentParams) -> None:
    server.sync(params.text_document.uri)
    server.publish(params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CHANGE)
@guarded()
def did_change(server: GpulintServer, params: types.DidChangeTextDocumentParams) -> None:
    server.later(params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_SAVE)
@guarded()
def did_save(server: GpulintServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    server.cancel(uri)
    path = path_of(uri)
    if path is not None and server.projects is not None and (
            os.path.basename(path) in CONFIG_NAMES
            or any(p.is_config(path) for p in server.projects.by_root.values())):
        server.reload()
        return
    server.sync(uri)
    server.publish(uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CLOSE)
@guarded()
def did_close(server: GpulintServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    server.cancel(uri)
    server.linted.pop(uri, None)
    path = path_of(uri)
    if path is None or server.projects is None:
        return
    server.projects.buffers.pop(path, None)
    # what the editor held is gone: the disk's text counts
    changed = [p for p in server.projects.holding(path) if p.refresh(path)]
    if changed:
        server.relint(server.files_of(changed))
    if not server.pulling:
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@SERVER.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
@guarded()
def did_change_watched_files(server: GpulintServer, params: types.DidChangeWatchedFilesParams) -> None:
    paths = [p for p in (path_of(change.uri) for change in params.changes) if p is not None]
    server.changed_on_disk(paths)


@SERVER.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
@guarded()
def did_change_workspace_folders(server: GpulintServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    if server.projects is not None:  # a file outside any project belongs to the folder holding it
        server.projects.folders = workspace_folders(server)
        server.reload()


@SERVER.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                types.DiagnosticOptions(identifier="gpulint", inter_file_dependencies=True,
                                        workspace_diagnostics=False))
def pull_diagnostics(server: GpulintServer, params: types.DocumentDiagnosticParams):
    def work():
        linted = server.current(params.text_document.uri)
        return types.RelatedFullDocumentDiagnosticReport(items=linted.diagnostics if linted else [])
    return _guard(server, work, types.RelatedFullDocumentDiagnosticReport(items=[]))


@SERVER.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False))
def code_action(server: GpulintServer, params: types.CodeActionParams):
    return _guard(server, lambda: _code_actions(server, params), [])


def _code_actions(server: GpulintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    path = path_of(uri)
    linted = server.current(uri)
    doc = linted.document(path) if linted is not None else None
    if doc is None or not doc.text:
        return []
    only = params.context.only
    wants = (lambda kind: any(kind == k or kind.startswith(f"{k}.") for k in only)) if only else (lambda kind: True)
    place = Place(linted.text, server.workspace.position_codec)
    first, last = params.range.start.line + 1, params.range.end.line + 1
    here = [f for f in linted.findings if f.span.line <= last and f.span.end_line >= first]
    out = []
    relint = functools.partial(server.project_of(path).lint, path)
    if wants(types.CodeActionKind.QuickFix):
        out += fix_actions(uri, doc, place, here, linted.diagnostic_of)
        if any(f.fix is not None and f.fix.safe for f in here):
            every = fix_all(uri, doc, place, linted.result, relint, types.CodeActionKind.QuickFix)
            out += [every] if every is not None else []
        out += suppression_actions(uri, doc, place, here, linted.diagnostic_of)
    if wants(FIX_ALL) and (only or not out):
        every = fix_all(uri, doc, place, linted.result, relint)
        out += [every] if every is not None else []
    return out


@SERVER.feature(types.TEXT_DOCUMENT_HOVER)
def hover(server: GpulintServer, params: types.HoverParams):
    return _guard(server, lambda: _hover(server, params))


def _hover(server: GpulintServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    path = path_of(uri)
    linted = server.current(uri)
    if linted is None:
        return None
    place = Place(linted.text, server.workspace.position_codec)
    line, column = place.at(params.position)
    codes = finding_codes(linted.findings, line, column)
    doc = linted.document(path)
    if doc is not None and doc.text:
        named = suppression_code(doc, doc.index.offset(line, column))
        codes += [named] if named is not None and named not in codes else []
    parts = [text for text in map(rule_markdown, codes) if text]
    raw = server.workspace.position_codec.position_from_client_units(place.lines, params.position)
    reference = reference_at(place.lines[raw.line] if raw.line < len(place.lines) else "", raw.character)
    image = image_markdown(reference, server.projects.facts) if reference else None
    parts += [image] if image else []
    if not parts:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                    value="\n\n---\n\n".join(parts)))


def serve() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # the protocol owns stdout: anything printed goes to stderr instead
    SERVER.start_io(stdin, stdout)
