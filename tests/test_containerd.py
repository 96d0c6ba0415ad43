"""containerd config.toml rules (GL1xx), through the CLI's JSON output."""

from __future__ import annotations

import shutil

import pytest
from conftest import FIXTURES, lint_fixture, run_gpulint


def gl1(run) -> list[tuple[str, int, int]]:
    return [a for a in run.at() if a[0].startswith("GL1")]


def severities(run, code: str) -> list[str]:
    return [f["severity"] for f in run.findings if f["code"] == code]


@pytest.mark.parametrize("path", [
    "containerd/good/nvidia-ctk-v2.toml",
    "containerd/good/v3.toml",
    "containerd/good/dropin",
    "containerd/good/v1-k3s.toml.tmpl",
])
def test_correct_configs_are_clean(path):
    run = lint_fixture(path)
    assert run.findings == []
    assert run.rc == 0


def test_seed_snippet_without_version_is_reported():
    run = lint_fixture("containerd/bad/seed")
    assert gl1(run) == [("GL103", 1, 1)]
    # containerd 1.x ignores the table, so the nvidia runtime does not exist there
    assert severities(run, "GL103") == ["error"]
    assert "containerd 1.x ignores the fully qualified" in run.findings[0]["message"]
    assert "containerd 2.0 to 2.2 drop the CRI settings of a version 1 file" in run.findings[0]["message"]


def test_gl101_case_mismatch_names_the_runtime_meant():
    run = lint_fixture("containerd/bad/gl101.toml")
    assert gl1(run) == [("GL101", 3, 26)]
    assert "did you mean `nvidia`?" in run.findings[0]["message"]


def test_gl101_drop_in_replaces_the_cri_table_of_the_main_file():
    run = lint_fixture("containerd/bad/gl101-dropin")
    assert gl1(run) == [("GL101", 4, 26)]
    finding = run.findings[0]
    assert finding["path"].endswith("conf.d/10-mirrors.toml")
    assert "replaces the whole CRI plugin table" in finding["message"]
    assert finding["related"][0]["path"].endswith("etc/containerd/config.toml")


def test_gl101_runtime_in_an_imported_drop_in_counts(lint_files):
    run = lint_files({
        "etc/containerd/config.toml": 'version = 2\nimports = ["conf.d/*.toml"]\n',
        "etc/containerd/conf.d/99-nvidia.toml": (
            'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n'
            '  default_runtime_name = "nvidia"\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
            '  runtime_type = "io.containerd.runc.v2"\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
            '  BinaryName = "/usr/bin/nvidia-container-runtime"\n'),
    })
    assert gl1(run) == []


def test_gl101_runc_is_built_in(lint_files):
    run = lint_files({"config.toml": 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n'
                                     '  default_runtime_name = "runc"\n'})
    assert gl1(run) == []


def test_gl102_runtimes_under_the_2x_path_in_a_version_3_file():
    run = lint_fixture("containerd/bad/gl102.toml")
    assert gl1(run) == [("GL102", 7, 3), ("GL102", 9, 1)]
    assert "`io.containerd.cri.v1.runtime`" in run.findings[0]["message"]


def test_gl102_short_plugin_name_in_a_version_2_file():
    run = lint_fixture("containerd/bad/gl102-short.toml")
    assert gl1(run) == [("GL102", 3, 3), ("GL102", 4, 3)]
    assert "invalid plugin key URI" in run.findings[0]["message"]


def test_gl103_mixed_prefixes_is_an_error_without_fix():
    run = lint_fixture("containerd/bad/gl103-mixed.toml")
    assert gl1(run) == [("GL103", 3, 1)]
    assert severities(run, "GL103") == ["error"]
    assert run.findings[0].get("fix") is None


def test_gl104_runtime_type_missing_or_empty():
    run = lint_fixture("containerd/bad/gl104.toml")
    assert gl1(run) == [("GL104", 2, 1), ("GL104", 7, 18)]


def test_gl105_severity_follows_the_config_version(lint_files):
    run = lint_fixture("containerd/bad/gl105.toml")
    assert gl1(run) == [("GL105", 3, 18), ("GL105", 7, 18)]
    assert severities(run, "GL105") == ["warning", "warning"]
    v3 = lint_files({"config.toml": 'version = 3\n'
                                    '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]\n'
                                    '  runtime_type = "io.containerd.runc.v1"\n'})
    assert gl1(v3) == [("GL105", 3, 18)]
    assert severities(v3, "GL105") == ["error"]


def test_gl106_wrong_binaries():
    run = lint_fixture("containerd/bad/gl106.toml")
    assert gl1(run) == [("GL106", 5, 18), ("GL106", 9, 18), ("GL106", 10, 1), ("GL106", 15, 18)]
    messages = [f["message"] for f in run.findings]
    assert "not an OCI runtime" in messages[0]
    assert "nvidia-container-runtime.cdi" in messages[1]
    assert "no options.BinaryName" in messages[2]
    assert "relative path" in messages[3]


def test_gl106_bare_name_is_info(lint_files):
    run = lint_files({"config.toml": 'version = 2\n'
                                     '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
                                     '  runtime_type = "io.containerd.runc.v2"\n'
                                     '  options = { BinaryName = "nvidia-container-runtime" }\n'
                                     '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
                                     '  runtime_type = "io.containerd.runc.v2"\n'})
    assert gl1(run) == [("GL106", 4, 28)]
    assert severities(run, "GL106") == ["info"]


def test_gl107_systemd_cgroup_differs_from_runc():
    run = lint_fixture("containerd/bad/gl107.toml")
    assert gl1(run) == [("GL107", 8, 3), ("GL107", 14, 21)]
    assert run.findings[0]["related"][0]["line"] == 5


def test_gl107_runc_from_the_main_file_counts_for_a_drop_in(lint_files):
    run = lint_files({
        "etc/containerd/config.toml": (
            'version = 2\nimports = ["conf.d/*.toml"]\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]\n'
            '  SystemdCgroup = true\n'),
        "etc/containerd/conf.d/99-nvidia.toml": (
            'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
            '  runtime_type = "io.containerd.runc.v2"\n'
            '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
            '    BinaryName = "/usr/bin/nvidia-container-runtime"\n'),
    })
    # containerd 2.1+ merges the two files; 1.x lets the drop-in replace the CRI table, runc
    # included; and a runc written with its options alone has no shim (GL104)
    assert sorted(gl1(run)) == [("GL101", 2, 1), ("GL104", 3, 1), ("GL107", 4, 3)]


NVIDIA_DEFAULT_V3 = (
    'version = 3\n[plugins."io.containerd.cri.v1.runtime".containerd]\n'
    '  default_runtime_name = "nvidia"\n'
    '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia]\n'
    '  runtime_type = "io.containerd.runc.v2"\n'
    '  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia.options]\n'
    '    BinaryName = "/usr/bin/nvidia-container-runtime"\n'
    '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]\n'
    '  runtime_type = "io.containerd.runc.v2"\n'
    '  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]\n'
    '    SystemdCgroup = true\n')


def test_gl107_default_nvidia_runtime_is_aligned_with_runc_never_the_reverse(lint_files):
    run = lint_files({"config.toml": NVIDIA_DEFAULT_V3})
    assert gl1(run) == [("GL107", 6, 3)]
    finding = run.findings[0]
    assert finding["severity"] == "error"
    assert "`nvidia` is the default runtime" in finding["message"]
    assert finding["fix"]["description"] == "set SystemdCgroup = true on `nvidia`"
    assert finding["related"][0]["line"] == 11


def test_gl107_runc_unset_leaves_the_right_driver_to_kubelet(lint_files):
    run = lint_files({"config.toml": NVIDIA_DEFAULT_V3.replace(
        "    BinaryName = \"/usr/bin/nvidia-container-runtime\"\n",
        "    BinaryName = \"/usr/bin/nvidia-container-runtime\"\n    SystemdCgroup = true\n").replace(
        "    SystemdCgroup = true\n", "    BinaryName = \"\"\n", 2).replace(
        "BinaryName = \"\"\n", "SystemdCgroup = true\n", 1)})
    assert gl1(run) == [("GL107", 8, 21)]
    finding = run.findings[0]
    assert finding["severity"] == "warning" and finding.get("fix") is None
    assert "`runc` leaves it unset" in finding["message"]


KUBEADM = ("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n---\n"
           "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n")


def test_gl107_every_runtime_is_judged_against_kubelets_cgroup_driver(lint_files, tmp_path):
    # kubeadm writes cgroupDriver: systemd when the KubeletConfiguration leaves it out
    run = lint_files({"a/config.toml": NVIDIA_DEFAULT_V3, "a/kubeadm.yaml": KUBEADM})
    assert gl1(run) == [("GL107", 6, 3)]
    finding = run.findings[0]
    assert "kubelet's cgroupDriver is systemd" in finding["message"]
    assert finding["related"][0]["path"].endswith("kubeadm.yaml")
    shutil.rmtree(tmp_path / "a")
    cgroupfs = lint_files({"config.toml": NVIDIA_DEFAULT_V3,
                           "kubelet.yaml": KUBEADM.split("---\n")[1] + "cgroupDriver: cgroupfs\n"})
    assert gl1(cgroupfs) == [("GL107", 11, 21)]
    assert cgroupfs.findings[0]["fix"]["description"] == "set SystemdCgroup = false on `runc`"


def test_gl107_kubelet_driver_unknown_falls_back_to_runc(lint_files):
    # a standalone KubeletConfiguration without cgroupDriver may still be fed to kubeadm
    run = lint_files({"config.toml": NVIDIA_DEFAULT_V3, "kubelet.yaml": KUBEADM.split("---\n")[1]})
    assert gl1(run) == [("GL107", 6, 3)]
    assert "kubelet" not in run.findings[0]["message"].split(":")[0]


def test_gl107_absolute_import_does_not_reach_another_nodes_drop_in(lint_files):
    dropin = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
              '  runtime_type = "io.containerd.runc.v2"\n'
              '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
              '    BinaryName = "/usr/bin/nvidia-container-runtime"\n')
    run = lint_files({
        "cpu/etc/containerd/config.toml": (
            'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]\n'
            '  SystemdCgroup = true\n'),
        "cpu/etc/containerd/conf.d/10-mirrors.toml": 'version = 2\n',
        "gpu/etc/containerd/config.toml": 'version = 2\nimports = ["conf.d/*.toml"]\n',
        "gpu/etc/containerd/conf.d/99-nvidia.toml": dropin,
    })
    assert "GL107" not in run.codes()


def test_absolute_import_resolves_against_the_nodes_own_root(lint_files):
    run = lint_files({
        "nodes/gpu/etc/containerd/config.toml": (
            'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "nvidia"\n'),
        "nodes/gpu/etc/containerd/conf.d/99-nvidia.toml": (
            'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n'
            '  default_runtime_name = "nvidia"\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
            '  runtime_type = "io.containerd.runc.v2"\n'
            '  options = { BinaryName = "/usr/bin/nvidia-container-runtime" }\n'),
        "nodes/old/etc/containerd/config.toml": 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n',
        "nodes/old/etc/containerd/config.d/50-debug.toml": 'version = 2\n[debug]\n  level = "debug"\n',
    })
    assert [(f["code"], f["path"].split("nodes/")[1]) for f in run.findings] == [
        ("GL113", "old/etc/containerd/config.d/50-debug.toml")]


def test_gl108_misplaced_and_misspelled_keys():
    run = lint_fixture("containerd/bad/gl108.toml")
    assert gl1(run) == [("GL108", 3, 3), ("GL108", 6, 3), ("GL108", 7, 3), ("GL108", 9, 5), ("GL108", 10, 5)]
    assert "did you mean `BinaryName`?" in run.findings[3]["message"]


def test_gl109_legacy_fields_and_tables():
    run = lint_fixture("containerd/bad/gl109.toml")
    assert gl1(run) == [("GL109", 2, 1), ("GL109", 7, 3)]
    assert severities(run, "GL109") == ["error", "error"]


def test_gl109_empty_legacy_values_are_inert(lint_files):
    run = lint_files({"config.toml": (
        'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.default_runtime]\n'
        '  runtime_type = ""\n  runtime_engine = ""\n'
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
        '  runtime_type = "io.containerd.runc.v2"\n  runtime_root = ""\n')})
    assert gl1(run) == []


def test_gl110_cri_disabled():
    run = lint_fixture("containerd/bad/gl110.toml")
    assert gl1(run) == [("GL110", 2, 58)]


def test_gl111_cdi_outside_the_cri_table():
    run = lint_fixture("containerd/bad/gl111.toml")
    assert gl1(run) == [("GL111", 1, 1), ("GL111", 3, 3), ("GL111", 4, 3)]
    assert "`plugins.cri`" in run.findings[0]["message"]


def test_gl112_all_devices_allowed_needs_its_prerequisite():
    run = lint_fixture("containerd/bad/gl112.toml")
    assert gl1(run) == [("GL112", 5, 3)]


def test_gl113_config_d_slip():
    run = lint_fixture("containerd/bad/gl113")
    assert gl1(run) == [("GL113", 1, 1), ("GL113", 1, 1)]
    by_file = {f["path"].rsplit("/", 1)[1]: f["severity"] for f in run.findings}
    assert by_file == {"50-debug.toml": "warning", "99-nvidia.toml": "error"}


def test_gl113_not_judged_without_a_main_config_beside_it(lint_files):
    run = lint_files({"conf.d/99-nvidia.toml": (
        'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
        '  runtime_type = "io.containerd.runc.v2"\n'
        '  options = { BinaryName = "/usr/bin/nvidia-container-runtime" }\n')})
    assert gl1(run) == []


def test_gl114_generated_header():
    run = lint_fixture("containerd/bad/gl114")
    assert gl1(run) == [("GL114", 1, 1)]
    assert "rke2" in run.findings[0]["message"]


def test_gl114_the_place_k3s_and_rke2_write_their_config(lint_files):
    """k3s and RKE2 rewrite /var/lib/rancher/{k3s,rke2}/agent/etc/containerd/config.toml at every
    start: a copy there without the header is theirs all the same."""
    body = 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "runc"\n'
    run = lint_files({"node/var/lib/rancher/rke2/agent/etc/containerd/config.toml": body,
                      "node/etc/containerd/config.toml": body})
    found = [(f["code"], f["path"], f["line"], f["column"]) for f in run.findings]
    assert found == [("GL114", "node/var/lib/rancher/rke2/agent/etc/containerd/config.toml", 1, 1)]
    assert "where rke2 writes the containerd config" in run.findings[0]["message"]


def test_odd_shapes_do_not_crash(lint_files):
    run = lint_files({"config.toml": (
        'version = "x"\nimports = [1, "missing/*.toml"]\ndisabled_plugins = "cri"\n'
        '[plugins."io.containerd.grpc.v1.cri".containerd]\n  runtimes = "nvidia"\n'
        '  default_runtime_name = 3\n'
        '[plugins.cri.containerd.runtimes]\n  nvidia = "oops"\n')})
    assert run.rc in (0, 1), run.err
    assert "internal error" not in run.err


# --- fixes --------------------------------------------------------------------------------

FIXES = [
    ("seed/config.toml", (), 'version = 2\n\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
     '  runtime_type = "io.containerd.runc.v2"\n'
     '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
     '    BinaryName = "/usr/bin/nvidia-container-runtime"\n'),
    ("gl102.toml", (), 'version = 3\n\n[plugins."io.containerd.grpc.v1.cri"]\n'
     '  stream_server_address = "127.0.0.1"\n\n'
     '[plugins."io.containerd.cri.v1.runtime".containerd]\n  default_runtime_name = "nvidia"\n\n'
     '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia]\n'
     '  runtime_type = "io.containerd.runc.v2"\n'
     '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia.options]\n'
     '  BinaryName = "/usr/bin/nvidia-container-runtime"\n'),
    ("gl102-short.toml", (), 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n'
     '  default_runtime_name = "nvidia"\n'
     '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
     '    runtime_type = "io.containerd.runc.v2"\n'
     '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
     '      BinaryName = "/usr/bin/nvidia-container-runtime"\n'),
    ("gl104.toml", (), 'version = 3\n[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia]\n'
     '  privileged_without_host_devices = false\n  runtime_type = "io.containerd.runc.v2"\n'
     '  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia.options]\n'
     '    BinaryName = "/usr/bin/nvidia-container-runtime"\n'
     '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia-cdi]\n'
     '  runtime_type = "io.containerd.runc.v2"\n'
     '  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia-cdi.options]\n'
     '    BinaryName = "/usr/bin/nvidia-container-runtime.cdi"\n'),
    ("gl105.toml", ("--unsafe-fixes",),
     'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
     '  runtime_type = "io.containerd.runc.v2"\n'
     '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
     '    BinaryName = "/usr/bin/nvidia-container-runtime"\n'
     '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-legacy]\n'
     '  runtime_type = "io.containerd.runc.v2"\n'
     '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-legacy.options]\n'
     '    BinaryName = "/usr/bin/nvidia-container-runtime.legacy"\n'
     '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
     '  runtime_type = "io.containerd.runc.v2"\n'),
    ("gl107.toml", (), 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
     '  runtime_type = "io.containerd.runc.v2"\n'
     '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]\n'
     '    SystemdCgroup = true\n'
     '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
     '  runtime_type = "io.containerd.runc.v2"\n'
     '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
     '    BinaryName = "/usr/bin/nvidia-container-runtime"\n    SystemdCgroup = true\n'
     '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-cdi]\n'
     '  runtime_type = "io.containerd.runc.v2"\n'
     '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-cdi.options]\n'
     '    BinaryName = "/usr/bin/nvidia-container-runtime.cdi"\n    SystemdCgroup = true\n'),
    ("gl108-move.toml", (), 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
     '  runtime_type = "io.containerd.runc.v2"\n'
     '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
     '    BinaryName = "/usr/bin/nvidia-container-runtime"\n'
     '    SystemdCgroup = true  # must live in .options\n'
     '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
     '  runtime_type = "io.containerd.runc.v2"\n'),
    ("gl110.toml", (), 'version = 2\ndisabled_plugins = ["io.containerd.internal.v1.tracing"]\n'
     '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
     '  runtime_type = "io.containerd.runc.v2"\n'
     '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
     '    BinaryName = "/usr/bin/nvidia-container-runtime"\n'),
]


def _fix(tmp_path, name: str, args=()) -> tuple[str, str]:
    """Copy a bad fixture, run --fix twice; the text after each run."""
    target = tmp_path / name.replace("/", "_")
    shutil.copy(FIXTURES / "containerd" / "bad" / name, target)
    texts = []
    for _ in range(2):
        run = run_gpulint("--isolated", "--fix", *args, "--failure-threshold", "none", str(target))
        assert run.rc == 0, run.err
        texts.append(target.read_text())
    return texts[0], texts[1]


@pytest.mark.parametrize("name,args,expected", FIXES, ids=[f[0] for f in FIXES])
def test_fix_before_after_and_idempotent(tmp_path, name, args, expected):
    first, second = _fix(tmp_path, name, args)
    assert first == expected
    assert second == first
    code = "GL" + name[2:5] if name.startswith("gl") else "GL103"
    relint = run_gpulint("--isolated", "--format", "json", str(tmp_path / name.replace("/", "_")))
    assert code not in relint.codes()


def test_gl106_fixes_are_unsafe_and_rewrite_the_binary(tmp_path):
    first, second = _fix(tmp_path, "gl106.toml")
    assert first == (FIXTURES / "containerd" / "bad" / "gl106.toml").read_text()
    fixed, _ = _fix(tmp_path / "..", "gl106.toml", ("--unsafe-fixes",))
    assert 'BinaryName = "/usr/bin/nvidia-container-runtime"\n[' in fixed
    assert 'BinaryName = "/usr/bin/nvidia-container-runtime.cdi"' in fixed


def test_gl108_conflicting_keys_are_not_renamed_into_a_duplicate(tmp_path):
    fixed, again = _fix(tmp_path, "gl108.toml")
    assert "BinaryName = " in fixed and "privileged_without_host_devices = false" in fixed
    assert "SystemdCgroup = true\n  privileged" in fixed  # left for the user to decide
    assert "systemd_cgroup = true\n" in fixed
    assert again == fixed


def test_fix_keeps_comments_and_crlf(tmp_path):
    target = tmp_path / "config.toml"
    target.write_bytes(b'# node config\r\ndisabled_plugins = ["cri"]  # from the docker package\r\n'
                       b'[plugins.cri.containerd.runtimes.nvidia]\r\n'
                       b'  runtime_type = "io.containerd.runc.v2"\r\n'
                       b'  options = { BinaryName = "/usr/bin/nvidia-container-runtime" }\r\n')
    run = run_gpulint("--isolated", "--fix", "--failure-threshold", "none", str(target))
    assert run.rc == 0, run.err
    assert target.read_bytes().startswith(b'# node config\r\ndisabled_plugins = []  # from the docker package\r\n')


def test_k3s_template_rendering_the_base_has_its_version_and_runtimes(lint_files):
    # `{{ template "base" . }}` renders `version = 2` and the runtimes k3s detected
    run = lint_files({"config.toml.tmpl": (
        '{{ template "base" . }}\n\n'
        '[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "nvidia"\n'
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes."custom"]\n'
        '  runtime_type = "io.containerd.runc.v2"\n')})
    assert gl1(run) == []


def test_gl103_quoted_version_is_an_error_with_a_fix(tmp_path):
    target = tmp_path / "config.toml"
    target.write_text('version = "2"  # set by the installer\n'
                      '[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "runc"\n')
    run = run_gpulint("--isolated", "--format", "json", str(target))
    assert gl1(run) == [("GL103", 1, 11)]
    assert severities(run, "GL103") == ["error"]
    for _ in range(2):
        assert run_gpulint("--isolated", "--fix", "--failure-threshold", "none", str(target)).rc == 0
        assert target.read_text().startswith("version = 2  # set by the installer\n")
    assert gl1(run_gpulint("--isolated", "--format", "json", str(target))) == []


def test_gl107_runc_from_a_k3s_template_expression():
    """runc takes `{{ .SystemdCgroup }}`: an NVIDIA runtime that leaves it unset differs on
    systemd hosts; one that uses the same expression is fine."""
    run = lint_fixture("containerd/bad/gl107-k3s.toml.tmpl")
    assert gl1(run) == [("GL107", 9, 1)]
    [finding] = run.findings
    assert finding["severity"] == "warning" and finding["fix"] is None
    assert "`runc` takes it from the template (`{{ .SystemdCgroup }}`)" in finding["message"]
    assert [(r["line"], r["column"]) for r in finding["related"]] == [(4, 19)]


# --- what containerd 1.x and 2.x do differently ------------------------------------------

def test_gl101_runc_is_not_built_in_on_1x_once_runtimes_are_written():
    run = lint_fixture("containerd/bad/gl101-runc.toml")
    assert gl1(run) == [("GL101", 2, 1)]
    message = run.findings[0]["message"]
    assert "containerd 1.6/1.7 replace their built-in runtimes" in message
    assert "containerd 2.x keeps its built-in `runc`" in message


def test_gl101_runc_stays_on_2x(lint_files, tmp_path):
    v3 = (FIXTURES / "containerd/bad/gl101-runc.toml").read_text().replace(
        "version = 2", "version = 3").replace("io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime")
    assert gl1(lint_files({"config.toml": v3})) == []
    (tmp_path / "config.toml").unlink()
    v2 = (FIXTURES / "containerd/bad/gl101-runc.toml").read_text()
    fleet = '[fleet]\ncontainerd-version = "2.0"\n'
    run = lint_files({"config.toml": v2, ".gpulint.toml": fleet})
    assert gl1(run) == [("GL101", 2, 1)]  # --isolated ignores the configuration
    (tmp_path / "config.toml").write_text(v2)
    configured = run_gpulint("--format", "json", "config.toml", cwd=tmp_path)
    assert gl1(configured) == [], configured.err


def test_gl101_drop_in_replacing_the_cri_table_loses_runc_on_1x(lint_files):
    run = lint_files({
        "etc/containerd/config.toml": (
            'version = 2\nimports = ["conf.d/*.toml"]\n[plugins."io.containerd.grpc.v1.cri".containerd]\n'
            '  default_runtime_name = "nvidia"\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
            '  runtime_type = "io.containerd.runc.v2"\n'),
        "etc/containerd/conf.d/99-nvidia.toml": (
            'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
            '  runtime_type = "io.containerd.runc.v2"\n'
            '  options = { BinaryName = "/usr/bin/nvidia-container-runtime" }\n'),
    })
    assert gl1(run) == [("GL101", 2, 1)]
    assert run.findings[0]["path"].endswith("conf.d/99-nvidia.toml")
    assert "replaces its whole CRI plugin table" in run.findings[0]["message"]


def test_gl108_case_variants_follow_go_toml():
    """go-toml v1 (1.x) matches Key, lower, UPPER and lowerFirst; v2 (2.x) any case."""
    run = lint_fixture("containerd/bad/gl108-case.toml")
    assert gl1(run) == [("GL108", 3, 3), ("GL108", 11, 7), ("GL108", 13, 3)]
    assert severities(run, "GL108") == ["error", "error", "error"]
    assert "so the default runtime stays `runc`" in run.findings[0]["message"]
    assert "containerd 2.x reads `Binaryname`" in run.findings[1]["message"]
    assert "runs plain runc and its pods get no GPUs on 1.6/1.7" in run.findings[1]["message"]
    assert "`containerd.Runtimes` is not `containerd.runtimes`" in run.findings[2]["message"]


def test_gl108_variants_go_toml_v1_honours_are_clean():
    run = lint_fixture("containerd/good/go-toml-v1-case.toml")
    assert run.findings == []


def test_gl108_case_variants_are_fine_for_2x_only_files(lint_files):
    text = (FIXTURES / "containerd/bad/gl108-case.toml").read_text().replace(
        "version = 2", "version = 3").replace("io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime")
    run = lint_files({"config.toml": text})
    assert gl1(run) == [("GL108", 3, 3)]  # only the misplaced default remains


@pytest.mark.parametrize("default_type,severity", [("io.containerd.runc.v2", "error"),
                                                   ("io.containerd.runtime.v1.linux", "warning")])
def test_gl108_cri_level_systemd_cgroup_fails_unless_the_default_is_the_v1_shim(lint_files, default_type,
                                                                                severity):
    run = lint_files({"config.toml": (
        'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  systemd_cgroup = true\n'
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
        f'  runtime_type = "{default_type}"\n')})
    assert [(f["code"], f["severity"]) for f in run.findings if f["code"] == "GL108"] == [("GL108", severity)]


def test_gl105_v1_shim_ignores_binary_name(lint_files):
    run = lint_files({"config.toml": (
        'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
        '  runtime_type = "io.containerd.runc.v2"\n'
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
        '  runtime_type = "io.containerd.runtime.v1.linux"\n'
        '  options = { BinaryName = "/usr/bin/nvidia-container-runtime" }\n')})
    assert gl1(run) == [("GL105", 5, 18)]
    assert severities(run, "GL105") == ["error"]
    assert "ignores options.BinaryName and runs plain runc" in run.findings[0]["message"]


def test_gl106_empty_binary_name_is_plain_runc(lint_files):
    run = lint_files({"config.toml": (
        'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
        '  runtime_type = "io.containerd.runc.v2"\n'
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
        '  runtime_type = "io.containerd.runc.v2"\n  options = { BinaryName = "" }\n')})
    assert gl1(run) == [("GL106", 6, 28)]
    assert severities(run, "GL106") == ["error"]
    assert "is empty, so the runc shim runs plain `runc`" in run.findings[0]["message"]


def test_gl115_invalid_and_misspelt_plugin_ids():
    run = lint_fixture("containerd/bad/gl115.toml")
    assert gl1(run) == [("GL115", 2, 1), ("GL115", 4, 1), ("GL115", 6, 1)]
    messages = [f["message"] for f in run.findings]
    assert "did you mean `io.containerd.grpc.v1.cri`?" in messages[0]
    assert 'invalid plugin key URI "io.containerd.cri"' in messages[1]
    assert "an unquoted `plugins.io.containerd.grpc.v1.cri` splits at every dot" in messages[2]


def test_gl115_plugin_ids_no_plugin_reads_and_entries_containerd_refuses(lint_files, tmp_path):
    """containerd 1.6.20, 1.7.24 and 2.1.9 (tests/oracle/data): a CRI table under a merged,
    shortened or whole-path ID is ignored (1.7 refuses `containerd.grpc.v1.cri`: no
    `io.containerd.` prefix); `"cri"` in disabled_plugins or required_plugins of a version 2
    file, also in a drop-in, stops every release."""
    runtime = '  runtime_type = "io.containerd.runc.v2"\n'

    def gl115(text, name="config.toml"):
        run = lint_files({name: text})
        return [(f["line"], f["column"], f["severity"], f["message"]) for f in run.findings
                if f["code"] == "GL115" and f["path"].endswith(name)]

    merged = gl115(f'version = 2\n[plugins."io.containerd.grpcv1.cri".containerd.runtimes.nvidia]\n{runtime}')
    assert [(line, col, sev) for line, col, sev, _ in merged] == [(2, 1, "error")]
    assert "did you mean `io.containerd.grpc.v1.cri`?" in merged[0][3]
    short = gl115(f'version = 2\n[plugins."containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n{runtime}')
    assert 'containerd 1.7 refuses to start (`invalid plugin key URI "containerd.grpc.v1.cri"' in short[0][3]
    assert "1.6/2.0/2.1 ignore the table" in short[0][3]
    quoted = gl115(f'version = 2\n[plugins."io.containerd.grpc.v1.cri.containerd.runtimes.nvidia"]\n{runtime}')
    assert "write `plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia`" in quoted[0][3]
    required = gl115('version = 2\nrequired_plugins = ["cri"]\n')
    assert [(line, col, sev) for line, col, sev, _ in required] == [(2, 21, "error")]
    assert '`invalid required plugin URI "cri" expect io.containerd.x.vx`' in required[0][3]
    assert "write `io.containerd.grpc.v1.cri`" in required[0][3]
    drop_in = gl115('version = 2\ndisabled_plugins = ["cri"]\n', "conf.d/99-no-cri.toml")
    assert '`invalid disabled plugin URI "cri"' in drop_in[0][3]
    unknown = gl115('version = 2\nrequired_plugins = ["io.containerd.grpc.v1.cir"]\n')
    assert "`required plugin [io.containerd.grpc.v1.cir] not included`" in unknown[0][3]
    # what every release reads: known plugins, a third-party snapshotter, a version 1 file's short IDs
    assert gl115('version = 2\nrequired_plugins = ["io.containerd.grpc.v1.cri"]\n'
                 'disabled_plugins = ["io.containerd.internal.v1.tracing"]\n'
                 '[plugins."io.containerd.snapshotter.v1.stargz"]\n  cri_keychain_image_service_path = "/run/k.sock"\n'
                 '[plugins."io.containerd.gc.v1.scheduler"]\n  pause_threshold = 0.02\n') == []
    assert gl115('version = 1\ndisabled_plugins = ["cri"]\n') == []


def test_gl116_missing_import_only_where_the_tree_holds_the_folder():
    run = lint_fixture("containerd/bad/gl116")
    # the glob, the existing file and the folder the tree does not hold are not reported
    assert gl1(run) == [("GL116", 2, 12)]
    assert "which is not in `conf.d/` beside this config" in run.findings[0]["message"]


def test_gl117_gl118_unknown_shim_and_option_types(tmp_path):
    run = lint_fixture("containerd/bad/gl117-118.toml")
    assert gl1(run) == [("GL118", 5, 21), ("GL118", 6, 13), ("GL117", 8, 18), ("GL118", 11, 21)]
    assert 'binary not installed "containerd-shim-runc-v3"' in run.findings[2]["message"]
    target = tmp_path / "config.toml"
    shutil.copy(FIXTURES / "containerd/bad/gl117-118.toml", target)
    assert run_gpulint("--isolated", "--fix", "--failure-threshold", "none", str(target)).rc == 0
    fixed = target.read_text()
    assert 'SystemdCgroup = true\n    IoUid = 1000\n' in fixed and 'io.containerd.runc.v2"\n  [' in fixed
    assert gl1(run_gpulint("--isolated", "--format", "json", str(target))) == []


def test_platform_fragments_are_drop_ins_without_a_version(lint_files):
    assert lint_fixture("containerd/good/talos").findings == []
    run = lint_files({"etc/cri/conf.d/20-nvidia.part": (
        '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia.options]\n'
        '  BinaryName = "/usr/local/bin/nvidia-container-runtime"\n')})
    assert gl1(run) == [("GL104", 1, 1)]  # runtime rules apply; no GL103 for the missing version


def test_k3s_template_with_loops_is_linted_for_what_it_writes():
    # loops inside arrays and around tables; `.ExtraRuntimes` defines runtimes at run time,
    # so `default_runtime_name = "nvidia"` is not reported, while GL107 judges the static tables
    run = lint_fixture("containerd/bad/k3s-loops.toml.tmpl")
    assert run.codes() == ["GL107"]
    assert gl1(run) == [("GL107", 14, 1)]


def test_runtimes_of_a_k3s_extra_runtimes_loop_count_for_runtime_classes(lint_files):
    text = (FIXTURES / "containerd/bad/k3s-loops.toml.tmpl").read_text()
    run = lint_files({"config.toml.tmpl": text, "rc.yaml": (
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: nvidia\nhandler: nvidia\n")})
    assert "GL702" not in run.codes() and "GL101" not in run.codes()


# -- GL119 / GL120: the file decoded as each containerd release decodes it ------------------

def test_gl119_values_containerd_cannot_decode():
    """containerd 1.6.20/1.7.24 refuse these with go-toml v1's words and 2.1.9 with go-toml
    v2's (tests/oracle/data): `Can't convert false(string) to bool`, `Can't convert
    3.9(float64) to string`, `Can't convert [nvidia]([]interface {}) to a slice`."""
    run = lint_fixture("containerd/decode/types.toml")
    assert [a for a in gl1(run) if a[0] == "GL119"] == [
        ("GL119", 3, 19), ("GL119", 4, 20), ("GL119", 6, 26), ("GL119", 9, 37)]
    messages = [f["message"] for f in run.findings if f["code"] == "GL119"]
    assert "`Can't convert 3.9(float64) to string`" in messages[0]
    assert "`Can't convert true(string) to bool`" in messages[1]
    assert "`Can't convert [nvidia]([]interface {}) to a slice`" in messages[2]
    assert ("`toml: cannot decode TOML array into struct field config.ContainerdConfig."
            "DefaultRuntimeName of type string`") in messages[2]
    assert ("`toml: cannot decode TOML string into struct field config.Runtime."
            "PrivilegedWithoutHostDevices of type bool`") in messages[3]
    assert all(f["severity"] == "error" for f in run.findings if f["code"] == "GL119")


def test_gl119_a_version_that_is_no_integer(lint_files):
    """containerd 1.6.20/1.7.24 refuse `version = 2.0` with `Can't convert 2(float64) to int`
    and 2.1.9 with `toml: cannot decode TOML float into struct field config.Config.Version of
    type int` (tests/oracle/data)."""
    run = lint_files({"config.toml": 'version = 2.0\n[plugins."io.containerd.grpc.v1.cri".containerd]\n'
                                     '  default_runtime_name = "runc"\n'})
    assert [a for a in gl1(run) if a[0] in ("GL103", "GL119")] == [("GL119", 1, 11)]
    message = run.findings[0]["message"]
    assert "`Can't convert 2(float64) to int`" in message
    assert "`toml: cannot decode TOML float into struct field config.Config.Version of type int`" in message
    assert lint_files({"config.toml": 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n'
                                      '  default_runtime_name = "runc"\n'}).findings == []


def test_gl120_keys_containerd_never_reads():
    """containerd 1.6.20, 1.7.24 and 2.1.9 keep runc the default with `default_runtime_name`
    at the top level or in a runtime, and never read `SystemdCgroup` in the CRI table."""
    run = lint_fixture("containerd/decode/unread.toml")
    assert [a for a in gl1(run) if a[0] == "GL120"] == [("GL120", 2, 1), ("GL120", 4, 3), ("GL120", 9, 3)]
    first, systemd, _ = (f["message"] for f in run.findings if f["code"] == "GL120")
    assert "CRI plugin's `containerd` table" in first
    assert "`options` table" in systemd


def test_gl120_keys_matched_as_each_release_matches_them(tmp_path):
    """go-toml v1 (containerd 1.x) tries a key as written, lower, UPPER and lowerFirst: it
    reads `RUNTIME_TYPE` (so the runtime has its shim: no GL104) but not
    `Default_Runtime_Name`, which 2.x (any case) reads; for a fleet on 1.x GL108 says so."""
    assert [a for a in gl1(lint_fixture("containerd/decode/case.toml")) if a[0] in ("GL104", "GL120")] == []
    (tmp_path / "fleet.toml").write_text('[fleet]\ncontainerd-version = "1.7"\n')
    on_1x = run_gpulint("--config", str(tmp_path / "fleet.toml"), "--format", "json",
                        str(FIXTURES / "containerd/decode/case.toml"))
    assert [a for a in gl1(on_1x) if a[0] in ("GL104", "GL108", "GL120")] == [("GL108", 3, 3)]


def test_a_version_3_file_decoded_by_2x_is_clean():
    assert lint_fixture("containerd/decode/good-v3.toml").findings == []


def test_gl106_binary_name_with_arguments_spaces_or_a_folder(lint_files):
    """containerd 1.6.20, 1.7.24 and 2.1.9 run BinaryName as one program name: with arguments,
    a trailing space or a folder the pods of the runtime fail (tests/oracle/data)."""
    for binary in ("/usr/bin/nvidia-container-runtime --debug", "/usr/bin/nvidia-container-runtime ",
                   "/usr/bin", "/usr/bin/"):
        run = lint_files({"config.toml": (
            'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
            '  runtime_type = "io.containerd.runc.v2"\n'
            '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
            f'    BinaryName = "{binary}"\n')})
        assert [(f["code"], f["severity"]) for f in run.findings if f["code"] == "GL106"] == [("GL106", "error")], binary


def test_gl117_a_binary_name_as_runtime_type(lint_files):
    """containerd 1.6.20, 1.7.24 and 2.1.9: pods fail with `invalid runtime name runc, correct
    runtime name should be either format like ...` (tests/oracle/data)."""
    for value in ("runc", "nvidia-container-runtime"):
        run = lint_files({"config.toml": (
            'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
            f'  runtime_type = "{value}"\n'
            '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
            '    BinaryName = "/usr/bin/nvidia-container-runtime"\n')})
        assert [(f["code"], f["line"]) for f in run.findings if f["code"] == "GL117"] == [("GL117", 3)], value
        assert f"invalid runtime name {value}" in run.findings[-1]["message"] or any(
            f"invalid runtime name {value}" in f["message"] for f in run.findings)


def test_gl117_a_program_path_as_runtime_type(lint_files):
    """containerd 1.6.20, 1.7.24 and 2.1.9 run a path in runtime_type as the shim: a runtime
    binary there fails every pod (`failed to start shim: start failed`, tests/oracle/data); a
    shim's own path is accepted."""
    def gl117(value):
        run = lint_files({"config.toml": (
            'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
            f'  runtime_type = "{value}"\n')})
        return [(f["code"], f["line"], f["column"]) for f in run.findings if f["code"] == "GL117"]

    assert gl117("/usr/bin/nvidia-container-runtime") == [("GL117", 3, 18)]
    assert gl117("/usr/local/bin/containerd-shim-runc-v2") == []


def test_gl121_version_1_cri_settings_dropped_by_containerd_2(lint_files, tmp_path):
    """containerd 2.1.9 starts on a version 1 file but drops its CRI runtimes and
    default_runtime_name (tests/oracle/data); 1.6.20 and 1.7.24 read them."""
    v1 = ('version = 1\n[plugins.cri.containerd]\n  default_runtime_name = "nvidia"\n'
          '  [plugins.cri.containerd.runtimes.nvidia]\n    runtime_type = "io.containerd.runc.v2"\n'
          '    [plugins.cri.containerd.runtimes.nvidia.options]\n'
          '      BinaryName = "/usr/bin/nvidia-container-runtime"\n')
    run = lint_files({"config.toml": v1})
    assert [(f["code"], f["line"], f["column"], f["severity"]) for f in run.findings] == [
        ("GL121", 1, 11, "warning")]
    assert '`no runtime for "nvidia" is configured`' in run.findings[0]["message"]
    for release, expected in (("2.1", [("GL121", "error")]), ("1.7", []), ("2.3", [])):
        (tmp_path / "fleet.toml").write_text(f'[fleet]\ncontainerd-version = "{release}"\n')
        (tmp_path / "config.toml").write_text(v1)
        on = run_gpulint("--config", str(tmp_path / "fleet.toml"), "--format", "json", str(tmp_path / "config.toml"))
        assert [(f["code"], f["severity"]) for f in on.findings] == expected, release
    # no version: the same file, reported at its first CRI table
    unversioned = lint_files({"config.toml": v1.replace("version = 1\n", "")})
    assert [(f["code"], f["line"], f["column"]) for f in unversioned.findings] == [("GL121", 1, 1)]
    # a version 2 file, a drop-in, and a version 1 file without CRI runtimes are not reported
    assert lint_files({"config.toml": v1.replace("version = 1", "version = 2").replace(
        "plugins.cri", 'plugins."io.containerd.grpc.v1.cri"')}).findings == []
    assert lint_files({"config.toml": 'version = 1\n[plugins.cri]\n  sandbox_image = "pause:3.9"\n'}).findings == []
    assert "GL121" not in lint_files({"conf.d/gpu.toml": v1.replace("version = 1\n", "")}).codes()
    # a version 2 drop-in makes the merged config version 2, and 2.1.9 then migrates all of it
    imports = v1.replace("version = 1\n", 'version = 1\nimports = ["conf.d/*.toml"]\n')
    assert "GL121" not in lint_files({"config.toml": imports, "conf.d/gpu.toml": (
        'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.cdi]\n'
        '  runtime_type = "io.containerd.runc.v2"\n')}).codes()


def test_runtimes_under_another_case_of_the_key_count_on_2x(lint_files):
    """containerd 2.1.9 (go-toml v2, any case) adds the runtimes of `RUNTIMES` to those of
    `runtimes`: the default named there exists (tests/oracle/data)."""
    run = lint_files({"config.toml": (
        'version = 3\n[plugins."io.containerd.cri.v1.runtime".containerd]\n  default_runtime_name = "nvidia"\n'
        '  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]\n'
        '    runtime_type = "io.containerd.runc.v2"\n'
        '  [plugins."io.containerd.cri.v1.runtime".containerd.RUNTIMES.nvidia]\n'
        '    runtime_type = "io.containerd.runc.v2"\n'
        '    [plugins."io.containerd.cri.v1.runtime".containerd.RUNTIMES.nvidia.options]\n'
        '      BinaryName = "/usr/bin/nvidia-container-runtime"\n')})
    assert "GL101" not in run.codes()


def test_gl112_on_nodes_that_all_run_1_6_the_option_is_only_ignored(tmp_path):
    """containerd 1.6.20 starts and ignores privileged_without_host_devices_all_devices_allowed;
    1.7 and 2.x refuse it without privileged_without_host_devices (tests/oracle/data)."""
    config = tmp_path / "config.toml"
    config.write_text('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
                      '  runtime_type = "io.containerd.runc.v2"\n'
                      '  privileged_without_host_devices_all_devices_allowed = true\n')
    for release, severity in (("1.6", "warning"), ("1.7", "error"), ("2.1", "error")):
        (tmp_path / "fleet.toml").write_text(f'[fleet]\ncontainerd-version = "{release}"\n')
        run = run_gpulint("--config", str(tmp_path / "fleet.toml"), "--format", "json", str(config))
        assert [f["severity"] for f in run.findings if f["code"] == "GL112"] == [severity], release


def test_gl115_a_version_1_file_requires_plugins_by_short_id(lint_files, tmp_path):
    """containerd 1.6.20 and 1.7.24 compare a version 1 file's required_plugins with plugin IDs
    alone: `io.containerd.grpc.v1.cri` there stops them (`required plugin
    [io.containerd.grpc.v1.cri] not included`, tests/oracle/data); `cri` is right."""
    config = tmp_path / "config.toml"
    (tmp_path / "fleet.toml").write_text('[fleet]\ncontainerd-version = "1.7"\n')

    def gl115(required):
        config.write_text(f'version = 1\nrequired_plugins = ["{required}"]\n'
                          '[plugins.cri]\n  sandbox_image = "registry.k8s.io/pause:3.9"\n')
        run = run_gpulint("--config", str(tmp_path / "fleet.toml"), "--format", "json", str(config))
        return [(f["line"], f["column"], f["severity"], f["message"]) for f in run.findings if f["code"] == "GL115"]

    found = gl115("io.containerd.grpc.v1.cri")
    assert [(line, col, sev) for line, col, sev, _ in found] == [(2, 21, "error")]
    assert "`required plugin [io.containerd.grpc.v1.cri] not included`" in found[0][3]
    assert "write `cri`" in found[0][3]
    assert gl115("cri") == []


def test_gl110_a_drop_in_that_turns_cri_off_for_the_main_file(lint_files):
    """containerd 1.6.20, 1.7.24 and 2.1.9 start without CRI when an imported drop-in lists it in
    disabled_plugins while the main file configures its runtimes (tests/oracle/data)."""
    run = lint_files({
        "config.toml": ('version = 2\nimports = ["conf.d/*.toml"]\n'
                        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
                        '  runtime_type = "io.containerd.runc.v2"\n'),
        "conf.d/99-no-cri.toml": 'version = 2\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n'})
    found = [(f["code"], f["path"], f["line"], f["column"]) for f in run.findings]
    assert found == [("GL110", "conf.d/99-no-cri.toml", 2, 21)]
    assert "config.toml, merged with it, configures CRI runtimes" in run.findings[0]["message"]


def test_gl117_judges_runtime_type_as_2x_reads_it(tmp_path):
    """containerd 2.1.9 reads `Runtime_Type` (any case) and the runtimes of `RUNTIMES`: a binary
    name there fails the pods (`invalid runtime name runc`, tests/oracle/data)."""
    config = tmp_path / "config.toml"
    config.write_text('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.RUNTIMES.nvidia]\n'
                      '  Runtime_Type = "runc"\n')
    (tmp_path / "fleet.toml").write_text('[fleet]\ncontainerd-version = "2.1"\n')
    run = run_gpulint("--config", str(tmp_path / "fleet.toml"), "--format", "json", str(config))
    assert [(f["code"], f["line"], f["column"]) for f in run.findings if f["code"] == "GL117"] == [("GL117", 3, 18)]


def test_gl122_a_drop_in_that_writes_the_cri_table_again(lint_files, tmp_path):
    """containerd 1.6.20 and 1.7.24 keep only the drop-in's CRI table: the main file's `nvidia`
    runtime is missing from the CRI config; 2.1.9 merges the tables (tests/oracle/data)."""
    files = {
        "config.toml": ('version = 2\nimports = ["conf.d/*.toml"]\n'
                        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
                        '  runtime_type = "io.containerd.runc.v2"\n'
                        '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
                        '    BinaryName = "/usr/bin/nvidia-container-runtime"\n'),
        "conf.d/pause.toml": 'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "pause:3.10"\n'}
    run = lint_files(files)
    assert [(f["code"], f["path"], f["line"], f["column"], f["severity"]) for f in run.findings] == [
        ("GL122", "conf.d/pause.toml", 2, 1, "error")]
    assert "lost (runtime `nvidia`)" in run.findings[0]["message"]
    assert run.findings[0]["related"][0]["path"] == "config.toml"
    # a drop-in that repeats what it replaces, or writes another plugin's table, loses nothing
    files["conf.d/pause.toml"] = files["config.toml"].replace('imports = ["conf.d/*.toml"]\n', "")
    assert "GL122" not in lint_files(files).codes()
    (tmp_path / "config.toml").write_text(files["config.toml"])
    (tmp_path / "conf.d").mkdir(exist_ok=True)
    (tmp_path / "conf.d/pause.toml").write_text(
        'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "pause:3.10"\n')
    (tmp_path / "fleet.toml").write_text('[fleet]\ncontainerd-version = "2.1"\n')
    on_2x = run_gpulint("--config", str(tmp_path / "fleet.toml"), "--format", "json", str(tmp_path / "config.toml"),
                        str(tmp_path / "conf.d/pause.toml"))
    assert "GL122" not in on_2x.codes()


def test_gl115_a_version_1_file_with_cri_settings_under_no_plugin(lint_files):
    """containerd 1.6.20, 1.7.24 and 2.1.9 ignore `[plugins."containerd.grpc.v1.cri"]` in a version
    1 file: its runtime is missing from the CRI config (tests/oracle/data)."""
    run = lint_files({"config.toml": (
        'version = 1\n[plugins."containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
        '  runtime_type = "io.containerd.runc.v2"\n')})
    assert [(f["code"], f["line"], f["column"], f["severity"]) for f in run.findings if f["code"] == "GL115"] == [
        ("GL115", 2, 1, "error")]
    assert "GL115" not in lint_files({"config.toml": 'version = 1\n[plugins.cgroups]\n  no_prometheus = true\n'}).codes()


def test_gl121_a_version_3_drop_in_of_a_version_2_file(lint_files):
    """containerd 2.1.9 drops the version 2 main file's runtimes and default when an imported
    drop-in says `version = 3` (the merged config is version 3, so the CRI migration is
    skipped; tests/oracle/data); 2.3 refuses such a drop-in."""
    run = lint_files({
        "config.toml": ('version = 2\nimports = ["conf.d/*.toml"]\n[plugins."io.containerd.grpc.v1.cri".containerd]\n'
                        '  default_runtime_name = "nvidia"\n'
                        '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
                        '    runtime_type = "io.containerd.runc.v2"\n'
                        '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
                        '      BinaryName = "/usr/bin/nvidia-container-runtime"\n'),
        "conf.d/99-cdi.toml": ('version = 3\n[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.cdi]\n'
                               '  runtime_type = "io.containerd.runc.v2"\n')})
    found = [(f["code"], f["path"], f["line"], f["column"], f["severity"]) for f in run.findings if f["code"] == "GL121"]
    assert found == [("GL121", "config.toml", 1, 11, "error")]
    message = run.findings[0]["message"]
    assert "`drop-in config version 3 higher than root config version 2`" in message
    assert run.findings[0]["related"][0]["path"] == "conf.d/99-cdi.toml"


def test_gl106_a_runtime_named_for_nvidia_that_runs_plain_runc(lint_files):
    """containerd 1.6.20, 1.7.24 and 2.1.9 run `/usr/bin/runc` for such a runtime: no GPUs
    (tests/oracle/data: `nvidia runs plain runc`)."""
    def gl106(binary):
        run = lint_files({"config.toml": (
            'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
            '  runtime_type = "io.containerd.runc.v2"\n'
            '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
            f'    BinaryName = "{binary}"\n')})
        return [(f["line"], f["column"], f["severity"]) for f in run.findings if f["code"] == "GL106"]

    assert gl106("/usr/bin/runc") == [(5, 18, "error")]
    assert gl106("/usr/local/bin/crun") == [(5, 18, "error")]
    assert gl106("/usr/bin/nvidia-container-runtime") == []


def test_gl108_runtimes_in_capitals_beside_runtimes_on_1x(lint_files):
    """containerd 1.6.20 and 1.7.24 decode `runtimes` and ignore `RUNTIMES` beside it (go-toml
    v1 takes the first spelling it finds); 2.1.9 reads both (tests/oracle/data)."""
    run = lint_files({"config.toml": (
        'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
        '  runtime_type = "io.containerd.runc.v2"\n'
        '[plugins."io.containerd.grpc.v1.cri".containerd.RUNTIMES.nvidia]\n'
        '  runtime_type = "io.containerd.runc.v2"\n')})
    found = [(f["line"], f["column"], f["message"]) for f in run.findings if f["code"] == "GL108"]
    assert [(line, col) for line, col, _ in found] == [(4, 1)]
    assert "read only `runtimes`, which this table has too" in found[0][2]


def test_gl115_the_v1_linux_runtime_table_in_a_version_2_file(lint_files, tmp_path):
    """`[plugins.linux] runtime = ...` in a version 2 file: containerd 1.6.20/1.7.24 refuse the key
    (`invalid plugin key URI "linux"`), 2.1.9 ignores the table (tests/oracle/data)."""
    text = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
            '  runtime_type = "io.containerd.runc.v2"\n[plugins.linux]\n  runtime = "nvidia-container-runtime"\n')
    run = lint_files({"config.toml": text})
    found = [(f["line"], f["column"], f["severity"], f["message"]) for f in run.findings if f["code"] == "GL115"]
    assert [(line, col, sev) for line, col, sev, _ in found] == [(4, 1, "error")]
    assert '`invalid plugin key URI "linux" expect io.containerd.x.vx`' in found[0][3]
    (tmp_path / "fleet.toml").write_text('[fleet]\ncontainerd-version = "2.1"\n')
    on_2x = run_gpulint("--config", str(tmp_path / "fleet.toml"), "--format", "json", str(tmp_path / "config.toml"))
    found = [(f["severity"], f["message"]) for f in on_2x.findings if f["code"] == "GL115"]
    assert found[0][0] == "warning" and "the version 1 name of `io.containerd.runtime.v1.linux`" in found[0][1]


def test_gl107_the_built_in_runc_of_containerd_2(lint_files):
    """containerd 2.1.9 keeps its built-in runc when a config writes only `nvidia`, and runs it
    without --systemd-cgroup while `nvidia` gets it (tests/oracle/data): a warning where runc
    runs the pods, information where the NVIDIA runtime is the default."""
    def gl107(default):
        run = lint_files({"config.toml": (
            'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n'
            f'  default_runtime_name = "{default}"\n'
            '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
            '    runtime_type = "io.containerd.runc.v2"\n'
            '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
            '      BinaryName = "/usr/bin/nvidia-container-runtime"\n      SystemdCgroup = true\n')})
        return [(f["line"], f["column"], f["severity"]) for f in run.findings if f["code"] == "GL107"]

    assert gl107("runc") == [(8, 23, "warning")]
    assert gl107("nvidia") == [(8, 23, "info")]


def test_gl123_k3s_templates_that_go_stale(lint_files):
    """k3s-io/k3s#7999, #9557: a template names one release's data folder, or is a copy of a
    rendered config; `data/current`, a template expression and the base template are fine."""
    cni = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".cni]\n'
           '  bin_dir = "{bin}"\n  conf_dir = "/var/lib/rancher/k3s/agent/etc/cni/net.d"\n')

    def gl123(name, text):
        run = lint_files({name: text})
        return [(f["line"], f["column"], f["severity"]) for f in run.findings
                if f["code"] == "GL123" and f["path"] == name]

    stale = cni.format(bin="/var/lib/rancher/k3s/data/0f1e2d3c/bin")
    assert gl123("config.toml.tmpl", stale) == [(3, 14, "warning")]
    assert gl123("rke2/config-v3.toml.tmpl", stale.replace("version = 2", "version = 3")) == [(3, 14, "warning")]
    assert gl123("copy/config.toml.tmpl", cni.format(bin="/var/lib/rancher/k3s/data/current/bin")) == [(1, 1, "info")]
    assert gl123("expr/config.toml.tmpl", cni.format(bin="{{ .NodeConfig.AgentConfig.CNIBinDir }}")) == []
    assert gl123("base/config.toml.tmpl", '{{ template "base" . }}\n' + stale.split("\n", 1)[1]) == []
    assert gl123("generated/config.toml", stale) == []  # the config k3s renders may name it


V3_NVIDIA_DROP_IN = (
    "version = 3\n"
    "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia]\n"
    "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia.options]\n"
    "  BinaryName = '/usr/bin/nvidia-container-runtime'\n"
)


def test_gl104_version_3_drop_in_whose_main_config_does_not_type_the_runtime(lint_files):
    """containerd 2.x merges a drop-in's runtime into the main config's; when the main config
    (seen here) has no such runtime, nothing gives it a shim (NVIDIA/nvidia-container-toolkit#1956)."""
    run = lint_files({
        "etc/containerd/config.toml": 'version = 3\nimports = ["/etc/containerd/conf.d/*.toml"]\n',
        "etc/containerd/conf.d/99-nvidia.toml": V3_NVIDIA_DROP_IN,
    })
    assert [a for a in gl1(run) if a[0] == "GL104"] == [("GL104", 2, 1)]
    assert run.findings[0]["path"].endswith("conf.d/99-nvidia.toml")


def test_gl104_version_3_drop_in_typed_by_its_main_config_or_alone(lint_files):
    typed_main = (
        'version = 3\nimports = ["/etc/containerd/conf.d/*.toml"]\n'
        "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia]\n"
        "  runtime_type = 'io.containerd.runc.v2'\n"
    )
    run = lint_files({"etc/containerd/config.toml": typed_main,
                      "etc/containerd/conf.d/99-nvidia.toml": V3_NVIDIA_DROP_IN})
    assert [a for a in gl1(run) if a[0] == "GL104"] == []
    # no linted config imports it: the main config it is merged into is not seen
    run = lint_files({"etc/containerd/conf.d/99-nvidia.toml": V3_NVIDIA_DROP_IN})
    assert [a for a in gl1(run) if a[0] == "GL104"] == []


def test_any_toml_in_a_containerd_folder_is_read_as_containerds(lint_files):
    # `version = 2` alone names no containerd table; an empty file is containerd's defaults
    run = lint_files({"etc/containerd/config.toml": "version = 2\n", "etc/containerd/empty.toml": "",
                      "etc/nvidia/config.toml": "version = 2\n"}, "--failure-threshold", "none")
    assert run.json["summary"]["files_checked"] == 2 and run.json["summary"]["files_skipped"] == 1


OPTIONS_TWICE = (
    'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
    '  runtime_type = "io.containerd.runc.v2"\n'
    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
    '  runtime_type = "io.containerd.runc.v2"\n'
    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
    '  binaryName = "{lower}"\n'
    '  BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"\n'
    '  systemdCgroup = true\n'
    '  SystemdCgroup = false\n')


def test_gl108_one_runc_option_under_two_spellings(lint_files):
    """A tool adds `BinaryName` to options that hold `binaryName` (NVIDIA/gpu-operator#1374):
    containerd 1.6.20 and 1.7.24 run the `BinaryName` binary and leave SystemdCgroup = false
    (go-toml v1 tries the exact name first); 2.1.9 runs `binaryName`'s and sets
    --systemd-cgroup (the options are re-marshalled in sorted key order, the last one wins)."""
    run = lint_files({"config.toml": OPTIONS_TWICE.format(lower="/usr/bin/runc")})
    found = [(f["line"], f["column"], f["severity"], f["message"]) for f in run.findings if f["code"] == "GL108"]
    assert [(line, col, sev) for line, col, sev, _ in found] == [(8, 3, "error"), (10, 3, "error")]
    assert "containerd 2.x reads `binaryName` = \"/usr/bin/runc\"" in found[0][3]
    assert "on 2.x `nvidia` runs `/usr/bin/runc` and its pods get no GPUs" in found[0][3]
    assert "on 1.6/1.7 `nvidia` keeps the cgroupfs driver" in found[1][3]


@pytest.mark.parametrize("release, where", [("1.7", [(7, 3), (9, 3)]), ("2.1", [(8, 3), (10, 3)])])
def test_gl108_two_spellings_on_a_known_release_point_at_the_one_ignored(tmp_path, release, where):
    (tmp_path / "fleet.toml").write_text(f'[fleet]\ncontainerd-version = "{release}"\n')
    (tmp_path / "config.toml").write_text(OPTIONS_TWICE.format(lower="/usr/bin/nvidia-container-runtime"))
    run = run_gpulint("--config", str(tmp_path / "fleet.toml"), "--format", "json", str(tmp_path / "config.toml"))
    found = [(f["line"], f["column"], f["message"]) for f in run.findings if f["code"] == "GL108"]
    assert [(line, col) for line, col, _ in found] == where
    assert all(" is ignored" in message and "reads only" in message for _, _, message in found)


def test_gl108_two_spellings_of_the_same_value_is_info_and_one_spelling_is_clean(lint_files):
    twice = OPTIONS_TWICE.format(lower="/usr/local/nvidia/toolkit/nvidia-container-runtime")
    twice = twice.replace("  systemdCgroup = true\n  SystemdCgroup = false\n", "")
    run = lint_files({"config.toml": twice})
    assert [(f["line"], f["severity"]) for f in run.findings if f["code"] == "GL108"] == [(8, "info")]
    once = twice.replace('  binaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"\n', "")
    assert not [f for f in lint_files({"config.toml": once}).findings if f["code"] == "GL108"]
