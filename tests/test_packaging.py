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

from conftest import FIXTURES, ROOT, write_files


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
    for rule in (ROOT / "rules").rglob("*"):  # rules/prebuilt, the parsed data, included
        if rule.is_file():
            assert f"gpulint/rules/{rule.relative_to(ROOT / 'rules').as_posix()}" in names
    assert "gpulint/run/config-schema.json" in names
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
    # installed without the `lsp` extra: the language server says how to get it
    server = subprocess.run([str(script), "server"], capture_output=True, text=True, cwd=work,
                            stdin=subprocess.DEVNULL)
    assert server.returncode == 2 and "pip install 'gpulint[lsp]'" in server.stderr, server.stderr


def test_rule_families_and_explain_import_no_engine_cli_or_report():
    """Data flows one way: rule families and the explain commands get what they need from
    neutral modules, never from the engine, the command line or a report format."""
    import ast

    package = Path(__file__).resolve().parent.parent / "gpulint"
    families = [p for folder in ("kinds", "crossfile", "common") for p in sorted((package / folder).rglob("*.py"))]
    for path in [*families, package / "face" / "explain.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith(("gpulint.run", "gpulint.face.cli", "gpulint.report")), (path.name, name)


def _action_steps(inputs: dict[str, str], action_path: Path) -> list[tuple[str, dict[str, str]]]:
    """The composite action's steps as bash scripts, with `${{ ... }}` filled in as the runner does."""
    import re

    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    values = {f"inputs.{k}": inputs.get(k, v.get("default", "")) for k, v in action["inputs"].items()}
    values["github.action_path"] = str(action_path)

    def fill(text: str) -> str:
        return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", lambda m: values[m.group(1)], text)

    assert action["runs"]["using"] == "composite"
    return [(fill(step["run"]), {k: fill(str(v)) for k, v in step.get("env", {}).items()})
            for step in action["runs"]["steps"]]


def test_the_github_action_installs_gpulint_at_its_ref_and_lints(tmp_path):
    """The action's own virtualenv, one gpulint run for the annotations and the SARIF file,
    and paths given one per line, spaces and all."""
    source = tmp_path / "action"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "venv", "__pycache__", "*.egg-info", "dist", "build", ".pytest_cache"))
    env_dir = tmp_path / "runner-python"  # the runner's python3, which must stay as it was
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    (bin_dir / "python3").exists() or (bin_dir / "python3").symlink_to(bin_dir / "python")
    work = tmp_path / "repo"
    write_files(work, {"deploy/daemon.json": '{"default-runtime": "nvidia"}\n',
                       "my nodes/daemon.json": '{"default-runtime": "nvidia-cdi"}\n',
                       "-odd/Dockerfile": "FROM ubuntu:22.04\nRUNN apt-get update\n",
                       "not linted/daemon.json": '{"default-runtime": "nvidia"}\n'})
    output = tmp_path / "github_output"
    output.touch()
    runner_temp = tmp_path / "runner temp"
    runner_temp.mkdir()
    base = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": "",
            "GITHUB_OUTPUT": str(output), "RUNNER_TEMP": str(runner_temp)}
    inputs = {"paths": "deploy\nmy nodes\r\n\n-odd/Dockerfile\n", "sarif-file": "reports/gpulint.sarif",
              "args": "--driver 550.54.15\n  --gpu-class   datacenter"}
    steps = _action_steps(inputs, source)
    results = [subprocess.run(["bash", "-e", "-c", script], cwd=work, capture_output=True, text=True,
                              env={**base, **env}) for script, env in steps]
    install, lint = results
    assert install.returncode == 0, install.stderr[-2000:]
    assert not (bin_dir / "gpulint").exists()  # installed in the action's own virtualenv
    assert (runner_temp / "gpulint-action" / "bin" / "gpulint").exists()
    assert steps[1][0].count('"$gpulint"') == 1  # one run makes both reports
    assert lint.returncode == 1, lint.stderr
    annotated = sorted(line.split(",")[0] for line in lint.stdout.splitlines() if line.startswith("::"))
    assert annotated == ["::error file=-odd/Dockerfile", "::error file=deploy/daemon.json",
                         "::error file=my nodes/daemon.json"], lint.stdout
    sarif = json.loads((work / "reports" / "gpulint.sarif").read_text())
    located = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                     for r in sarif["runs"][0]["results"])
    assert located == ["-odd/Dockerfile", "deploy/daemon.json", "my%20nodes/daemon.json"]
    assert sarif["runs"][0]["results"][1]["ruleId"] == "GL201"
    assert "sarif-file=reports/gpulint.sarif" in output.read_text()
    # the options reached gpulint, split at spaces and line ends
    again = subprocess.run(["bash", "-e", "-c", steps[1][0]], cwd=work, capture_output=True, text=True,
                           env={**base, **steps[1][1], "GPULINT_ARGS": "--driver 100"})
    assert again.returncode == 2 and "no NVIDIA driver branch R100" in again.stderr


def test_the_gpulint_image_passes_gpulints_own_rules():
    result = subprocess.run([sys.executable, "-m", "gpulint", "--isolated", "--format", "json",
                             "--failure-threshold", "info", "Dockerfile"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
    assert json.loads(result.stdout)["summary"]["files_checked"] == 1


# a fast subset of the suite, run from the unpacked sdist against the gpulint inside it
SDIST_TESTS = ["tests/test_rule_docs.py", "tests/test_containerd.py", "tests/test_docs.py",
               "tests/test_cli.py", "tests/test_sarif.py", "tests/test_project_context.py",
               "tests/test_precommit.py::test_the_hook_pattern_matches_every_name_gpulint_reads"]


def test_the_sdist_carries_what_its_tests_need_and_they_pass(tmp_path):
    build = tmp_path / "src"
    shutil.copytree(ROOT, build, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "venv", "__pycache__", "*.egg-info", "dist", "build", ".pytest_cache"))
    subprocess.run([sys.executable, "-c", "from hatchling.build import build_sdist; import sys; "
                    "print(build_sdist(sys.argv[1]))", str(tmp_path / "dist")], cwd=build, check=True,
                   capture_output=True)
    [sdist] = (tmp_path / "dist").glob("gpulint-*.tar.gz")
    import tarfile

    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    [unpacked] = (tmp_path / "unpacked").iterdir()
    for needed in ("LICENSE", "README.md", "rules/GL101.yaml", "tests/conftest.py", "docs/rules.md",
                   ".pre-commit-hooks.yaml", "action.yml", "Dockerfile", *(t.split("::")[0] for t in SDIST_TESTS)):
        assert (unpacked / needed).exists(), needed
    env = {**os.environ, "PYTHONPATH": str(unpacked), "PYTHONDONTWRITEBYTECODE": "1"}
    where = subprocess.run([sys.executable, "-c", "import gpulint; print(gpulint.__file__)"], cwd=unpacked,
                           capture_output=True, text=True, env=env, check=True)
    assert Path(where.stdout.strip()).is_relative_to(unpacked)  # its own code, not this checkout's
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *SDIST_TESTS],
                         cwd=unpacked, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stdout[-3000:]
    summary = run.stdout.splitlines()[-1]
    assert " passed" in summary and "error" not in summary and "failed" not in summary, summary
