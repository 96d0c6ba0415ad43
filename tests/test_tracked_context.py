"""A call pre-commit makes (`PRE_COMMIT` set, inside a git work tree) reads the project around
the linted files as it is staged, and learns what changed since its index was made from git
(`gpulint.run.tracked`): staged content counts, changes not staged and untracked files do not,
and where git is missing the project is walked as in any other call."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from conftest import run_gpulint
from test_project_context import CONTAINERD, POD, RUNTIME_CLASS, _found

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")


def _git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})


def _write(repo, name, text):
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / name).write_text(text)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A committed repository: a pod, the RuntimeClass it names, and a node config whose
    handler the class names; pre-commit's environment."""
    root = tmp_path / "repo"
    root.mkdir()
    _write(root, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"))
    _write(root, "k8s/pod.yaml", POD.format(name="nvidia-gpu"))
    _write(root, "nodes/containerd/config.toml", CONTAINERD.format(handler="nvidia"))
    _write(root, "images/Dockerfile", "FROM ubuntu:22.04\nRUN apt-get update\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "project")
    monkeypatch.setenv("PRE_COMMIT", "1")
    return root


def _lint(repo, cache, *extra, path="k8s/pod.yaml"):
    return run_gpulint("--format", "json", "--cache-dir", str(cache), *extra, path, cwd=repo)


def _runs(repo, cache, path="k8s/pod.yaml"):
    """What the call finds with no index, with the index it makes, with that index warm."""
    afresh = _lint(repo, cache, "--no-cache", path=path)
    made = _lint(repo, cache, path=path)
    warm = _lint(repo, cache, path=path)
    assert afresh.out == made.out == warm.out and afresh.err == made.err == warm.err == ""
    return _found(warm)


UNKNOWN_CLASS = [("GL701", "warning", "k8s/pod.yaml", 6)]


def test_a_warm_index_gives_what_a_call_without_it_gives(repo, tmp_path):
    cache = tmp_path / "cache"
    assert _runs(repo, cache) == []
    assert [p.name.split("-")[1] for p in cache.glob("index-*")] == ["git"]


def test_the_staged_content_counts_not_the_work_tree(repo, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    assert _runs(repo, cache) == []
    # renamed in the work tree only: what is committed still defines the class
    _write(repo, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name="nvidia-gpu-2", handler="nvidia"))
    assert _runs(repo, cache) == []
    monkeypatch.delenv("PRE_COMMIT")  # a plain call reads the work tree
    assert _found(_lint(repo, cache)) == UNKNOWN_CLASS
    monkeypatch.setenv("PRE_COMMIT", "1")
    _git(repo, "add", "k8s/runtimeclass.yaml")  # staged: now it counts
    assert _found(_lint(repo, cache)) == UNKNOWN_CLASS
    assert _runs(repo, cache) == UNKNOWN_CLASS
    _write(repo, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"))
    _git(repo, "add", "k8s/runtimeclass.yaml")  # staged back as committed
    assert _found(_lint(repo, cache)) == []


def test_a_staged_new_file_counts_and_an_untracked_one_does_not(repo, tmp_path):
    cache = tmp_path / "cache"
    _git(repo, "rm", "-q", "--cached", "k8s/runtimeclass.yaml")  # untracked, still on disk
    assert _runs(repo, cache) == [("GL701", "info", "k8s/pod.yaml", 6)]
    _write(repo, "k8s/classes/gpu.yaml", RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"))
    assert _found(_lint(repo, cache)) == [("GL701", "info", "k8s/pod.yaml", 6)]
    _git(repo, "add", "k8s/classes/gpu.yaml")
    assert _found(_lint(repo, cache)) == []
    assert _runs(repo, cache) == []


def test_a_removed_file_is_not_consulted(repo, tmp_path):
    cache = tmp_path / "cache"
    assert _runs(repo, cache) == []
    _git(repo, "rm", "-q", "k8s/runtimeclass.yaml")
    assert _found(_lint(repo, cache)) == [("GL701", "info", "k8s/pod.yaml", 6)]
    assert _runs(repo, cache) == [("GL701", "info", "k8s/pod.yaml", 6)]


def test_a_renamed_file_is_consulted_under_its_new_name(repo, tmp_path):
    cache = tmp_path / "cache"
    # the class names a handler that no node config defines: GL702 on the class
    _write(repo, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidiy"))
    _git(repo, "add", "-A")
    assert _found(_lint(repo, cache, path="k8s/runtimeclass.yaml")) == [
        ("GL702", "error", "k8s/runtimeclass.yaml", 5)]
    _git(repo, "mv", "nodes/containerd/config.toml", "nodes/containerd/old.toml")
    _write(repo, "nodes/containerd/config.toml", CONTAINERD.format(handler="nvidiy"))
    _git(repo, "add", "-A")
    found = _lint(repo, cache, path="k8s/runtimeclass.yaml")
    assert found.out == _lint(repo, cache, "--no-cache", path="k8s/runtimeclass.yaml").out
    assert _found(found) == []


def test_the_index_follows_new_commits(repo, tmp_path):
    cache = tmp_path / "cache"
    assert _runs(repo, cache) == []
    for name in ("nvidia-gpu-2", "nvidia-gpu"):
        _write(repo, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name=name, handler="nvidia"))
        _git(repo, "commit", "-q", "-am", name)
        _write(repo, "notes.md", f"# {name}\n")
        _git(repo, "add", "notes.md")
        _git(repo, "commit", "-q", "-m", "notes")
    assert _runs(repo, cache) == []
    _write(repo, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name="nvidia-gpu-3", handler="nvidia"))
    _git(repo, "commit", "-q", "-am", "renamed")
    assert _runs(repo, cache) == UNKNOWN_CLASS


def test_without_git_the_project_is_walked(repo, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    _write(repo, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name="nvidia-gpu-2", handler="nvidia"))  # not staged
    assert _found(_lint(repo, cache)) == []
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert _found(_lint(repo, cache)) == UNKNOWN_CLASS  # the work tree, walked
    assert _found(_lint(repo, cache, "--no-cache")) == UNKNOWN_CLASS


def test_outside_a_work_tree_the_project_is_walked(tmp_path, monkeypatch):
    root = tmp_path / "project"
    root.mkdir()
    (root / ".gpulint.toml").write_text("")
    _write(root, "k8s/pod.yaml", POD.format(name="nvidia-gpu"))
    _write(root, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"))
    monkeypatch.setenv("PRE_COMMIT", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert _runs(root, tmp_path / "cache") == []


def test_git_ignored_and_excluded_files_are_not_consulted(repo, tmp_path):
    cache = tmp_path / "cache"
    _git(repo, "rm", "-q", "k8s/runtimeclass.yaml")
    for folder in ("generated", "vendor/dropped", "vendor/kept"):
        _write(repo, f"{folder}/class.yaml", RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"))
    _write(repo, ".gitignore", "generated/\n")
    _write(repo, "vendor/.gitignore", "drop*/\n")
    _git(repo, "add", "-f", "-A")  # tracked all the same
    assert _runs(repo, cache) == []  # vendor/kept/class.yaml defines the class
    _git(repo, "rm", "-q", "-f", "vendor/kept/class.yaml")
    assert _runs(repo, cache) == [("GL701", "info", "k8s/pod.yaml", 6)]
    (repo / "vendor" / ".gitignore").write_text("# nothing\n")  # not staged: read from disk, as the walk does
    assert _runs(repo, cache) == []


def test_the_linted_file_is_judged_as_named_not_as_indexed(repo, tmp_path):
    """A consulted file that is linted is left out of the files around it (its own checks see
    it as it is linted)."""
    cache = tmp_path / "cache"
    runtime_class = "k8s/runtimeclass.yaml"
    assert _runs(repo, cache, path=runtime_class) == []
    _write(repo, runtime_class, RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidiy"))
    _git(repo, "add", runtime_class)
    assert _runs(repo, cache, path=runtime_class) == [("GL702", "error", runtime_class, 5)]


def test_workers_read_the_staged_documents_side_by_side(tmp_path):
    """Worker processes forked from one call read the documents of a git index at their own
    offsets."""
    import sys

    root = tmp_path / "repo"
    root.mkdir()
    for i in range(150):
        _write(root, f"k8s/c{i}/runtimeclass.yaml", RUNTIME_CLASS.format(name=f"gpu-{i}", handler=f"h{i}"))
    for i in range(50):
        _write(root, f"nodes/n{i}/config.toml", CONTAINERD.format(handler=f"h{i}"))
    pods = [f"pods/p{i}/pod.yaml" for i in range(12)]
    for i, pod in enumerate(pods):
        _write(root, pod, POD.format(name=f"gpu-{i * 7}"))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    env = {**os.environ, "PRE_COMMIT": "1"}
    command = [sys.executable, "-m", "gpulint", "--format", "json", "--cache-dir", str(tmp_path / "cache"),
               "--jobs", "4"]
    expected = subprocess.run([*command, "--no-cache", *pods], cwd=root, capture_output=True, text=True, env=env)
    assert (expected.returncode, expected.stderr) == (0, "")
    subprocess.run([*command, pods[0]], cwd=root, capture_output=True, env=env, check=True)  # the index
    for _ in range(3):
        warm = subprocess.run([*command, *pods], cwd=root, capture_output=True, text=True, env=env)
        assert (warm.returncode, warm.stderr, warm.stdout) == (0, "", expected.stdout)


def test_a_staged_dockerfile_leaves_the_index_as_it_was(repo, tmp_path):
    """A Dockerfile no image mapping names is consulted by no other file's checks: staging a
    change to it does not write the index again."""
    cache = tmp_path / "cache"
    first = _lint(repo, cache, path="images/Dockerfile")
    (index,) = cache.glob("index-*")
    written = index.stat().st_mtime_ns
    _write(repo, "images/Dockerfile", "FROM ubuntu:24.04\nRUN apt-get update\n")
    _git(repo, "add", "images/Dockerfile")
    again = _lint(repo, cache, path="images/Dockerfile")
    assert index.stat().st_mtime_ns == written
    assert again.out == _lint(repo, cache, "--no-cache", path="images/Dockerfile").out
    assert first.rc == again.rc
    # a consulted file staged: written again
    _write(repo, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name="nvidia-gpu-2", handler="nvidia"))
    _git(repo, "add", "k8s/runtimeclass.yaml")
    assert _found(_lint(repo, cache)) == UNKNOWN_CLASS
    assert index.stat().st_mtime_ns != written


def test_a_change_staged_while_its_file_is_linted_reaches_the_next_call(repo, tmp_path):
    """A staged file that a call lints is judged as linted there; the next call that does not
    lint it reads it as staged, not as the index kept it."""
    cache = tmp_path / "cache"
    runtime_class = "k8s/runtimeclass.yaml"
    assert _runs(repo, cache) == []
    _write(repo, runtime_class, RUNTIME_CLASS.format(name="nvidia-gpu-2", handler="nvidia"))
    # a file the call does not lint changed too: the call writes the index
    _write(repo, "nodes/containerd/config.toml", "# edited\n" + CONTAINERD.format(handler="nvidia"))
    _git(repo, "add", runtime_class, "nodes/containerd/config.toml")
    for _ in range(2):
        linted = _lint(repo, cache, path=runtime_class)
        assert linted.out == _lint(repo, cache, "--no-cache", path=runtime_class).out
    for _ in range(2):
        pod = _lint(repo, cache)
        assert pod.out == _lint(repo, cache, "--no-cache").out
        assert _found(pod) == UNKNOWN_CLASS
    _git(repo, "commit", "-q", "-m", "renamed")
    _write(repo, runtime_class, RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"))
    _git(repo, "add", runtime_class)
    assert _found(_lint(repo, cache, path=runtime_class)) == []
    assert _found(_lint(repo, cache)) == []


@pytest.fixture
def git_calls(tmp_path, monkeypatch):
    """The git commands gpulint runs from here on: a `git` ahead on the PATH that notes its
    arguments and runs the real one."""
    folder = tmp_path / "bin"
    folder.mkdir()
    log = tmp_path / "git-calls"
    wrapper = folder / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{shutil.which("git")}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")

    def calls() -> list[str]:
        found = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        return found
    return calls


def _asked_for_the_difference(calls: list[str]) -> bool:
    return any(" diff-index " in f" {call} " for call in calls)


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_a_change_staged_in_place_is_read_off_git_s_index_file(repo, tmp_path, git_calls, version):
    # git's index file tells which entries changed since the call before (their object names),
    # without `git diff-index`, which loads the whole index for any answer; in each format git
    # writes (4: `feature.manyFiles`, its paths written against the path before)
    cache = tmp_path / "cache"
    _git(repo, "update-index", "--index-version", version)
    if version == "3":  # an entry with extended flags makes version 3 needed
        _git(repo, "update-index", "--skip-worktree", "images/Dockerfile")
    _git(repo, "rm", "-q", "--cached", "k8s/runtimeclass.yaml")
    _git(repo, "commit", "-q", "-m", "no class")
    _write(repo, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name="other", handler="nvidia"))
    _git(repo, "add", "k8s/runtimeclass.yaml")
    assert _runs(repo, cache) == UNKNOWN_CLASS
    git_calls()
    for name, found in (("nvidia-gpu", []), ("other", UNKNOWN_CLASS)):
        _write(repo, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name=name, handler="nvidia"))
        _git(repo, "add", "k8s/runtimeclass.yaml")
        warm = _lint(repo, cache)
        assert not _asked_for_the_difference(git_calls())
        assert warm.out == _lint(repo, cache, "--no-cache").out
        assert _found(warm) == found


@pytest.mark.parametrize("change", ["added", "removed", "renamed-same-length", "split-index", "index-v4"])
def test_what_the_index_file_cannot_tell_in_place_git_tells(repo, tmp_path, git_calls, change):
    cache = tmp_path / "cache"
    assert _runs(repo, cache) == []
    expected = []
    if change == "added":
        _write(repo, "k8s/more/class.yaml", RUNTIME_CLASS.format(name="nvidia-gpu", handler="other"))
        _git(repo, "add", "k8s/more/class.yaml")
    elif change == "removed":
        _git(repo, "rm", "-q", "--cached", "k8s/runtimeclass.yaml")
        expected = [("GL701", "info", "k8s/pod.yaml", 6)]
    elif change == "renamed-same-length":  # the same entries in the same places, one path changed
        _git(repo, "mv", "k8s/runtimeclass.yaml", "k8s/runtimeclasz.yaml")
        _write(repo, "k8s/runtimeclasz.yaml", RUNTIME_CLASS.format(name="nvidia-gpu-2", handler="nvidia"))
        _git(repo, "add", "k8s/runtimeclasz.yaml")
        expected = UNKNOWN_CLASS
    elif change == "split-index":
        _git(repo, "update-index", "--split-index")
        _write(repo, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name="nvidia-gpu-2", handler="nvidia"))
        _git(repo, "add", "k8s/runtimeclass.yaml")
        expected = UNKNOWN_CLASS
    else:
        _git(repo, "update-index", "--index-version", "4")
        _write(repo, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name="nvidia-gpu-2", handler="nvidia"))
        _git(repo, "add", "k8s/runtimeclass.yaml")
        expected = UNKNOWN_CLASS
    git_calls()
    warm = _lint(repo, cache)
    assert _asked_for_the_difference(git_calls())
    assert warm.out == _lint(repo, cache, "--no-cache").out
    assert _found(warm) == expected


def test_the_index_file_of_the_commit_being_made_is_read(repo, tmp_path, git_calls, monkeypatch):
    # `git commit -a` and `git commit PATHS` run the hook with their own index file
    cache = tmp_path / "cache"
    assert _runs(repo, cache) == []
    shutil.copy(repo / ".git" / "index", repo / ".git" / "next-index.lock")
    monkeypatch.setenv("GIT_INDEX_FILE", ".git/next-index.lock")
    _write(repo, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name="nvidia-gpu-2", handler="nvidia"))
    _git(repo, "add", "k8s/runtimeclass.yaml")  # into the commit's index, not the repository's
    git_calls()
    warm = _lint(repo, cache)
    assert not _asked_for_the_difference(git_calls())
    assert _found(warm) == UNKNOWN_CLASS
    assert warm.out == _lint(repo, cache, "--no-cache").out
    monkeypatch.delenv("GIT_INDEX_FILE")  # the repository's own index: as committed
    assert _found(_lint(repo, cache)) == []


def test_a_sha256_repository_is_answered_by_git(tmp_path, monkeypatch, git_calls):
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "--object-format=sha256")
    _write(root, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"))
    _write(root, "k8s/pod.yaml", POD.format(name="nvidia-gpu"))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "project")
    monkeypatch.setenv("PRE_COMMIT", "1")
    cache = tmp_path / "cache"
    assert _runs(root, cache) == []
    _write(root, "k8s/runtimeclass.yaml", RUNTIME_CLASS.format(name="nvidia-gpu-2", handler="nvidia"))
    _git(root, "add", "k8s/runtimeclass.yaml")
    git_calls()
    assert _found(_lint(root, cache)) == UNKNOWN_CLASS
    assert _asked_for_the_difference(git_calls())
