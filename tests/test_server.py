"""`gpulint server`, driven over stdio by pytest-lsp as an editor would: diagnostics on open,
change and save, pulled or pushed, with the rule's link, related locations and the fading of
an unused suppression."""

from __future__ import annotations

import asyncio
import sys

import pytest
from conftest import FIXTURES, run_gpulint
from lsp_client import (  # noqa: F401
    actions,
    applied,
    client,
    codes,
    diagnostics,
    hover_text,
    open_file,
    replace_all,
    start,
    workspace_with,
)
from lsprotocol import types

META = "FROM ubuntu:22.04\nRUN apt-get install -y cuda-12-4\n"  # GL306 on `cuda-12-4`, with a safe fix


def test_without_the_extra_server_exits_2_and_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygls", None)  # `import pygls` fails as if not installed
    run = run_gpulint("server")
    assert run.rc == 2
    assert "pip install 'gpulint[lsp]'" in run.err and "pygls" in run.err


@pytest.mark.asyncio
async def test_open_reports_findings_with_rule_link_and_position(client, tmp_path):
    (tmp_path / "Dockerfile").write_text(META)
    await start(client, tmp_path)
    uri = open_file(client, tmp_path / "Dockerfile")
    found = await diagnostics(client, uri)
    assert codes(found) == ["GL306"]
    d = found[0]
    assert d.severity == types.DiagnosticSeverity.Error and d.source == "gpulint"
    assert d.code_description.href.endswith("/docs/rules/GL306.md")
    # `cuda-12-4`: line 2 (0-based 1), columns 23 to 32 (end exclusive)
    assert (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character) == (1, 23, 1, 32)


@pytest.mark.asyncio
async def test_change_is_linted_after_typing_stops_and_save_too(client, tmp_path):
    (tmp_path / "Dockerfile").write_text(META)
    await start(client, tmp_path)
    uri = open_file(client, tmp_path / "Dockerfile")
    assert codes(await diagnostics(client, uri)) == ["GL306"]
    replace_all(client, uri, "FROM ubuntu:22.04\nRUN apt-get install -y cuda-toolkit-12-4\n", 2)
    assert await diagnostics(client, uri) == []
    replace_all(client, uri, META, 3)
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert codes(await diagnostics(client, uri)) == ["GL306"]


@pytest.mark.asyncio
async def test_columns_are_counted_in_utf16_units(client, tmp_path):
    text = "FROM ubuntu:22.04\n# 😀\nRUN echo 😀 && apt-get install -y cuda-12-4\n"
    found = await diagnostics(client, await workspace_with(client, tmp_path, {"Dockerfile": text}, "Dockerfile"))
    line = text.split("\n")[2]
    start16 = len(line[:line.index("cuda-12-4")].encode("utf-16-le")) // 2
    assert (found[0].range.start.line, found[0].range.start.character) == (2, start16)
    assert found[0].range.end.character == start16 + len("cuda-12-4")


@pytest.mark.asyncio
async def test_unused_suppression_is_tagged_unnecessary(client, tmp_path):
    text = "FROM ubuntu:22.04\n# gpulint: disable=GL306\nRUN echo hi\n"
    found = await diagnostics(client, await workspace_with(client, tmp_path, {"Dockerfile": text}, "Dockerfile"))
    assert codes(found) == ["GL002"]
    assert list(found[0].tags) == [types.DiagnosticTag.Unnecessary]


@pytest.mark.asyncio
async def test_a_file_gpulint_does_not_read_gets_no_diagnostics(client, tmp_path):
    (tmp_path / "notes.txt").write_text("nothing for gpulint\n")
    await start(client, tmp_path)
    assert await diagnostics(client, open_file(client, tmp_path / "notes.txt")) == []


@pytest.mark.asyncio
async def test_a_broken_file_is_a_diagnostic_and_the_server_goes_on(client, tmp_path):
    (tmp_path / "daemon.json").write_text('{"runtimes": {\n')
    (tmp_path / "Dockerfile").write_text(META)
    await start(client, tmp_path)
    broken = await diagnostics(client, open_file(client, tmp_path / "daemon.json"))
    assert codes(broken) == ["GL001"] and broken[0].severity == types.DiagnosticSeverity.Error
    assert codes(await diagnostics(client, open_file(client, tmp_path / "Dockerfile"))) == ["GL306"]


@pytest.mark.asyncio
async def test_pull_diagnostics_when_the_client_asks_for_them(client, tmp_path):
    (tmp_path / "Dockerfile").write_text(META)
    result = await start(client, tmp_path, pull=True)
    assert result.capabilities.diagnostic_provider is not None
    uri = open_file(client, tmp_path / "Dockerfile")
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert codes(report.items) == ["GL306"]
    assert uri not in client.diagnostics  # pulled, not pushed as well


RUNTIME_CLASS = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: {}\nhandler: nvidia\n"
POD = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  runtimeClassName: nvidia-gpu\n  containers:\n"
       "    - name: c\n      image: registry.example.com/ml/smoke:1.0\n      resources:\n        limits:\n"
       "          nvidia.com/gpu: 1\n")


@pytest.mark.asyncio
async def test_editing_a_runtime_class_rejudges_the_open_pod(client, tmp_path):
    pod = await workspace_with(client, tmp_path, {"runtimeclass.yaml": RUNTIME_CLASS.format("nvidia-gpu"),
                                                  "pod.yaml": POD}, "pod.yaml")
    assert await diagnostics(client, pod) == []
    assert [r.register_options["watchers"][0]["globPattern"] for r in client.registrations] == ["**/*"]
    # the RuntimeClass renamed in its buffer, not saved: the pod names none now
    rc = open_file(client, tmp_path / "runtimeclass.yaml")
    client.diagnostics.pop(pod, None)
    replace_all(client, rc, RUNTIME_CLASS.format("nvidia-gpus"), 2)
    found = await diagnostics(client, pod)
    assert codes(found) == ["GL701"] and (found[0].range.start.line, found[0].range.start.character) == (5, 20)
    related = found[0].related_information[0]
    assert related.location.uri == rc and related.location.range.start == types.Position(line=3, character=2)
    # the buffer closed unsaved: the file on disk counts again
    client.diagnostics.pop(pod, None)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=rc)))
    assert await diagnostics(client, pod) == []


@pytest.mark.asyncio
async def test_a_runtime_class_changed_on_disk_rejudges_the_open_pod(client, tmp_path):
    pod = await workspace_with(client, tmp_path, {"pod.yaml": POD}, "pod.yaml")
    assert codes(await diagnostics(client, pod)) == ["GL701"]
    (tmp_path / "classes").mkdir()
    (tmp_path / "classes" / "gpu.yaml").write_text(RUNTIME_CLASS.format("nvidia-gpu"))
    client.diagnostics.pop(pod, None)
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[types.FileEvent(
        uri=(tmp_path / "classes" / "gpu.yaml").as_uri(), type=types.FileChangeType.Created)]))
    assert await diagnostics(client, pod) == []
    (tmp_path / "classes" / "gpu.yaml").unlink()
    client.diagnostics.pop(pod, None)
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[types.FileEvent(
        uri=(tmp_path / "classes" / "gpu.yaml").as_uri(), type=types.FileChangeType.Deleted)]))
    assert codes(await diagnostics(client, pod)) == ["GL701"]


@pytest.mark.asyncio
async def test_pulling_clients_are_asked_to_pull_again_after_a_cross_file_change(client, tmp_path):
    pod = await workspace_with(client, tmp_path, {"runtimeclass.yaml": RUNTIME_CLASS.format("nvidia-gpu"),
                                                  "pod.yaml": POD}, "pod.yaml", pull=True)

    assert await pulled(client, pod) == []
    (tmp_path / "runtimeclass.yaml").write_text(RUNTIME_CLASS.format("other"))
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[types.FileEvent(
        uri=(tmp_path / "runtimeclass.yaml").as_uri(), type=types.FileChangeType.Changed)]))
    for _ in range(200):  # a request to the client, counted as it comes
        if client.diagnostic_refresh_count:
            break
        await asyncio.sleep(0.1)
    assert client.diagnostic_refresh_count == 1
    assert await pulled(client, pod) == ["GL701"]


async def pulled(client, uri) -> list[str]:
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    return codes(report.items)


def _by_title(offered, title):
    matches = [a for a in offered if a.title == title]
    assert matches, [a.title for a in offered]
    return matches[0]


async def _apply(client, uri, text, action, version):
    (edits,) = action.edit.changes.values()
    new = applied(text, edits)
    replace_all(client, uri, new, version)
    return new, await diagnostics(client, uri)


@pytest.mark.asyncio
async def test_a_quick_fix_applied_clears_its_finding(client, tmp_path):
    uri = await workspace_with(client, tmp_path, {"Dockerfile": META}, "Dockerfile")
    (found,) = await diagnostics(client, uri)
    fix = _by_title(await actions(client, uri, 1), "GL306: install cuda-toolkit-12-4 instead of cuda-12-4")
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    assert fix.diagnostics[0].code == "GL306" and fix.diagnostics[0].range == found.range
    new, left = await _apply(client, uri, META, fix, 2)
    assert new == "FROM ubuntu:22.04\nRUN apt-get install -y cuda-toolkit-12-4\n" and left == []


@pytest.mark.asyncio
async def test_an_unsafe_fix_says_so(client, tmp_path):
    text = ("FROM nvidia/cuda:12.9.2-runtime-ubuntu24.04\nCOPY lib/ /opt/app/lib/\n"
            "ENV LD_LIBRARY_PATH=/opt/app/lib\n")
    uri = await workspace_with(client, tmp_path, {"Dockerfile": text}, "Dockerfile")
    assert "GL311" in codes(await diagnostics(client, uri))
    unsafe = [a for a in await actions(client, uri, 2) if a.title.startswith("GL311:")]
    assert len(unsafe) == 1 and unsafe[0].title.endswith("(unsafe fix: review it)") and not unsafe[0].is_preferred


@pytest.mark.asyncio
async def test_fix_all_applies_every_safe_fix_in_the_file(client, tmp_path):
    text = "FROM ubuntu:22.04\nRUN apt-get install -y cuda-12-4\nRUN apt-get install -y cuda-runtime-12-4 cuda\n"
    uri = await workspace_with(client, tmp_path, {"Dockerfile": text}, "Dockerfile")
    assert codes(await diagnostics(client, uri)) == ["GL306"] * 3
    (every,) = await actions(client, uri, 0, only=[types.CodeActionKind.SourceFixAll])
    assert every.kind == "source.fixAll.gpulint" and every.title == "Fix all gpulint findings in this file"
    new, left = await _apply(client, uri, text, every, 2)
    assert left == [] and new == ("FROM ubuntu:22.04\nRUN apt-get install -y cuda-toolkit-12-4\n"
                                  "RUN apt-get install -y cuda-libraries-12-4 cuda-toolkit\n")


@pytest.mark.asyncio
@pytest.mark.parametrize("title,expected", [
    ("Disable GL306 on this line", "FROM ubuntu:22.04\n# gpulint: disable=GL306\nRUN apt-get install -y cuda-12-4\n"),
    ("Disable GL306 in this file", "# gpulint: disable-file=GL306\nFROM ubuntu:22.04\nRUN apt-get install -y cuda-12-4\n"),
])
async def test_disable_comments_in_a_dockerfile(client, tmp_path, title, expected):
    uri = await workspace_with(client, tmp_path, {"Dockerfile": META}, "Dockerfile")
    await diagnostics(client, uri)
    new, left = await _apply(client, uri, META, _by_title(await actions(client, uri, 1), title), 2)
    assert new == expected and left == []


@pytest.mark.asyncio
async def test_disable_keeps_a_dockerfile_directive_first_and_extends_a_comment_there(client, tmp_path):
    text = "# syntax=docker/dockerfile:1\n# gpulint: disable-file=GL303\n" + META
    uri = await workspace_with(client, tmp_path, {"Dockerfile": text}, "Dockerfile")
    assert codes(await diagnostics(client, uri)) == ["GL002", "GL306"]
    new, _ = await _apply(client, uri, text, _by_title(await actions(client, uri, 3), "Disable GL306 in this file"), 2)
    assert new == "# syntax=docker/dockerfile:1\n# gpulint: disable-file=GL303,GL306\n" + META


@pytest.mark.asyncio
async def test_disable_on_a_yaml_line_keeps_its_indent(client, tmp_path):
    uri = await workspace_with(client, tmp_path, {"pod.yaml": POD}, "pod.yaml")
    assert codes(await diagnostics(client, uri)) == ["GL701"]
    new, left = await _apply(client, uri, POD, _by_title(await actions(client, uri, 5), "Disable GL701 on this line"), 2)
    assert "spec:\n  # gpulint: disable=GL701\n  runtimeClassName: nvidia-gpu\n" in new and left == []


# a containerd config: GL109 on `runtime_engine`; a multi-line string, in a table other files'
# checks do not read (of this file the run keeps only what they read), holds a line like a comment
CONTAINERD = ('version = 2\n[stream_processors."io.containerd.ocicrypt.decoder.v1.tar"]\n  args = ["""\n'
              '# gpulint: disable-file=GL104\n"""]\n'
              '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
              '  runtime_type = "io.containerd.runc.v2"\n  runtime_engine = "/usr/bin/runc"\n')


@pytest.mark.asyncio
async def test_disable_in_a_containerd_config_is_read_back_on_the_whole_file(client, tmp_path):
    # the text in the string is no comment to extend (the kept part of the file does not hold
    # the string; the candidate is read back on the whole text): a comment of its own goes first
    uri = await workspace_with(client, tmp_path, {"config.toml": CONTAINERD}, "config.toml")
    assert codes(await diagnostics(client, uri)) == ["GL109"]
    offered = _by_title(await actions(client, uri, 7), "Disable GL109 in this file")
    new, left = await _apply(client, uri, CONTAINERD, offered, 2)
    assert new == "# gpulint: disable-file=GL109\n" + CONTAINERD and left == []


@pytest.mark.asyncio
async def test_no_disable_comment_where_a_comment_cannot_go(client, tmp_path):
    text = '{"default-runtime": "nvidia"}\n'  # JSON: no comments
    uri = await workspace_with(client, tmp_path, {"daemon.json": text}, "daemon.json")
    assert codes(await diagnostics(client, uri))
    assert not [a for a in await actions(client, uri, 0) if a.title.startswith("Disable")]


@pytest.mark.asyncio
async def test_hover_on_a_finding_and_on_a_suppression_shows_the_rule(client, tmp_path):
    from gpulint.catalog import load_catalog

    rule = load_catalog()["GL306"]
    text = META + "# gpulint: disable=GL306\nRUN apt-get install -y cuda-12-4\n"
    uri = await workspace_with(client, tmp_path, {"Dockerfile": text}, "Dockerfile")
    await diagnostics(client, uri)
    for line, character in ((1, 25), (2, 21)):  # on `cuda-12-4`; on `GL306` in the comment
        shown = await hover_text(client, uri, line, character)
        assert shown.startswith("**GL306** `cuda-meta-package`") and rule.summary in shown and rule.why in shown
    assert await hover_text(client, uri, 0, 1) is None  # `FROM`


@pytest.mark.asyncio
async def test_hover_on_a_suppression_annotation_shows_the_rule(client, tmp_path):
    text = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
            "    gpulint.io/disable: \"GL505, GL506 -- the smoke test needs every GPU\"\n"
            "spec:\n  containers:\n  - name: c\n    image: nvidia/cuda:12.9.1-base-ubuntu24.04\n"
            "    securityContext: {privileged: true}\n    resources: {limits: {nvidia.com/gpu: 1}}\n"
            "  - name: d\n    image: nvidia/cuda:12.9.1-base-ubuntu24.04\n"
            "    env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]\n")
    uri = await workspace_with(client, tmp_path, {"pod.yaml": text}, "pod.yaml")
    assert await diagnostics(client, uri) == []  # both silenced
    assert (await hover_text(client, uri, 5, 33)).startswith("**GL506**")
    assert (await hover_text(client, uri, 5, 26)).startswith("**GL505**")
    assert await hover_text(client, uri, 5, 60) is None  # the reason


@pytest.mark.asyncio
async def test_hover_on_a_cuda_image_shows_what_gpulint_image_says(client, tmp_path):
    text = "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"
    uri = await workspace_with(client, tmp_path, {"Dockerfile": text}, "Dockerfile", options={"driver": "535"})
    shown = await hover_text(client, uri, 0, 20)
    expected = run_gpulint("image", "nvidia/cuda:12.4.1-runtime-ubuntu22.04", "--driver", "535").out
    # the image's finding under --driver 535 first, then the image's facts
    assert shown.startswith("**GL601**")
    assert shown.endswith("\n\n---\n\n```text\n" + expected.rstrip("\n") + "\n```")


def _watched(client, path, change=types.FileChangeType.Changed):
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=path.as_uri(), type=change)]))


@pytest.mark.asyncio
async def test_settings_reload_when_the_configuration_changes(client, tmp_path):
    config = tmp_path / ".gpulint.toml"
    uri = await workspace_with(client, tmp_path, {".gpulint.toml": 'ignore = ["GL306"]\n', "Dockerfile": META},
                               "Dockerfile")
    assert await diagnostics(client, uri) == []
    config.write_text("ignore = []\n")
    client.diagnostics.pop(uri, None)
    _watched(client, config)
    assert codes(await diagnostics(client, uri)) == ["GL306"]
    # saved from the editor: read again as well
    config.write_text('[severity]\nGL306 = "info"\n')
    client.diagnostics.pop(uri, None)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(
        uri=config.as_uri())))
    found = await diagnostics(client, uri)
    assert codes(found) == ["GL306"] and found[0].severity == types.DiagnosticSeverity.Information


@pytest.mark.asyncio
async def test_a_broken_configuration_is_said_and_the_defaults_apply(client, tmp_path):
    config = tmp_path / "pyproject.toml"
    uri = await workspace_with(client, tmp_path, {"pyproject.toml": '[tool.gpulint]\nignore = ["GL306"]\n',
                                                  "Dockerfile": META}, "Dockerfile")
    assert await diagnostics(client, uri) == []
    config.write_text('[tool.gpulint]\nignore = ["GL306"\n')
    client.diagnostics.pop(uri, None)
    _watched(client, config)
    assert codes(await diagnostics(client, uri)) == ["GL306"]
    said = [m.message for m in client.messages]
    assert len(said) == 1 and "the configuration does not read" in said[0] and "invalid TOML" in said[0]
    # and on the configuration itself, where the reader stopped
    [broken] = await diagnostics(client, config.as_uri())
    assert (broken.range.start.line, broken.range.start.character) == (1, 17)
    assert "invalid TOML" in broken.message and broken.severity == types.DiagnosticSeverity.Error
    config.write_text('[tool.gpulint]\nignore = ["GL306"]\n')  # fixed: the diagnostic is taken back
    _watched(client, config)
    assert await diagnostics(client, config.as_uri(), until=lambda found: not found) == []
    assert await diagnostics(client, uri, until=lambda found: not found) == []
    config.write_text('[tool.gpulint]\nselect = ["GL999"]\n')  # a selector naming no rule
    client.diagnostics.pop(uri, None)
    _watched(client, config)
    assert codes(await diagnostics(client, uri)) == ["GL306"]
    assert "GL999" in client.messages[-1].message
    [unknown] = await diagnostics(client, config.as_uri(), until=bool)
    assert (unknown.range.start.line, unknown.range.start.character) == (1, 10) and "GL999" in unknown.message


@pytest.mark.asyncio
async def test_initialization_options_gpulint_cannot_use_are_said_and_left_out(client, tmp_path):
    uri = await workspace_with(client, tmp_path, {"Dockerfile": META}, "Dockerfile",
                               options={"driver": "five-thirty-five", "gpuClass": "quantum"})
    assert codes(await diagnostics(client, uri)) == ["GL306"]
    said = " ".join(m.message for m in client.messages)
    assert "initializationOptions.driver 'five-thirty-five'" in said and "initializationOptions.gpuClass 'quantum'" in said


@pytest.mark.asyncio
async def test_latency_of_a_300_line_manifest_after_a_change(client, tmp_path, capsys):
    """The time from an edit of a 300-line manifest to its diagnostics, printed (bench/ holds
    the figure that is tracked; a unit test does not judge timings)."""
    import statistics
    import time

    text = (FIXTURES / "server" / "deployment-300.yaml").read_text()
    assert text.count("\n") == 300
    uri = await workspace_with(client, tmp_path, {"deployment.yaml": text,
                                                  "runtimeclass.yaml": RUNTIME_CLASS.format("nvidia")},
                               "deployment.yaml")
    assert codes(await diagnostics(client, uri)) == ["GL505"]
    saved, typed = [], []
    for version in range(2, 22, 2):
        start = time.perf_counter()
        replace_all(client, uri, text.replace("replicas: 2", f"replicas: {version}", 1), version)
        client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
        assert codes(await diagnostics(client, uri)) == ["GL505"]
        saved.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        replace_all(client, uri, text.replace("replicas: 2", f"replicas: {version + 1}", 1), version + 1)
        assert codes(await diagnostics(client, uri)) == ["GL505"]
        typed.append((time.perf_counter() - start) * 1000)
    with capsys.disabled():
        print(f"\ngpulint server, 300-line manifest: edit + save to diagnostics {statistics.median(saved):.1f} ms, "
              f"keystroke to diagnostics {statistics.median(typed):.1f} ms (median of {len(saved)})")


@pytest.mark.asyncio
async def test_excluded_and_git_ignored_files_are_no_context(client, tmp_path):
    (tmp_path / ".git").mkdir()
    files = {".gitignore": "scratch/\n", ".gpulint.toml": 'extend-exclude = ["old"]\n', "pod.yaml": POD}
    pod = await workspace_with(client, tmp_path, files, "pod.yaml", pull=True)
    assert await pulled(client, pod) == ["GL701"]
    for folder in ("scratch", "old", "."):  # only the last one defines the class for `gpulint .`
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "gpu.yaml").write_text(RUNTIME_CLASS.format("nvidia-gpu"))
        _watched(client, tmp_path / folder / "gpu.yaml", types.FileChangeType.Created)
        assert await pulled(client, pod) == ([] if folder == "." else ["GL701"])
    assert run_gpulint("--format", "json", str(tmp_path / "pod.yaml")).codes() == []


@pytest.mark.asyncio
async def test_a_crlf_file_gets_crlf_in_the_comments_written(client, tmp_path):
    text = META.replace("\n", "\r\n")
    (tmp_path / "Dockerfile").write_bytes(text.encode())
    await start(client, tmp_path)
    uri = open_file(client, tmp_path / "Dockerfile", text)
    (found,) = await diagnostics(client, uri)
    assert (found.range.start.line, found.range.start.character, found.range.end.character) == (1, 23, 32)
    new, left = await _apply(client, uri, text, _by_title(await actions(client, uri, 1), "Disable GL306 on this line"), 2)
    assert new == "FROM ubuntu:22.04\r\n# gpulint: disable=GL306\r\nRUN apt-get install -y cuda-12-4\r\n" and left == []


@pytest.mark.asyncio
async def test_no_line_comment_inside_a_continued_shell_command(client, tmp_path):
    text = "#!/bin/sh\ndocker run \\\n  --gpus device=0,1 \\\n  nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi\n"
    uri = await workspace_with(client, tmp_path, {"run.sh": text}, "run.sh")
    assert codes(await diagnostics(client, uri)) == ["GL913"]
    offered = [a.title for a in await actions(client, uri, 2)]
    assert "Disable GL913 on this line" not in offered
    new, left = await _apply(client, uri, text, _by_title(await actions(client, uri, 2), "Disable GL913 in this file"), 2)
    assert new == "#!/bin/sh\n# gpulint: disable-file=GL913\n" + text.split("\n", 1)[1] and left == []


# one file of each kind, as `gpulint .` judges them in one project
EVERY_KIND = ["containerd/bad/gl101.toml", "daemon-json/bad/gl201-daemon.json", "dockerfile/meta/bad.Dockerfile",
              "kubernetes/GL505/bad.yaml", "compat/sources/helm-values/values.yaml", "cdi/versions/too-old.yaml",
              "compose/anchored-limits.compose.yaml", "commands/checklist.md"]


@pytest.mark.asyncio
async def test_every_kind_gets_the_findings_the_command_line_gives(client, tmp_path):
    (tmp_path / ".git").mkdir()
    for name in EVERY_KIND:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text((FIXTURES / name).read_text())
    cli = run_gpulint("--format", "json", "--failure-threshold", "none", str(tmp_path))
    await start(client, tmp_path)
    for name in EVERY_KIND:
        expected = [(f["code"], f["severity"], f["line"] - 1, f["column"] - 1, f["end_line"] - 1, f["end_column"])
                    for f in cli.findings if f["path"].endswith(name)]
        found = await diagnostics(client, open_file(client, tmp_path / name))
        severity = {1: "error", 2: "warning", 3: "info"}
        assert expected and [(d.code, severity[d.severity], d.range.start.line, d.range.start.character,
                              d.range.end.line, d.range.end.character) for d in found] == expected, name


@pytest.mark.asyncio
async def test_requests_about_a_file_never_opened_get_nothing_and_the_server_goes_on(client, tmp_path):
    uri = await workspace_with(client, tmp_path, {"Dockerfile": META}, "Dockerfile")
    assert codes(await diagnostics(client, uri)) == ["GL306"]
    ghost = (tmp_path / "gone" / "Dockerfile").as_uri()
    assert await hover_text(client, ghost, 1, 25) is None
    assert await actions(client, ghost, 1) == []
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=ghost)))
    assert list(report.items) == []
    assert (await hover_text(client, uri, 1, 25)).startswith("**GL306**")
    assert not [m for m in client.log_messages if "internal error" in m.message]


@pytest.mark.asyncio
async def test_each_file_is_judged_in_its_own_project_as_the_command_line_does(client, tmp_path):
    """A nested project's configuration governs its files; another workspace folder is another
    project, whose RuntimeClasses a pod here does not see."""
    for folder in ("main", "main/svc", "other"):
        (tmp_path / folder).mkdir(parents=True)
    files = {"main/.gpulint.toml": 'ignore = ["GL306"]\n', "main/Dockerfile": META,
             "main/svc/.gpulint.toml": "ignore = []\n", "main/svc/Dockerfile": META,
             "main/runtimeclass.yaml": RUNTIME_CLASS.format("nvidia-gpu"), "main/pod.yaml": POD,
             "other/pod.yaml": POD}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    await start(client, tmp_path / "main", more=(tmp_path / "other",))
    for name in ("main/Dockerfile", "main/svc/Dockerfile", "main/pod.yaml", "other/pod.yaml"):
        expected = run_gpulint("--format", "json", "--failure-threshold", "none", str(tmp_path / name)).codes()
        assert codes(await diagnostics(client, open_file(client, tmp_path / name))) == expected, name
        assert expected == {"main/svc/Dockerfile": ["GL306"], "other/pod.yaml": ["GL701"]}.get(name, []), name


@pytest.mark.asyncio
async def test_a_workspace_folder_added_brings_its_files_into_view(client, tmp_path):
    for folder in ("main", "other"):
        (tmp_path / folder).mkdir()
    (tmp_path / "other" / "runtimeclass.yaml").write_text(RUNTIME_CLASS.format("nvidia-gpu"))
    (tmp_path / "other" / "pod.yaml").write_text(POD)
    result = await start(client, tmp_path / "main")
    assert result.capabilities.workspace.workspace_folders.change_notifications
    pod = open_file(client, tmp_path / "other" / "pod.yaml")
    assert codes(await diagnostics(client, pod)) == ["GL701"]  # in no project: nothing around it
    client.diagnostics.pop(pod, None)
    added = types.WorkspaceFolder(uri=(tmp_path / "other").as_uri(), name="other")
    client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
        event=types.WorkspaceFoldersChangeEvent(added=[added], removed=[])))
    assert await diagnostics(client, pod) == []
