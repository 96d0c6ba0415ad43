"""The systemd units of dockerd and containerd and their drop-ins (kind `systemd`),
through the CLI."""

from __future__ import annotations

import pytest
from conftest import lint_fixture, run_gpulint, write_files


def test_a_drop_in_that_adds_a_command_without_clearing_the_units_is_gl209():
    run = lint_fixture("systemd/exec-start-added")
    assert run.at() == [("GL209", 3, 1)]
    finding = run.findings[0]
    assert "Service has more than one ExecStart= setting" in finding["message"]
    assert "the packaged unit's" in finding["message"]
    assert finding["fix"]["edits"][0]["content"] == "ExecStart=\n"


def test_a_drop_in_that_clears_the_command_first_is_clean():
    run = lint_fixture("systemd/exec-start-reset")
    assert run.findings == []


def test_a_second_command_after_the_linted_unit_points_at_it(lint_files):
    run = lint_files({
        "lib/systemd/system/containerd.service": "[Service]\nType=notify\nExecStart=/usr/bin/containerd\n",
        "etc/systemd/system/containerd.service.d/10-config.conf":
            "[Service]\nExecStart=/usr/bin/containerd --config /etc/containerd/gpu.toml\n",
    })
    assert run.at() == [("GL209", 2, 1)]
    assert run.findings[0]["related"][0]["path"].endswith("lib/systemd/system/containerd.service")


def test_a_oneshot_service_may_run_several_commands(lint_files):
    run = lint_files({"etc/systemd/system/docker.service.d/x.conf":
                      "[Service]\nType=oneshot\nExecStart=/usr/bin/dockerd --validate\n"})
    assert run.findings == []


def test_a_section_header_systemd_cannot_read_is_gl001_where_it_is():
    run = lint_fixture("systemd/unreadable/docker.service")
    assert run.at() == [("GL001", 3, 1)]
    assert "systemd cannot load this unit (\"Invalid section header '[Service'\": \"Bad message\")" \
        in run.findings[0]["message"]


def test_a_drop_in_is_read_up_to_a_section_header_systemd_cannot_read(lint_files):
    run = lint_files({"etc/systemd/system/docker.service.d/a.conf": "[Service]\nExecStart=\n[Service\nType=notify\n"})
    assert run.at() == [("GL211", 2, 1), ("GL001", 3, 1)]  # what comes before still clears the command
    assert "reads this drop-in no further" in run.findings[1]["message"]


def test_a_line_without_equals_is_gl001_and_the_rest_is_read():
    run = lint_fixture("systemd/unreadable/containerd.service")
    assert run.at() == [("GL001", 4, 1)]
    assert "(\"Missing '=', ignoring line.\")" in run.findings[0]["message"]


def test_a_setting_before_any_section_is_gl001(lint_files):
    run = lint_files({UNIT: "Description=Docker\n[Service]\nExecStart=/usr/bin/dockerd\n"})
    assert run.at() == [("GL001", 1, 1)]
    assert "Assignment outside of section. Ignoring." in run.findings[0]["message"]


def test_the_packaged_h_fd_beside_hosts_in_daemon_json_is_gl208_at_the_flag():
    run = lint_fixture("systemd/hosts-conflict")
    assert run.at() == [("GL208", 8, 28), ("GL208", 9, 66)]
    hosts, debug = run.findings
    assert (hosts["end_line"], hosts["end_column"]) == (8, 35)  # `-H fd://`
    assert ("the following directives are specified both as a flag and in the configuration file: "
            "debug: (from flag: true, from file: true), hosts: (from flag: [fd://], from file: "
            "[unix:///var/run/docker.sock tcp://127.0.0.1:2375])") in hosts["message"]
    assert "with file /etc/docker/daemon.json" in hosts["message"]
    assert "`-H fd://` is the usual one" in hosts["message"]
    assert hosts["related"][0]["path"].endswith("etc/docker/daemon.json")
    assert (hosts["related"][0]["line"], debug["related"][0]["line"]) == (2, 3)


UNIT = "lib/systemd/system/docker.service"


def _unit(command: str) -> str:
    return f"[Service]\nType=notify\nExecStart={command}\n"


def test_add_runtime_beside_runtimes_is_combined_not_refused(lint_files):
    run = lint_files({
        UNIT: _unit("/usr/bin/dockerd --add-runtime nvidia=/usr/bin/nvidia-container-runtime"),
        "etc/docker/daemon.json": '{"runtimes": {"nvidia": {"path": "/usr/bin/nvidia-container-runtime"}}}\n',
    })
    assert "GL208" not in run.codes()


ADD_RUNTIME_AND_RUNTIMES = {
    UNIT: _unit("/usr/bin/dockerd -H fd:// --add-runtime=nvidia=/usr/bin/nvidia-container-runtime"),
    "etc/docker/daemon.json": '{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}\n',
}


@pytest.mark.parametrize("release", ["18.06", "17.03", "1.13"])
def test_add_runtime_beside_runtimes_is_refused_before_18_09(tmp_path, release):
    """NVIDIA/nvidia-docker#787 (18.06) and #712 (Fedora's 1.13): `runtimes` joined the
    settings dockerd lets both places give in 18.09."""
    write_files(tmp_path, dict(ADD_RUNTIME_AND_RUNTIMES, **{".gpulint.toml": f'[fleet]\ndocker-version = "{release}"\n'}))
    run = run_gpulint("--format", "json", ".", cwd=tmp_path)
    assert run.at() == [("GL208", 3, 37)]
    assert "runtimes: (from flag: [nvidia], from file: map[nvidia:" in run.findings[0]["message"]


@pytest.mark.parametrize("release", ["18.09", "20.10"])
def test_add_runtime_beside_runtimes_is_combined_from_18_09(tmp_path, release):
    write_files(tmp_path, dict(ADD_RUNTIME_AND_RUNTIMES, **{".gpulint.toml": f'[fleet]\ndocker-version = "{release}"\n'}))
    assert run_gpulint("--format", "json", ".", cwd=tmp_path).findings == []


def test_red_hats_dockerd_current_is_dockerd_with_flags_of_its_own(tmp_path):
    unit = _unit("/usr/bin/dockerd-current --add-runtime oci=/usr/libexec/docker/docker-runc-current "
                 "--default-runtime=oci --signature-verification=false")
    write_files(tmp_path, {UNIT: unit, "etc/docker/daemon.json": '{"default-runtime": "nvidia"}\n'})
    run = run_gpulint("--isolated", "--format", "json", ".", cwd=tmp_path)
    # the fork's own flag is not called unknown; the shared setting is still a conflict
    assert [f["code"] for f in run.findings if f["code"] in ("GL208", "GL210")] == ["GL208"]


def test_flags_are_compared_by_the_daemon_json_key_they_fill(lint_files):
    run = lint_files({
        UNIT: _unit('/usr/bin/dockerd --exec-opt native.cgroupdriver=systemd "--default-runtime=nvidia" '
                    '--log-opt max-size=10m --log-opt max-file=3'),
        "etc/docker/daemon.json": ('{"exec-opts": ["native.cgroupdriver=cgroupfs"], "default-runtime": "nvidia",\n'
                                   ' "log-opts": {"max-size": "10m"},\n'
                                   ' "runtimes": {"nvidia": {"path": "/usr/bin/nvidia-container-runtime"}}}\n'),
    })
    assert [f["code"] for f in run.findings] == ["GL208"] * 4
    message = run.findings[1]["message"]
    assert all(f["message"].endswith(message[message.index("(\"unable"):]) for f in run.findings)
    assert ("default-runtime: (from flag: nvidia, from file: nvidia), exec-opts: (from flag: "
            "[native.cgroupdriver=systemd], from file: [native.cgroupdriver=cgroupfs]), log-opts: (from flag: "
            "map[max-file:3 max-size:10m], from file: map[max-size:10m])") in message
    quoted = run.findings[1]
    assert (quoted["line"], quoted["column"], quoted["end_column"]) == (3, 67, 92)


def test_the_daemon_json_joined_is_the_one_config_file_names(lint_files):
    files = {
        UNIT: _unit("/usr/bin/dockerd -H fd:// --config-file /etc/docker/gpu.json"),
        "etc/docker/daemon.json": '{"hosts": ["unix:///var/run/docker.sock"]}\n',
        "etc/docker/gpu.json": '{"debug": true, "runtimes": {}}\n',
    }
    assert "GL208" not in lint_files(files).codes()
    files["etc/docker/gpu.json"] = '{"hosts": ["tcp://0.0.0.0:2376"], "runtimes": {}}\n'
    run = lint_files(files)
    assert run.codes() == ["GL208"]
    assert "with file /etc/docker/gpu.json" in run.findings[0]["message"]


def test_a_unit_of_another_node_tree_is_not_joined(lint_files):
    run = lint_files({
        "node-a/lib/systemd/system/docker.service": _unit("/usr/bin/dockerd -H fd://"),
        "node-b/etc/docker/daemon.json": '{"hosts": ["unix:///var/run/docker.sock"]}\n',
    })
    # node-b's own unit is not linted: only the warning about the packaged one
    assert [(f["code"], f["severity"]) for f in run.findings] == [("GL208", "warning")]


def test_a_command_line_with_a_variable_may_hold_any_flag_but_those_written_still_count(lint_files):
    run = lint_files({
        UNIT: _unit("/usr/sbin/dockerd -H fd:// $DOCKER_OPTS"),
        "etc/docker/daemon.json": '{"hosts": ["unix:///var/run/docker.sock"]}\n',
    })
    assert run.codes() == ["GL208"]


NVIDIA_UNIT = _unit("/usr/bin/dockerd --add-runtime NVIDIA=/usr/bin/nvidia-container-runtime")


def test_a_runtime_the_unit_adds_defines_daemon_json_default_runtime(lint_files):
    run = lint_files({f"a/{UNIT}": NVIDIA_UNIT, "a/etc/docker/daemon.json": '{"default-runtime": "nvidia"}\n',
                      "b/etc/docker/daemon.json": '{"default-runtime": "nvidia"}\n'})
    assert [(f["code"], f["path"]) for f in run.findings] == [("GL201", "b/etc/docker/daemon.json")]


def test_the_units_runtimes_join_the_runtime_class_handlers(lint_files):
    runtime_class = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: nvidia\nhandler: nvidia\n"
    run = lint_files({UNIT: NVIDIA_UNIT, "runtimeclass.yaml": runtime_class})
    assert "GL702" not in run.codes()
    run = lint_files({UNIT: _unit("/usr/bin/dockerd --add-runtime kata=/usr/bin/kata-runtime"),
                      "runtimeclass.yaml": runtime_class})
    assert run.codes() == ["GL702"]
    assert "dockerd's flags searched (runtimes: `kata`)" in run.findings[0]["related"][0]["message"]


def test_compose_runtime_defined_by_the_unit_is_known(lint_files):
    compose = "services:\n  train:\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    runtime: nvidia\n"
    daemon_json = '{"debug": true, "runtimes": {}}\n'
    run = lint_files({"etc/docker/daemon.json": daemon_json, "compose.yaml": compose})
    assert run.codes() == ["GL908"]
    assert lint_files({UNIT: NVIDIA_UNIT}).findings == []  # the same folder, now with the unit


def test_containerd_started_with_another_config_than_the_linted_one_is_gl123():
    run = lint_fixture("systemd/containerd-config")
    assert run.at() == [("GL124", 3, 34)]
    finding = run.findings[0]
    assert (finding["end_line"], finding["end_column"]) == (3, 57)
    assert "so containerd reads /etc/containerd/k8s.toml, not the linted" in finding["message"]
    assert "(`nvidia`, default `nvidia`)" in finding["message"]
    assert finding["related"][0]["path"].endswith("etc/containerd/config.toml")


CONTAINERD_UNIT = "etc/systemd/system/containerd.service.d/10-config.conf"
MAIN = 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n'
GPU = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "runc"\n')


def _containerd_unit(flags: str) -> str:
    return f"[Service]\nExecStart=\nExecStart=/usr/bin/containerd {flags}\n"


def test_the_file_config_names_and_the_files_it_imports_are_what_containerd_reads(lint_files):
    run = lint_files({CONTAINERD_UNIT: _containerd_unit("--config=/etc/containerd/main.toml"),
                      "etc/containerd/main.toml": MAIN, "etc/containerd/conf.d/gpu.toml": GPU})
    assert "GL124" not in run.codes()


def test_without_config_containerd_reads_the_default_file(lint_files):
    run = lint_files({CONTAINERD_UNIT: _containerd_unit("--log-level debug"),
                      "etc/containerd/config.toml": GPU})
    assert "GL124" not in run.codes()


def test_a_unit_outside_a_node_tree_is_not_joined_by_its_folder(lint_files):
    run = lint_files({"containerd.service": "[Service]\nExecStart=/usr/bin/containerd -c /etc/containerd/a.toml\n",
                      "etc/containerd/config.toml": GPU})
    assert "GL124" not in run.codes()


def test_a_default_runtime_flag_no_runtime_defines_is_gl201_at_its_value(lint_files):
    run = lint_files({
        UNIT: _unit("/usr/bin/dockerd --default-runtime nvidia --add-runtime kata=/usr/bin/kata-runtime"),
        "etc/docker/daemon.json": '{"runtimes": {"crun": {"path": "/usr/bin/crun"}}}\n',
    })
    assert run.at() == [("GL201", 3, 46)]
    assert "specified default runtime 'nvidia' does not exist" in run.findings[0]["message"]
    assert "(runtimes: `crun`, `kata`)" in run.findings[0]["message"]


def test_a_default_runtime_flag_the_file_or_a_flag_defines_is_clean(lint_files):
    run = lint_files({
        UNIT: _unit("/usr/bin/dockerd --default-runtime=nvidia --add-runtime=nvidia=/usr/bin/nvidia-container-runtime"),
        "etc/docker/daemon.json": '{"runtimes": {"crun": {"path": "/usr/bin/crun"}}}\n',
        f"b/{UNIT}": _unit("/usr/bin/dockerd --default-runtime crun"),
        "b/etc/docker/daemon.json": '{"runtimes": {"crun": {"path": "/usr/bin/crun"}}}\n',
    })
    assert run.findings == []


def test_hosts_in_daemon_json_without_the_nodes_unit_warns_of_the_packaged_h_fd(lint_files):
    hosts = '{\n  "hosts": ["unix:///var/run/docker.sock", "tcp://0.0.0.0:2375"]\n}\n'
    run = lint_files({"etc/docker/daemon.json": hosts, "home/ci/.config/docker/daemon.json": hosts,
                      "rootless/daemon.json": '{"rootless": true, "hosts": []}\n'})
    assert [(f["code"], f["severity"], f["path"], f["line"], f["column"]) for f in run.findings] == [
        ("GL208", "warning", "etc/docker/daemon.json", 2, 3)]
    assert "hosts: (from flag: [fd://], from file: [unix:///var/run/docker.sock tcp://0.0.0.0:2375])" \
        in run.findings[0]["message"]


def test_hosts_in_daemon_json_beside_a_unit_without_h_is_clean(lint_files):
    run = lint_files({"etc/docker/daemon.json": '{"hosts": ["unix:///var/run/docker.sock"]}\n',
                      "etc/systemd/system/docker.service.d/hosts.conf":
                          "[Service]\nExecStart=\nExecStart=/usr/bin/dockerd --containerd=/run/containerd/containerd.sock\n"})
    assert run.findings == []


def test_the_nvidia_drop_in_of_the_old_install_guide_with_hosts_in_daemon_json_is_gl208(lint_files):
    # the drop-in NVIDIA/nvidia-container-runtime's README had users write (NVIDIA/nvidia-docker#761)
    run = lint_files({
        "etc/systemd/system/docker.service.d/override.conf":
            "[Service]\nExecStart=\nExecStart=/usr/bin/dockerd --host=fd:// "
            "--add-runtime=nvidia=/usr/bin/nvidia-container-runtime\n",
        "etc/docker/daemon.json": '{"hosts": ["tcp://0.0.0.0:2376"],\n "runtimes": {"nvidia": '
                                  '{"path": "/usr/bin/nvidia-container-runtime", "runtimeArgs": []}}}\n',
    })
    assert run.at() == [("GL208", 3, 28)]
    assert "`--host` sets `hosts`" in run.findings[0]["message"]


@pytest.mark.parametrize("flags,where,said", [
    ("--add-runtimes nvidia=/usr/bin/nvidia-container-runtime", (3, 28, 82),
     "unknown flag: --add-runtimes`); did you mean `--add-runtime`?"),
    ("-Dx", (3, 28, 30), "unknown shorthand flag: 'x' in -x"),
    ("-H fd:// --default-runtime", (3, 37, 53), "flag needs an argument: --default-runtime"),
    ("--add-runtime=nvidia", (3, 28, 47), 'invalid argument "nvidia" for "--add-runtime" flag: '
                                         "invalid runtime argument: nvidia"),
    ("--add-runtime runc=/usr/bin/runc", (3, 28, 59), "runtime name 'runc' is reserved"),
    ("--add-runtime nvidia=/a --add-runtime ' NVIDIA =/b'", (3, 52, 78), "runtime 'nvidia' was already defined"),
])
def test_a_command_line_dockerd_refuses_is_gl210_at_the_flag(lint_files, flags, where, said):
    run = lint_files({UNIT: _unit(f"/usr/bin/dockerd {flags}")})
    assert [(f["code"], f["line"], f["column"], f["end_column"]) for f in run.findings] == [("GL210", *where)]
    assert said in run.findings[0]["message"]


def test_flags_of_any_release_and_shorthands_sharing_a_word_are_accepted(lint_files):
    run = lint_files({UNIT: _unit("/usr/bin/dockerd -Dl debug --host=fd:// -Gdocker --cdi-spec-dir /etc/cdi "
                                  "--validate --add-runtime nvidia=/usr/bin/nvidia-container-runtime $OPTIONS")})
    assert run.findings == []


def test_the_fleets_docker_release_decides_which_flags_exist(tmp_path):
    write_files(tmp_path, {UNIT: _unit("/usr/bin/dockerd --cdi-spec-dir /etc/cdi"),
                           ".gpulint.toml": '[fleet]\ndocker-version = "20.10"\n'})
    run = run_gpulint("--format", "json", ".", cwd=tmp_path)
    assert run.codes() == ["GL210"]  # --cdi-spec-dir came with 25.0


def test_an_unknown_flag_named_like_a_daemon_json_key_is_only_refused_as_unknown(lint_files):
    run = lint_files({UNIT: _unit("/usr/bin/dockerd --hosts unix:///run/docker.sock"),
                      "etc/docker/daemon.json": '{"hosts": ["unix:///var/run/docker.sock"]}\n'})
    assert run.codes() == ["GL210"]
    assert "did you mean `--host`?" in run.findings[0]["message"]


def test_a_later_drop_in_that_only_clears_the_command_is_gl211(lint_files):
    run = lint_files({
        "etc/systemd/system/docker.service.d/10-nvidia.conf":
            "[Service]\nExecStart=\nExecStart=/usr/bin/dockerd --add-runtime nvidia=/usr/bin/nvidia-container-runtime\n",
        "etc/systemd/system/docker.service.d/50-proxy.conf": "[Service]\nExecStart=\n",
    })
    assert [(f["code"], f["path"], f["line"]) for f in run.findings] == [
        ("GL211", "etc/systemd/system/docker.service.d/50-proxy.conf", 2)]
    assert "Service has no ExecStart=, ExecStop=, or SuccessAction=. Refusing." in run.findings[0]["message"]


def test_a_drop_in_in_etc_hides_the_one_of_the_same_name_in_lib(lint_files):
    run = lint_files({
        "lib/systemd/system/docker.service.d/nvidia.conf": "[Service]\nExecStart=\n",
        "etc/systemd/system/docker.service.d/nvidia.conf":
            "[Service]\nExecStart=\nExecStart=/usr/bin/dockerd -H fd://\n",
    })
    assert run.findings == []


def test_drop_ins_are_known_by_their_folder_and_others_left_alone(lint_files):
    run = lint_files({
        "etc/systemd/system/docker.service.d/http-proxy.conf": '[Service]\nEnvironment="HTTPS_PROXY=http://p:3128"\n',
        "etc/systemd/system/nginx.service.d/override.conf": "[Service]\nExecStart=\n",
        "etc/systemd/system/containerd.service.d/override.conf": "[Service]\nExecStart=\n",
    })
    assert [(f["code"], f["path"]) for f in run.findings] == [
        ("GL211", "etc/systemd/system/containerd.service.d/override.conf")]
    assert run.json["summary"]["files_checked"] == 2


def test_variables_the_unit_sets_are_substituted_in_the_command(lint_files):
    run = lint_files({
        UNIT: '[Service]\nType=notify\nEnvironment="DOCKER_OPTS=-H \'fd:// \' --debug" ROOT=/data/docker\n'
              "ExecStart=/usr/bin/dockerd $DOCKER_OPTS --data-root=${ROOT} $UNSET\n",
        "etc/docker/daemon.json": '{"hosts": [], "data-root": "/var/lib/docker"}\n',
    })
    assert [(f["code"], f["line"], f["column"], f["end_column"]) for f in run.findings] == [
        ("GL208", 4, 28, 39), ("GL208", 4, 41, 59)]
    assert ("data-root: (from flag: /data/docker, from file: /var/lib/docker), hosts: (from flag: [fd:// ], "
            "from file: [])") in run.findings[0]["message"]


def test_an_environment_file_may_set_any_variable(lint_files):
    run = lint_files({
        UNIT: "[Service]\nType=notify\nEnvironmentFile=-/etc/default/docker\nExecStart=/usr/sbin/dockerd $DOCKER_OPTS\n",
        "etc/docker/daemon.json": '{"default-runtime": "nvidia", "runtimes": {}}\n',
    })
    assert run.codes() == ["GL201"]  # daemon.json's own; the unit's flags are not all known


@pytest.mark.parametrize("folder", ["default", "sysconfig"])
def test_a_linted_environment_file_sets_the_variables_it_holds(lint_files, folder):
    run = lint_files({
        UNIT: f"[Service]\nType=notify\nEnvironment=DOCKER_OPTS=--debug\nEnvironmentFile=-/etc/{folder}/docker\n"
              "ExecStart=/usr/sbin/dockerd $DOCKER_OPTS\n",
        f"etc/{folder}/docker": '# options for dockerd\nDOCKER_OPTS="--default-runtime=runc"\n',
        "etc/docker/daemon.json": '{"default-runtime": "nvidia", "runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}\n',
    })
    # the file's value wins over Environment=, and is refused beside daemon.json's key; the
    # finding is where the flag is written, in the environment file, and names the unit's variable
    assert [(f["path"], f["line"], f["column"], f["end_column"]) for f in run.findings] == [
        (f"etc/{folder}/docker", 2, 14, 35)]
    assert "default-runtime: (from flag: runc, from file: nvidia)" in run.findings[0]["message"]
    assert "passes it to dockerd as `$DOCKER_OPTS`" in run.findings[0]["message"]
    assert [(r["path"], r["line"], r["column"]) for r in run.findings[0]["related"]][1:] == [
        (UNIT, 5, 29)]
    assert run.json["summary"]["files_checked"] == 3


def test_a_drop_ins_environment_file_is_read_last_whatever_the_packaged_unit_sets(lint_files):
    dropin = "etc/systemd/system/docker.service.d/override.conf"
    files = {
        dropin: "[Service]\nEnvironmentFile=/etc/default/docker\nExecStart=\nExecStart=/usr/bin/dockerd $DOCKER_OPTS $OTHER\n",
        "etc/default/docker": "DOCKER_OPTS=--default-runtime=runc\n",
        "etc/docker/daemon.json": '{"default-runtime": "nvidia", "runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}\n',
    }
    assert [(f["path"], f["line"], f["column"]) for f in lint_files(files).findings] == [
        ("etc/default/docker", 1, 13)]
    # a line read otherwise than systemd may read it, or a file that is not linted: nothing is known
    files["etc/default/docker"] = "DOCKER_OPTS=--default-runtime=runc \\\n  --debug\n"
    assert lint_files(files).findings == []
    files[dropin] = files[dropin].replace("/etc/default/docker", "/etc/default/dockerd")
    files["etc/default/docker"] = "DOCKER_OPTS=--default-runtime=runc\n"
    assert lint_files(files).findings == []


def test_a_colon_before_the_program_leaves_variables_as_written(lint_files):
    run = lint_files({
        UNIT: '[Service]\nType=notify\nEnvironment="OPTS=-H fd://"\nExecStart=:/usr/bin/dockerd $OPTS\n',
        "etc/docker/daemon.json": '{"hosts": []}\n',
    })
    assert run.findings == []


def test_a_flag_no_transcribed_release_has_and_no_known_one_is_near_is_a_warning(tmp_path):
    write_files(tmp_path, {UNIT: _unit("/usr/bin/dockerd --gpu-telemetry-endpoint=unix:///run/t.sock")})
    run = run_gpulint("--isolated", "--format", "json", ".", cwd=tmp_path)
    assert [(f["code"], f["severity"]) for f in run.findings] == [("GL210", "warning")]
    assert "no dockerd release from 20.10 to 28 has this flag" in run.findings[0]["message"]
    (tmp_path / ".gpulint.toml").write_text('[fleet]\ndocker-version = "29.1"\n')
    assert run_gpulint("--format", "json", ".", cwd=tmp_path).findings == []


def test_a_flag_conflicts_with_the_old_key_its_named_option_replaced(lint_files):
    run = lint_files({UNIT: _unit("/usr/bin/dockerd --host-gateway-ip 10.0.0.2"),
                      "etc/docker/daemon.json": '{"host-gateway-ip": "10.0.0.1"}\n'})
    assert run.codes() == ["GL208"]
    assert "host-gateway-ip: (from flag: [10.0.0.2], from file: 10.0.0.1)" in run.findings[0]["message"]


def test_a_runtime_a_unit_adds_without_a_daemon_json_is_known_to_compose(lint_files):
    compose = "services:\n  train:\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    runtime: nvidia-legacy\n"
    run = lint_files({"a/etc/docker/daemon.json": '{"runtimes": {}}\n', "compose.yaml": compose})
    assert run.codes() == ["GL908"]
    run = lint_files({f"b/{UNIT}": _unit("/usr/bin/dockerd --add-runtime nvidia-legacy=/usr/bin/nvidia-container-runtime")})
    assert "GL908" not in run.codes()


def test_red_hats_storage_and_network_environment_files_give_dockerd_flags(lint_files):
    # the docker package of RHEL/CentOS 7 passes $DOCKER_STORAGE_OPTIONS (written by
    # docker-storage-setup) and $DOCKER_NETWORK_OPTIONS to dockerd-current (moby/moby#30726)
    unit = ("[Service]\nType=notify\nEnvironmentFile=-/run/containers/registries.conf\n"
            "EnvironmentFile=-/etc/sysconfig/docker\nEnvironmentFile=-/etc/sysconfig/docker-storage\n"
            "EnvironmentFile=-/etc/sysconfig/docker-network\n"
            "ExecStart=/usr/bin/dockerd-current $OPTIONS $DOCKER_STORAGE_OPTIONS $DOCKER_NETWORK_OPTIONS $ADD_REGISTRY\n")
    files = {
        "usr/lib/systemd/system/docker.service": unit,
        "etc/sysconfig/docker": "# /etc/sysconfig/docker\nOPTIONS='--selinux-enabled --log-driver=journald'\n",
        "etc/sysconfig/docker-storage": 'DOCKER_STORAGE_OPTIONS="--storage-driver overlay2 "\n',
        "etc/sysconfig/docker-network": "DOCKER_NETWORK_OPTIONS=--mtu=1450\n",
        "etc/docker/daemon.json": '{"storage-driver": "overlay2", "mtu": 1500, "log-driver": "json-file"}\n',
    }
    run = lint_files(files)
    assert [(f["code"], f["path"], f["line"], f["column"], f["end_column"]) for f in run.findings] == [
        ("GL208", "etc/sysconfig/docker", 2, 28, 48),
        ("GL208", "etc/sysconfig/docker-network", 1, 24, 33),
        ("GL208", "etc/sysconfig/docker-storage", 1, 25, 49),
    ]
    assert all("log-driver: (from flag: journald, from file: json-file), mtu: (from flag: 1450, from file: "
               "1500), storage-driver: (from flag: overlay2, from file: overlay2)" in f["message"]
               for f in run.findings)
    # without the EnvironmentFile= line the unit does not read the file, and nothing is known of it
    files["usr/lib/systemd/system/docker.service"] = unit.replace(
        "EnvironmentFile=-/etc/sysconfig/docker-storage\n", "")
    assert "etc/sysconfig/docker-storage" not in {f["path"] for f in lint_files(files).findings}
