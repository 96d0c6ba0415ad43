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


# -- the hook's names are gpulint's --------------------------------------------------------

def _hook_pattern():
    import re

    import yaml

    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert "types" not in hook and "types_or" not in hook  # `files` alone decides, as gpulint's walk does
    return re.compile(hook["files"])


def _gpulint_reads(name: str) -> bool:
    """Whether gpulint, walking a folder, looks at a file of this name at all."""
    from gpulint import kinds

    return bool(kinds.kind_by_name(name) or kinds.may_need_content(name) or "." not in name)


NAMES = [
    "Dockerfile", "Containerfile", "Dockerfile.gpu", "trainer.Dockerfile", "gpu_Dockerfile", "Dockerfile-minimal",
    "config.toml", "99-nvidia.toml", "config.toml.tmpl", "config.toml.debian", "config.toml.rpm-yum",
    "config.toml.rpm-dnf", "config.toml.ubuntu.j2", "20-customization.part", "cri.part.tmpl",
    "daemon.json", "daemon.json.j2", "nvidia.json", "pod.yaml", "deploy.yml", "values.yaml.gotmpl",
    "compose.yaml", "docker-compose.gpu.yml", ".gitlab-ci.yml", "gpu.yml", "run.sh", "run.bash",
    "README.md", "notes.markdown", "docs.rst", "rules.mk", "Makefile", "GNUmakefile", "makefile",
    "Makefile.tmpl", "gpu-smoke", "entrypoint", "run.sh.jinja2", "x.yaml.jinja", "x.tpl",
]


def test_the_hook_pattern_matches_every_name_gpulint_reads():
    pattern = _hook_pattern()
    names = set(NAMES) | {p.name for folder in (ROOT / "tests" / "fixtures", ROOT / "examples")
                          for p in folder.rglob("*") if p.is_file()}
    for name in sorted(names):
        for path in (name, f"some/dir/{name}", f".github/workflows/{name}"):
            if _gpulint_reads(name):
                assert pattern.search(path), path
    for path in ("setup.py", "LICENSE.txt", "logo.png", "go.sum", "src/main.go"):
        assert not _gpulint_reads(path.rsplit("/", 1)[-1]) and not pattern.search(path), path


def test_the_hook_pattern_matches_generated_names_gpulint_reads():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    pattern = _hook_pattern()
    parts = st.sampled_from(["", "a", "X", "-", "_", ".", "config", "toml", "part", "json", "yaml", "yml",
                             "sh", "md", "rst", "mk", "tmpl", "j2", "jinja", "gotmpl", "template", "docker", "Dockerfile",
                             "containerfile", "makefile", "GNU", "daemon", "compose", "debian", "rpm-yum"])

    @settings(max_examples=2000, deadline=None)
    @given(st.lists(parts, min_size=1, max_size=6).map("".join).filter(lambda n: n and n not in (".", "..")))
    def check(name):
        if _gpulint_reads(name):
            assert pattern.search(f"dir/{name}"), name

    check()


def _every_kind(repo):
    """One file of each kind gpulint reads, each with something to report."""
    fixtures = ROOT / "tests" / "fixtures"
    shutil.copytree(fixtures / "commands", repo, dirs_exist_ok=True,  # shell (by suffix and by
                    ignore=shutil.ignore_patterns("plain.md"))  # shebang), Makefile, Markdown, rST, CI files
    files = {
        "Dockerfile": BAD,
        "etc/containerd/config.toml": (fixtures / "containerd" / "bad" / "gl108.toml").read_text(),
        "talos/etc/cri/conf.d/20-nvidia.part": (
            '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia]\n'
            '  runtime_type = "io.containerd.runc.v2"\n'
            '  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia.options]\n'
            '    BinaryName = "/usr/local/bin/nvidia-container-runtime"\n'
            '    SystemdCgroupp = true\n'),
        "toolkit/config.toml.debian": (fixtures / "toolkit" / "config.toml.debian").read_text(),
        "toolkit/config.toml.rpm-yum": (fixtures / "toolkit" / "config.toml.debian").read_text(),
        "cdi/nvidia.yaml": (fixtures / "cdi" / "broken.yaml").read_text(),
        "compose.yaml": (ROOT / "examples" / "compose" / "docker-compose.yml").read_text(),
        "k8s/runtimeclass.yaml": "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n"
                                 "  name: nvidia-gpu\nhandler: nvidia\n",
        "k8s/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\nspec:\n  runtimeClassName: nvidia-gpux\n"
                        "  containers:\n    - name: c\n      image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n"
                        "      resources:\n        limits:\n          nvidia.com/gpu: 1\n",
        "operator/values.yaml": 'operator:\n  defaultRuntime: containerd\ndriver:\n  enabled: true\n'
                                '  version: "470.256.02"\ntoolkit:\n  enabled: true\n',
        "scripts/gpu-check": "#!/usr/bin/env bash\ndocker run --rm --gpus 0 nvidia/cuda:12.9.2-base-ubuntu24.04\n",
        "LICENSE": "not a script\n", "setup.py": "print('not linted')\n",
    }
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / "gpu-smoke").chmod(0o755)
    return [n for n in files if n not in ("LICENSE", "setup.py", "k8s/runtimeclass.yaml")]


def test_the_hook_on_every_file_says_what_gpulint_says_on_the_folder(hook_source, tmp_path_factory):
    import json
    import sys

    repo = tmp_path_factory.mktemp("every-kind")
    home = tmp_path_factory.mktemp("pre-commit-home")
    expected = _every_kind(repo)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    folder = subprocess.run([sys.executable, "-m", "gpulint", "--format", "json", "."], cwd=repo,
                            capture_output=True, text=True, env=env)
    reported = {f["path"] for f in json.loads(folder.stdout)["findings"]}
    for name in [*expected, ".github/workflows/gpu.yml", ".gitlab-ci.yml", "Makefile", "docs.rst",
                 "checklist.md", "run-gpus.sh", "gpu-smoke", "daemon/run.sh"]:
        assert name in reported, name  # each kind has its say
    text = subprocess.run([sys.executable, "-m", "gpulint", "."], cwd=repo, capture_output=True, text=True,
                          env=env)
    hook = subprocess.run(["pre-commit", "try-repo", str(hook_source), "gpulint", "--all-files"],
                          cwd=repo, capture_output=True, text=True, env=env)
    assert hook.returncode == text.returncode == 1, hook.stdout + hook.stderr
    assert sorted(_findings(hook.stdout)) == sorted(_findings(text.stdout))
