"""How long `gpulint server` takes to judge an open 300-line manifest again after a change.

    python bench/server.py [--repeat N]     # prints {"save_ms": [...], "keystroke_ms": [...]}

An editor's connection over stdio, with a workspace of the manifest and the RuntimeClass it
names: each round edits one value. `save_ms`: the edit then a save, to the diagnostics (the
save lints at once: this is the re-lint, with the protocol round trip). `keystroke_ms`: the
edit alone, to the diagnostics; the server waits for a quiet moment first (its debounce),
which this includes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "tests" / "fixtures" / "server" / "deployment-300.yaml"
RUNTIME_CLASS = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: nvidia\nhandler: nvidia\n"


async def connection(workspace: Path, repeat: int) -> dict:
    client = LanguageClient("gpulint-bench", "1")
    arrived: dict[int, asyncio.Future] = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: types.PublishDiagnosticsParams):
        waiting = arrived.get(params.version)
        if waiting is not None and not waiting.done():
            waiting.set_result(len(params.diagnostics))

    await client.start_io(sys.executable, "-m", "gpulint", "server", cwd=str(ROOT))
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="bench")]))
    client.initialized(types.InitializedParams())
    path = workspace / "deployment.yaml"
    uri, text = path.as_uri(), path.read_text()
    loop = asyncio.get_running_loop()

    async def judged(version: int, send) -> float:
        arrived[version] = loop.create_future()
        start = time.perf_counter()
        send()
        count = await asyncio.wait_for(arrived[version], 60)
        if not count:
            raise SystemExit("gpulint server: the benchmark manifest lost its findings")
        return (time.perf_counter() - start) * 1000

    await judged(1, lambda: client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text))))

    def change(version: int) -> None:
        edited = text.replace("replicas: 2", f"replicas: {version}", 1)
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)]))

    def change_and_save(version: int) -> None:
        change(version)
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))

    version = 1
    saves, keystrokes = [], []
    for _ in range(repeat):
        version += 1
        saves.append(await judged(version, lambda v=version: change_and_save(v)))
        version += 1
        keystrokes.append(await judged(version, lambda v=version: change(v)))
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {"save_ms": saves, "keystroke_ms": keystrokes}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpulint-bench-server-") as work:
        workspace = Path(work)
        (workspace / "deployment.yaml").write_text(MANIFEST.read_text())
        (workspace / "runtimeclass.yaml").write_text(RUNTIME_CLASS)
        print(json.dumps(asyncio.run(connection(workspace, args.repeat))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
