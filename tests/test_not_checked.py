"""Never a silent pass: every file of a kind gpulint reads, and every file named on the command
line, is checked or reported as not checked (GL006, or GL001 for bytes that are not text), and
the summary counts it apart from the files checked. Through the CLI and its JSON report."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

import pytest

from conftest import ROOT, run_gpulint, write_files

UNUSED = "FROM python:3.12-slim\n# gpulint: disable=GL001 -- old workaround\nRUN pip install flask\n"
GPU_POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: a\n"
           "    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources: {requests: {nvidia.com/gpu: 1}}\n")
CRI = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "nvidia"\n')


def lint(folder, *args):
    return run_gpulint("--isolated", "--format", "json", *args, cwd=folder)


def found(run) -> list[tuple[str, str, str]]:
    return [(f["path"], f["code"], f["severity"]) for f in run.findings]


def counts(run) -> tuple[int, int, int]:
    s = run.json["summary"]
    return s["files_checked"], s["files_not_checked"], s["files_skipped"]


# -- files that are not regular: walked, a warning; named, an error ------------------------

def test_a_fifo_found_in_a_folder_is_a_warning_and_a_named_one_an_error(tmp_path):
    write_files(tmp_path, {"Dockerfile": UNUSED})
    os.mkfifo(tmp_path / "fifo-daemon.json")
    walked = lint(tmp_path, ".")
    assert found(walked) == [("Dockerfile", "GL002", "warning"), ("fifo-daemon.json", "GL006", "warning")]
    assert counts(walked) == (1, 1, 0)
    assert lint(tmp_path, "--failure-threshold", "error", ".").rc == 0
    named = lint(tmp_path, "--failure-threshold", "error", "fifo-daemon.json", "Dockerfile")
    assert found(named) == [("Dockerfile", "GL002", "warning"), ("fifo-daemon.json", "GL006", "error")]
    assert named.rc == 1
    assert counts(named) == (1, 1, 0)


def test_named_paths_that_are_no_regular_file_are_reported_and_the_rest_checked(tmp_path):
    write_files(tmp_path, {"Dockerfile": UNUSED})
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    run = lint(tmp_path, "pipe", "dangling", "a", os.devnull, "Dockerfile")
    messages = {f["path"]: f["message"] for f in run.findings if f["code"] == "GL006"}
    assert messages == {"pipe": "file not checked: it is not a regular file",
                        "dangling": "file not checked: it is a link to nothing",
                        "a": "file not checked: it is a symbolic link that loops",
                        os.path.relpath(os.devnull, tmp_path): "file not checked: it is not a regular file"}
    assert {f["severity"] for f in run.findings if f["code"] == "GL006"} == {"error"}
    assert "GL002" in run.codes()  # the Dockerfile was still checked
    assert run.rc == 1 and counts(run) == (1, 4, 0)


def test_a_path_that_is_nothing_is_still_a_usage_error(tmp_path):
    run = lint(tmp_path, "missing.yaml")
    assert run.rc == 2 and "missing.yaml: no such file or directory" in run.err


def test_the_text_summary_never_says_passed_when_a_file_was_not_checked(tmp_path):
    write_files(tmp_path, {"Dockerfile": "FROM ubuntu:22.04\n"})
    os.mkfifo(tmp_path / "daemon.json")
    run = run_gpulint("--isolated", "--ignore", "GL006", ".", cwd=tmp_path)
    assert run.out.strip() == "No findings, but not every file was checked: 1 file checked, 1 not checked."
    assert run.rc == 0  # GL006 ignored on purpose: the summary still says so
    clean = run_gpulint("--isolated", "Dockerfile", cwd=tmp_path)
    assert clean.out.strip() == "All checks passed: 1 file checked."
    reported = run_gpulint("--isolated", ".", cwd=tmp_path)
    assert reported.out.strip().endswith("Found 1 finding (1 warning) in 1 file checked, 1 not checked.")


def test_gl006_severity_from_the_configuration_applies_to_named_files_too(tmp_path):
    os.mkfifo(tmp_path / "Dockerfile")
    write_files(tmp_path, {".gpulint.toml": '[severity]\nGL006 = "info"\n'})
    run = run_gpulint("--format", "json", "Dockerfile", cwd=tmp_path)
    assert found(run) == [("Dockerfile", "GL006", "info")] and run.rc == 0


# -- bytes that are not text -----------------------------------------------------------------

BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xd8\xff\xe0 binary"


def test_a_binary_file_in_a_folder_is_skipped_and_a_named_one_reported(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "blob.json").write_bytes(BINARY)
    (tmp_path / "data" / "image.yaml").write_bytes(BINARY)
    walked = lint(tmp_path, ".")
    assert walked.findings == [] and counts(walked) == (0, 0, 2)
    named = lint(tmp_path, "data/blob.json")
    assert found(named) == [("data/blob.json", "GL006", "error")]
    assert named.findings[0]["message"] == ("file not checked: it is not text: not UTF-8 (byte 0), "
                                            "and no UTF-16 or UTF-32 byte order mark")
    assert named.rc == 1 and counts(named) == (0, 1, 0)


def test_bytes_that_are_not_text_in_a_file_of_a_kind_are_gl001(tmp_path):
    """By name (daemon.json), or by the kind's markers in what reads past the bad bytes (a
    pod.yaml, a containerd config.toml, a script with GPU command lines)."""
    bad = b"\n# caf\xe9\n"
    (tmp_path / "daemon.json").write_bytes(b'{"default-runtime": "nvidia"}' + bad)
    (tmp_path / "pod.yaml").write_bytes(GPU_POD.encode() + bad)
    (tmp_path / "config.toml").write_bytes(CRI.encode() + bad)
    (tmp_path / "run.sh").write_bytes(b"docker run --gpus all nvidia/cuda:12.4.1-base nvidia-smi" + bad)
    (tmp_path / "notes.yaml").write_bytes(b"title: caf\xe9\n")  # none of gpulint's kinds
    run = lint(tmp_path, ".")
    assert found(run) == [(name, "GL001", "error") for name in ("config.toml", "daemon.json", "pod.yaml", "run.sh")]
    assert all(f["message"].startswith("the file is not UTF-8 text (byte ") for f in run.findings)
    assert counts(run) == (0, 4, 1)


# -- UTF-16 and UTF-32 with a byte order mark ------------------------------------------------

@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-8-sig"])
def test_a_manifest_in_utf16_is_read_as_kubectl_reads_it(tmp_path, encoding):
    data = GPU_POD.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    (tmp_path / "pod.yaml").write_bytes(data)
    utf8 = tmp_path / "utf8"
    utf8.mkdir()
    (utf8 / "pod.yaml").write_text(GPU_POD)
    expected = [(f["code"], f["line"], f["column"]) for f in lint(utf8, "pod.yaml").findings]
    assert expected  # the manifest has findings to compare
    run = lint(tmp_path, "pod.yaml")
    assert [(f["code"], f["line"], f["column"]) for f in run.findings] == expected
    assert counts(run) == (1, 0, 0)


def test_utf16_toml_and_dockerfiles_are_checked_and_their_readers_refusal_reported(tmp_path):
    (tmp_path / "config.toml").write_bytes(CRI.encode("utf-16"))
    (tmp_path / "Dockerfile").write_bytes(b"\xfe\xff" + UNUSED.encode("utf-16-be"))
    run = lint(tmp_path, ".")
    messages = {(f["path"], f["code"]): f["message"] for f in run.findings}
    assert messages[("config.toml", "GL001")] == ("the file is UTF-16 (with a byte order mark): containerd "
                                                  "refuses it: a TOML file must be UTF-8; save it as UTF-8")
    assert messages[("Dockerfile", "GL001")].startswith("the file is UTF-16 (with a byte order mark): "
                                                        "`docker build` reads a Dockerfile as UTF-8 only")
    assert ("Dockerfile", "GL002") in messages  # and the content is checked all the same
    assert counts(run) == (2, 0, 0)


def test_utf32_is_read_and_reported_as_read_by_no_reader(tmp_path):
    (tmp_path / "pod.yaml").write_bytes(GPU_POD.encode("utf-32"))
    run = lint(tmp_path, "pod.yaml")
    first = run.findings[0]
    assert (first["code"], first["line"]) == ("GL001", 1)
    assert "UTF-32" in first["message"] and len(run.findings) > 1  # the rest is checked


def test_fixes_keep_the_files_utf16_encoding(tmp_path):
    path = tmp_path / "Dockerfile"
    path.write_bytes(UNUSED.encode("utf-16"))
    run = run_gpulint("--isolated", "--fix", "Dockerfile", cwd=tmp_path)
    assert run.rc in (0, 1), run.err
    data = path.read_bytes()
    assert data.startswith(b"\xff\xfe")
    assert data.decode("utf-16") == "FROM python:3.12-slim\nRUN pip install flask\n"


def test_utf16_on_stdin(tmp_path):
    proc = _gpulint_process(["--stdin-filename", "pod.yaml", "-"], tmp_path, stdin=GPU_POD.encode("utf-16"))
    assert proc.returncode in (0, 1) and json.loads(proc.stdout)["summary"]["files_checked"] == 1


# -- stdin past the size limit -----------------------------------------------------------------

def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (1024 ** 3, 1024 ** 3))


def _gpulint_process(args, cwd, stdin=None, stdin_file=None, timeout=20):
    return subprocess.run([sys.executable, "-m", "gpulint", "--isolated", "--format", "json", *args], cwd=cwd,
                          input=stdin, stdin=stdin_file, capture_output=True, timeout=timeout,
                          preexec_fn=_limit_memory, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_endless_stdin_is_read_up_to_the_limit_only(tmp_path):
    with open("/dev/zero", "rb") as zero:
        proc = _gpulint_process(["--stdin-filename", "Dockerfile", "-"], tmp_path, stdin_file=zero)
    assert proc.returncode == 1, proc.stderr[-2000:]
    (finding,) = json.loads(proc.stdout)["findings"]
    assert (finding["code"], finding["severity"]) == ("GL006", "error")
    assert finding["message"].startswith("file not checked: it has more than 4,194,304 bytes, the limit")


def test_fix_on_stdin_past_the_limit_passes_the_whole_input_through(tmp_path):
    data = ("FROM ubuntu:22.04\n" + "RUN true\n" * 1000).encode()
    proc = subprocess.run([sys.executable, "-m", "gpulint", "--isolated", "--fix", "--max-file-size", "100",
                           "--stdin-filename", "Dockerfile", "-"], cwd=tmp_path, input=data,
                          capture_output=True, timeout=20, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout == data
    assert b"GL006" in proc.stderr and proc.returncode == 1


# -- the time budget of one file -------------------------------------------------------------

@pytest.fixture
def slow_check(monkeypatch):
    """A file check that takes 30 s on any file named `slow/Dockerfile`."""
    from gpulint import registry
    from gpulint.run.engine import load_all_checks

    load_all_checks()

    def crawl(doc, ctx):
        if doc.path.endswith("slow/Dockerfile"):
            time.sleep(30)
        return []

    monkeypatch.setattr(registry, "CHECKS", registry.CHECKS + [
        registry.Check(crawl, ("GL002",), ("dockerfile",), False)])
    monkeypatch.setattr("gpulint.run.engine.CHECKS", registry.CHECKS)


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="the watchdog needs POSIX timers")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_past_its_time_budget_is_not_checked_and_the_run_goes_on(tmp_path, slow_check, jobs):
    write_files(tmp_path, {"slow/Dockerfile": UNUSED, "fast/Dockerfile": UNUSED})
    started = time.monotonic()
    run = lint(tmp_path, "--file-timeout", "0.5", "--jobs", jobs, ".")
    assert time.monotonic() - started < 20
    assert found(run) == [("fast/Dockerfile", "GL002", "warning"), ("slow/Dockerfile", "GL006", "warning")]
    message = run.findings[1]["message"]
    assert message.startswith("file not checked: it took longer than 0.5 s to check")
    assert "--file-timeout" in message
    assert counts(run) == (1, 1, 0) and run.rc == 1 and run.err == ""
    named = lint(tmp_path, "--file-timeout", "0.5", "--jobs", jobs, "slow/Dockerfile", "fast/Dockerfile")
    assert ("slow/Dockerfile", "GL006", "error") in found(named)


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="the watchdog needs POSIX timers")
def test_file_timeout_from_the_configuration(tmp_path, slow_check):
    write_files(tmp_path, {"slow/Dockerfile": "FROM ubuntu:22.04\n", ".gpulint.toml": "file-timeout = 0.5\n"})
    run = run_gpulint("--format", "json", ".", cwd=tmp_path)
    assert [f["code"] for f in run.findings] == ["GL006"]
    write_files(tmp_path, {".gpulint.toml": 'file-timeout = "soon"\n'})
    assert run_gpulint(".", cwd=tmp_path).rc == 2
    assert run_gpulint("--isolated", "--file-timeout", "-1", ".", cwd=tmp_path).rc == 2


def test_no_budget_leaves_no_timer_behind(tmp_path):
    import signal

    write_files(tmp_path, {"Dockerfile": UNUSED})
    before = signal.getsignal(signal.SIGALRM)
    lint(tmp_path, "--file-timeout", "5", ".")
    assert signal.getsignal(signal.SIGALRM) == before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


# -- a symlink and its target --------------------------------------------------------------------

def test_a_symlink_and_its_target_are_linted_once_under_the_first_path(tmp_path):
    write_files(tmp_path, {"docker/Dockerfile": UNUSED})
    (tmp_path / "alias").symlink_to("docker")
    (tmp_path / "Dockerfile.link").symlink_to("docker/Dockerfile")
    walked = lint(tmp_path, ".")
    assert [f["path"] for f in walked.findings] == ["Dockerfile.link"]  # walked first
    assert counts(walked) == (1, 0, 0)
    named = lint(tmp_path, "docker/Dockerfile", "Dockerfile.link", "alias")
    assert [f["path"] for f in named.findings] == ["docker/Dockerfile"]


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="the watchdog needs POSIX timers")
def test_a_shared_file_whose_parse_runs_past_its_budget_is_not_checked(tmp_path, monkeypatch):
    """A containerd config is parsed first (other files' checks consult it): its parse has
    the budget too, and the files that consult it are still checked."""
    from gpulint.formats import documents

    parse = documents.parse

    def slow_parse(doc, parser, templates=False):
        if doc.path.endswith("config.toml"):
            time.sleep(30)
        return parse(doc, parser, templates)

    monkeypatch.setattr(documents, "parse", slow_parse)
    write_files(tmp_path, {"etc/containerd/config.toml": CRI, "Dockerfile": UNUSED})
    run = lint(tmp_path, "--file-timeout", "0.5", ".")
    assert found(run) == [("Dockerfile", "GL002", "warning"), ("etc/containerd/config.toml", "GL006", "warning")]
    assert counts(run) == (1, 1, 0) and run.err == ""


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="the watchdog needs POSIX timers")
def test_telling_a_files_kind_has_the_budget_too(tmp_path, monkeypatch):
    """A file whose kind is told by its content (a manifest named pods.yaml) is read and
    classified within its budget: past it, GL006 for that file and the run goes on."""
    from gpulint import kinds

    classify = kinds.classify

    def slow_classify(name, text, folder=""):
        if name == "slow.yaml" and text is not None:  # by content, not by name
            time.sleep(30)
        return classify(name, text, folder)

    monkeypatch.setattr(kinds, "classify", slow_classify)
    write_files(tmp_path, {"slow.yaml": GPU_POD, "Dockerfile": UNUSED})
    started = time.monotonic()
    run = lint(tmp_path, "--file-timeout", "0.5", ".")
    assert time.monotonic() - started < 20
    assert found(run) == [("Dockerfile", "GL002", "warning"), ("slow.yaml", "GL006", "warning")]
    assert "to read and tell its kind" in run.findings[1]["message"]
    assert counts(run) == (1, 1, 0) and run.err == ""


def test_a_file_over_the_size_limit_is_reported_when_its_head_shows_a_kind(tmp_path):
    write_files(tmp_path, {"big/pods.yaml": GPU_POD + "---\n" + GPU_POD * 50,
                           "big/notes.yaml": "title: notes\nbody: |\n" + "  text\n" * 2000})
    run = lint(tmp_path, "--max-file-size", "1000", ".")
    assert found(run) == [("big/pods.yaml", "GL006", "warning")]
    assert counts(run) == (0, 1, 1)
