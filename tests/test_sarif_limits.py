"""A SARIF file GitHub code scanning accepts, however many findings a run has: 25,000 results
per run, 1,000 locations per result, 10 MB gzipped per file. What is left out is said in the
file and on stderr."""

from __future__ import annotations

import gzip
import json

from conftest import run_gpulint, validated_sarif, write_files

from gpulint.model import Document, Finding, Related, Span
from gpulint.report import sarif_limits
from gpulint.report.sarif import render
from gpulint.run.engine import Result


def _result(count: int, errors: int = 0, related: int = 0) -> Result:
    """`count` findings on a document of `count` lines, the last `errors` of them errors."""
    text = "".join(f"RUN step {i}\n" for i in range(count))
    doc = Document("Dockerfile", "/repo/Dockerfile", "dockerfile", text)
    findings = [Finding("GL001", "syntax", "error" if i >= count - errors else "info", "Dockerfile",
                        Span.point(i + 1, 1), f"finding {i}",
                        related=tuple(Related("Dockerfile", 1, 1, "here") for _ in range(related)))
                for i in range(count)]
    return Result(findings, [doc])


def _left_out(log: dict) -> list[str]:
    invocation = log["runs"][0]["invocations"][0]
    return [n["message"]["text"] for n in invocation.get("toolExecutionNotifications", ())
            if n["descriptor"]["id"] == "results-left-out"]


def test_past_25000_results_the_most_severe_are_kept_and_the_rest_named():
    result, notes = _result(25_010, errors=20), []
    log = json.loads(render(result, result.findings, notes))
    results = log["runs"][0]["results"]
    assert len(results) == sarif_limits.MAX_RESULTS
    assert sum(r["level"] == "error" for r in results) == 20  # the errors come last, yet all stay
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results]
    assert lines == sorted(lines)  # in report order
    (said,) = _left_out(log)
    assert said.startswith("10 of 25,010 results were left out") and "--format json" in said
    assert notes == [f"sarif: {said}"]


def test_within_the_limits_nothing_is_left_out_or_said():
    result, notes = _result(30), []
    log = json.loads(render(result, result.findings, notes))
    assert len(log["runs"][0]["results"]) == 30
    assert _left_out(log) == [] and notes == []


def test_more_than_github_shows_is_said_on_stderr_only():
    result, notes = _result(sarif_limits.SHOWN_RESULTS + 1), []
    log = json.loads(render(result, result.findings, notes))
    assert len(log["runs"][0]["results"]) == sarif_limits.SHOWN_RESULTS + 1
    assert _left_out(log) == []
    assert notes == [sarif_limits.shown_note(sarif_limits.SHOWN_RESULTS + 1)]


def test_a_file_past_the_gzipped_size_limit_is_cut_to_fit(monkeypatch):
    one = _result(1)
    limit = len(gzip.compress(render(one, one.findings).encode())) + 20_000  # the rule catalog, and some
    monkeypatch.setattr(sarif_limits, "MAX_GZIPPED_BYTES", limit)
    result, notes = _result(2_000, errors=5), []
    text = render(result, result.findings, notes)
    assert len(gzip.compress(text.encode())) <= limit
    log = json.loads(text)
    results = log["runs"][0]["results"]
    assert 0 < len(results) < 2_000
    assert sum(r["level"] == "error" for r in results) == 5
    (said,) = _left_out(log)
    assert f"{2_000 - len(results):,} of 2,000 results" in said and "per file, gzipped" in said
    assert len(notes) == 1


def test_related_locations_past_1000_are_cut_and_counted():
    result = _result(1, related=1_005)
    (item,) = json.loads(render(result, result.findings))["runs"][0]["results"]
    assert len(item["relatedLocations"]) == sarif_limits.MAX_LOCATIONS
    assert item["properties"]["relatedLocationsLeftOut"] == 5


BAD = "FROM ubuntu:22.04\nRUNN apt-get update\n"


def test_the_cli_says_on_stderr_what_the_sarif_left_out(tmp_path, monkeypatch):
    monkeypatch.setattr(sarif_limits, "MAX_RESULTS", 2)
    write_files(tmp_path, {f"{name}/Dockerfile": BAD for name in ("a", "b", "c")})
    whole = run_gpulint("--isolated", "--format", "json", ".", cwd=tmp_path)
    total = len(whole.findings)
    assert total > 2
    run = run_gpulint("--isolated", "--format", "sarif", "--report", "sarif=out.sarif", ".",
                      cwd=tmp_path)
    log = validated_sarif(run.out)
    assert len(log["runs"][0]["results"]) == 2
    (said,) = _left_out(log)
    assert f"gpulint: sarif: {total - 2} of {total} results were left out" in run.err
    assert f"gpulint: out.sarif: sarif: {total - 2} of {total}" in run.err
    assert json.loads((tmp_path / "out.sarif").read_text()) == log
