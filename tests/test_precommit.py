"""The real pre-commit, using this repository's hook on a temporary repository."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import ROOT

BAD = "FROM ubuntu:22.04\nRUNN apt-get update\n"
GOOD = "FROM ubuntu:22.04\nRUN apt-get update\n"


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})


@pytest.fixture(scope="module")
def hook_source(tmp_path_factory):
    """A committed copy of this checkout: pre-commit installs the hook from a git repository."""
    if shutil.which("pre-commit") is None or shutil.which("git") is None:
        pytest.skip("pre-commit and git are needed")
    src = tmp_path_factory.mktemp("hook") / "gpulint"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", ".venv", "venv", "__pycache__", "*.egg-info", "dist", "build", ".pytest_cache"))
    _git(src, "init", "-q")
    _git(src, "add", "-A")
    _git(src, "commit", "-q", "-m", "snapshot")
    return src


def _try_repo(hook_source, repo, home, *files):
    return subprocess.run(
        ["pre-commit", "try-repo", str(hook_source), "gpulint", "--files", *files],
        cwd=repo, capture_output=True, text=True,
        env={**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"})


def test_hook_fails_on_a_bad_file_and_passes_on_a_good_one(hook_source, tmp_path_factory):
    repo = tmp_path_factory.mktemp("repo")
    home = tmp_path_factory.mktemp("pre-commit-home")
    (repo / "Dockerfile").write_text(BAD)
    (repo / "notes.md").write_text("# not linted\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    failing = _try_repo(hook_source, repo, home, "Dockerfile", "notes.md")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "Dockerfile:2:1: GL001" in failing.stdout
    (repo / "Dockerfile").write_text(GOOD)
    _git(repo, "add", "-A")
    passing = _try_repo(hook_source, repo, home, "Dockerfile", "notes.md")
    assert passing.returncode == 0, passing.stdout + passing.stderr


MAIN_CONFIG = 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n'
DROP_IN = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
           '  runtime_type = "io.containerd.runc.v2"\n'
           '  options = { BinaryName = "/usr/bin/nvidia-container-runtime" }\n')


def test_a_changed_file_is_judged_with_the_unchanged_files_around_it(hook_source, tmp_path_factory):
    """The drop-in's problem (its folder is not imported) shows only next to the main
    config, which this commit does not touch: pre-commit names the drop-in alone."""
    repo = tmp_path_factory.mktemp("context")
    home = tmp_path_factory.mktemp("pre-commit-home")
    (repo / "etc" / "containerd").mkdir(parents=True)
    (repo / "etc" / "containerd" / "config.toml").write_text(MAIN_CONFIG)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "node config")
    (repo / "etc" / "containerd" / "config.d").mkdir()
    (repo / "etc" / "containerd" / "config.d" / "99-nvidia.toml").write_text(DROP_IN)
    _git(repo, "add", "-A")
    changed = _try_repo(hook_source, repo, home, "etc/containerd/config.d/99-nvidia.toml")
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "etc/containerd/config.d/99-nvidia.toml:1:1: GL113" in changed.stdout
    assert "etc/containerd/config.toml:" not in changed.stdout.replace("see etc/containerd/config.toml", "")
    everything = subprocess.run(
        ["pre-commit", "try-repo", str(hook_source), "gpulint", "--all-files"],
        cwd=repo, capture_output=True, text=True,
        env={**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"})
    assert everything.returncode == 1
    assert _findings(everything.stdout) == _findings(changed.stdout)


def _findings(output: str) -> list[str]:
    return [line for line in output.splitlines() if ": GL" in line]


def _readme_snippet() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("## pre-commit")
    block = text.index("```yaml\n", start) + len("```yaml\n")
    return text[block:text.index("```", block)]


def test_the_readme_snippet_works_as_written(hook_source, tmp_path_factory):
    """The README's configuration, with only the repository and the commit put in."""
    repo = tmp_path_factory.mktemp("readme")
    home = tmp_path_factory.mktemp("pre-commit-home")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hook_source, capture_output=True,
                            text=True, check=True).stdout.strip()
    snippet = _readme_snippet()
    config = "\n".join(
        f"  - repo: {hook_source}" if line.strip().startswith("- repo:") else
        f"    rev: {commit}" if line.strip().startswith("rev:") else line
        for line in snippet.splitlines())
    (repo / ".pre-commit-config.yaml").write_text(config + "\n")
    (repo / "Dockerfile").write_text(BAD)
    (repo / "vendor").mkdir()
    (repo / "vendor" / "Dockerfile").write_text(BAD)
    (repo / ".gpulint.toml").write_text('extend-exclude = ["vendor/"]\n')
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    run = subprocess.run(["pre-commit", "run", "--all-files"], cwd=repo, capture_output=True, text=True, env=env)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Dockerfile:2:1: GL001" in run.stdout
    assert "vendor/Dockerfile" not in run.stdout  # --force-exclude: excluded even when named
    (repo / "Dockerfile").write_text(GOOD)
    _git(repo, "add", "-A")
    again = subprocess.run(["pre-commit", "run", "--all-files"], cwd=repo, capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stdout + again.stderr
