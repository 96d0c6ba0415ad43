"""Cross-file rules (GL7xx): each fixture folder is one linted set of manifests
and node runtime configs; `# expect:` marks work as in test_kubernetes."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, lint_fixture, run_gpulint, validated_sarif, write_files
from test_kubernetes import expected

CROSS = FIXTURES / "crossfile"


def lint_set(folder: str, *args: str):
    return lint_fixture(f"crossfile/{folder}", "--select", "GL7", "--failure-threshold", "none", *args)


@pytest.mark.parametrize("folder", sorted(p.name for p in CROSS.iterdir() if p.is_dir()))
def test_folder_findings_are_exactly_the_marked_ones(folder):
    result = lint_set(folder)
    assert result.rc == 0, result.err
    assert sorted(result.at()) == expected(CROSS / folder)


def test_unknown_class_is_a_warning_next_to_other_classes_and_info_alone():
    typo = lint_set("class-typo").findings[0]
    assert typo["severity"] == "warning"
    assert "`nvidia-gpu`" in typo["message"]
    assert [(r["path"].rsplit("/", 1)[-1], r["line"]) for r in typo["related"]] == [("runtimeclass.yaml", 4)]
    assert lint_set("class-no-runtimeclasses").findings[0]["severity"] == "info"


def test_missing_handler_names_the_configs_searched():
    finding = lint_set("handler-missing").findings[0]
    assert finding["severity"] == "error"
    assert [(r["path"].rsplit("/", 2)[-2:], r["line"], r["message"]) for r in finding["related"]] == [
        (["node", "config.toml"], 6, "containerd config searched (runtimes: `runc`)")]


def test_a_template_that_renders_runtime_names_may_define_any_handler(tmp_path):
    source = CROSS / "handler-missing"
    write_files(tmp_path, {
        "runtimeclass.yaml": (source / "manifests" / "runtimeclass.yaml").read_text(),
        "config.toml.j2": (
            'version = 3\n'
            '{% for runtime in containerd_runtimes %}\n'
            '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.{{ runtime.name }}]\n'
            '  runtime_type = "{{ runtime.type }}"\n'
            '{% endfor %}\n'),
    })
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL702", ".", cwd=tmp_path)
    assert result.findings == [], result.findings


def test_missing_handler_is_silent_without_node_configs():
    result = lint_fixture("crossfile/handler-missing/manifests", "--select", "GL7")
    assert result.rc == 0 and result.codes() == []


def test_device_plugin_points_at_the_default_runtime_setting():
    finding = lint_set("plugin-default-runc").findings[0]
    assert finding["severity"] == "error"
    assert [(r["line"], r["column"], r["message"]) for r in finding["related"]] == [
        (4, 3, "default runtime `runc`")]


def test_device_plugin_with_an_unset_default_points_at_the_file(tmp_path):
    plugin = (CROSS / "plugin-default-runc" / "manifests" / "device-plugin.yaml").read_text()
    config = ('version = 2\n\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
              '  runtime_type = "io.containerd.runc.v2"\n')
    write_files(tmp_path, {"ds.yaml": plugin, "config.toml": config})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL703", ".", cwd=tmp_path)
    assert [(f["line"], [(r["line"], r["message"]) for r in f["related"]]) for f in result.findings] == [
        (14, [(1, "default runtime `runc`")])]


def test_device_plugin_on_docker_nodes_without_the_nvidia_default(tmp_path):
    """Through dockershim or cri-dockerd every pod runs with dockerd's default runtime
    (NVIDIA/k8s-device-plugin#100); an NVIDIA default in daemon.json is what it needs."""
    plugin = (CROSS / "plugin-default-runc" / "manifests" / "device-plugin.yaml").read_text()
    daemon = ('{\n  "runtimes": {\n    "nvidia": {"path": "/usr/bin/nvidia-container-runtime"}\n  }\n}\n')
    write_files(tmp_path, {"ds.yaml": plugin, "etc/docker/daemon.json": daemon})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL703", ".", cwd=tmp_path)
    [finding] = result.findings
    assert (finding["line"], [(r["path"], r["line"]) for r in finding["related"]]) == (
        14, [("etc/docker/daemon.json", 1)])
    assert '"default-runtime": "nvidia"' in finding["message"] and finding["severity"] == "warning"
    default = daemon.replace("{\n", '{\n  "default-runtime": "nvidia",\n', 1)
    write_files(tmp_path, {"etc/docker/daemon.json": default})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL703", ".", cwd=tmp_path)
    assert result.findings == []


def test_related_locations_reach_sarif():
    result = lint_set("handler-missing", "--format", "sarif")
    sarif = validated_sarif(result.out)
    found = sarif["runs"][0]["results"]
    assert [r["ruleId"] for r in found] == ["GL702"]
    locations = found[0]["relatedLocations"]
    assert locations[0]["physicalLocation"]["artifactLocation"]["uri"].endswith("node/config.toml")


def test_a_handler_the_api_server_rejects_is_reported_once_by_gl510():
    """`nvidia_cdi` is no DNS-1123 label: GL510 says so; GL702 would only add advice
    (define a `nvidia_cdi` runtime) that cannot make the RuntimeClass valid."""
    result = lint_fixture("crossfile/handler-invalid", "--failure-threshold", "none")
    assert [(f["code"], f["line"], f["column"]) for f in result.findings] == [("GL510", 5, 10)]


def test_missing_handler_points_at_the_runtimes_of_a_drop_in(tmp_path):
    """The runtimes searched are in the drop-in: the related location is there, not the
    main file's first line."""
    source = CROSS / "handler-in-dropin"
    write_files(tmp_path, {
        "node/config.toml": (source / "node" / "config.toml").read_text(),
        "node/conf.d/99-nvidia.toml": (source / "node" / "conf.d" / "99-nvidia.toml").read_text(),
        "runtimeclass.yaml": "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n"
                             "  name: nvidia-cdi\nhandler: nvidia-cdi\n",
    })
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL702", ".", cwd=tmp_path)
    [finding] = result.findings
    assert [(r["path"], r["line"], r["column"], r["message"]) for r in finding["related"]] == [
        ("node/conf.d/99-nvidia.toml", 6, 1, "containerd config searched (runtimes: `nvidia`, `runc`)")]


GKE_POD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: serve
spec:
  selector: {matchLabels: {app: serve}}
  template:
    metadata: {labels: {app: serve}}
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: serve
          image: registry.example.com/team/serve:1.4
          resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize("dockerfile, expected", [
    # the base drops the driver path and the image only appends to it
    ("FROM nvidia/cuda:12.8.1-runtime-ubuntu22.04\nENV LD_LIBRARY_PATH=/opt/serve/lib:${LD_LIBRARY_PATH}\n",
     ("/usr/local/cuda/lib64", ("docker/serve.Dockerfile", 1))),
    # the image replaces the value altogether
    ("FROM nvidia/cuda:12.6.3-runtime-ubuntu22.04\nENV LD_LIBRARY_PATH=/opt/serve/lib\n",
     ("/opt/serve/lib", ("docker/serve.Dockerfile", 2))),
    ("FROM nvidia/cuda:12.9.1-runtime-ubuntu22.04\nENV LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH}\n",
     None),
    ("FROM nvidia/cuda:13.0.2-runtime-ubuntu24.04\n", None),
])
def test_gke_follows_the_pod_to_the_dockerfile_that_builds_its_image(tmp_path, dockerfile, expected):
    write_files(tmp_path, {
        "pyproject.toml": '[tool.gpulint.images]\n"registry.example.com/team/serve" = "docker/serve.Dockerfile"\n',
        "docker/serve.Dockerfile": dockerfile,
        "deploy/serve.yaml": GKE_POD,
    })
    result = run_gpulint("--format", "json", "--select", "GL704", "--failure-threshold", "none", "deploy",
                         cwd=tmp_path)
    if expected is None:
        assert result.findings == []
        return
    [found] = result.findings
    value, dockerfile_line = expected
    assert (found["path"], found["line"], found["column"]) == ("deploy/serve.yaml", 14, 18)
    assert f"sets LD_LIBRARY_PATH to `{value}`" in found["message"]
    assert [(r["path"], r["line"]) for r in found["related"]] == [("deploy/serve.yaml", 11), dockerfile_line]


RUNC_CLASS = ("apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: plain\n"
              "handler: runc\n")
NVIDIA_ONLY = ('version = {version}\n[plugins.{plugin}.containerd]\n  default_runtime_name = "nvidia"\n'
               '[plugins.{plugin}.containerd.runtimes.nvidia]\n  runtime_type = "io.containerd.runc.v2"\n'
               '[plugins.{plugin}.containerd.runtimes.nvidia.options]\n'
               '  BinaryName = "/usr/bin/nvidia-container-runtime"\n')


@pytest.mark.parametrize("version, plugin, found", [
    (2, '"io.containerd.grpc.v1.cri"', ["GL702"]),   # containerd 1.x drops the built-in runc
    (3, '"io.containerd.cri.v1.runtime"', []),       # a version 3 file is read by 2.x only, which keeps it
])
def test_a_runc_handler_needs_runc_written_where_containerd_1_reads_the_config(tmp_path, version, plugin, found):
    write_files(tmp_path, {"runtimeclass.yaml": RUNC_CLASS,
                           "config.toml": NVIDIA_ONLY.format(version=version, plugin=plugin)})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL702", ".", cwd=tmp_path)
    assert result.codes() == found
    if found:
        assert "containerd 1.6/1.7 keep no built-in `runc`" in result.findings[0]["message"]
        assert (result.findings[0]["line"], result.findings[0]["column"]) == (5, 10)


def test_a_runc_handler_is_fine_when_the_config_writes_no_runtimes(tmp_path):
    write_files(tmp_path, {"runtimeclass.yaml": RUNC_CLASS,
                           "config.toml": 'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "pause:3.9"\n'})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL702", ".", cwd=tmp_path)
    assert result.codes() == []


_LEGACY_NODE = ('version = 2\n\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "runc"\n\n'
                '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
                '  runtime_type = "io.containerd.runc.v2"\n\n'
                '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
                '  runtime_type = "io.containerd.runc.v2"\n\n'
                '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
                '  BinaryName = "/usr/bin/nvidia-container-runtime"\n')
_GPU_JOB = ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n"
            "      restartPolicy: Never\n      containers:\n        - name: train\n          image: trainer:1\n"
            "          resources:\n            limits:\n              nvidia.com/gpu: 2\n")


def test_gpu_pod_on_nodes_that_default_to_runc(lint_files):
    """The device plugin's NVIDIA_VISIBLE_DEVICES reaches the GPUs only through the NVIDIA
    runtime (NVIDIA/nvidia-container-runtime#147)."""
    result = lint_files({"job.yaml": _GPU_JOB, "etc/containerd/config.toml": _LEGACY_NODE}, "--select", "GL516")
    [finding] = result.findings
    assert (finding["line"], finding["column"], [(r["line"], r["message"]) for r in finding["related"]]) == (
        14, 15, [(4, "default runtime `runc`")])
    assert "`runtimeClassName: nvidia`" in finding["message"]


@pytest.mark.parametrize("change", [
    # the pod selects a runtime class
    {"job.yaml": _GPU_JOB.replace("      restartPolicy", "      runtimeClassName: nvidia\n      restartPolicy")},
    # the NVIDIA runtime is the default
    {"etc/containerd/config.toml": _LEGACY_NODE.replace('= "runc"', '= "nvidia"', 1)},
    # CDI can hand the GPUs to runc
    {"etc/containerd/config.toml": _LEGACY_NODE.replace(
        '[plugins."io.containerd.grpc.v1.cri".containerd]\n',
        '[plugins."io.containerd.grpc.v1.cri"]\n  enable_cdi = true\n\n[plugins."io.containerd.grpc.v1.cri".containerd]\n')},
    {"plugin-config.yaml": "version: v1\nflags:\n  plugin:\n    deviceListStrategy: cdi-cri\n"},
    # a node without an NVIDIA runtime is no GPU node of this pod
    {"etc/containerd/config.toml": _LEGACY_NODE.split("\n\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia]")[0]},
    # containerd 2.x only
    {"etc/containerd/config.toml": _LEGACY_NODE.replace("version = 2", "version = 3").replace(
        "io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime")},
])
def test_gpu_pod_where_the_nodes_may_give_it_gpus(lint_files, change):
    files = {"job.yaml": _GPU_JOB, "etc/containerd/config.toml": _LEGACY_NODE, **change}
    assert lint_files(files, "--select", "GL516").findings == []
