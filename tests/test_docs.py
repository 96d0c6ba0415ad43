"""The README and generated docs stay true to the code."""

from __future__ import annotations

import re

import pytest
import yaml

from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _quick_start() -> list[str]:
    section = README.split("## Quick start", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL).group(1)
    return [line for line in block.splitlines() if line.strip()]


def test_rule_table_and_rule_docs_are_fresh():
    from gpulint.docgen import readme_text, rules_markdown

    assert readme_text(README) == README, "run `python -m gpulint.docgen`"
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == rules_markdown(), \
        "run `python -m gpulint.docgen`"


def test_every_rule_has_its_own_page():
    from gpulint.docgen import rule_pages

    pages = rule_pages()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "docs" / "rules").glob("*.md")}
    assert on_disk == pages, "run `python -m gpulint.docgen`"
    assert pages["GL105.md"].startswith("# GL105 `runtime-type-deprecated`")


def test_quick_start_makes_a_virtualenv_then_installs_lints_and_tests():
    virtualenv, install_and_run, test = _quick_start()
    assert virtualenv == "python3 -m venv .venv && . .venv/bin/activate"
    assert install_and_run == "pip install . && gpulint examples/"
    assert "pytest" in test
    after = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "exits with 1, on purpose" in after  # the examples are bad files


def test_ci_runs_the_quick_starts_test_command():
    ci = ROOT / ".ci" / "run"
    if not ci.exists():
        pytest.skip("an sdist carries no CI script")
    assert _quick_start()[-1] in ci.read_text(encoding="utf-8")


def test_the_quick_start_works_as_written(tmp_path):
    """The examples' exit code, as the README says: findings, on purpose."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "gpulint", "examples/"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 1 and "Found" in run.stdout, run.stderr


def test_examples_show_every_family():
    from conftest import run_gpulint

    result = run_gpulint("--isolated", "--format", "json", "examples", cwd=ROOT)
    families = {f["code"][:3] for f in result.findings}
    present = {p.stem[:3] for p in (ROOT / "rules").glob("GL[1-7]*.yaml")}
    assert present <= families, f"examples/ shows no finding for {sorted(present - families)}"


HOOK = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())[0]


@pytest.mark.parametrize("name", [
    "Dockerfile", "docker/Dockerfile.cuda", "trainer.Dockerfile", "images/app.dockerfile",
    "Containerfile", "Containerfile.gpu", "etc/docker/daemon.json", "gpu-daemon.json",
    "etc/containerd/config.toml", "conf.d/99-nvidia.toml", "config.toml.tmpl", "config-v3.toml.tmpl",
    "k8s/pod.yaml", "k8s/job.yml", "k8s/pod.json", "templates/config.toml.j2",
    "compose.yaml", "docker-compose.gpu.yml", "README.md", "docs/setup.rst", "scripts/run-gpu.sh",
    "lib/systemd/system/docker.service", "etc/systemd/system/containerd.service.d/10-config.conf",
    "Makefile", "gpu.mk",
])
def test_hook_pattern_matches_every_discovered_name(name):
    assert HOOK["id"] == "gpulint" and HOOK["language"] == "python" and HOOK["entry"] == "gpulint --force-exclude"
    assert HOOK["require_serial"] is False
    assert re.search(HOOK["files"], name)


@pytest.mark.parametrize("name", ["main.py", "notes.txt", "Makefile.am", "go.sum"])
def test_hook_pattern_skips_other_files(name):
    assert not re.search(HOOK["files"], name)
