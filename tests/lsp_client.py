"""Driving `gpulint server` over stdio with pytest-lsp: a workspace of files, a connection to it,
and waiting for the diagnostics the server pushes."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, make_test_lsp_client


def _client() -> LanguageClient:
    made = make_test_lsp_client()
    made.registrations = []

    @made.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):  # an editor's file watcher, as VS Code's
        made.registrations.extend(params.registrations)

    return made


SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "gpulint", "server"], client_factory=_client)


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def capabilities(pull: bool = False, watch: bool = True) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=watch),
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True) if pull else None),
        text_document=types.TextDocumentClientCapabilities(
            diagnostic=types.DiagnosticClientCapabilities() if pull else None,
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(related_information=True)))


async def start(client: LanguageClient, root: Path, options: dict | None = None, pull: bool = False,
                more: tuple[Path, ...] = ()):
    """Initialize the server in the workspace folder `root` (and `more` folders)."""
    return await client.initialize_session(types.InitializeParams(
        capabilities=capabilities(pull), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in (root, *more)],
        initialization_options=options))


def open_file(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="plaintext", version=version,
        text=path.read_text() if text is None else text)))
    return uri


async def workspace_with(client: LanguageClient, root: Path, files: dict[str, str], opened: str,
                         **initialize) -> str:
    """Write `files` under `root`, start the server there and open `opened`: its URI."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    await start(client, root, **initialize)
    return open_file(client, root / opened)


def replace_all(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


async def diagnostics(client: LanguageClient, uri: str, until=lambda found: True,
                      timeout: float = 20) -> list[types.Diagnostic]:
    """The next diagnostics pushed for `uri` that satisfy `until`."""
    async def wait():
        while True:
            found = client.diagnostics.get(uri)
            if found is not None and until(found):
                return list(found)
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return await asyncio.wait_for(wait(), timeout)


def codes(found) -> list[str]:
    return [d.code for d in found]


def applied(text: str, edits) -> str:
    """`text` with LSP text edits applied (ASCII text: columns are characters)."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def offset(position: types.Position) -> int:
        return starts[position.line] + position.character if position.line < len(starts) else len(text)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


async def actions(client: LanguageClient, uri: str, line: int, only=None) -> list[types.CodeAction]:
    """The code actions offered for the 0-based `line`."""
    return list(await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=0)),
        context=types.CodeActionContext(diagnostics=[], only=only))) or [])


async def hover_text(client: LanguageClient, uri: str, line: int, character: int) -> str | None:
    found = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)))
    return found.contents.value if found is not None else None
