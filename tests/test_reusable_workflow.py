"""The reusable GitHub Actions workflow and the caller README.md shows: their shape, and
gpulint's own verdict on the workflow."""

from __future__ import annotations

import re

import yaml
from conftest import ROOT, run_gpulint

WORKFLOW = ROOT / ".github" / "workflows" / "gpulint-reusable.yml"


def _load(text: str) -> dict:
    data = yaml.safe_load(text)
    if True in data:  # YAML 1.1 reads the key `on` as true
        data["on"] = data.pop(True)
    return data


def _caller() -> dict:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## CI: a reusable workflow"):]
    block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    return _load(block)


def test_the_workflow_is_called_with_paths_threshold_and_category():
    data = _load(WORKFLOW.read_text(encoding="utf-8"))
    inputs = data["on"]["workflow_call"]["inputs"]
    assert {"paths", "failure-threshold", "category"} <= set(inputs)
    assert all(spec["type"] == "string" and "description" in spec for spec in inputs.values())
    (job,) = data["jobs"].values()
    assert job["permissions"] == {"contents": "read", "security-events": "write"}
    steps = job["steps"]
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["category"] == "${{ inputs.category }}"
    assert "!cancelled()" in upload["if"]  # the upload runs when findings fail the lint step
    # the job fails after the upload, not before it
    fail = next(i for i, s in enumerate(steps) if "steps.lint.outputs.status" in s.get("if", ""))
    assert fail > steps.index(upload)
    for step in steps:  # inputs reach scripts as environment variables, never as script text
        assert "${{" not in step.get("run", "")


def test_the_readme_caller_runs_a_matrix_with_a_category_each():
    caller = _caller()
    (job,) = caller["jobs"].values()
    assert job["uses"].split("@")[0].endswith(".github/workflows/gpulint-reusable.yml")
    rows = job["strategy"]["matrix"]["include"]
    assert len({row["category"] for row in rows}) == len(rows) > 1
    declared = set(_load(WORKFLOW.read_text(encoding="utf-8"))["on"]["workflow_call"]["inputs"])
    assert set(job["with"]) <= declared
    assert job["with"]["category"] == "${{ matrix.category }}"
    assert job["permissions"]["security-events"] == "write"


def test_gpulint_finds_nothing_in_the_workflow():
    run = run_gpulint("--isolated", "--format", "json", str(WORKFLOW))
    assert run.rc == 0 and run.findings == [], run.out
