"""Start-up: linting one file imports only what that file's kind needs (checked with
`python -X importtime`, not timed), and the bundled YAML is read once, then from the cache."""

from __future__ import annotations

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
      "gpulint.kinds.compose.facts", "gpulint.kinds.containerd.checks", "gpulint.formats.yamlpos"}),
    ("daemon.json", '{"default-runtime": "runc"}\n',
     {"yaml", "tomlkit", "jsonschema", "gpulint.kinds.kubernetes.facts", "gpulint.kinds.dockerfile.checks", "gpulint.knowledge.images"}),
])
def test_one_file_imports_only_what_its_kind_needs(tmp_path, name, text, absent):
    _imported(tmp_path, name, text)  # the first run fills the cache
    modules = _imported(tmp_path, name, text)
    assert "gpulint.face.cli" in modules
    assert not absent & modules, sorted(absent & modules)


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
