"""Docker daemon.json rules (GL2xx) and daemon.json parse errors, through the CLI."""

from __future__ import annotations

import shutil

import pytest

from conftest import FIXTURES, lint_fixture, run_gpulint


def codes_at(run) -> list[tuple[str, int, int]]:
    return run.at()


def test_correct_daemon_json_is_clean():
    run = lint_fixture("daemon-json/good")
    assert run.findings == []
    assert run.rc == 0


@pytest.mark.parametrize("name,line,column,words", [
    ("trailing-comma-daemon.json", 4, 51, "trailing comma"),
    ("comment-daemon.json", 2, 3, "comments are not allowed"),
    ("two-objects-daemon.json", 4, 1, "a second value"),
])
def test_invalid_json_is_gl001_at_the_exact_position(name, line, column, words):
    run = lint_fixture(f"daemon-json/bad/{name}")
    assert codes_at(run) == [("GL001", line, column)]
    assert words in run.findings[0]["message"]


def test_gl201_case_matters():
    run = lint_fixture("daemon-json/bad/gl201-daemon.json")
    assert codes_at(run) == [("GL201", 2, 22)]
    assert "did you mean `nvidia`?" in run.findings[0]["message"]
    assert "specified default runtime 'Nvidia' does not exist" in run.findings[0]["message"]


def test_gl201_missing_runtimes_block(lint_files):
    run = lint_files({"daemon.json": '{"default-runtime": "nvidia", "log-driver": "journald"}\n'})
    assert codes_at(run) == [("GL201", 1, 21)]


def test_gl202_every_malformed_shape():
    run = lint_fixture("daemon-json/bad/gl202-daemon.json")
    assert codes_at(run) == [("GL202", 3, 5), ("GL202", 6, 59), ("GL202", 7, 59), ("GL202", 8, 54),
                             ("GL202", 9, 61), ("GL202", 10, 13)]
    assert [f["severity"] for f in run.findings] == ["error"] * 4 + ["warning", "error"]


def test_gl203_runc_is_reserved():
    run = lint_fixture("daemon-json/bad/gl203-daemon.json")
    assert codes_at(run) == [("GL203", 3, 5)]


def test_gl204_binaries_that_are_not_runtimes():
    run = lint_fixture("daemon-json/bad/gl204-daemon.json")
    assert codes_at(run) == [("GL204", 3, 24), ("GL204", 4, 21)]
    assert run.findings[1].get("fix") is None


def test_gl205_args_severity_depends_on_content():
    run = lint_fixture("daemon-json/bad/gl205-daemon.json")
    assert codes_at(run) == [("GL205", 4, 7), ("GL205", 8, 7)]
    assert [f["severity"] for f in run.findings] == ["info", "warning"]


def test_gl206_removed_misspelled_and_unknown_keys():
    run = lint_fixture("daemon-json/bad/gl206-daemon.json")
    assert codes_at(run) == [("GL206", 2, 3), ("GL206", 3, 3), ("GL206", 4, 3), ("GL206", 5, 3)]
    assert "use `data-root`" in run.findings[0]["message"]
    assert "did you mean `default-runtime`?" in run.findings[1]["message"]


def test_gl206_camel_case_typo(lint_files):
    run = lint_files({"daemon.json": '{"defaultRuntime": "runc"}\n'})
    assert codes_at(run) == [("GL206", 1, 2)]
    assert "did you mean `default-runtime`?" in run.findings[0]["message"]


def test_templated_daemon_json_is_checked_without_fixes(lint_files):
    run = lint_files({"daemon.json.j2": '{\n  "graph": "{{ mount_point }}/docker"\n}\n'})
    assert codes_at(run) == [("GL206", 2, 3)]
    assert run.findings[0].get("fix") is None


def test_odd_shapes_do_not_crash(lint_files):
    run = lint_files({"daemon.json": '{"runtimes": [], "default-runtime": 3}\n',
                      "other-daemon.json": '{"runtimes": {"nvidia": {"path": 1, "args": "x"}}}\n'})
    assert "internal error" not in run.err
    assert run.rc in (0, 1)


# --- fixes --------------------------------------------------------------------------------

FIXES = [
    ("gl202-only-binary-daemon.json",
     '{\n  "runtimes": {\n    "nvidia": {\n      "options": {"BinaryName": "/usr/bin/nvidia-container-runtime"}\n'
     '    }\n  }\n}\n',
     '{\n  "runtimes": {\n    "nvidia": {\n      "path": "/usr/bin/nvidia-container-runtime"\n    }\n  }\n}\n'),
    ("gl204-daemon.json", None,
     '{\n  "runtimes": {\n    "nvidia": {"path": "/usr/bin/nvidia-container-runtime", "runtimeArgs": []},\n'
     '    "old": {"path": "docker-runc"}\n  }\n}\n'),
    ("gl205-daemon.json", None,
     '{\n  "runtimes": {\n    "nvidia": {\n      "runtimeArgs": [],\n      "path": "nvidia-container-runtime"\n'
     '    },\n    "nvidia-debug": {\n      "runtimeArgs": ["--debug"],\n      "path": "nvidia-container-runtime"\n'
     '    }\n  }\n}\n'),
    ("gl206-daemon.json", None,
     '{\n  "data-root": "/data/docker",\n  "default-runtime": "nvidia",\n'
     '  "cluster-store": "consul://10.0.0.1:8500",\n  "log-opts": {"max-size": "10m"},\n'
     '  "runtimes": {\n    "nvidia": {"path": "nvidia-container-runtime"}\n  }\n}\n'),
]


@pytest.mark.parametrize("name,before,expected", FIXES, ids=[f[0] for f in FIXES])
def test_fix_before_after_and_idempotent(tmp_path, name, before, expected):
    target = tmp_path / name
    if before is None:
        shutil.copy(FIXTURES / "daemon-json" / "bad" / name, target)
    else:
        target.write_text(before)
    texts = []
    for _ in range(2):
        unsafe = ("--unsafe-fixes",) if name.startswith("gl204") else ()
        run = run_gpulint("--isolated", "--fix", *unsafe, "--failure-threshold", "none", str(target))
        assert run.rc == 0, run.err
        texts.append(target.read_text())
    assert texts[0] == expected
    assert texts[1] == texts[0]
    code = name[:5].upper()
    relint = run_gpulint("--isolated", "--format", "json", str(target))
    left = [f for f in relint.findings if f["code"] == code and f.get("fix")]
    assert left == []


def test_gl202_empty_path_counts_as_missing(lint_files):
    # dockerd checks `rt.Path == "" && rt.Type == ""`, so an empty path is no path
    run = lint_files({"daemon.json": '{\n  "runtimes": {\n    "nvidia": {"path": ""}\n  }\n}\n'})
    assert codes_at(run) == [("GL202", 3, 5)]
    assert "neither `path` nor `runtimeType`" in run.findings[0]["message"]


def test_gl201_empty_default_runtime_means_the_built_in_default(lint_files):
    run = lint_files({"daemon.json": '{"default-runtime": "", "rootless": true}\n'})
    assert codes_at(run) == []


def test_gl204_shim_entry_binary_name(lint_files):
    run = lint_files({"daemon.json": (
        '{\n  "runtimes": {\n    "nvidia": {\n      "runtimeType": "io.containerd.runc.v2",\n'
        '      "options": {"BinaryName": "/usr/bin/nvidia-container-toolkit"}\n    }\n  }\n}\n')})
    assert codes_at(run) == [("GL202", 4, 7), ("GL204", 5, 33)]
    assert run.findings[0]["severity"] == "info"  # the shim form needs Docker 24.0
    assert run.findings[1]["fix"]["safe"] is False  # the binary must exist there, as in GL106


def test_gl206_quotes_dockerd_error_for_removed_keys():
    run = lint_fixture("daemon-json/bad/gl206-daemon.json")
    assert ("the following directives don't match any configuration option: graph"
            in run.findings[0]["message"])


# --- what each Docker release does: `docker-version` in the fleet configuration -----------

def _with_docker(version: str | None, fixture: str, tmp_path):
    (tmp_path / "daemon.json").write_text((FIXTURES / "daemon-json" / fixture).read_text())
    if version is None:
        return run_gpulint("--isolated", "--format", "json", "daemon.json", cwd=tmp_path)
    (tmp_path / ".gpulint.toml").write_text(f'[fleet]\ndocker-version = "{version}"\n')
    return run_gpulint("--format", "json", "daemon.json", cwd=tmp_path)


def _severities(run) -> list[tuple[str, str]]:
    return [(f["code"], f["severity"]) for f in run.findings]


@pytest.mark.parametrize("version,expected", [
    (None, [("GL202", "info")]), ("20.10", [("GL202", "error")]), ("23.0", [("GL202", "error")]),
    ("24.0", []), ("27.3.1", []),
])
def test_gl202_the_shim_form_needs_docker_24(version, expected, tmp_path):
    run = _with_docker(version, "docker24/shim-runtime-daemon.json", tmp_path)
    assert _severities(run) == expected, run.err
    if expected:
        assert "Docker 20.10 to 23.x ignore `runtimeType` and `options`" in run.findings[0]["message"]


@pytest.mark.parametrize("version,expected", [
    (None, [("GL202", "error")]), ("20.10", []), ("24.0", [("GL202", "error")]),
])
def test_gl202_path_and_runtime_type_refused_from_24_ignored_before(version, expected, tmp_path):
    run = _with_docker(version, "docker24/both-daemon.json", tmp_path)
    assert _severities(run) == expected, run.err


def test_gl202_an_entry_without_path_runs_plain_runc_before_24(tmp_path):
    run = _with_docker("20.10", "bad/gl202-daemon.json", tmp_path)
    message = run.findings[0]["message"]
    assert "Docker 20.10 starts but does not know this shape and will run plain runc" in message
    default = _with_docker(None, "bad/gl202-daemon.json", tmp_path)
    assert "Docker 24.0 and later refuse to start" in default.findings[0]["message"]
    assert "20.10 to 23.x run plain runc for it" in default.findings[0]["message"]


@pytest.mark.parametrize("version,expected", [
    (None, [("GL201", "info")]), ("20.10", [("GL201", "error")]), ("23.0", []),
])
def test_gl201_a_shim_name_as_default_runtime_needs_docker_23(version, expected, tmp_path):
    (tmp_path / "x").mkdir()
    run = _with_docker(version, "docker24/shim-default-daemon.json", tmp_path)
    assert _severities(run) == [], "io.containerd.runc.v2 is built in on every release"
    (tmp_path / "daemon.json").write_text('{"default-runtime": "io.containerd.kata.v2"}\n')
    args = ("--format", "json", "daemon.json") if version else ("--isolated", "--format", "json", "daemon.json")
    run = run_gpulint(*args, cwd=tmp_path)
    assert _severities(run) == expected, run.err


@pytest.mark.parametrize("version,severity,words", [
    (None, "error", "Docker 23.x refuses to start (`the \"graph\" config file option is deprecated"),
    ("20.10", "warning", "Docker 20.10 still reads it"),
    ("23.0", "error", "dockerd 23.0 refuses to start (`the \"graph\" config file option is deprecated"),
    ("25.0", "error", "don't match any configuration option: graph"),
])
def test_gl206_graph_by_docker_release(version, severity, words, tmp_path):
    run = _with_docker(version, "docker24/graph-daemon.json", tmp_path)
    (found,) = run.findings
    assert (found["code"], found["severity"]) == ("GL206", severity)
    assert words in found["message"]


def test_gl206_names_the_inner_keys_of_an_unknown_object_as_dockerd_does(lint_files):
    run = lint_files({"daemon.json": '{"runtime": {"nvidia": {"path": "/usr/bin/nvidia-container-runtime"}}}\n'})
    assert "don't match any configuration option: nvidia\")" in run.findings[0]["message"]


def test_gl207_every_wrong_type_at_the_wrong_value():
    run = lint_fixture("daemon-json/bad/gl207-daemon.json")
    assert codes_at(run) == [("GL207", 2, 16), ("GL207", 3, 12), ("GL207", 4, 10), ("GL207", 5, 47),
                             ("GL207", 6, 22), ("GL207", 7, 23), ("GL207", 9, 76)]
    assert ("`json: cannot unmarshal string into Go struct field Config.exec-opts of type []string`"
            in run.findings[0]["message"])
    assert "Runtime.runtimes.runtimeArgs of type []string" in run.findings[-1]["message"]


def test_gl207_runtimes_as_a_list(lint_files):
    run = lint_files({"daemon.json": '{"runtimes": [{"nvidia": {"path": "/usr/bin/nvidia-container-runtime"}}]}\n'})
    assert codes_at(run) == [("GL207", 1, 14)]
    assert "map[string]types.Runtime" in run.findings[0]["message"]


def test_gl207_right_types_and_template_values_pass(lint_files):
    run = lint_files({"daemon.json.j2": (
        '{"debug": false, "mtu": 1500, "dns": null, "log-opts": {"max-file": "3"},\n'
        ' "live-restore": "{{ docker_live_restore }}", "exec-opts": ["native.cgroupdriver=systemd"]}\n')})
    assert codes_at(run) == []


def test_gl207_default_ulimits_decoded_as_dockerd_decodes_them(lint_files):
    """dockerd 20.10.24, 26.1.5 and 28.5.2 refuse both files: `json: cannot unmarshal array into
    Go struct field Config.default-ulimits of type map[string]*units.Ulimit` and `... string into
    Go struct field Config.default-ulimits of type units.Ulimit` (tests/oracle/data)."""
    as_list = lint_files({"daemon.json": '{"default-ulimits": [{"Name": "nofile", "Hard": 1, "Soft": 1}]}\n'})
    assert [(f["code"], f["line"]) for f in as_list.findings] == [("GL207", 1)]
    assert "cannot unmarshal array into Go struct field Config.default-ulimits" in as_list.findings[0]["message"]
    as_text = lint_files({"daemon.json": '{"default-ulimits": {"nofile": "65536:65536"}}\n'})
    assert "of type units.Ulimit" in as_text.findings[0]["message"]
    quoted = lint_files({"daemon.json": '{"default-ulimits": {"nofile": {"Name": "nofile", "hard": "1", "Soft": 1}}}\n'})
    assert [f["code"] for f in quoted.findings] == ["GL207"] and "Hard" in quoted.findings[0]["message"]
    good = lint_files({"daemon.json": '{"default-ulimits": {"nofile": {"Name": "nofile", "Hard": 1, "Soft": 1}}}\n'})
    assert good.findings == []


def test_gl204_path_with_arguments_spaces_or_plain_runc(lint_files):
    """dockerd 20.10.24, 26.1.5 and 28.5.2 exec `path` as one file name (the oracle finds no
    binary for `/usr/bin/nvidia-container-runtime --debug` or a trailing space), and an
    `nvidia` runtime whose path is `runc` runs plain runc."""
    for path in ("/usr/bin/nvidia-container-runtime --debug", "/usr/bin/nvidia-container-runtime ", "runc"):
        run = lint_files({"daemon.json": '{"runtimes": {"nvidia": {"path": "%s"}}}\n' % path})
        assert [f["code"] for f in run.findings] == ["GL204"], path
    fine = lint_files({"daemon.json": '{"runtimes": {"nvidia": {"path": "/usr/bin/nvidia-container-runtime",'
                                      ' "runtimeArgs": ["--debug"]}, "plain": {"path": "runc"}}}\n'})
    assert fine.findings == []


def test_gl201_the_v1_shim_as_default_runtime(tmp_path, lint_files):
    """dockerd 20.10.24 starts with `io.containerd.runtime.v1.linux` as default and runs runc;
    dockerd 28.5.2 on containerd 2.1.9 fails every container (`failed to resolve runtime path`)."""
    text = '{"default-runtime": "io.containerd.runtime.v1.linux"}\n'
    run = lint_files({"daemon.json": text})
    assert [(f["code"], f["severity"]) for f in run.findings] == [("GL201", "warning")]
    (tmp_path / "fleet.toml").write_text('[fleet]\ndocker-version = "20.10"\n')
    (tmp_path / "daemon.json").write_text(text)
    old = run_gpulint("--config", str(tmp_path / "fleet.toml"), "--format", "json", str(tmp_path / "daemon.json"))
    assert old.findings == []


def test_a_repeated_runtimes_object_is_merged_as_dockerd_merges_it(lint_files):
    """Go's decoder fills the map the first `runtimes` object made (dockerd 20.10.24, 26.1.5 and
    28.5.2 know both runtimes): the first object's entries are judged and defined."""
    run = lint_files({"daemon.json": '{"default-runtime": "nvidia",\n'
                                     ' "runtimes": {"nvidia": {"path": "/usr/bin/nvidia-container-runtime --debug"}},\n'
                                     ' "runtimes": {"nvidia-cdi": {"path": "/usr/bin/nvidia-container-runtime.cdi"}}}\n'})
    assert [(f["code"], f["line"]) for f in run.findings] == [("GL204", 2)]


def test_runtime_fields_matched_in_any_case(lint_files):
    """encoding/json matches struct fields in any case: dockerd 20.10.24, 26.1.5 and 28.5.2
    start with `"Path"` and run it."""
    run = lint_files({"daemon.json": '{"default-runtime": "nvidia", "runtimes": {"nvidia": '
                                     '{"Path": "/usr/bin/nvidia-container-runtime", "RuntimeArgs": []}}}\n'})
    assert run.findings == []


def _in_daemon_json(text: str, version: str | None, tmp_path):
    (tmp_path / "daemon.json").write_text(text)
    if version is None:
        return run_gpulint("--isolated", "--format", "json", "daemon.json", cwd=tmp_path)
    (tmp_path / ".gpulint.toml").write_text(f'[fleet]\ndocker-version = "{version}"\n')
    return run_gpulint("--format", "json", "daemon.json", cwd=tmp_path)


@pytest.mark.parametrize("version", [None, "20.10", "26.1", "28.5"])
def test_gl206_a_flag_name_as_key_is_let_through_and_never_read(version, tmp_path):
    # dockerd 20.10.24, 26.1.5 and 28.5.2 start with `add-runtime` in the file and register no
    # runtime from it (tests/oracle/data: the add-runtime-key mutants)
    text = ('{\n  "runtimes": {"nvidia": {"path": "/usr/bin/nvidia-container-runtime"}},\n'
            '  "add-runtime": "nvidia=/usr/bin/nvidia-container-runtime",\n  "label": ["gpu=a100"]\n}\n')
    run = _in_daemon_json(text, version, tmp_path)
    assert [(f["code"], f["severity"], f["line"], f["column"]) for f in run.findings] == [
        ("GL206", "warning", 3, 3), ("GL206", "warning", 4, 3)], run.err
    added, label = (f["message"] for f in run.findings)
    assert "never reads its value" in added and "write it as `runtimes`" in added
    assert "write it as `labels`, whose value is a list" in label
    # the file's own names are clean
    clean = _in_daemon_json('{"runtimes": {"nvidia": {"path": "/usr/bin/nvidia-container-runtime"}},'
                            ' "labels": ["gpu=a100"]}\n', version, tmp_path)
    assert clean.findings == []


@pytest.mark.parametrize("version,severity,words", [
    (None, "warning", "dockerd 23.0 to 28 lets the key through"),
    ("20.10", "error", "not a daemon.json option of dockerd 20.10"),
    ("24.0", "warning", "write it as `proxies`"),
])
def test_gl206_a_top_level_proxy_is_refused_by_20_10_and_lost_later(version, severity, words, tmp_path):
    # --http-proxy came with Docker 23.0 and is read from daemon.json only inside `proxies`
    run = _in_daemon_json('{"http-proxy": "http://proxy:3128"}\n', version, tmp_path)
    (found,) = run.findings
    assert (found["code"], found["severity"]) == ("GL206", severity) and words in found["message"]
    assert _in_daemon_json('{"proxies": {"http-proxy": "http://proxy:3128"}}\n', "24.0", tmp_path).findings == []


def test_gl206_an_option_of_other_releases_than_the_fleets(tmp_path):
    """dockerd 26.1.5 refuses `host-gateway-ips` (an option from 28): with `docker-version`
    stated, a key the decode model shows added later, or removed, is judged for that release."""
    (tmp_path / "daemon.json").write_text('{"host-gateway-ips": ["192.0.2.1"], "cdi-spec-dirs": ["/etc/cdi"], '
                                          '"proxies": {"http-proxy": "http://p:3128"}}\n')

    def gl206(version):
        (tmp_path / "fleet.toml").write_text(f'[fleet]\ndocker-version = "{version}"\n')
        run = run_gpulint("--config", str(tmp_path / "fleet.toml"), "--format", "json", str(tmp_path / "daemon.json"))
        return [(f["column"], f["severity"]) for f in run.findings if f["code"] == "GL206"]

    assert gl206("26.1") == [(2, "error")]
    assert gl206("24.0") == [(2, "error"), (37, "error")]
    assert gl206("28.5") == []
    assert run_gpulint("--isolated", "--format", "json", str(tmp_path / "daemon.json")).findings == []
