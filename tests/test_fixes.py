"""The fix machinery through the command line: --fix, --diff, --unsafe-fixes, and
the guarantees every fix gets (atomic, format-preserving, idempotent)."""

from __future__ import annotations

import os
import stat

from conftest import run_gpulint, write_files

PARTLY_UNUSED = "FROM x\n# gpulint: disable=GL001,GL003 -- both\nRUNN y\n"


def test_fix_removes_an_unused_suppression_line(tmp_path):
    write_files(tmp_path, {"Dockerfile": "FROM x\n# gpulint: disable=GL001\nRUN y\n"})
    result = run_gpulint("--isolated", "--fix", ".", cwd=tmp_path)
    assert result.rc == 0
    assert (tmp_path / "Dockerfile").read_text() == "FROM x\nRUN y\n"
    assert "Fixed 1 finding" in result.out
    again = run_gpulint("--isolated", "--fix", ".", cwd=tmp_path)
    assert again.rc == 0 and "Fixed" not in again.out
    assert (tmp_path / "Dockerfile").read_text() == "FROM x\nRUN y\n"


def test_fix_removes_only_the_unused_code(tmp_path):
    write_files(tmp_path, {"Dockerfile": PARTLY_UNUSED})
    run_gpulint("--isolated", "--fix", ".", cwd=tmp_path)
    assert (tmp_path / "Dockerfile").read_text() == "FROM x\n# gpulint: disable=GL001 -- both\nRUNN y\n"


def test_fix_removes_a_trailing_comment_only(tmp_path):
    # (in a Dockerfile a trailing `#` is part of the instruction: GL005, never removed)
    write_files(tmp_path, {"compose.yaml": "services:\n  a:\n    image: x  # gpulint: disable=GL001\n"})
    run_gpulint("--isolated", "--fix", ".", cwd=tmp_path)
    assert (tmp_path / "compose.yaml").read_text() == "services:\n  a:\n    image: x\n"


def test_diff_writes_nothing(tmp_path):
    write_files(tmp_path, {"Dockerfile": PARTLY_UNUSED})
    result = run_gpulint("--isolated", "--diff", ".", cwd=tmp_path)
    assert result.rc == 1
    assert result.out.splitlines() == [
        "--- a/Dockerfile",
        "+++ b/Dockerfile",
        "@@ -1,3 +1,3 @@",
        " FROM x",
        "-# gpulint: disable=GL001,GL003 -- both",
        "+# gpulint: disable=GL001 -- both",
        " RUNN y",
    ]
    assert (tmp_path / "Dockerfile").read_text() == PARTLY_UNUSED
    write_files(tmp_path, {"Dockerfile": "FROM x\n"})
    assert run_gpulint("--isolated", "--diff", ".", cwd=tmp_path).rc == 0


def test_fix_keeps_crlf_bom_and_file_mode(tmp_path):
    path = tmp_path / "Dockerfile"
    path.write_bytes(b"\xef\xbb\xbfFROM x\r\n# gpulint: disable=GL001\r\nRUN y\r\n")
    os.chmod(path, 0o640)
    run_gpulint("--isolated", "--fix", ".", cwd=tmp_path)
    assert path.read_bytes() == b"\xef\xbb\xbfFROM x\r\nRUN y\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".gpulint-")]


def test_fix_in_worker_processes_keeps_crlf_and_bom(tmp_path):
    """A Dockerfile's name gives its kind, so it is read in its turn, in a worker: how it was
    encoded comes back with its findings."""
    for n in range(120):
        (tmp_path / f"d{n:03}").mkdir()
        (tmp_path / f"d{n:03}" / "Dockerfile").write_bytes(b"\xef\xbb\xbfFROM x\r\n# gpulint: disable=GL001\r\nRUN y\r\n")
    run_gpulint("--isolated", "--jobs", "2", "--fix", ".", cwd=tmp_path)
    for n in range(120):
        assert (tmp_path / f"d{n:03}" / "Dockerfile").read_bytes() == b"\xef\xbb\xbfFROM x\r\nRUN y\r\n"


def test_fix_with_stdin_prints_the_fixed_text(tmp_path):
    result = run_gpulint("--isolated", "--fix", "-", "--stdin-filename", "Dockerfile",
                         cwd=tmp_path, stdin="FROM x\n# gpulint: disable=GL001\nRUN y\n")
    assert result.out == "FROM x\nRUN y\n"
    assert result.rc == 0


def test_remaining_findings_decide_the_exit_code_after_fixing(tmp_path):
    write_files(tmp_path, {"Dockerfile": PARTLY_UNUSED.replace("RUNN", "RUN"),
                           "daemon.json": "{,}"})
    result = run_gpulint("--isolated", "--fix", "--format", "json", ".", cwd=tmp_path)
    assert result.codes() == ["GL001"]  # the unfixable parse error is what remains
    assert result.rc == 1
    assert (tmp_path / "Dockerfile").read_text() == "FROM x\nRUN y\n"


def test_a_fix_that_would_break_the_file_is_refused(tmp_path, monkeypatch):
    from gpulint import registry
    from gpulint.model import Edit, Fix
    from gpulint.run.engine import load_all_checks

    load_all_checks()

    def breaks_json(doc, ctx):
        yield registry.finding(doc, "GL002", doc.tree, "demo",
                               fix=Fix("add a comma", (Edit(doc.abspath, 1, 1, ","),)))

    monkeypatch.setattr("gpulint.run.engine.CHECKS", registry.CHECKS + [
        registry.Check(breaks_json, ("GL002",), ("daemon-json",), False)])
    write_files(tmp_path, {"daemon.json": '{"default-runtime": "runc"}\n'})
    result = run_gpulint("--isolated", "--fix", ".", cwd=tmp_path)
    assert "fixes not applied, the result would not parse" in result.err
    assert (tmp_path / "daemon.json").read_text() == '{"default-runtime": "runc"}\n'
