"""The NVIDIA Container Toolkit's config.toml and CDI specs as static file kinds."""

from __future__ import annotations

from conftest import FIXTURES, run_gpulint, write_files


def lint(path, *args):
    return run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", *args, str(path))


def test_toolkit_config_findings_point_at_the_value_or_key():
    result = lint(FIXTURES / "toolkit" / "config.toml.debian")  # a per-distribution name
    assert result.at() == [("GL810", 7, 14), ("GL810", 8, 12), ("GL810", 13, 8), ("GL809", 14, 1),
                           ("GL809", 15, 1)]
    messages = [f["message"] for f in result.findings]
    assert "`accept-nvidia-visible-devices-as-volume-mounts` belongs at the top level" in messages[3]
    assert messages[4].endswith("did you mean `debug`?")


def test_installer_defaults_are_clean():
    result = lint(FIXTURES / "toolkit" / "config.toml")
    assert result.json["summary"]["files_checked"] == 1
    assert result.findings == []


def test_ldconfig_from_the_container_is_allowed_by_its_feature(tmp_path):
    write_files(tmp_path, {"config.toml": '[nvidia-container-cli]\nldconfig = "/sbin/ldconfig"\n\n'
                                          '[features]\nallow-ldconfig-from-container = true\n'})
    assert lint(tmp_path).findings == []
    write_files(tmp_path, {"config.toml": '[nvidia-container-cli]\nldconfig = "/sbin/ldconfig"\n'})
    assert lint(tmp_path).at() == [("GL810", 2, 12)]


def test_other_toml_is_not_a_toolkit_config(tmp_path):
    write_files(tmp_path, {"config.toml.bak": '[nvidia]\nx = 1\n', "app.toml": '[app]\nport = 1\n'})
    assert lint(tmp_path).json["summary"]["files_checked"] == 0


def test_cdi_spec_problems():
    result = lint(FIXTURES / "cdi" / "broken.yaml")
    assert result.at() == [("GL811", 1, 13), ("GL811", 2, 7), ("GL811", 8, 11), ("GL811", 12, 11),
                           ("GL811", 13, 5), ("GL811", 17, 3)]


def test_valid_cdi_json_is_clean():
    result = lint(FIXTURES / "cdi" / "nvidia.json")
    assert result.json["summary"]["files_checked"] == 1
    assert result.findings == []


def test_cdi_spec_without_version_or_devices(tmp_path):
    write_files(tmp_path, {"spec.yaml": "cdiVersion: \"0.5.0\"\nkind: nvidia.com/gpu\ndevices: []\n"})
    assert lint(tmp_path).at() == [("GL811", 3, 1)]


def test_cdi_device_without_edits_of_its_own(tmp_path):
    # the top-level containerEdits do not make a device's own edits non-empty
    write_files(tmp_path, {"spec.yaml": "cdiVersion: 0.6.0\nkind: example.com/test\n"
                                        "containerEdits:\n  env:\n  - A=1\n"
                                        "devices:\n  - name: empty\n  - name: blank\n    containerEdits:\n"
                                        "      env: []\n  - name: full\n    containerEdits:\n"
                                        "      env:\n      - B=2\n"})
    assert lint(tmp_path).at() == [("GL811", 7, 11), ("GL811", 8, 11)]


def test_kind_option_reads_a_spec_under_any_name(tmp_path):
    write_files(tmp_path, {"spec": "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\n"})
    result = lint(tmp_path / "spec", "--kind", "cdi")
    assert result.at() == [("GL811", 1, 1)]


def test_keys_in_capitals_are_read_by_the_toolkit(tmp_path):
    # go-toml v1 tries the tag name, in lower case and in capitals
    write_files(tmp_path, {"config.toml": '[nvidia-container-cli]\nNO-CGROUPS = true\nLdconfig = "@/sbin/ldconfig"\n'})
    result = lint(tmp_path)
    assert [(f["code"], f["line"]) for f in result.findings] == [("GL809", 3)]


def test_templated_values_are_left_to_the_template(tmp_path):
    write_files(tmp_path, {"config.toml.j2": (
        '[nvidia-container-cli]\nload-kmods = {{ load_kmods }}\nldconfig = "{{ ldconfig_path }}"\n\n'
        '[nvidia-container-runtime]\nmode = "{{ toolkit_mode }}"\nno-cgroups = true\n')})
    result = lint(tmp_path)
    assert [(f["code"], f["line"]) for f in result.findings] == [("GL809", 7)]


def test_cdi_features_newer_than_the_spec_version():
    # container-device-interface specs-go/version.go: ValidateVersion rejects a spec whose
    # features need a later cdiVersion than it declares, naming the highest one
    result = lint(FIXTURES / "cdi" / "versions" / "too-old.yaml")
    assert result.at() == [("GL811", 3, 1), ("GL811", 6, 11), ("GL811", 10, 11), ("GL811", 15, 7),
                           ("GL811", 17, 3), ("GL811", 18, 3)]
    first, *_, last = (f["message"] for f in result.findings)
    assert first.startswith("`annotations` needs cdiVersion 0.6.0 or later, and this spec says 0.3.0")
    assert "(`the spec version must be at least v1.1.0`)" in last
    assert lint(FIXTURES / "cdi" / "versions" / "new-enough.yaml").findings == []


def test_cdi_intel_rdt_that_is_no_mapping(tmp_path):
    # `intelRdt: null` has no `schemata`: judged like an absent one, under every cdiVersion
    spec = ("cdiVersion: 0.3.0\nkind: nvidia.com/gpu\ndevices:\n  - name: a\n    containerEdits:\n"
            "      env: [A=1]\n      intelRdt: null\n")
    for version, expected in (("0.3.0", [("GL811", 7, 7)]), ("1.1.0", [])):
        write_files(tmp_path, {"spec.yaml": spec.replace("0.3.0", version)})
        result = lint(tmp_path / "spec.yaml", "--kind", "cdi")
        assert "internal error" not in result.err
        assert result.at() == expected


def test_cdi_class_with_a_dot_needs_0_6(tmp_path):
    spec = "cdiVersion: 0.5.0\nkind: example.com/gpu.partition\ndevices:\n  - name: a\n    containerEdits: {env: [A=1]}\n"
    write_files(tmp_path, {"spec.yaml": spec})
    assert lint(tmp_path / "spec.yaml", "--kind", "cdi").at() == [("GL811", 2, 7)]
    write_files(tmp_path, {"spec.yaml": spec.replace("0.5.0", "0.6.0")})
    assert lint(tmp_path / "spec.yaml", "--kind", "cdi").findings == []


_NO_CGROUPS = "[nvidia-container-cli]\nno-cgroups = true\n"
_DOCKER = '{\n  "runtimes": {"nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": []}}\n}\n'


def test_no_cgroups_under_a_root_daemon_is_a_warning(tmp_path):
    # NVIDIA/nvidia-container-toolkit#381: `Failed to initialize NVML: Unknown Error`, fixed by
    # no-cgroups = false on a rootful Docker
    write_files(tmp_path, {"etc/nvidia-container-runtime/config.toml": _NO_CGROUPS,
                           "etc/docker/daemon.json": _DOCKER})
    (found,) = lint(tmp_path).findings
    assert (found["code"], found["severity"], found["line"], found["column"]) == ("GL812", "warning", 2, 14)
    assert "Failed to initialize NVML: Unknown Error" in found["message"]
    assert [(r["path"], r["line"]) for r in found["related"]] == [("etc/docker/daemon.json", 2, )] \
        or found["related"][0]["path"].endswith("etc/docker/daemon.json")


def test_no_cgroups_for_a_rootless_daemon_or_alone_is_information(tmp_path):
    write_files(tmp_path, {"etc/nvidia-container-runtime/config.toml": _NO_CGROUPS,
                           "home/ada/.config/docker/daemon.json": _DOCKER})
    assert [(f["code"], f["severity"]) for f in lint(tmp_path).findings] == [("GL812", "info")]
    write_files(tmp_path, {"home/ada/.config/docker/daemon.json": '{"rootless": true}\n'})
    assert [(f["code"], f["severity"]) for f in lint(tmp_path).findings] == [("GL812", "info")]


def test_no_cgroups_is_not_used_in_cdi_mode(tmp_path):
    write_files(tmp_path, {"config.toml": _NO_CGROUPS + '\n[nvidia-container-runtime]\nmode = "cdi"\n',
                           "daemon.json": _DOCKER})
    assert lint(tmp_path).findings == []
    write_files(tmp_path, {"config.toml": "[nvidia-container-cli]\nno-cgroups = false\n"})
    assert lint(tmp_path).findings == []


def test_no_cgroups_in_a_config_meant_for_rootless_use_is_right(tmp_path):
    write_files(tmp_path, {"roles/docker-rootless/files/nvidia-container-runtime/config.toml": _NO_CGROUPS,
                           "home/ada/.config/nvidia-container-runtime/config.toml": _NO_CGROUPS,
                           "etc/docker/daemon.json": _DOCKER})
    run = run_gpulint("--isolated", "--format", "json", ".", cwd=tmp_path)
    assert run.findings == []


def test_no_cgroups_is_judged_with_the_daemon_of_its_own_node(tmp_path):
    # a root daemon of another node (another file tree) says nothing about this one
    write_files(tmp_path, {"node-a/etc/nvidia-container-runtime/config.toml": _NO_CGROUPS,
                           "node-b/etc/docker/daemon.json": _DOCKER})
    assert [(f["code"], f["severity"]) for f in lint(tmp_path).findings] == [("GL812", "info")]
    write_files(tmp_path, {"node-a/etc/containerd/config.toml": (
        'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "nvidia"\n'
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
        '  runtime_type = "io.containerd.runc.v2"\n'
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
        '  BinaryName = "/usr/bin/nvidia-container-runtime"\n')})
    assert [(f["code"], f["severity"]) for f in lint(tmp_path).findings] == [("GL812", "warning")]


_SWARM_DAEMON = ('{\n  "default-runtime": "nvidia",\n  "runtimes": {"nvidia": {"path": "nvidia-container-runtime"}},\n'
                 '  "node-generic-resources": ["NVIDIA-GPU=GPU-7af7a99b", "hamster=Robert"]\n}\n')


_CLI = '\n[nvidia-container-cli]\nldconfig = "@/sbin/ldconfig.real"\n'


def test_swarm_resource_that_names_another_variable(tmp_path):
    """Swarm sets DOCKER_RESOURCE_ + the kind in capitals (NVIDIA/nvidia-container-toolkit#57)."""
    write_files(tmp_path, {"etc/docker/daemon.json": _SWARM_DAEMON,
                           "etc/nvidia-container-runtime/config.toml": 'swarm-resource = "DOCKER_RESOURCE_GPU"\n' + _CLI})
    [finding] = lint(tmp_path).findings
    assert (finding["code"], finding["line"], finding["column"]) == ("GL813", 1, 18)
    assert "`DOCKER_RESOURCE_NVIDIA-GPU`" in finding["message"]
    assert [(r["path"].endswith("etc/docker/daemon.json"), r["line"]) for r in finding["related"]] == [(True, 4)]


def test_swarm_resource_unset_on_a_node_that_advertises_gpus(tmp_path):
    write_files(tmp_path, {"etc/docker/daemon.json": _SWARM_DAEMON.replace("NVIDIA-GPU", "gpu"),
                           "etc/nvidia-container-runtime/config.toml": '#swarm-resource = "DOCKER_RESOURCE_GPU"\n' + _CLI})
    assert lint(tmp_path).at() == [("GL813", 1, 1)]


def test_swarm_resource_that_the_node_sets(tmp_path):
    # one name of the list matches; a resource that is no GPU is not the runtime's
    write_files(tmp_path, {"etc/docker/daemon.json": _SWARM_DAEMON,
                           "etc/nvidia-container-runtime/config.toml":
                               'swarm-resource = "DOCKER_RESOURCE_GPU, DOCKER_RESOURCE_NVIDIA-GPU"\n' + _CLI})
    assert lint(tmp_path).findings == []
    # a daemon.json of another node tree is not joined
    write_files(tmp_path, {"other/etc/nvidia-container-runtime/config.toml": 'swarm-resource = "X"\n' + _CLI})
    assert lint(tmp_path).findings == []
