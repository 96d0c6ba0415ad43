"""The core through the command line: parse errors, exit codes, output formats,
discovery, configuration and suppressions."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT, lint_fixture, run_gpulint, validated_sarif, write_files

FINDING_KEYS = {"code", "slug", "severity", "path", "line", "column", "end_line", "end_column",
                "message", "fix", "related"}

UNUSED = "FROM python:3.12-slim\n# gpulint: disable=GL001 -- old workaround\nRUN pip install flask\n"


# -- parse errors ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, line, column, words", [
    ("config.toml", 7, 40, "invalid TOML"),
    ("daemon.json", 7, 6, "trailing comma"),
    ("pod.yaml", 9, 6, "invalid YAML"),
    ("Dockerfile", 4, 1, "unknown instruction `RUNN`"),
])
def test_parse_error_is_gl001_at_the_parser_position(name, line, column, words):
    result = lint_fixture(f"core/parse-errors/{name}")
    assert result.rc == 1
    [finding] = result.findings
    assert (finding["code"], finding["line"], finding["column"]) == ("GL001", line, column)
    assert finding["severity"] == "error"
    assert words in finding["message"]


def test_parse_errors_do_not_stop_the_run():
    result = lint_fixture("core/parse-errors")
    assert result.codes() == ["GL001"] * 4
    assert result.json["summary"]["files_checked"] == 4


@pytest.mark.parametrize("content, line, column, words", [
    ('{\n  "runtimes": {}\n}\n{"default-runtime": "runc"}\n', 4, 1, "second value"),
    ('{\n  // the GPU runtime\n  "default-runtime": "nvidia"\n}\n', 2, 3, "comments are not allowed"),
])
def test_daemon_json_slips_are_named(lint_files, content, line, column, words):
    result = lint_files({"daemon.json": content})
    assert result.at() == [("GL001", line, column)]
    assert words in result.findings[0]["message"]


@pytest.mark.parametrize("content, line, column", [
    ('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  runtimes = [\n', 3, 15),
    ('version = 2\nimports = """/etc/containerd/conf.d/*.toml\n\n', 2, 43),
])
def test_toml_that_ends_too_soon_is_reported_where_it_ends(lint_files, content, line, column):
    result = lint_files({"config.toml": content})
    assert result.at() == [("GL001", line, column)]
    assert "at the end of the file" in result.findings[0]["message"]


def test_unclosed_heredoc_is_a_parse_error(lint_files):
    result = lint_files({"Dockerfile": "FROM ubuntu:22.04\nRUN <<EOF\napt-get update\n"})
    assert result.at() == [("GL001", 2, 5)]


def test_crlf_and_bom_keep_positions(lint_files):
    text = '\ufeff{\r\n  "runtimes": {\r\n    "nvidia": {"path": "x"},\r\n  }\r\n}\r\n'
    result = lint_files({"daemon.json": text})
    assert result.at() == [("GL001", 3, 28)]


def test_non_utf8_file_is_a_parse_error(tmp_path):
    (tmp_path / "Dockerfile").write_bytes(b"FROM ubuntu\nRUN echo \xff\n")
    result = run_gpulint("--isolated", "--format", "json", ".", cwd=tmp_path)
    assert result.codes() == ["GL001"]
    assert "UTF-8" in result.findings[0]["message"]


# -- templates ------------------------------------------------------------------------------

def test_helm_templates_are_linted_or_reported_once():
    result = lint_fixture("core/helm", "--failure-threshold", "none")
    assert result.rc == 0
    assert [(f["code"], f["path"].rsplit("/", 1)[-1], f["severity"]) for f in result.findings] == [
        ("GL004", "broken.yaml", "info")]
    # the chart's deployment template parsed, values.yaml and Chart.yaml are not manifests;
    # the broken template is not checked
    assert result.json["summary"]["files_checked"] == 1
    assert result.json["summary"]["files_not_checked"] == 1


# -- exit codes and thresholds --------------------------------------------------------------

def test_clean_run_exits_zero_and_skips_unknown_files():
    result = lint_fixture("core/clean")
    assert result.rc == 0
    assert result.findings == []
    assert result.json["summary"]["files_checked"] == 1
    assert result.json["summary"]["files_skipped"] == 2


@pytest.mark.parametrize("threshold, rc", [("error", 0), ("warning", 1), ("info", 1), ("none", 0)])
def test_failure_threshold(lint_files, threshold, rc):
    result = lint_files({"Dockerfile": UNUSED}, "--failure-threshold", threshold)
    assert result.codes() == ["GL002"]
    assert result.rc == rc


def test_missing_path_is_a_usage_error(tmp_path):
    result = run_gpulint("--isolated", "no-such-dir", cwd=tmp_path)
    assert result.rc == 2
    assert "no-such-dir" in result.err


def test_bad_option_is_a_usage_error(tmp_path):
    assert run_gpulint("--format", "xml", ".", cwd=tmp_path).rc == 2
    assert run_gpulint("--driver", "latest", ".", cwd=tmp_path).rc == 2


def test_a_failing_check_is_an_internal_error_and_the_rest_goes_on(lint_files, monkeypatch):
    from gpulint import registry
    from gpulint.run.engine import load_all_checks

    load_all_checks()

    def explode(doc, ctx):
        if doc.path.endswith("a/Dockerfile"):
            raise RuntimeError("boom")
        return []

    monkeypatch.setattr(registry, "CHECKS", registry.CHECKS + [
        registry.Check(explode, ("GL002",), ("dockerfile",), False)])
    monkeypatch.setattr("gpulint.run.engine.CHECKS", registry.CHECKS)
    result = lint_files({"a/Dockerfile": "FROM ubuntu\n", "b/Dockerfile": UNUSED})
    assert result.rc == 2
    assert "explode" in result.err and "a/Dockerfile" in result.err and "boom" in result.err
    assert result.codes() == ["GL002"]  # b/Dockerfile was still checked


# -- output formats -------------------------------------------------------------------------

def test_json_contract(lint_files):
    result = lint_files({"sub/Dockerfile": UNUSED})
    data = result.json
    assert data["version"] == 1
    assert data["tool"]["name"] == "gpulint"
    [finding] = data["findings"]
    assert set(finding) == FINDING_KEYS
    assert finding["path"] == "sub/Dockerfile"
    assert (finding["line"], finding["column"], finding["end_line"], finding["end_column"]) == (2, 1, 2, 42)
    assert finding["fix"]["safe"] is True
    [edit] = finding["fix"]["edits"]
    assert edit == {"path": "sub/Dockerfile", "location": {"line": 2, "column": 1},
                    "end_location": {"line": 3, "column": 1}, "content": ""}
    assert data["summary"] == {"findings": 1, "errors": 0, "warnings": 1, "infos": 0, "fixable": 1,
                               "unsafe_fixable": 0, "suppressed": 0, "baselined": 0, "files_checked": 1, "files_skipped": 0,
                               "files_not_checked": 0}


def test_text_output_shows_source_caret_and_summary(tmp_path):
    write_files(tmp_path, {"Dockerfile": UNUSED})
    result = run_gpulint("--isolated", ".", cwd=tmp_path)
    lines = result.out.splitlines()
    assert lines[0].startswith("Dockerfile:2:1: GL002 [warning] unused suppression")
    assert lines[2] == "2 | # gpulint: disable=GL001 -- old workaround"
    assert lines[3] == "  | " + "^" * 42
    assert "fix: remove the unused suppression comment" in result.out
    assert lines[-1] == "Found 1 finding (1 warning) in 1 file checked. 1 fixable with --fix."
    assert "\033[" not in result.out  # no colour when stdout is not a terminal
    bare = run_gpulint("--isolated", "--no-show-source", ".", cwd=tmp_path)
    assert len(bare.out.splitlines()) == 3


def test_clean_text_output(tmp_path):
    write_files(tmp_path, {"Dockerfile": "FROM python:3.12\n"})
    assert run_gpulint("--isolated", ".", cwd=tmp_path).out == "All checks passed: 1 file checked.\n"


def test_github_annotations(tmp_path):
    write_files(tmp_path, {"Dockerfile": UNUSED, "daemon.json": "{,}"})
    result = run_gpulint("--isolated", "--format", "github", ".", cwd=tmp_path)
    assert result.out.splitlines() == [
        "::warning file=Dockerfile,line=2,col=1,endLine=2,endColumn=42,title=GL002 unused-suppression"
        "::unused suppression: no GL001 finding here to silence",
        "::error file=daemon.json,line=1,col=2,endLine=1,endColumn=2,title=GL001 parse-error"
        "::invalid JSON: Expecting property name enclosed in double quotes",
    ]


def _sarif(tmp_path, *args):
    result = run_gpulint("--isolated", "--format", "sarif", *args, ".", cwd=tmp_path)
    return result, validated_sarif(result.out)


def test_sarif_is_valid_and_complete(tmp_path):
    write_files(tmp_path, {"Dockerfile": UNUSED, "daemon.json": "{,}"})
    result, log = _sarif(tmp_path)
    assert result.rc == 1
    [run] = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    from gpulint.catalog import load_catalog

    assert [r["id"] for r in rules] == list(load_catalog())
    first = run["results"][0]
    assert first["ruleId"] == "GL002" and rules[first["ruleIndex"]]["id"] == "GL002"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "Dockerfile", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 43}
    [fix] = first["fixes"]
    [change] = fix["artifactChanges"]
    assert change["replacements"][0]["deletedRegion"] == {
        "startLine": 2, "startColumn": 1, "endLine": 3, "endColumn": 1}
    assert first["partialFingerprints"]["gpulint/v2"]
    assert run["results"][1]["level"] == "error"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file://")


def test_sarif_clean_run_has_empty_results(tmp_path):
    write_files(tmp_path, {"Dockerfile": "FROM python:3.12\n"})
    _, log = _sarif(tmp_path)
    assert log["runs"][0]["results"] == []


def test_sarif_keeps_inline_suppressed_findings_as_suppressed_when_asked(tmp_path):
    write_files(tmp_path, {"daemon.json": "{,}", "Dockerfile": "# gpulint: disable=GL999 -- typo\nFROM x\n"})
    write_files(tmp_path, {"Dockerfile": "FROM x\n# gpulint: disable=GL001\nRUN true\n"})
    # GL002 on the Dockerfile, silenced for itself by a file-wide pragma
    write_files(tmp_path, {"Dockerfile": "# gpulint: disable-file=GL002 -- kept on purpose\n"
                                         "FROM x\n# gpulint: disable=GL001\nRUN true\n"})
    result, log = _sarif(tmp_path, "--show-suppressed")
    suppressed = [r for r in log["runs"][0]["results"] if "suppressions" in r]
    assert [(r["ruleId"], r["suppressions"]) for r in suppressed] == [
        ("GL002", [{"kind": "inSource", "justification": "kept on purpose"}])]
    assert run_gpulint("--isolated", "--format", "json", ".", cwd=tmp_path).codes() == ["GL001"]


def test_output_file(tmp_path):
    write_files(tmp_path, {"Dockerfile": UNUSED})
    result = run_gpulint("--isolated", "--format", "json", "--output", "report.json", ".", cwd=tmp_path)
    assert result.out == ""
    assert json.loads((tmp_path / "report.json").read_text())["findings"][0]["code"] == "GL002"


# -- discovery ------------------------------------------------------------------------------

def test_default_and_configured_excludes(tmp_path):
    files = {f"{d}/Dockerfile": UNUSED for d in ("node_modules/x", ".venv", "build", "ok", "vendor")}
    write_files(tmp_path, files)
    paths = lambda r: [f["path"] for f in r.findings]  # noqa: E731
    assert paths(run_gpulint("--isolated", "--format", "json", ".", cwd=tmp_path)) == \
        ["ok/Dockerfile", "vendor/Dockerfile"]
    assert paths(run_gpulint("--isolated", "--format", "json", "--exclude", "vendor", ".",
                             cwd=tmp_path)) == ["ok/Dockerfile"]
    (tmp_path / ".gpulint.toml").write_text('extend-exclude = ["ok/*"]\n')
    assert paths(run_gpulint("--format", "json", ".", cwd=tmp_path)) == ["vendor/Dockerfile"]


def test_kind_by_name_and_content(lint_files):
    files = {
        "images/trainer.Dockerfile": UNUSED,
        "images/Containerfile": UNUSED,
        "images/Dockerfile.cuda": UNUSED,
        "images/gpu-Dockerfile-minimal": UNUSED,
        "docs/dockerfile-notes.md": UNUSED,
        "pyproject.toml": '[tool.black]\nline-length = 100\n',
        "toolkit/config.toml": '[nvidia-container-cli]\nldconfig = "@/sbin/ldconfig"\n',
        "node/config.toml": 'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  x = {\n',
        "etc/docker/custom.json": '{"runtimes": {}, "x": ,}',
        "package.json": '{"name": "x", "version": "1.0.0",}',
        "k8s/pod.json": '{"apiVersion": "v1", "kind": "Pod",}',
        "k8s/values.yaml": "image: x\nreplicas: [\n",
    }
    result = lint_files(files, "--failure-threshold", "none")
    assert sorted(f["path"] for f in result.findings) == sorted([
        "etc/docker/custom.json", "images/Containerfile", "images/Dockerfile.cuda",
        "images/gpu-Dockerfile-minimal", "images/trainer.Dockerfile", "k8s/pod.json",
        "node/config.toml"])


def test_forced_kind_and_stdin(tmp_path):
    result = run_gpulint("--isolated", "--format", "json", "-", "--stdin-filename", "deploy/x.txt",
                         "--kind", "daemon-json", cwd=tmp_path, stdin="{,}")
    assert [(f["code"], f["path"]) for f in result.findings] == [("GL001", "deploy/x.txt")]
    result = run_gpulint("--isolated", "--format", "json", "-", "--stdin-filename", "Dockerfile",
                         cwd=tmp_path, stdin=UNUSED)
    assert result.codes() == ["GL002"]
    assert run_gpulint("--isolated", "-", cwd=tmp_path, stdin=UNUSED).rc == 2


def test_output_order_is_deterministic(lint_files):
    files = {f"{name}/Dockerfile": UNUSED for name in ("b", "a", "c/d", "c")}
    result = lint_files(files)
    assert [f["path"] for f in result.findings] == ["a/Dockerfile", "b/Dockerfile", "c/Dockerfile",
                                                    "c/d/Dockerfile"]


# -- configuration ----------------------------------------------------------------------------

def test_pyproject_config_is_found_walking_up(tmp_path):
    write_files(tmp_path, {
        "pyproject.toml": '[tool.gpulint]\nignore = ["GL002"]\n',
        "svc/Dockerfile": UNUSED,
    })
    assert run_gpulint("--format", "json", ".", cwd=tmp_path / "svc").findings == []
    assert run_gpulint("--isolated", "--format", "json", ".", cwd=tmp_path / "svc").codes() == ["GL002"]


@pytest.mark.parametrize("selector", ["GL001", "GL0", "parse-error", "ALL"])
def test_select_by_code_prefix_slug_or_all(lint_files, selector):
    files = {"Dockerfile": UNUSED, "daemon.json": "{,}"}
    expected = ["GL001"] if selector in ("GL001", "parse-error") else ["GL002", "GL001"]
    assert lint_files(files, "--select", selector).codes() == expected


def test_config_options(tmp_path):
    write_files(tmp_path, {
        ".gpulint.toml": (
            'select = ["GL0"]\n'
            'failure-threshold = "error"\n'
            '[severity]\nGL002 = "info"\n'
            '[per-file-ignores]\n"legacy/*" = ["GL001"]\n'
        ),
        "Dockerfile": UNUSED,
        "legacy/daemon.json": "{,}",
        "daemon.json": "{,}",
    })
    result = run_gpulint("--format", "json", ".", cwd=tmp_path)
    assert [(f["code"], f["path"], f["severity"]) for f in result.findings] == [
        ("GL002", "Dockerfile", "info"), ("GL001", "daemon.json", "error")]
    assert result.rc == 1
    assert run_gpulint("--format", "json", "--ignore", "GL001", ".", cwd=tmp_path).rc == 0


@pytest.mark.parametrize("config, words", [
    ('preview = true\nselct = ["GL1"]\n', ".gpulint.toml:2:1: [tool.gpulint]: Additional properties"),
    ('failure-threshold = "critical"\n', ".gpulint.toml:1:21: failure-threshold: 'critical' is not one of"),
    ('[fleet]\ndriver = 535\n', ".gpulint.toml:2:10: fleet.driver"),
    ('select = "GL1"\n', ".gpulint.toml:1:10: select"),
    ('ignore = ["GL002", 3]\n', ".gpulint.toml:1:20: ignore.1"),
    ('select = [\n', "invalid TOML"),
])
def test_invalid_config_is_exit_2_at_the_key_or_value(tmp_path, config, words):
    write_files(tmp_path, {".gpulint.toml": config, "Dockerfile": "FROM x\n"})
    result = run_gpulint(".", cwd=tmp_path)
    assert result.rc == 2
    assert words in result.err


def test_explicit_config_and_isolated(tmp_path):
    write_files(tmp_path, {"ci/gpulint.toml": 'ignore = ["GL002"]\n', "Dockerfile": UNUSED,
                           ".gpulint.toml": 'select = ["GL001"]\n'})
    assert run_gpulint("--config", "ci/gpulint.toml", ".", cwd=tmp_path).rc == 0
    assert run_gpulint("--isolated", ".", cwd=tmp_path).rc == 1
    assert run_gpulint("--config", "missing.toml", ".", cwd=tmp_path).rc == 2
    both = run_gpulint("--isolated", "--config", "ci/gpulint.toml", ".", cwd=tmp_path)
    assert both.rc == 2 and "--config cannot be used with --isolated" in both.err


def test_unknown_code_in_config_is_a_config_error(tmp_path):
    write_files(tmp_path, {
        "pyproject.toml": '[project]\nname = "x"\n\n[tool.gpulint]\nignore = ["GL1O5", "GL002"]\n',
        "Dockerfile": "FROM x\n",
    })
    result = run_gpulint("--format", "json", ".", cwd=tmp_path)
    assert result.rc == 2 and result.out == ""
    assert "pyproject.toml:5:11: ignore: `GL1O5` names no gpulint rule; did you mean `GL105`?" \
        in result.err


def test_findings_in_the_config_follow_an_edited_config(tmp_path):
    """A second run in the same process reads the edited configuration, not the first one."""
    write_files(tmp_path, {".gpulint.toml": '[fleet]\ndriver = "470.256.02"\n', "Dockerfile": "FROM x\n"})
    run = run_gpulint("--format", "json", "--select", "GL602", ".", cwd=tmp_path)
    assert [(f["path"], f["line"], f["column"]) for f in run.findings] == [(".gpulint.toml", 2, 10)]
    write_files(tmp_path, {".gpulint.toml": '# the GPU nodes\n[fleet]\ndriver = "470.256.02"\n'})
    run = run_gpulint("--format", "json", "--select", "GL602", ".", cwd=tmp_path)
    assert [(f["path"], f["line"], f["column"]) for f in run.findings] == [(".gpulint.toml", 3, 10)]
    assert run.findings[0]["message"].startswith("the fleet configuration declares driver 470.256.02; R470 is")

# -- suppressions -----------------------------------------------------------------------------

def test_suppression_on_the_line_and_the_line_before(lint_files):
    result = lint_files({
        "before/daemon.json": "{,}",  # JSON has no comments: nothing to suppress with
        "a/config.toml": "version = 2\n[plugins. # gpulint: disable=GL001\n",
        "b/Dockerfile": "FROM x\n# gpulint: disable=parse-error -- slug works too\nRUNN y\n",
        "c/Dockerfile": "FROM x\n# gpulint: disable=GL001\n\nRUNN y\n",
    })
    assert [(f["code"], f["path"]) for f in result.findings] == [
        ("GL001", "before/daemon.json"), ("GL002", "c/Dockerfile"), ("GL001", "c/Dockerfile")]
    assert result.json["summary"]["suppressed"] == 2


def test_a_trailing_suppression_in_a_dockerfile_is_part_of_the_instruction(lint_files):
    """Docker reads `#` as a comment only at the start of a line (BuildKit's `isComment`):
    after an instruction it is the instruction's text, so it suppresses nothing there;
    in YAML, TOML and shell `#` after a space starts a comment, and it does."""
    result = lint_files({
        "Dockerfile": "FROM nvidia/cuda:11.0-base # gpulint: disable=GL301\n"
                      "RUNN y # gpulint: disable=GL001\n",
        "compose.yaml": "services:\n  a:\n    image: nvidia/cuda:11.0-base  # gpulint: disable=GL301\n",
    }, "--failure-threshold", "none")
    assert [(f["path"], f["code"], f["line"], f["column"]) for f in result.findings if not f.get("suppressed")] \
        == [("Dockerfile", "GL005", 1, 28), ("Dockerfile", "GL001", 2, 1), ("Dockerfile", "GL005", 2, 8)]
    messages = [f["message"] for f in result.findings if f["code"] == "GL005"]
    assert "in a Dockerfile a comment must start its line: this text is part of the FROM instruction" \
        in messages[0]
    assert result.json["summary"]["suppressed"] == 1  # the Compose one


def test_file_wide_suppression_and_no_inline_suppressions(lint_files):
    files = {"Dockerfile": "# gpulint: disable-file=GL001 -- generated\nFROM x\n\n\nRUNN y\n"}
    assert lint_files(files).findings == []
    assert lint_files(files, "--no-inline-suppressions").codes() == ["GL001"]


def test_unknown_code_in_suppression_is_gl003(lint_files):
    result = lint_files({"Dockerfile": "FROM x\n# gpulint: disable=GL001,GL1O5\nRUNN y\n"})
    assert result.at() == [("GL003", 2, 26)]
    assert "`GL1O5` names no gpulint rule; did you mean `GL105`?" in result.findings[0]["message"]


def test_unused_suppression_only_for_enabled_codes(lint_files):
    assert lint_files({"Dockerfile": UNUSED}, "--ignore", "GL001").findings == []


# -- rule docs on the command line ------------------------------------------------------------

def test_rule_and_rules_commands(tmp_path):
    doc = run_gpulint("rule", "GL002")
    assert doc.rc == 0
    assert doc.out.startswith("GL002 unused-suppression (warning, fixable)")
    assert "Why is this bad?" in doc.out and "Use instead" in doc.out
    assert run_gpulint("rule", "unused-suppression").out == doc.out
    assert json.loads(run_gpulint("rule", "GL001", "--format", "json").out)["slug"] == "parse-error"
    assert run_gpulint("rule", "GL999").rc == 2
    listing = run_gpulint("rules")
    assert listing.out.splitlines()[0].startswith("GL001  error    parse-error")
    codes = [r["code"] for r in json.loads(run_gpulint("rules", "--format", "json").out)]
    assert codes == sorted(codes) and "GL004" in codes


def test_python_dash_m_and_version():
    result = subprocess.run([sys.executable, "-m", "gpulint", "--version"], capture_output=True,
                            text=True, cwd=ROOT)
    assert result.returncode == 0
    assert result.stdout.startswith("gpulint ")


def test_colour_only_on_a_terminal_and_never_with_no_color(tmp_path):
    import pty

    write_files(tmp_path, {"Dockerfile": UNUSED})

    def on_tty(env):
        pid, fd = pty.fork()
        if pid == 0:  # the child: gpulint with its stdout on the terminal
            os.chdir(tmp_path)
            os.execvpe(sys.executable, [sys.executable, "-m", "gpulint", "--isolated", "."], env)
        chunks = []
        while True:
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        os.waitpid(pid, 0)
        return b"".join(chunks).decode()

    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["PYTHONPATH"] = str(ROOT)
    assert "\033[31m" in on_tty(env) or "\033[33m" in on_tty(env)
    assert "\033[" not in on_tty({**env, "NO_COLOR": "1"})


def test_dockerfile_arg_defaults_and_templated_from_positions(lint_files):
    result = lint_files({
        "a/Dockerfile": "ARG CUDA=12.0.0\nARG CUDA\nFROM nvidia/cuda:${CUDA}-runtime-ubuntu22.04\n",
        "b/Dockerfile.j2": "FROM {{ base }}\nfrom nvidia/cuda:12.0.0-runtime-ubuntu22.04 as run\n",
    }, "--select", "GL302")
    # a redeclared global ARG keeps its default; a template's FROM points at the image
    assert [(f["path"], f["line"], f["column"], f["end_column"]) for f in result.findings] == [
        ("a/Dockerfile", 3, 6, 44), ("b/Dockerfile.j2", 2, 6, 43)]


def test_half_written_kubernetes_object_is_reported_and_the_rest_checked(lint_files):
    result = lint_files({"pods.yaml": (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n    - name: a\n"
        "      image: x\n      resources: {requests: {nvidia.com/gpu: 1}}\n"
        "---\napiversion: apps/v1\nkind: Deployment\nmetadata:\n  name: b\n")})
    assert result.at() == [("GL501", 8, 30), ("GL001", 11, 1)]
    assert "without `apiVersion`" in result.findings[1]["message"]


@pytest.mark.parametrize("content, is_daemon", [
    ('{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}', True),
    ('{"default-runtime": "nvidia"}', True),
    ('{"log-driver": "json-file", "live-restore": true}', True),
    ('{"log-driver": "json-file"}', False),
    ('{"name": "web", "dns": "example.com"}', False),
    ('["runtimes", "default-runtime"]', False),
])
def test_daemon_json_by_content(lint_files, content, is_daemon):
    result = lint_files({"docker/settings.json": content})
    assert result.json["summary"]["files_checked"] == (1 if is_daemon else 0)


def test_findings_in_the_config_come_with_runs_that_lint_it(tmp_path):
    """A pre-commit call names the changed files: an end-of-life fleet driver or an
    unknown code in pyproject.toml is reported when pyproject.toml is among them (or a
    directory holding it is linted), not on every commit of an unrelated Dockerfile."""
    write_files(tmp_path, {
        "pyproject.toml": '[tool.gpulint]\nignore = ["GL105"]\n\n[tool.gpulint.fleet]\ndriver = "470.256.02"\n',
        "Dockerfile": "FROM ubuntu:22.04\n",
    })
    alone = run_gpulint("--format", "json", "Dockerfile", cwd=tmp_path)
    assert (alone.rc, alone.findings) == (0, [])
    for args in (["Dockerfile", "pyproject.toml"], ["."]):
        run = run_gpulint("--format", "json", *args, cwd=tmp_path)
        assert [(f["code"], f["path"], f["line"]) for f in run.findings] == [
            ("GL602", "pyproject.toml", 5)], args


def test_text_output_shows_the_configuration_line_too(tmp_path):
    write_files(tmp_path, {".gpulint.toml": '[fleet]\ndriver = "470.256.02"\n',
                           "Dockerfile": "FROM python:3.12\n"})
    result = run_gpulint(".", cwd=tmp_path)
    assert result.out.splitlines()[0].startswith(
        ".gpulint.toml:2:10: GL602 [warning] the fleet configuration declares driver 470.256.02")
    assert result.out.splitlines()[1:4] == ["  |", '2 | driver = "470.256.02"', "  |          ^^^^^^^^^^^^"]


# -- further reports from the same run -------------------------------------------------------

def test_report_writes_further_formats_from_the_same_run(tmp_path):
    write_files(tmp_path, {"Dockerfile": UNUSED, "daemon.json": '{"default-runtime": "nvidia"}\n'})
    run = run_gpulint("--format", "github", "--report", "sarif=out/gpulint.sarif", "--report", "json=out/g.json",
                      ".", cwd=tmp_path)
    assert run.rc == 1
    annotations = [line for line in run.out.splitlines() if line.startswith("::")]
    sarif = validated_sarif((tmp_path / "out" / "gpulint.sarif").read_text())
    report = json.loads((tmp_path / "out" / "g.json").read_text())
    codes = [f["code"] for f in report["findings"]]
    assert codes == [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["GL002", "GL201"]
    assert [a.split("title=")[1].split()[0] for a in annotations] == codes
    alone = run_gpulint("--format", "json", ".", cwd=tmp_path)
    assert alone.json["findings"] == report["findings"]


@pytest.mark.parametrize("args, words", [
    (["--report", "gpulint.sarif"], "expected FORMAT=FILE"),
    (["--report", "sarif="], "expected FORMAT=FILE"),
    (["--report", "xml=a.xml"], "unknown format `xml`"),
    (["--diff", "--report", "sarif=a.sarif"], "--diff prints fixes only"),
])
def test_report_values_are_checked_before_the_run(tmp_path, args, words):
    write_files(tmp_path, {"Dockerfile": UNUSED})
    run = run_gpulint(*args, ".", cwd=tmp_path)
    assert run.rc == 2 and words in run.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Dockerfile"]


def test_report_with_fix_on_stdin(tmp_path):
    run = run_gpulint("--isolated", "--fix", "--report", "json=r.json", "-", "--stdin-filename", "Dockerfile",
                      cwd=tmp_path, stdin=UNUSED)
    assert run.out == "FROM python:3.12-slim\nRUN pip install flask\n"
    assert json.loads((tmp_path / "r.json").read_text())["findings"] == []


def test_a_trailing_suppression_on_from_does_not_silence_the_tag(lint_files):
    # the words after `#` are FROM's arguments: four, which BuildKit refuses (GL001)
    result = lint_files({"Dockerfile": "FROM nvidia/cuda:11.0-base # gpulint: disable=GL301\n"
                                       "CMD [\"bash\"]\n"}, "--failure-threshold", "none")
    assert [(f["code"], f["line"], f["column"], f.get("suppressed")) for f in result.findings] \
        == [("GL001", 1, 1, None), ("GL301", 1, 6, None), ("GL005", 1, 28, None)]
    assert "FROM requires either one or three arguments" in result.findings[0]["message"]
    assert "part of the FROM instruction" in result.findings[2]["message"]


def test_github_annotations_name_files_from_the_workspace(tmp_path, monkeypatch):
    """GitHub places `file=` relative to the checkout, not to a step's working-directory: run
    in a subfolder, the path still starts at the repository (or $GITHUB_WORKSPACE)."""
    write_files(tmp_path, {".git/HEAD": "ref: refs/heads/main\n",
                           "deploy/daemon.json": '{"default-runtime": "nvidia"}\n'})
    run = run_gpulint("--isolated", "--format", "github", ".", cwd=tmp_path / "deploy")
    assert run.out.startswith("::error file=deploy/daemon.json,line=1,col=21"), run.out
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path / "deploy"))
    run = run_gpulint("--isolated", "--format", "github", ".", cwd=tmp_path / "deploy")
    assert run.out.startswith("::error file=daemon.json,line=1,col=21"), run.out



def test_the_json_report_written_finding_by_finding_is_the_whole_document_indented(tmp_path):
    """The JSON report is written a finding at a time, never whole in memory: its bytes are
    still those of the whole document dumped with an indent of 2, with findings (fixes,
    related places) and without, to stdout and to a file."""
    run = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none",
                      str(ROOT / "tests" / "fixtures"), cwd=ROOT)
    data = json.loads(run.out)
    assert len(data["findings"]) > 100
    assert any(f["fix"] for f in data["findings"]) and any(f["related"] for f in data["findings"])
    assert run.out == json.dumps(data, indent=2) + "\n"
    written = tmp_path / "out.json"
    run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", "-o", str(written),
                str(ROOT / "tests" / "fixtures"), cwd=ROOT)
    assert written.read_text(encoding="utf-8") == run.out
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n")
    empty = run_gpulint("--isolated", "--format", "json", "--select", "GL001", str(tmp_path / "Dockerfile"))
    assert json.loads(empty.out)["findings"] == []
    assert empty.out == json.dumps(json.loads(empty.out), indent=2) + "\n"
    suppressed = run_gpulint("--isolated", "--format", "json", "--show-suppressed", "--failure-threshold", "none",
                             str(write_files(tmp_path / "s", {"Dockerfile": "FROM ubuntu\n# gpulint: disable=GL306 -- on purpose\nRUN apt-get install -y cuda-12-4\n"})))
    assert any("suppressed" in f for f in json.loads(suppressed.out)["findings"])
    assert suppressed.out == json.dumps(json.loads(suppressed.out), indent=2) + "\n"
