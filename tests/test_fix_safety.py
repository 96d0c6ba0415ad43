"""Fixes never lose data: what `--fix` writes, where it writes it, and that every change it
makes belongs to a finding the same run reports."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from conftest import ROOT, run_gpulint, write_files


def _gpulint(*args, cwd, stdin: bytes | None = None):
    return subprocess.run([sys.executable, "-m", "gpulint", "--isolated", *args], cwd=cwd,
                          input=stdin, capture_output=True, timeout=120)


def _examples() -> list[tuple[str, dict[str, str]]]:
    from gpulint.catalog import load_catalog

    cases = [(f"examples/{d.name}", {str(p.relative_to(d)): p.read_text() for p in d.rglob("*") if p.is_file()})
             for d in sorted((ROOT / "examples").iterdir()) if d.is_dir()]
    cases += [(f"{r.code} bad example", dict(r.bad.files)) for r in load_catalog().values()
              if r.fixable != "never" and not r.bad.args]
    return cases


def _offset(text: str, line: int, column: int) -> int:
    lines = text.splitlines(keepends=True)
    return sum(len(x) for x in lines[: line - 1]) + column - 1


def _apply_reported(folder, report: dict) -> bool:
    """Apply the fixes a JSON report shows, as `--fix` takes them: whole fixes by position,
    skipping any that overlaps one already taken. False when there was none to apply."""
    per_path: dict[str, list[list[tuple[int, int, str]]]] = {}
    texts = {}
    for finding in report["findings"]:
        fix = finding.get("fix")
        if not fix:
            continue
        for path in {e["path"] for e in fix["edits"]}:
            text = texts.setdefault(path, (folder / path).read_text())
            per_path.setdefault(path, []).append([
                (_offset(text, e["location"]["line"], e["location"]["column"]),
                 _offset(text, e["end_location"]["line"], e["end_location"]["column"]), e["content"])
                for e in fix["edits"] if e["path"] == path])
    for path, fixes in per_path.items():
        taken: list[tuple[int, int, str]] = []
        for edits in sorted(fixes, key=lambda es: min(e[0] for e in es)):
            clash = any((a[0] == a[1] == b[0] == b[1]) or (a[0] < b[1] and b[0] < a[1])
                        for a in edits for b in taken)
            if not clash:
                taken.extend(edits)
        text = texts[path]
        for start, end, content in sorted(taken, reverse=True):
            text = text[:start] + content + text[end:]
        (folder / path).write_text(text)
    return bool(per_path)


@pytest.mark.parametrize("name,files", _examples(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_change_a_fix_makes_belongs_to_a_reported_finding(tmp_path, name, files):
    """`--fix --unsafe-fixes` gives exactly the files that applying, round after round, the
    fixes the JSON report shows gives: no change comes from a finding nobody saw."""
    by_hand, by_fix = tmp_path / "hand", tmp_path / "fix"
    write_files(by_hand, files)
    write_files(by_fix, files)
    for _ in range(10):
        report = json.loads(_gpulint("--format", "json", "--unsafe-fixes", "--failure-threshold", "none",
                                     ".", cwd=by_hand).stdout)
        if not _apply_reported(by_hand, report):
            break
    _gpulint("--fix", "--unsafe-fixes", ".", cwd=by_fix)
    for path in files:
        assert (by_fix / path).read_text() == (by_hand / path).read_text(), f"{name}: {path}"


def test_stdin_fix_returns_the_input_byte_for_byte_where_nothing_is_fixed(tmp_path):
    for data, name in ((b"FROM ubuntu:22.04\r\n\xff\xfe\r\n", "Dockerfile"),  # not UTF-8
                       (b"hello\r\nworld\n", "notes.txt"),  # not a kind gpulint reads
                       (b"\xef\xbb\xbfFROM ubuntu:22.04\r\nRUN true\r\n", "Dockerfile")):
        proc = _gpulint("--fix", "--stdin-filename", name, "-", cwd=tmp_path, stdin=data)
        assert proc.stdout == data


def test_stdin_fix_keeps_the_bom_and_crlf_of_what_it_fixes(tmp_path):
    proc = _gpulint("--fix", "--stdin-filename", "daemon.json", "-", cwd=tmp_path,
                    stdin=b'\xef\xbb\xbf{"graph": "/x"}\r\n')
    assert proc.stdout == b'\xef\xbb\xbf{"data-root": "/x"}\r\n'


def test_mixed_line_ends_stay_per_line(tmp_path):
    path = tmp_path / "daemon.json"
    path.write_bytes(b'{\r\n  "graph": "/x",\n  "debug": true\r\n}\n')
    _gpulint("--fix", "daemon.json", cwd=tmp_path)
    assert path.read_bytes() == b'{\r\n  "data-root": "/x",\n  "debug": true\r\n}\n'


@pytest.mark.parametrize("name,text", [
    ("configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: containerd\ndata:\n"
                       "  config.toml: |\n    version = 2\n    # gpulint: disable=GL105 -- old nodes\n"
                       "    [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
                       "      default_runtime_name = \"runc\"\n"),
    ("config.toml", 'version = 2\nnote = """\n# gpulint: disable=GL105 -- text, not a comment\n"""\n'),
])
def test_the_unused_suppression_fix_never_touches_text_inside_values(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    _gpulint("--fix", name, cwd=tmp_path)
    assert (tmp_path / name).read_text() == text


def test_fix_writes_in_place_through_links_keeping_owner_and_links(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "daemon.json"
    target.write_text('{"graph": "/x"}\n')
    os.chmod(target, 0o640)
    (tmp_path / "link-daemon.json").symlink_to("real/daemon.json")
    os.link(target, tmp_path / "hard-daemon.json")
    if os.geteuid() == 0:
        os.chown(target, 1234, 1234)
    inode = target.stat().st_ino
    proc = _gpulint("--fix", ".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "link-daemon.json").is_symlink()
    info = target.stat()
    assert (info.st_ino, info.st_nlink, stat.S_IMODE(info.st_mode)) == (inode, 2, 0o640)
    if os.geteuid() == 0:
        assert (info.st_uid, info.st_gid) == (1234, 1234)
    assert target.read_text() == '{"data-root": "/x"}\n'
    assert not [p for p in tmp_path.rglob(".gpulint-fix-*")]


def test_a_read_only_file_is_reported_and_the_others_are_fixed(tmp_path):
    (tmp_path / "ro-daemon.json").write_text('{"graph": "/y"}\n')
    os.chmod(tmp_path / "ro-daemon.json", 0o444)
    (tmp_path / "daemon.json").write_text('{"graph": "/x"}\n')
    proc = _gpulint("--fix", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert b"ro-daemon.json: not fixed: the file is read-only" in proc.stderr
    assert (tmp_path / "ro-daemon.json").read_text() == '{"graph": "/y"}\n'
    assert (tmp_path / "daemon.json").read_text() == '{"data-root": "/x"}\n'
    assert b"ro-daemon.json:1:2: GL206" in proc.stdout  # still reported


def test_backup_copies_left_by_a_killed_run_are_not_linted(tmp_path):
    (tmp_path / ".gpulint-fix-4242-daemon.json.tmp").write_text('{"graph": "/x"}\n')
    run = run_gpulint("--isolated", "--format", "json", ".", cwd=tmp_path)
    assert json.loads(run.out)["findings"] == []


def test_a_read_only_folder_still_gets_its_writable_files_fixed_without_a_traceback(tmp_path):
    folder = tmp_path / "etc"
    folder.mkdir()
    (folder / "daemon.json").write_text('{"graph": "/x"}\n')
    os.chmod(folder, 0o555)
    try:
        proc = _gpulint("--fix", ".", cwd=tmp_path)
    finally:
        os.chmod(folder, 0o755)
    assert b"Traceback" not in proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert (folder / "daemon.json").read_text() == '{"data-root": "/x"}\n'
    assert not list(folder.glob(".gpulint-fix-*"))
