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
