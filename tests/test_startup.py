"""Start-up: linting one file imports only what that file's kind needs (checked with
`python -X importtime`, not timed), and the bundled YAML is read once, then from the cache."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import FIXTURES


def _imported(tmp_path, name: str, text: str) -> set[str]:
    (tmp_path / name).write_text(text)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "gpulint", "--isolated", "-q", name],
                          cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "cache")})
    return {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize("name,text,absent", [
    ("Dockerfile", "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n",
     {"yaml", "tomlkit", "jsonschema", "gpulint.kinds.kubernetes.checks",
      "gpulint.kinds.compose.facts", "gpulint.kinds.containerd.checks", "gpulint.formats.yamlpos",
      "pygls", "lsprotocol", "gpulint.face.lsp",
      # records are plain classes; a clean run prints no traceback, writes no baseline, reads
      # no TOML and asks argparse's formatter nothing of shutil
      "dataclasses", "inspect", "traceback", "json", "tomllib", "gpulint.formats.tomlpos", "shutil",
      "gpulint.run.baseline", "gpulint.report.fingerprint",
      # the compatibility rules judge a Dockerfile without the dev container and Compose modules
      "gpulint.kinds.devcontainer.facts", "gpulint.crossfile.devcontainers", "gpulint.crossfile.imageuse",
      # type annotations' names are for type checkers; `--gpus` values are read as CSV only
      # where a command line has one
      "typing", "csv"}),
    ("daemon.json", '{"default-runtime": "runc"}\n',
     {"yaml", "tomlkit", "jsonschema", "gpulint.kinds.kubernetes.facts", "gpulint.kinds.dockerfile.checks", "gpulint.knowledge.images"}),
])
def test_one_file_imports_only_what_its_kind_needs(tmp_path, name, text, absent):
    _imported(tmp_path, name, text)  # the first run fills the cache
    modules = _imported(tmp_path, name, text)
    assert "gpulint.face.cli" in modules
    assert not absent & modules, sorted(absent & modules)


_CLUSTER_POLICY = ("apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata:\n  name: cluster-policy\n"
                   "spec:\n  driver:\n    enabled: \"yes\"\n    unknownField: 1\n")


@pytest.mark.parametrize("text,judged", [
    (_CLUSTER_POLICY, True),
    ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n", False),
])
def test_custom_resources_are_judged_without_jsonschema(tmp_path, text, judged):
    """A ClusterPolicy is judged against its CRD's schema by gpulint's own validator; jsonschema
    is imported only to check gpulint's configuration."""
    _imported(tmp_path, "manifest.yaml", text)
    modules = _imported(tmp_path, "manifest.yaml", text)
    assert "jsonschema" not in modules
    proc = subprocess.run([sys.executable, "-m", "gpulint", "--isolated", "--format", "json", "manifest.yaml"],
                          cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "cache")})
    codes = {f["code"] for f in json.loads(proc.stdout)["findings"]}
    assert ({"GL481", "GL482"} <= codes) is judged, codes


def test_regular_expressions_compile_when_first_used():
    proc = subprocess.run([sys.executable, "-c",
                           "import gpulint.kinds.dockerfile.checks as d, gpulint.kinds.dockerfile.facts as f\n"
                           "from gpulint.regex import Lazy\n"
                           "lazies = [v for m in (d, f) for v in vars(m).values() if isinstance(v, Lazy)]\n"
                           "print(len(lazies), sum(v._compiled is not None for v in lazies))"],
                          capture_output=True, text=True, check=True)
    defined, compiled = map(int, proc.stdout.split())
    assert defined >= 20 and compiled == 0


def test_the_cache_is_only_a_cache(tmp_path):
    """An unwritable cache folder costs time, never a result."""
    (tmp_path / "cache").write_text("not a folder")
    proc = subprocess.run([sys.executable, "-m", "gpulint", "--isolated", "--format", "json",
                           str(FIXTURES / "daemon-json" / "bad" / "gl203-daemon.json")],
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin",
                                                               "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert proc.returncode == 1 and '"GL203"' in proc.stdout


def _lint_with_config(tmp_path, cache):
    (tmp_path / "proj").mkdir(exist_ok=True)
    (tmp_path / "proj" / "pyproject.toml").write_text('[tool.gpulint]\nselect = ["GL1"]\nunknown-key = 1\n')
    (tmp_path / "proj" / "Dockerfile").write_text("FROM ubuntu:22.04\n")
    return subprocess.run([sys.executable, "-m", "gpulint", "."], cwd=tmp_path / "proj",
                          capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(cache)})


def test_a_configuration_judged_by_another_version_is_judged_again(tmp_path):
    """The marker that says "this configuration passed" names the version and schema that
    passed it: one left by another gpulint (keyed by the table alone) does not let an unknown
    key through."""
    import hashlib
    import json

    cache = tmp_path / "cache"
    (cache / "gpulint").mkdir(parents=True)
    table = {"select": ["GL1"], "unknown-key": 1}
    old = hashlib.sha256(json.dumps(table, sort_keys=True, default=str).encode()).hexdigest()
    (cache / "gpulint" / f"config-{old[:32]}").touch()
    proc = _lint_with_config(tmp_path, cache)
    assert proc.returncode == 2 and "unknown-key" in proc.stderr, proc.stderr


def test_the_cache_folder_is_pruned(tmp_path):
    cache = tmp_path / "cache" / "gpulint"
    cache.mkdir(parents=True)
    for n in range(40):
        (cache / f"config-{n:032d}").touch()
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "pyproject.toml").write_text('[tool.gpulint]\nselect = ["GL1"]\n')
    (tmp_path / "proj" / "Dockerfile").write_text("FROM ubuntu:22.04\n")
    proc = subprocess.run([sys.executable, "-m", "gpulint", "."], cwd=tmp_path / "proj", capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    assert len(list(cache.glob("config-*"))) == 32


def test_an_installed_gpulint_starts_without_parsing_or_caching(tmp_path):
    """As installed from the wheel (rules/ in the package, its data prebuilt), the first run in
    a fresh container parses no YAML, hashes nothing and writes no cache."""
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nRUN nvidia-smi\n")
    code = ("import sys, gpulint.resources as r\n"
            "r.installed = lambda: True\n"  # what a wheel's layout makes it
            "from gpulint.face.cli import main\n"
            "sys.exit(main(['--isolated', '--exit-zero', 'Dockerfile']))")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    modules = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "gpulint.kinds.dockerfile.facts" in modules
    assert not {"yaml", "hashlib", "pickle"} & modules, sorted({"yaml", "hashlib", "pickle"} & modules)
    assert not (tmp_path / "cache").exists()


def test_a_lint_run_reads_the_rule_index_not_the_rule_texts(tmp_path):
    """Codes, slugs, severities and stability come from the small prebuilt index; the rules'
    texts (what `gpulint rule` and SARIF show) are not loaded to lint a file with findings."""
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN nvidia-smi\n")
    code = ("import json, sys, gpulint.resources as r\n"
            "r.installed = lambda: True\n"
            "from gpulint import catalog\n"
            "from gpulint.face.cli import main\n"
            "main(['--isolated', '--exit-zero', '--format', 'json', '--output', 'out.json', 'Dockerfile'])\n"
            "print(catalog.load_catalog.cache_info().currsize, catalog.rule_index.cache_info().currsize)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "1"]
    findings = json.loads((tmp_path / "out.json").read_text())["findings"]
    assert {(f["code"], f["slug"], f["severity"]) for f in findings} >= {("GL310", "gpu-at-build-time", "warning")}


def test_a_warm_pre_commit_call_hashes_nothing_and_unpickles_only_what_is_asked(tmp_path):
    """A pre-commit call on a Dockerfile in a git repository, its index made: git answers
    what changed (no subprocess module), the index's listing is marshalled (no pickle), its
    name is no cryptographic hash (no hashlib); the node config around it is never unpickled."""
    import os
    import shutil

    if shutil.which("git") is None:
        pytest.skip("git is needed")
    repo = tmp_path / "repo"
    (repo / "etc" / "containerd").mkdir(parents=True)
    (repo / "etc" / "containerd" / "config.toml").write_text('version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n')
    (repo / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nRUN nvidia-smi\n")
    env = {"PATH": os.environ["PATH"], "XDG_CACHE_HOME": str(tmp_path / "cache"), "PRE_COMMIT": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(tmp_path)}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "x"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    code = ("import sys, gpulint.resources as r\n"
            "r.installed = lambda: True\n"
            "from gpulint.face.cli import main\n"
            "sys.exit(main(['--exit-zero', 'Dockerfile']))")

    def imported() -> set[str]:
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=repo, capture_output=True,
                              text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        return {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:")}

    made = imported()  # the index made: the config parsed and pickled
    assert "pickle" in made and "gpulint.run.tracked" in made
    warm = imported()
    assert "gpulint.run.tracked" in warm
    assert not {"hashlib", "pickle", "subprocess"} & warm, sorted({"hashlib", "pickle", "subprocess"} & warm)


def test_argparse_asks_for_no_translation_python_cannot_have(tmp_path):
    """Where Python's locale folder does not exist, argparse's messages are its own: the
    parser is built without gettext's search, which imports `locale`."""
    import os

    if os.path.isdir(os.path.join(sys.base_prefix, "share", "locale")):
        pytest.skip("this Python has a locale folder")
    modules = _imported(tmp_path, "Dockerfile", "FROM ubuntu:22.04\n")
    assert "gpulint.face.arguments" in modules and "locale" not in modules
