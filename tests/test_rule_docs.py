"""Every rule file is valid, and its examples behave as its documentation says."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import ROOT, run_gpulint, write_files

RULE_FILES = sorted((ROOT / "rules").glob("GL[0-9][0-9][0-9].yaml"))
SCHEMA = json.loads((ROOT / "rules" / "schema.json").read_text())


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_rule_file_is_valid(path):
    data = _load(path)
    jsonschema.validate(data, SCHEMA)
    assert data["code"] == path.stem


def test_codes_and_slugs_are_unique():
    slugs = [_load(p)["slug"] for p in RULE_FILES]
    assert len(slugs) == len(set(slugs))


def _run_example(tmp_path: Path, example: dict):
    write_files(tmp_path, {f["path"]: f["content"] for f in example["files"]})
    for f in example["files"]:
        if f.get("executable"):
            (tmp_path / f["path"]).chmod(0o755)
    if example.get("command") == "doctor":  # the files are a node's filesystem
        return run_gpulint("doctor", "--isolated", "--format", "json", "--failure-threshold", "none",
                           "--root", ".", *example.get("args", ()), cwd=tmp_path)
    return run_gpulint("--isolated", "--preview", "--format", "json", "--failure-threshold", "none",
                       *example.get("args", ()), ".", cwd=tmp_path)


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_bad_example_reports_the_rule(path, tmp_path):
    rule = _load(path)
    result = _run_example(tmp_path, rule["example"]["bad"])
    assert result.rc == 0, result.err
    assert rule["code"] in result.codes(), result.findings


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_good_example_is_clean_of_the_rule(path, tmp_path):
    rule = _load(path)
    result = _run_example(tmp_path, rule["example"]["good"])
    assert result.rc == 0, result.err
    assert rule["code"] not in result.codes(), result.findings
    # a good example is a config that works: no rule calls anything in it an error
    errors = [f for f in result.findings if f["severity"] == "error"]
    assert not errors, errors


def test_rules_say_which_daemon_versions_their_claims_were_checked_against():
    text = run_gpulint("rule", "GL101")
    assert "verified with containerd 1.6.20" in text.out
    assert "read from the containerd 2.x source" in text.out
    data = json.loads(run_gpulint("rule", "GL207", "--format", "json").out)
    assert {"daemon": "dockerd", "version": "20.10.24", "how": "oracle",
            "ref": "https://packages.debian.org/bookworm/docker.io"} in data["verified"]
    assert "verified with dockerd 20.10.24" in (ROOT / "docs" / "rules" / "GL207.md").read_text()


def test_sarif_rules_carry_what_they_were_verified_with(tmp_path):
    (tmp_path / "daemon.json").write_text('{"exec-opts": "native.cgroupdriver=systemd"}\n')
    log = json.loads(run_gpulint("--isolated", "--format", "sarif", "daemon.json", cwd=tmp_path).out)
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert any("dockerd 20.10.24" in words for words in rules["GL207"]["properties"]["verified"])
