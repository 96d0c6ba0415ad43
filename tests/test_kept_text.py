"""The text of a checked file with something to report is kept packed until a report or a fix
reads it (and a worker process keeps none once it has sent it back): reports, suppressions and
fixes read it as it was, whichever process checked the file, whatever its characters and line
ends."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest

from gpulint.model import Document

# GL003 is not a code: its removal from the comment (GL002's fix) is made from the text
PARTLY_UNUSED = "FROM x\n# gpulint: disable=GL001,GL003 -- {note}\nRUNN y\n"
FIXED = "FROM x\n# gpulint: disable=GL001 -- {note}\nRUNN y\n"
NOTES = ["plain", "café ✓ 𝄞 naïve", "\u6f22\u5b57"]


def _lint(tree, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpulint", "--isolated", "--failure-threshold", "none",
                           *args, "."], capture_output=True, text=True, encoding="utf-8", cwd=tree)


@pytest.fixture
def tree(tmp_path):
    """Sixty Dockerfiles, each with a suppression naming one code that does not exist; some
    with characters past ASCII, a byte order mark and CRLF line ends, or both kinds of line end."""
    for n in range(60):
        note = NOTES[n % len(NOTES)]
        folder = tmp_path / f"d{n:02}"
        folder.mkdir()
        text = PARTLY_UNUSED.format(note=note)
        if n % 4 == 1:
            data = b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
        elif n % 4 == 2:
            data = text.replace("\n", "\r\n", 1).encode()  # the first line CRLF, the others LF
        else:
            data = text.encode()
        (folder / "Dockerfile").write_bytes(data)
    return tmp_path


def _expected(n: int) -> bytes:
    text = FIXED.format(note=NOTES[n % len(NOTES)])
    if n % 4 == 1:
        return b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
    if n % 4 == 2:
        return text.replace("\n", "\r\n", 1).encode()
    return text.encode()


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_fixes_are_made_from_the_text_as_read(tree, jobs):
    proc = _lint(tree, "--jobs", jobs, "--fix", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    for n in range(60):
        assert (tree / f"d{n:02}" / "Dockerfile").read_bytes() == _expected(n), n


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_reports_show_the_lines_as_read(tree, jobs):
    proc = _lint(tree, "--jobs", jobs, "--format", "text")
    assert proc.returncode == 0, proc.stderr
    for note in NOTES:
        assert f"2 | # gpulint: disable=GL001,GL003 -- {note}\n" in proc.stdout
    report = json.loads(_lint(tree, "--jobs", jobs, "--format", "json").stdout)
    edits = [e for f in report["findings"] if f["code"] == "GL002" for e in f["fix"]["edits"]]
    assert len(edits) == 60
    # the removed `,GL003`: columns counted in the line as read, whatever comes after it
    assert {(e["location"]["line"], e["location"]["column"], e["end_location"]["column"]) for e in edits} \
        == {(2, 25, 31)}


def test_a_packed_text_reads_back_as_it_was():
    text = "FROM x\r\n# café ✓ 𝄞 \ud800\n" * 50
    doc = Document("Dockerfile", "/Dockerfile", "dockerfile", text)
    packed = doc.packed_text()
    assert isinstance(packed, bytes) and len(packed) < len(text) // 4
    doc.text = packed
    assert doc.text == text
    assert doc == Document("Dockerfile", "/Dockerfile", "dockerfile", text)
    assert Document("a", "/a", "dockerfile", "").packed_text() == ""


def test_a_shared_file_is_held_packed_and_reads_back_as_it_was():
    # a large run holds each shared file in every process: its text packed, here and in the
    # line index its tree's positions use, and packed again once a check has read it
    text = "version = 2\r\n# café ✓ 𝄞\n[plugins.'io.containerd.grpc.v1.cri']\n  sandbox = 'x'\n" * 40
    doc = Document("config.toml", "/config.toml", "containerd", text)
    whole = len(pickle.dumps(doc))
    place = doc.index.offset(3, 3)
    doc.pack()
    assert len(pickle.dumps(doc)) < whole // 2  # it crosses to other processes packed
    assert doc.index.position(place) == (3, 3)  # positions need no text
    again = pickle.loads(pickle.dumps(doc))
    assert again.text == text and again.index.line_text(2) == "# café ✓ 𝄞"
    assert doc.text == text and doc.index.text is doc.text  # unpacked once for both
    doc.repack()
    assert len(pickle.dumps(doc)) < whole // 2
    assert doc.text == text and doc.line_text(2) == "# café ✓ 𝄞"
