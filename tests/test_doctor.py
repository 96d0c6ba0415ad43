"""`gpulint doctor`: fake node trees under tests/fixtures/nodes, and this machine."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, ROOT, run_gpulint, validated_sarif, write_files

NODES = FIXTURES / "nodes"


def doctor(*args: str, root: Path | str | None = None, cwd: Path = ROOT):
    where = ("--root", str(root)) if root is not None else ()
    return run_gpulint("doctor", "--isolated", "--format", "json", "--failure-threshold", "none",
                       *where, *args, cwd=cwd)


def _where(finding: dict, node: str) -> tuple[str, str, int, int]:
    return (finding["code"], finding["path"].removeprefix(f"tests/fixtures/nodes/{node}/"),
            finding["line"], finding["column"])


# every GL8xx code, and GL602 on the node's driver, on the node that shows it
EXPECTED = {
    "healthy": set(),
    "no-gpu": {("GL801", "tests/fixtures/nodes/no-gpu", 1, 1)},
    "kernel-update": {("GL802", "lib/modules/6.8.0-49-generic", 1, 1)},
    "module-not-loaded": {("GL803", "lib/modules/6.8.0-49-generic/updates/dkms/nvidia.ko.zst", 1, 1)},
    "nouveau": {("GL804", "proc/modules", 1, 1)},
    "driver-upgraded": {("GL805", "proc/driver/nvidia/version", 1, 49),
                        ("GL808", "etc/cdi/nvidia.yaml", 18, 15)},
    "eol-driver": {("GL602", "proc/driver/nvidia/version", 1, 49)},
    "no-cgroups": {("GL812", "etc/nvidia-container-runtime/config.toml", 10, 14)},
    "broken-runtime": {("GL806", "etc/containerd/config.toml", 14, 18),
                       ("GL809", "etc/nvidia-container-runtime/config.toml", 4, 1),
                       ("GL806", "etc/nvidia-container-runtime/config.toml", 9, 12),
                       ("GL810", "etc/nvidia-container-runtime/config.toml", 10, 14),
                       ("GL809", "etc/nvidia-container-runtime/config.toml", 11, 1),
                       ("GL807", "etc/nvidia-container-runtime/config.toml", 15, 8),
                       ("GL806", "etc/nvidia-container-runtime/config.toml", 16, 12),
                       ("GL811", "var/run/cdi/vendor.json", 1, 52)},
}


@pytest.mark.parametrize("node", sorted(EXPECTED))
def test_fixture_node(node):
    result = doctor(root=NODES / node)
    assert result.rc == 0, result.err
    assert {_where(f, node) for f in result.findings} == EXPECTED[node]


def test_fixture_nodes_cover_every_node_code():
    from gpulint.catalog import load_catalog

    # the toolkit's and CDI's own rules; those that join them with another kind's files (a
    # daemon.json's Swarm resources, the GPU Operator's values) have their own tests
    node_codes = {c for c, rule in load_catalog().items()
                  if c.startswith("GL8") and set(rule.kinds) <= {"nvidia-toolkit", "cdi", "node"}}
    assert node_codes == {code for found in EXPECTED.values() for code, *_ in found} - {"GL602"}


def test_healthy_node_passes_every_layer():
    result = run_gpulint("doctor", "--isolated", "--root", str(NODES / "healthy"), cwd=ROOT)
    assert result.rc == 0, result.err
    for layer in ("Host: PASS", "Container runtime: PASS", "Kubernetes: PASS"):
        assert layer in result.out
    assert "driver 580.95.05 (kernel module)" in result.out
    assert "runs CUDA <= 13.0 natively" in result.out
    assert "var/lib/kubelet/config.yaml" in result.out  # kubelet's config is read


def test_broken_layers_fail_and_exit_1():
    result = run_gpulint("doctor", "--isolated", "--root", str(NODES / "broken-runtime"), cwd=ROOT)
    assert result.rc == 1
    assert "Host: PASS" in result.out and "Container runtime: FAIL" in result.out
    host = run_gpulint("doctor", "--isolated", "--root", str(NODES / "nouveau"), cwd=ROOT)
    assert host.rc == 1 and "Host: FAIL" in host.out


def test_no_gpu_node_says_so_and_exits_0():
    result = run_gpulint("doctor", "--isolated", "--root", str(NODES / "no-gpu"), cwd=ROOT)
    assert result.rc == 0, result.err
    assert "GL801 [info] no NVIDIA GPU driver on this node and no NVIDIA PCI device" in result.out
    assert "Container runtime: PASS" in result.out


def test_json_reports_the_node():
    node = doctor(root=NODES / "healthy").json["node"]
    assert node["driver"] == "580.95.05" and node["kernel"] == "6.8.0-49-generic"
    assert node["cuda"]["native_max"] == "13.0" and "13.x" in node["cuda"]["minor_version_compat"]
    assert {k: v["status"] for k, v in node["layers"].items()} == {
        "host": "pass", "runtime": "pass", "kubernetes": "pass", "workloads": "pass"}
    broken = doctor(root=NODES / "driver-upgraded").json["node"]["layers"]
    assert broken["host"] == {"status": "fail", "findings": 1}


def test_sarif_validates():
    result = run_gpulint("doctor", "--isolated", "--format", "sarif", "--root", str(NODES / "broken-runtime"),
                         cwd=ROOT)
    assert result.rc == 1
    validated_sarif(result.out)


def test_paths_are_judged_against_the_node_driver(tmp_path):
    write_files(tmp_path, {"Dockerfile": "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n"})
    result = doctor(str(tmp_path / "Dockerfile"), root=NODES / "eol-driver")
    gl601 = [f for f in result.findings if f["code"] == "GL601"]
    assert len(gl601) == 1, result.findings
    assert "driver 470.256.02" in gl601[0]["message"]
    assert "the driver loaded on this node" in gl601[0]["message"]
    assert gl601[0]["related"][0]["path"].endswith("eol-driver/proc/driver/nvidia/version")
    assert result.json["node"]["layers"]["workloads"]["findings"] == 1
    # without PATHS the same node reports no workload finding
    assert doctor(root=NODES / "eol-driver").json["node"]["layers"]["workloads"]["findings"] == 0


def _node(tmp_path: Path, binary: str, programs: dict[str, str]) -> Path:
    write_files(tmp_path, {
        "proc/modules": "ext4 1114112 2 - Live 0x0000000000000000\n",
        "etc/containerd/config.toml": (
            'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
            '  runtime_type = "io.containerd.runc.v2"\n'
            '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
            f'    BinaryName = "{binary}"\n'),
        **programs})
    for name in programs:
        (tmp_path / name).chmod(0o755)
    return tmp_path


def test_bare_binary_name_is_looked_up_on_the_service_path(tmp_path):
    found = _node(tmp_path / "a", "nvidia-container-runtime", {"usr/local/bin/nvidia-container-runtime": "x"})
    assert "GL806" not in doctor(root=found).codes()
    missing = doctor(root=_node(tmp_path / "b", "nvidia-container-runtime", {}))
    assert [f["message"] for f in missing.findings if f["code"] == "GL806"] == [
        "BinaryName of runtime `nvidia` is `nvidia-container-runtime`, which this node has neither on the "
        "service PATH (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin) nor in "
        "/usr/local/nvidia/toolkit: containers that use it fail to start; install the NVIDIA Container "
        "Toolkit or correct the path"]


def test_absolute_links_resolve_inside_the_root(tmp_path):
    root = _node(tmp_path, "/sbin/nvidia-container-runtime", {"usr/sbin/nvidia-container-runtime": "x"})
    os.symlink("/usr/sbin", root / "sbin")  # as on merged-/usr systems
    assert "GL806" not in doctor(root=root).codes()


def test_not_executable_is_reported(tmp_path):
    root = _node(tmp_path, "/usr/bin/nvidia-container-runtime", {})
    write_files(root, {"usr/bin/nvidia-container-runtime": "not a program\n"})
    messages = [f["message"] for f in doctor(root=root).findings if f["code"] == "GL806"]
    assert len(messages) == 1 and "which is not an executable file on this node" in messages[0]


def test_k3s_template_is_read(tmp_path):
    write_files(tmp_path, {
        "proc/modules": "ext4 1114112 2 - Live 0x0000000000000000\n",
        "var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl": (
            'version = 2\n'
            '[plugins."io.containerd.grpc.v1.cri".cni]\n  bin_dir = "{{ .NodeConfig.AgentConfig.CNIBinDir }}"\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
            '  runtime_type = "io.containerd.runc.v2"\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
            '  BinaryName = "/usr/bin/nvidia-container-runtime"\n')})
    write_files(tmp_path, {"var/lib/rancher/k3s/agent/etc/containerd/config.toml": "# File generated by k3s\n"})
    result = doctor(root=tmp_path)
    assert ("GL806", 7, 16) in result.at()
    # k3s renders config.toml from the template at every start: only the template is checked
    assert result.json["summary"]["files_checked"] == 1


def test_root_must_be_a_directory(tmp_path):
    result = doctor(root=tmp_path / "missing")
    assert result.rc == 2 and "not a directory" in result.err


def test_doctor_writes_nothing(tmp_path):
    root = tmp_path / "node"
    shutil.copytree(NODES / "broken-runtime", root, symlinks=True)
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in root.rglob("*") if p.is_file()}
    doctor(root=root)
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in root.rglob("*") if p.is_file()}
    assert before == after


def test_this_machine(tmp_path):
    """The real node: no traceback, a usage-free exit, and GL801 where there is no driver."""
    result = run_gpulint("doctor", "--isolated", "--format", "json", cwd=tmp_path)
    assert result.rc in (0, 1), result.err
    assert "Traceback" not in result.err
    no_driver = not Path("/proc/driver/nvidia/version").exists() and shutil.which("nvidia-smi") is None \
        and not any(Path(d).glob("libcuda.so.*") for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64"))
    if no_driver:
        assert "GL801" in result.codes()
        assert result.json["node"]["driver"] is None


def _fake_smi(folder: Path, script: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    smi = folder / "nvidia-smi"
    smi.write_text("#!/bin/sh\n" + script)
    smi.chmod(0o755)


live_driver = pytest.mark.skipif(Path("/proc/driver/nvidia/version").exists(),
                                 reason="this machine has an NVIDIA driver loaded")


@live_driver
def test_nvidia_smi_gives_the_driver_and_gpu(tmp_path, monkeypatch):
    _fake_smi(tmp_path / "bin", 'echo "580.95.05, NVIDIA A100-SXM4-80GB, 8.0"\n')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    result = doctor(cwd=tmp_path)
    node = result.json["node"]
    assert node["driver"] == "580.95.05"
    assert node["gpu"] == {"driver_version": "580.95.05", "name": "NVIDIA A100-SXM4-80GB", "compute_cap": "8.0"}
    assert "GL801" not in result.codes()
    eol = tmp_path / "eol"
    _fake_smi(eol, 'echo "470.256.02, Tesla T4, 7.5"\n')
    monkeypatch.setenv("PATH", f"{eol}:{os.environ['PATH']}")
    assert "GL602" in doctor(cwd=tmp_path).codes()
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    text = run_gpulint("doctor", "--isolated", cwd=tmp_path).out
    assert "driver 580.95.05 (nvidia-smi)" in text and "GPU NVIDIA A100-SXM4-80GB, compute capability 8.0" in text


@live_driver
def test_nvidia_smi_failure_is_shown(tmp_path, monkeypatch):
    _fake_smi(tmp_path / "bin", "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
                                "driver. Make sure that the latest NVIDIA driver is installed and running.\"\nexit 9\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    result = run_gpulint("doctor", "--isolated", "--failure-threshold", "none", cwd=tmp_path)
    assert result.rc == 0, result.err
    assert "nvidia-smi: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver" in result.out
    assert "no NVIDIA GPU driver on this node" not in result.out  # nvidia-smi is installed


@live_driver
def test_nvidia_smi_that_hangs_is_given_up(tmp_path, monkeypatch):
    import gpulint.kinds.node.probe

    _fake_smi(tmp_path / "bin", "sleep 30\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setattr(gpulint.kinds.node.probe, "SMI_TIMEOUT", 1)
    result = run_gpulint("doctor", "--isolated", "--failure-threshold", "none", cwd=tmp_path)
    assert result.rc == 0, result.err
    assert "nvidia-smi did not answer" in result.out


def test_daemon_json_runtime_path_is_checked(tmp_path):
    write_files(tmp_path, {
        "proc/modules": "ext4 1114112 2 - Live 0x0000000000000000\n",
        "etc/docker/daemon.json": '{\n  "runtimes": {\n    "nvidia": {\n'
                                  '      "path": "/usr/bin/nvidia-container-runtime",\n'
                                  '      "args": []\n    }\n  }\n}\n'})
    assert ("GL806", 4, 15) in doctor(root=tmp_path).at()


def test_unreadable_configuration_is_named(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    write_files(tmp_path, {"etc/docker/daemon.json": '{"runtimes": {}}\n'})
    (tmp_path / "etc/docker/daemon.json").chmod(0)
    result = doctor(root=tmp_path)
    assert result.rc == 0 and result.json["node"]["unreadable"]


def test_kubelet_cgroup_driver_is_compared_with_the_runtimes(tmp_path):
    root = tmp_path / "node"
    shutil.copytree(NODES / "healthy", root, symlinks=True)
    kubelet = root / "var/lib/kubelet/config.yaml"
    kubelet.write_text(kubelet.read_text().replace("cgroupDriver: systemd", "cgroupDriver: cgroupfs"))
    result = doctor(root=root)
    assert [(f["code"], f["line"]) for f in result.findings] == [("GL107", 9), ("GL107", 15)]
    assert result.json["node"]["layers"]["runtime"]["status"] == "fail"


def test_low_level_runtime_candidates(tmp_path):
    root = tmp_path / "node"
    shutil.copytree(NODES / "healthy", root, symlinks=True)
    (root / "usr/bin/runc").unlink()
    assert doctor(root=root).at() == [("GL806", 14, 12)]  # runtimes = ["runc", "crun"]
    write_files(root, {"usr/local/bin/crun": "#!/bin/sh\n"})
    (root / "usr/local/bin/crun").chmod(0o755)
    assert doctor(root=root).findings == []


def test_driver_files_without_a_gpu(tmp_path):
    root = tmp_path / "node"
    shutil.copytree(NODES / "module-not-loaded", root, symlinks=True)
    (root / "proc/bus/pci/devices").write_text("0000\t80860d57\t0\n")
    result = doctor(root=root)
    assert result.codes() == ["GL801"]
    assert result.findings[0]["message"].startswith("no NVIDIA GPU on this node: /proc/bus/pci lists no")


def test_gpu_operator_node(tmp_path):
    """Driver container under /run/nvidia/driver, toolkit under /usr/local/nvidia/toolkit."""
    version = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U22)\n"
    toolkit = "/usr/local/nvidia/toolkit"
    write_files(tmp_path, {
        "proc/modules": "nvidia 14376960 0 - Live 0x0000000000000000 (OE)\n",
        "proc/driver/nvidia/version": version,
        "run/nvidia/driver/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05": "library\n",
        "etc/containerd/conf.d/99-nvidia.toml": (
            'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
            '  runtime_type = "io.containerd.runc.v2"\n'
            '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
            f'    BinaryName = "{toolkit}/nvidia-container-runtime"\n'),
        f"{toolkit[1:]}/.config/nvidia-container-runtime/config.toml": (
            '[nvidia-container-cli]\nldconfig = "@/run/nvidia/driver/sbin/ldconfig.real"\n'
            '[nvidia-container-runtime]\nmode = "legacy"\nruntimes = ["runc"]\n'),
        f"{toolkit[1:]}/nvidia-container-runtime": "x", "run/nvidia/driver/sbin/ldconfig.real": "x",
        "usr/bin/runc": "x"})
    for name in (f"{toolkit[1:]}/nvidia-container-runtime", "run/nvidia/driver/sbin/ldconfig.real", "usr/bin/runc"):
        (tmp_path / name).chmod(0o755)
    result = doctor(root=tmp_path)
    assert result.json["node"]["driver"] == "580.95.05"
    assert [f for f in result.findings if f["code"].startswith("GL8")] == []
    assert result.json["summary"]["files_checked"] == 2
    (tmp_path / "run/nvidia/driver/sbin/ldconfig.real").unlink()
    assert ("GL806", 2, 12) in doctor(root=tmp_path).at()


def test_the_library_the_loader_picks_decides(tmp_path):
    root = tmp_path / "node"
    shutil.copytree(NODES / "healthy", root, symlinks=True)
    lib = root / "usr/lib/x86_64-linux-gnu"
    os.symlink("libnvidia-ml.so.580.95.05", lib / "libnvidia-ml.so.1")
    write_files(root, {"usr/local/nvidia/lib64/libnvidia-ml.so.570.172.08": "a leftover copy\n"})
    assert doctor(root=root).findings == []
    write_files(root, {"usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.105.08": "library\n"})
    (lib / "libnvidia-ml.so.1").unlink()
    os.symlink("libnvidia-ml.so.580.105.08", lib / "libnvidia-ml.so.1")
    result = doctor(root=root)
    assert sorted(result.codes()) == ["GL805", "GL808"]  # the CDI spec is the old driver's too
    gl805 = next(f for f in result.findings if f["code"] == "GL805")
    assert (gl805["line"], gl805["column"]) == (1, 49)
    assert "user-space driver is 580.105.08 (libnvidia-ml.so.1)" in gl805["message"]


def test_links_on_the_path_resolve_inside_the_root(tmp_path):
    root = _node(tmp_path, "nvidia-container-runtime", {"etc/alternatives/nvidia-container-runtime": "x"})
    (root / "usr/bin").mkdir(parents=True)
    os.symlink("/etc/alternatives/nvidia-container-runtime", root / "usr/bin/nvidia-container-runtime")
    assert "GL806" not in doctor(root=root).codes()
    os.symlink("/bin/sh", root / "usr/bin/runc")  # exists on this machine, not in the root
    (root / "etc/alternatives/nvidia-container-runtime").unlink()
    assert "GL806" in doctor(root=root).codes()


def test_imports_outside_the_usual_folders_are_read(tmp_path):
    write_files(tmp_path, {
        "proc/modules": "ext4 1114112 2 - Live 0x0000000000000000\n",
        "etc/containerd/config.toml": ('version = 2\nimports = ["/opt/gpu/containerd/*.toml", "local.toml"]\n'
                                       '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
                                       '  runtime_type = "io.containerd.runc.v2"\n'),
        "opt/gpu/containerd/nvidia.toml": (  # containerd 1.x: this CRI table replaces the main file's
            'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
            '  runtime_type = "io.containerd.runc.v2"\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
            '  runtime_type = "io.containerd.runc.v2"\n'
            '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
            '    BinaryName = "/usr/bin/nvidia-container-runtime"\n'),
        "etc/containerd/local.toml": 'version = 2\n',
    })
    result = doctor(root=tmp_path)
    assert result.json["summary"]["files_checked"] == 3
    assert "GL101" not in result.codes()  # the drop-in is read as the main file's import
    gl806 = [f for f in result.findings if f["code"] == "GL806"]
    assert [(f["path"].rsplit("/", 3)[-3:], f["line"]) for f in gl806] == [(["gpu", "containerd", "nvidia.toml"], 7)]


# Bad node files never produce a traceback either.
NODE_FILES = ("proc/modules", "proc/driver/nvidia/version", "proc/bus/pci/devices", "proc/sys/kernel/osrelease",
              "etc/nvidia-container-runtime/config.toml", "etc/cdi/nvidia.yaml", "var/run/cdi/x.json",
              "etc/containerd/config.toml")
NODE_FRAGMENTS = st.sampled_from([
    "nvidia 1 0 - Live 0x0\n", "nouveau 1 0 - Live 0x0\n", "Kernel Module  580.95.05  x\n",
    "Kernel Module for x86_64 5\n", "0300\t10de2330\t0\n", "../..\n", "6.8.0-49-generic\n",
    "[nvidia-container-cli]\n", "[nvidia-container-runtime]\n", "[nvidia-container-runtime.modes.cdi]\n",
    'mode = "cdi"\n', "mode = 1\n", 'ldconfig = "@/sbin/ldconfig.real"\n', "runtimes = [1, \"runc\"]\n",
    "no-cgroups = []\n", "cdiVersion: 0.5.0\n", "kind: nvidia.com/gpu\n", "devices:\n", "  - name: all\n",
    "    containerEdits: {mounts: [{hostPath: /usr/lib/libcuda.so.470.1.2}]}\n", '{"cdiVersion": [], ',
    '"devices": {}}', 'imports = ["/etc/x/*.toml", 3]\n', "version = 2\n",
    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n', "BinaryName = \"nvidia\"\n",
    "\t", " ", ":", "[", "]", "{", "}", "\"", "#", "\x00", "\ufeff", "é",
])
NODE_TEXTS = st.lists(st.one_of(NODE_FRAGMENTS, st.text(max_size=15)), max_size=20).map("".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.dictionaries(st.sampled_from(NODE_FILES), NODE_TEXTS, max_size=5))
def test_any_node_is_checked_without_an_internal_error(tmp_path_factory, files):
    root = tmp_path_factory.mktemp("node")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(text.encode("utf-8", "surrogatepass"))
    result = run_gpulint("doctor", "--isolated", "--failure-threshold", "none", "--root", str(root))
    assert result.rc == 0, result.err
    assert "Traceback" not in result.err


def test_the_daemons_units_and_drop_ins_are_read_from_the_node(tmp_path):
    write_files(tmp_path, {
        "proc/modules": "ext4 1114112 2 - Live 0x0000000000000000\n",
        "lib/systemd/system/docker.service": "[Service]\nType=notify\nExecStart=/usr/bin/dockerd -H fd://\n",
        "etc/systemd/system/docker.service.d/nvidia.conf":
            "[Service]\nExecStart=\nExecStart=/usr/bin/dockerd -H fd:// --add-runtime nvidia=/usr/bin/nvidia-container-runtime\n",
        "etc/docker/daemon.json": '{"hosts": ["tcp://0.0.0.0:2375"]}\n',
    })
    result = doctor(root=tmp_path)
    found = sorted((f["code"], f["path"].rsplit("/", 1)[-1], f["line"], f["column"]) for f in result.findings
                   if f["code"] != "GL801")
    # dockerd refuses -H beside hosts; the runtime the drop-in adds points at a missing binary
    assert found == [("GL208", "nvidia.conf", 3, 28), ("GL806", "nvidia.conf", 3, 58)]
