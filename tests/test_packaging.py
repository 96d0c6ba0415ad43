"""The wheel carries the rule catalog and the data, and works outside the source tree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("src")
    # build from a copy, so nothing is written into the checkout
    shutil.copytree(ROOT, build / "gpulint", ignore=shutil.ignore_patterns(
        ".git", ".venv", "venv", "__pycache__", "*.egg-info", "dist", "build", ".pytest_cache"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--quiet", "-w", str(out), str(build / "gpulint")], check=True)
    [path] = out.glob("gpulint-*.whl")
    return path


def test_wheel_contains_every_rule_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for rule in (ROOT / "rules").iterdir():
        assert f"gpulint/rules/{rule.name}" in names
    assert "gpulint/config-schema.json" in names
    assert any(n.endswith("entry_points.txt") for n in names)


def test_wheel_installs_into_a_fresh_virtualenv_and_lints(wheel, tmp_path):
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = env / ("Scripts" if os.name == "nt" else "bin") / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], check=True)
    work = tmp_path / "outside"
    shutil.copytree(FIXTURES / "core" / "parse-errors", work)
    script = env / ("Scripts" if os.name == "nt" else "bin") / "gpulint"
    result = subprocess.run([str(script), "--isolated", "--format", "json", "."], cwd=work,
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""})
    assert result.returncode == 1, result.stderr
    codes = [f["code"] for f in json.loads(result.stdout)["findings"]]
    assert codes == ["GL001"] * 4
    rule = subprocess.run([str(script), "rule", "GL001"], capture_output=True, text=True, cwd=work)
    assert rule.stdout.startswith("GL001 parse-error")


def test_rule_families_and_explain_import_no_engine_cli_or_report():
    """Data flows one way: rule families and the explain commands get what they need from
    neutral modules, never from the engine, the command line or a report format."""
    import ast

    package = Path(__file__).resolve().parent.parent / "gpulint"
    for path in [*sorted((package / "checks").glob("*.py")), package / "explain.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith(("gpulint.engine", "gpulint.cli", "gpulint.report")), (path.name, name)
