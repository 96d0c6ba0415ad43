"""Shared helpers: run the gpulint CLI in-process and read its JSON report."""

from __future__ import annotations

import io
import json
import os
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = ROOT.parent / "shared"


@dataclass
class Run:
    rc: int
    out: str
    err: str

    @property
    def json(self) -> dict:
        return json.loads(self.out)

    @property
    def findings(self) -> list[dict]:
        return self.json["findings"]

    def codes(self) -> list[str]:
        return [f["code"] for f in self.findings]

    def at(self) -> list[tuple[str, int, int]]:
        """(code, line, column) of every finding, in report order."""
        return [(f["code"], f["line"], f["column"]) for f in self.findings]


@pytest.fixture(autouse=True)
def _outside_a_github_workspace(monkeypatch):
    """Reports place paths relative to $GITHUB_WORKSPACE where it is set: tests that do not set
    it see the same output on a CI runner as elsewhere."""
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)


def run_gpulint(*args: str, cwd: Path | None = None, stdin: str | None = None) -> Run:
    """Run `gpulint ARGS` in-process, as the console script would."""
    from gpulint.face.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_cwd = os.getcwd()
    old_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
    try:
        if cwd is not None:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            rc = main(list(args))
    finally:
        os.chdir(old_cwd)
        sys.stdin = old_stdin
    return Run(rc, out.getvalue(), err.getvalue())


def validated_sarif(text: str) -> dict:
    """Parse a SARIF report and validate it against the official 2.1.0 schema."""
    import jsonschema

    log = json.loads(text)
    schema = json.loads((ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.validate(log, schema)
    return log


def write_files(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


def lint_fixture(relative: str, *args: str) -> Run:
    """Lint tests/fixtures/<relative> (a file or a folder) with JSON output and no config."""
    return run_gpulint("--isolated", "--format", "json", *args, str(FIXTURES / relative), cwd=ROOT)


@pytest.fixture
def gl():
    return run_gpulint


@pytest.fixture
def lint_files(tmp_path):
    """Write {name: content} into a temporary folder and lint it (JSON, no config)."""

    def lint(files: dict[str, str], *args: str) -> Run:
        write_files(tmp_path, files)
        return run_gpulint("--isolated", "--format", "json", *args, ".", cwd=tmp_path)

    return lint
