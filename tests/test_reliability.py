"""Bounded work and one bad file never sinking the run: hostile inputs through the CLI.

Each hostile input runs in a subprocess with a generous wall-time bound; the point is that
the work is bounded (these inputs took minutes and gigabytes before), not how fast it is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import run_gpulint

BOUND = 60  # seconds: generous for a loaded 2-core machine; unbounded inputs never finish


def _gpulint(*args: str, cwd, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpulint", "--isolated", "--format", "json", *args],
                          cwd=cwd, input=stdin, capture_output=True, timeout=BOUND)


def _codes(proc) -> list[tuple[str, int, int]]:
    return [(f["code"], f["line"], f["column"]) for f in json.loads(proc.stdout)["findings"]]


def test_a_yaml_alias_bomb_is_gl001_not_minutes_and_gigabytes(tmp_path):
    lines = ['  a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefghi", "bcdefghij"):
        lines.append(f"  {name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    (tmp_path / "bomb.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n"
                                        + "\n".join(lines) + "\n")
    proc = _gpulint("bomb.yaml", cwd=tmp_path)
    (finding,) = json.loads(proc.stdout)["findings"]
    assert finding["code"] == "GL001" and "alias expansion over the limit" in finding["message"]
    assert proc.returncode == 1


def test_anchors_used_a_few_times_still_read(lint_files):
    run = lint_files({"pod.yaml": (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n"
        "  - name: a\n    image: nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"
        "    resources: &r {limits: {nvidia.com/gpu: 1}}\n"
        "  - name: b\n    image: nvidia/cuda:12.4.1-runtime-ubuntu22.04\n    resources: *r\n")})
    assert [f["code"] for f in run.findings] == []


def test_a_doubling_arg_chain_stays_bounded(tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nARG A=x\n"
                                         + "ARG A=$A$A\n" * 30 + "ENV LD_LIBRARY_PATH=$A\n")
    proc = _gpulint("Dockerfile", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr


@pytest.mark.parametrize("comment", [
    "# gpulint: disable=" + " " * 3000 + "!",
    "# gpulint: disable=GL101 " + "-- " * 2000 + "!",
    "# gpulint: disable=" + "GL1," * 2000,
])
def test_long_suppression_comments_are_read_in_linear_time(tmp_path, comment):
    (tmp_path / "Dockerfile").write_text(f"FROM ubuntu:22.04\n{comment}\nRUN true\n")
    proc = _gpulint("Dockerfile", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    assert len(json.loads(proc.stdout)["findings"]) <= 2  # a repeated unknown code is named once


@pytest.mark.parametrize("name,content", [
    ("config.toml.tmpl", "version = 2\n" + "{{" * 40000 + "\n"),
    ("Dockerfile", "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nRUN " + "a " * 50000 + "\n"),
])
def test_long_template_and_run_lines_stay_bounded(tmp_path, name, content):
    (tmp_path / name).write_text(content)
    proc = _gpulint(name, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr


def test_a_number_python_cannot_convert_is_gl001_at_its_place(tmp_path):
    (tmp_path / "daemon.json").write_text('{"mtu": ' + "9" * 4400 + "}\n")
    proc = _gpulint("daemon.json", cwd=tmp_path)
    assert _codes(proc) == [("GL001", 1, 9)]
    assert proc.returncode == 1


def test_files_that_cannot_be_read_are_reported_and_the_rest_is_checked(tmp_path):
    (tmp_path / "dangling-daemon.json").symlink_to(tmp_path / "nowhere.json")
    os.mkfifo(tmp_path / "fifo-daemon.json")  # reading it would block for ever
    (tmp_path / "daemon.json").write_text('{"default-runtime": "nvidia"}\n')
    proc = _gpulint(".", cwd=tmp_path)
    found = {(f["path"], f["code"]): f["message"] for f in json.loads(proc.stdout)["findings"]}
    assert found[("dangling-daemon.json", "GL006")] == "file not checked: it is a link to nothing"
    assert found[("fifo-daemon.json", "GL006")] == "file not checked: it is not a regular file"
    assert ("daemon.json", "GL201") in found
    assert proc.returncode == 1


def test_one_size_limit_for_files_and_stdin(tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n")
    proc = _gpulint("--max-file-size", "10", "Dockerfile", cwd=tmp_path)
    (finding,) = json.loads(proc.stdout)["findings"]
    assert finding["code"] == "GL006" and finding["severity"] == "error"  # named: an error
    assert "more than the limit of 10" in finding["message"] and "--max-file-size" in finding["message"]
    piped = _gpulint("--max-file-size", "10", "--stdin-filename", "Dockerfile", "-", cwd=tmp_path,
                     stdin=b"FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n")
    assert [f["code"] for f in json.loads(piped.stdout)["findings"]] == ["GL006"]
    assert _codes(_gpulint("Dockerfile", cwd=tmp_path)) == []


def test_max_file_size_from_the_configuration(tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n")
    (tmp_path / ".gpulint.toml").write_text("max-file-size = 10\n")
    run = run_gpulint("--format", "json", "Dockerfile", cwd=tmp_path)
    assert [f["code"] for f in json.loads(run.out)["findings"]] == ["GL006"]
    (tmp_path / ".gpulint.toml").write_text('max-file-size = "big"\n')
    assert run_gpulint("Dockerfile", cwd=tmp_path).rc == 2


@pytest.mark.parametrize("comment,words", [
    ("# gpulint: disable=", "it names no rule"),
    ("# gpulint: disabel=GL301", "`disabel` is not a suppression; did you mean `disable`?"),
    ("# gpulint:disable GL301", "`disable` needs `=` and the codes"),
    ("# gpulint: enable=GL301", "`enable` is not a suppression"),
    ("# gpulint: disable=GL3!01", "characters that are no rule code or slug"),
])
def test_malformed_suppressions_are_gl005(lint_files, comment, words):
    run = lint_files({"Dockerfile": f"{comment}\nFROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"})
    (finding,) = [f for f in run.findings if f["code"] == "GL005"]
    assert (finding["line"], finding["column"]) == (1, 1)
    assert words in finding["message"]


def test_comments_that_only_mention_gpulint_are_no_suppressions(lint_files):
    run = lint_files({"Dockerfile": "# gpulint checks this file in CI\nFROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"})
    assert run.findings == []


def test_an_empty_select_and_an_impossible_driver_stop_the_run(tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n")
    empty = run_gpulint("--isolated", "--select", "", "Dockerfile", cwd=tmp_path)
    assert empty.rc == 2 and "--select names no rule" in empty.err
    low = run_gpulint("--isolated", "--driver", "100", "Dockerfile", cwd=tmp_path)
    assert low.rc == 2 and "there is no NVIDIA driver branch R100" in low.err
    high = run_gpulint("--isolated", "--driver", "999", "Dockerfile", cwd=tmp_path)
    assert high.rc == 0 and "gpulint does not know branch R999" in high.err


@pytest.mark.parametrize("config,words", [
    ('select = "GL1"\n', "select: 'GL1' is not of type 'array'"),
    ("unknown-key = 1\n", "'unknown-key' was unexpected"),
    ("[fleet]\ndriver = 535\n", "fleet.driver: 535 is not of type 'string'"),
    ('select = ["GL999"]\n', "`GL999` names no gpulint rule"),
    ('[severity]\nGL101 = "fatal"\n', "severity.GL101: 'fatal' is not one of"),
    ("failure-threshold = 3\n", "failure-threshold: 3 is not one of"),
])
def test_config_errors_exit_2_naming_the_key(tmp_path, config, words):
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n")
    (tmp_path / ".gpulint.toml").write_text(config)
    run = run_gpulint("Dockerfile", cwd=tmp_path)
    assert run.rc == 2 and words in run.err and "Traceback" not in run.err


def test_a_closed_pipe_keeps_the_exit_status(tmp_path):
    for i in range(300):
        (tmp_path / f"{i}-daemon.json").write_text('{"graph": "/x"}\n')
    proc = subprocess.run(f"{sys.executable} -m gpulint --isolated . | head -1", shell=True, cwd=tmp_path,
                          capture_output=True, timeout=BOUND, executable="/bin/bash",
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    status = subprocess.run(f"set -o pipefail; {sys.executable} -m gpulint --isolated . | head -1", shell=True,
                            cwd=tmp_path, capture_output=True, timeout=BOUND, executable="/bin/bash")
    assert b"Traceback" not in proc.stderr + status.stderr
    assert status.returncode == 1


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_missing_parser_package_leaves_its_files_unchecked_and_the_rest_checked(tmp_path, jobs):
    # an installation without PyYAML: each manifest is GL006, every other file is checked,
    # the output is the JSON report, and the run says once what is missing (exit 2)
    for n in range(60):
        (tmp_path / f"app{n}").mkdir()
        (tmp_path / f"app{n}" / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n")
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:11.0-base\n")
    cache = tmp_path.parent / f"cache-{jobs}"
    # the bundled rules and data are read once with PyYAML into the cache, as a wheel ships them
    subprocess.run([sys.executable, "-m", "gpulint", "--isolated", "Dockerfile"], cwd=tmp_path,
                   capture_output=True, env={**os.environ, "XDG_CACHE_HOME": str(cache)}, timeout=BOUND)
    blocked = ("import sys; sys.modules['yaml'] = None\n"
               "from gpulint.face.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", blocked, "--isolated", "--format", "json",
                           "--jobs", jobs, "."], cwd=tmp_path, capture_output=True, text=True,
                          timeout=BOUND, env={**os.environ, "XDG_CACHE_HOME": str(cache)})
    assert proc.returncode == 2, proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    unchecked = [f for f in findings if f["code"] == "GL006"]
    assert len(unchecked) == 60 and {(f["line"], f["column"]) for f in unchecked} == {(1, 1)}
    assert "`PyYAML`, the package gpulint parses it with, is not installed" in unchecked[0]["message"]
    assert {f["path"] for f in findings if f["code"] != "GL006"} == {"Dockerfile"}
    assert proc.stderr.count("`PyYAML` package is not installed") == 1
    assert "Traceback" not in proc.stderr


def test_dockerfiles_are_read_without_the_dockerfile_parse_package(tmp_path):
    """gpulint splits Dockerfile instructions itself (as dockerfile-parse did): an
    installation without that package checks Dockerfiles all the same."""
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:11.0-base\n")
    blocked = ("import sys; sys.modules['dockerfile_parse'] = None\n"
               "from gpulint.face.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", blocked, "--isolated", "--format", "json", "."],
                          cwd=tmp_path, capture_output=True, text=True, timeout=BOUND)
    assert proc.returncode == 1 and "GL006" not in proc.stdout and '"GL30' in proc.stdout, proc.stderr
