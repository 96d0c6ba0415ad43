"""SARIF as GitHub code scanning reads it: the official 2.1.0 schema, plus the subset
and limits GitHub documents ("SARIF support for code scanning")."""

from __future__ import annotations

import re

from conftest import run_gpulint, validated_sarif, write_files

# GitHub's documented limits per upload and per object
MAX_RESULTS, MAX_RULES, MAX_TAGS, MAX_RELATED = 25_000, 25_000, 20, 1_000
_LINK = re.compile(r"(?<!\\)\[(?:[^\]\\]|\\.)*\]\((\d+)\)")

POD = """apiVersion: v1
kind: Pod
metadata:
  name: bench
spec:
  runtimeClassName: nvidia-gpus
  containers:
    - name: bench
      image: nvcr.io/nvidia/pytorch:24.05-py3
      securityContext:
        privileged: true
      resources:
        limits:
          nvidia.com/gpu: 1
"""
CLASS = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: nvidia-gpu\nhandler: nvidia\n"


def github_subset(log: dict) -> None:
    """What code scanning needs of each object, beyond the schema."""
    assert log["version"] == "2.1.0"
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] and driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    assert len(rules) <= MAX_RULES and len(run["results"]) <= MAX_RESULTS
    ids = [r["id"] for r in rules]
    for rule in rules:
        assert rule["helpUri"].startswith("https://") and rule["helpUri"].endswith(f"/docs/rules/{rule['id']}.md")
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["markdown"] and len(rule["properties"]["tags"]) <= MAX_TAGS
        if "security-severity" in rule["properties"]:
            assert 0.0 < float(rule["properties"]["security-severity"]) <= 10.0
            assert "security" in rule["properties"]["tags"]
    assert run["automationDetails"]["id"].endswith("/")
    for result in run["results"]:
        assert result["ruleId"] in ids and ids[result["ruleIndex"]] == result["ruleId"]
        assert result["message"]["text"]
        [location] = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uri"] and physical["region"]["startLine"] >= 1
        line_hash = result["partialFingerprints"]["primaryLocationLineHash"]
        assert re.fullmatch(r"[0-9a-f]{16}:\d+", line_hash)
        related = {r["id"] for r in result.get("relatedLocations", ())}
        assert len(related) <= MAX_RELATED
        # GitHub shows a related location only when the message links it
        assert {int(n) for n in _LINK.findall(result["message"]["text"])} == related


def _sarif(tmp_path, *args):
    run = run_gpulint("--isolated", "--format", "sarif", "--failure-threshold", "none", *args, ".",
                      cwd=tmp_path)
    log = validated_sarif(run.out)
    github_subset(log)
    return log["runs"][0]


def test_run_level_fields_github_reads(tmp_path):
    write_files(tmp_path, {"pod.yaml": POD, "class.yaml": CLASS})
    run = _sarif(tmp_path)
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["automationDetails"] == {"id": "gpulint/"}
    assert run["invocations"] == [{"executionSuccessful": True}]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["GL506"]["properties"]["security-severity"] == "8.0"
    assert "security" in rules["GL506"]["properties"]["tags"]
    assert "security" not in rules["GL105"]["properties"]["tags"]


def test_related_locations_are_linked_from_the_message(tmp_path):
    write_files(tmp_path, {"pod.yaml": POD, "class.yaml": CLASS})
    [typo] = [r for r in _sarif(tmp_path)["results"] if r["ruleId"] == "GL701"]
    assert typo["message"]["text"].endswith("(see [class.yaml:4](0))")
    assert typo["relatedLocations"][0]["id"] == 0


def test_brackets_in_a_message_with_links_are_escaped(tmp_path):
    from gpulint.model import Finding, Related, Span
    from gpulint.report.sarif import _message

    f = Finding("GL701", "", "warning", "a.toml", Span.point(1, 1), "table [plugins] is wrong",
                related=(Related("b.toml", 2, 1, "here"),))
    assert _message(f) == {"text": "table \\[plugins\\] is wrong (see [b.toml:2](0))"}


def test_fingerprints_survive_moved_lines_and_new_wording(tmp_path, monkeypatch):
    write_files(tmp_path, {"pod.yaml": POD})
    before = {r["ruleId"]: r["partialFingerprints"] for r in _sarif(tmp_path)["results"]}
    write_files(tmp_path, {"pod.yaml": "# a comment above moves every line\n" + POD})
    from gpulint.model import Finding

    original = Finding.__init__

    def reworded(self, *args, **kwargs):  # the same finding, said differently
        original(self, *args, **kwargs)
        self.message = "reworded: " + self.message

    monkeypatch.setattr(Finding, "__init__", reworded)
    after = {r["ruleId"]: r["partialFingerprints"] for r in _sarif(tmp_path)["results"]}
    assert before == after and before


def test_identical_findings_on_identical_lines_get_distinct_fingerprints(tmp_path):
    stage = "FROM nvidia/cuda:11.0-base AS a\nRUN true\n"
    write_files(tmp_path, {"Dockerfile": stage + stage})
    results = _sarif(tmp_path)["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in results] == [("GL301", 1), ("GL301", 3)]
    prints = [(r["partialFingerprints"]["primaryLocationLineHash"],
               r["partialFingerprints"]["gpulint/v2"]) for r in results]
    assert len(set(prints)) == len(prints)


def test_unsafe_fixes_are_named_not_offered(tmp_path):
    write_files(tmp_path, {
        "daemon.json": '{"runtimes": {"nvidia": {"path": "/usr/bin/nvidia-container-runtime-hook"}}}\n',
        "Dockerfile": "FROM x\n# gpulint: disable=GL001\nRUN y\n"})
    results = {r["ruleId"]: r for r in _sarif(tmp_path)["results"]}
    assert "fixes" not in results["GL204"]
    assert results["GL204"]["properties"]["unsafeFix"].endswith("(gpulint --fix --unsafe-fixes)")
    assert results["GL002"]["fixes"][0]["description"]["text"] == "remove the unused suppression comment"


def test_internal_errors_are_tool_execution_notifications(tmp_path, monkeypatch):
    from gpulint import registry

    def broken(doc, ctx):
        raise RuntimeError("boom")

    monkeypatch.setattr(registry, "CHECKS", [registry.Check(broken, ("GL001",), ("dockerfile",), False)])
    import gpulint.run.engine

    monkeypatch.setattr(gpulint.run.engine, "CHECKS", registry.CHECKS)
    write_files(tmp_path, {"Dockerfile": "FROM x\n"})
    run = run_gpulint("--isolated", "--format", "sarif", ".", cwd=tmp_path)
    assert run.rc == 2
    [invocation] = validated_sarif(run.out)["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "boom" in note["message"]["text"]


def _sarif_in(cwd, *args):
    run = run_gpulint("--format", "sarif", "--failure-threshold", "none", *args, cwd=cwd)
    log = validated_sarif(run.out)
    github_subset(log)
    return log["runs"][0]


def _where(result):
    return [(loc["physicalLocation"]["artifactLocation"], loc["physicalLocation"]["region"]["startLine"])
            for loc in result["locations"] + result.get("relatedLocations", [])]


def test_paths_are_relative_to_the_repository_root_from_any_working_directory(tmp_path):
    """Code scanning resolves a relative URI against the checkout: a step that runs in a
    `working-directory:` reports `deploy/...`, as a run at the root does."""
    write_files(tmp_path, {"deploy/k8s/pod.yaml": POD, "deploy/k8s/class.yaml": CLASS,
                           "deploy/Dockerfile": "FROM x\n# gpulint: disable=GL001\nRUN y\n"})
    (tmp_path / ".git").mkdir()
    from_root = _sarif_in(tmp_path, "deploy")
    from_deploy = _sarif_in(tmp_path / "deploy", ".")
    from_k8s = _sarif_in(tmp_path / "deploy" / "k8s", "..")
    root_uri = tmp_path.as_uri() + "/"
    for run in (from_root, from_deploy, from_k8s):
        assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": root_uri}}
    assert from_root["results"] == from_deploy["results"] == from_k8s["results"]
    by_rule = {r["ruleId"]: r for r in from_deploy["results"]}
    assert by_rule["GL701"]["message"]["text"].endswith("(see [deploy/k8s/class.yaml:4](0))")
    assert _where(by_rule["GL701"]) == [
        ({"uri": "deploy/k8s/pod.yaml", "uriBaseId": "%SRCROOT%"}, 6),
        ({"uri": "deploy/k8s/class.yaml", "uriBaseId": "%SRCROOT%"}, 4)]
    [change] = by_rule["GL002"]["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "deploy/Dockerfile", "uriBaseId": "%SRCROOT%"}


def test_a_file_outside_the_repository_gets_an_absolute_uri(tmp_path):
    repo, other = tmp_path / "repo", tmp_path / "other dir"
    write_files(repo, {"Dockerfile": "FROM nvidia/cuda:11.0-base\n"})
    write_files(other, {"Dockerfile": "FROM nvidia/cuda:11.0-base\n"})
    (repo / ".git").mkdir()
    run = _sarif_in(repo, "--isolated", "Dockerfile", "../other dir/Dockerfile")
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.as_uri() + "/"}}
    assert [_where(r)[0][0] for r in run["results"]] == [
        {"uri": (other / "Dockerfile").as_uri()},
        {"uri": "Dockerfile", "uriBaseId": "%SRCROOT%"}]
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(
        "/other%20dir/Dockerfile")
