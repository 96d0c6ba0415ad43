"""Kubernetes rules (GL5xx) through the CLI.

Fixtures mark every expected finding on its line with `# expect: GL501 @token`
(several separated by `;`): the finding must be on that line, at the column
where `token` first appears. Every other GL5xx finding in a fixture is a failure,
so the good fixtures assert that they are clean.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import FIXTURES, lint_fixture, run_gpulint, write_files

K8S = FIXTURES / "kubernetes"
MARK = re.compile(r"#\s*expect:\s*(.*)$")


def expected(target: Path) -> list[tuple[str, int, int]]:
    files = sorted(target.rglob("*.yaml")) if target.is_dir() else [target]
    out = []
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = MARK.search(line)
            for part in match.group(1).split(";") if match else ():
                code, token = (p.strip() for p in part.split("@", 1))
                out.append((code, number, line.index(token) + 1))
    return sorted(out)


def lint_k8s(relative: str, *args: str):
    return lint_fixture(f"kubernetes/{relative}", "--select", "GL5", "--preview",
                        "--failure-threshold", "none", *args)


TARGETS = sorted(
    [str(p.relative_to(K8S)) for p in K8S.glob("GL5[0-9][0-9]/*.yaml")]
    + [str(p.relative_to(K8S)) for p in K8S.glob("GL514/*") if p.is_dir()]
    + [str(p.relative_to(K8S)) for p in K8S.glob("misc/*.yaml")]
)


@pytest.mark.parametrize("target", TARGETS)
def test_fixture_findings_are_exactly_the_marked_ones(target):
    result = lint_k8s(target)
    assert result.rc == 0, result.err
    assert sorted(result.at()) == expected(K8S / target)


CRDS = {"PyTorchJob", "RayCluster", "LeaderWorkerSet"}


@pytest.mark.parametrize("variant", ["bad", "good"])
@pytest.mark.parametrize("rule", [f"GL5{n:02d}" for n in range(1, 15) if n != 10])
def test_fixtures_cover_pod_deployment_job_cronjob_and_a_crd(rule, variant):
    folder = K8S / rule / variant
    files = sorted(folder.glob("*.yaml")) if folder.is_dir() else [K8S / rule / f"{variant}.yaml"]
    documents = [d for f in files for d in f.read_text().split("\n---\n")]
    kinds = [(re.search(r"^kind: (\w+)", d, re.M).group(1), d) for d in documents]
    workloads = [(k, d) for k, d in kinds if k in CRDS | {"Pod", "Deployment", "Job", "CronJob"}]
    assert {"Pod", "Deployment", "Job", "CronJob"} <= {k for k, _ in workloads}
    assert CRDS & {k for k, _ in workloads}
    if variant == "bad":
        assert all("# expect: " + rule in d for _, d in workloads)


def test_every_kind_and_crd_is_reached():
    codes = lint_k8s("misc/kinds.yaml").codes()
    assert codes == ["GL501"] * 13


def test_severities_follow_the_issue(lint_files):
    result = lint_files({"pod.yaml": """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  nodeSelector:
    nvidia.com/gpu.count: 8
    nvidia.com/cuda.driver.major: "550"
  containers:
    - name: no-gpu
      image: registry.example.com/a:1
      env:
        - name: NVIDIA_VISIBLE_DEVICES
          value: "0,1"
        - name: NVIDIA_DRIVER_CAPABILITIES
          value: all
    - name: from-secret
      image: registry.example.com/a:1
      env:
        - name: NVIDIA_VISIBLE_DEVICES
          valueFrom:
            configMapKeyRef: {name: gpus, key: list}
    - name: with-gpu
      image: registry.example.com/a:1
      env:
        - name: NVIDIA_VISIBLE_DEVICES
          value: all
      resources:
        limits:
          nvidia.com/gpu: 1
"""}, "--select", "GL5", "--failure-threshold", "none")
    assert result.at() == [("GL511", 7, 27), ("GL511", 8, 5), ("GL505", 13, 17), ("GL505", 15, 17),
                           ("GL505", 20, 17), ("GL505", 26, 17)]
    assert [f["severity"] for f in result.findings] == ["error", "warning", "error", "warning",
                                                         "warning", "warning"]


@pytest.mark.parametrize("name, fixed", [
    ("nvidia.com/GPU", "nvidia.com/gpu"),
    ("nvidia/gpu", "nvidia.com/gpu"),
    ("alpha.kubernetes.io/nvidia-gpu", "nvidia.com/gpu"),
    ("nvidia.com/mig-1g.10GB", "nvidia.com/mig-1g.10gb"),
])
def test_resource_name_fix(tmp_path, name, fixed):
    template = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
                "    - name: c\n      image: registry.example.com/a:1\n      resources:\n"
                "        limits:\n          {}: 1\n")
    write_files(tmp_path, {"pod.yaml": template.format(name)})
    first = run_gpulint("--isolated", "--format", "json", "--select", "GL504", ".", cwd=tmp_path)
    assert first.at() == [("GL504", 11, 11)]
    _fix_twice(tmp_path, "GL504")
    assert (tmp_path / "pod.yaml").read_text() == template.format(fixed)


def test_a_legacy_request_is_renamed_only_beside_an_equal_limit(tmp_path):
    """`nvidia.com/gpu` may not be requested alone or below its limit, as the legacy name could."""
    text = CONTAINER.format("        requests:\n          alpha.kubernetes.io/nvidia-gpu: 1\n")
    write_files(tmp_path, {"pod.yaml": text})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL5", ".", cwd=tmp_path)
    [found] = result.findings
    assert found["code"] == "GL504" and not found.get("fix")
    assert "which goes in `limits` (requested alone, the pod is rejected)" in found["message"]
    both = CONTAINER.format("        requests:\n          alpha.kubernetes.io/nvidia-gpu: 1\n"
                            "        limits:\n          alpha.kubernetes.io/nvidia-gpu: 1\n")
    write_files(tmp_path, {"pod.yaml": both})
    _fix_twice(tmp_path, "GL5")
    assert (tmp_path / "pod.yaml").read_text() == both.replace("alpha.kubernetes.io/nvidia-gpu", "nvidia.com/gpu")


def test_bare_gpu_name_is_only_an_unsafe_fix(tmp_path):
    text = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
            "    - name: c\n      image: registry.example.com/a:1\n      resources:\n"
            "        limits:\n          gpu: 1\n")
    write_files(tmp_path, {"pod.yaml": text})
    run_gpulint("--isolated", "--fix", "--select", "GL504", ".", cwd=tmp_path)
    assert (tmp_path / "pod.yaml").read_text() == text
    run_gpulint("--isolated", "--fix", "--unsafe-fixes", "--select", "GL504", ".", cwd=tmp_path)
    assert "nvidia.com/gpu: 1" in (tmp_path / "pod.yaml").read_text()


def _fix_twice(folder: Path, select: str, *args: str) -> None:
    """Apply fixes, check nothing of `select` remains, and that a second run changes nothing."""
    run_gpulint("--isolated", "--fix", "--select", select, *args, ".", cwd=folder)
    after = {p: p.read_text() for p in folder.rglob("*.yaml")}
    again = run_gpulint("--isolated", "--fix", "--format", "json", "--select", select, *args, ".",
                        cwd=folder)
    assert again.codes() == []
    assert {p: p.read_text() for p in folder.rglob("*.yaml")} == after


CONTAINER = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
    - name: c
      image: registry.example.com/a:1
      resources:
{}"""

FIXES = {
    "GL501-into-existing-limits": (
        "GL501",
        "        requests:\n          cpu: \"1\"\n          nvidia.com/gpu: 2  # two cards\n"
        "        limits:\n          cpu: \"1\"\n",
        "        requests:\n          cpu: \"1\"\n        limits:\n          nvidia.com/gpu: 2  # two cards\n"
        "          cpu: \"1\"\n",
    ),
    "GL501-rename-requests": (
        "GL501",
        "        requests:\n          nvidia.com/gpu: 1\n",
        "        limits:\n          nvidia.com/gpu: 1\n",
    ),
    "GL501-new-limits": (
        "GL501",
        "        requests:\n          memory: 8Gi\n          nvidia.com/gpu: 1\n",
        "        limits:\n          nvidia.com/gpu: 1\n        requests:\n          memory: 8Gi\n",
    ),
    "GL501-whole-requests-block": (
        "GL501",
        "        requests:\n          nvidia.com/gpu: 1\n        limits:\n          memory: 8Gi\n",
        "        limits:\n          nvidia.com/gpu: 1\n          memory: 8Gi\n",
    ),
    "GL502": (
        "GL502",
        "        requests:\n          nvidia.com/gpu: 1\n        limits:\n          nvidia.com/gpu: \"4\"\n",
        "        requests:\n          nvidia.com/gpu: \"4\"\n        limits:\n          nvidia.com/gpu: \"4\"\n",
    ),
}


@pytest.mark.parametrize("case", sorted(FIXES))
def test_resource_fixes(tmp_path, case):
    code, before, after = FIXES[case]
    write_files(tmp_path, {"pod.yaml": CONTAINER.format(before)})
    _fix_twice(tmp_path, code)
    assert (tmp_path / "pod.yaml").read_text() == CONTAINER.format(after)


RUNTIME_CLASS_BEFORE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  runtimeClassName: nvidia
  selector:
    matchLabels: {app: d}
  template:
    metadata:
      runtimeClassName: nvidia
      labels: {app: d}
    spec:
      containers:
        - name: c
          image: registry.example.com/a:1
          runtimeClassName: nvidia
"""
RUNTIME_CLASS_AFTER = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  selector:
    matchLabels: {app: d}
  template:
    metadata:
      labels: {app: d}
    spec:
      runtimeClassName: nvidia
      containers:
        - name: c
          image: registry.example.com/a:1
"""


def test_misplaced_runtime_class_is_reported_everywhere_and_moved(tmp_path):
    write_files(tmp_path, {"deploy.yaml": RUNTIME_CLASS_BEFORE})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL509", ".", cwd=tmp_path)
    assert result.at() == [("GL509", 6, 3), ("GL509", 11, 7), ("GL509", 17, 11)]
    assert "the Deployment's `spec`" in result.findings[0]["message"]
    _fix_twice(tmp_path, "GL509")
    assert (tmp_path / "deploy.yaml").read_text() == RUNTIME_CLASS_AFTER


def test_misplaced_runtime_class_conflicting_with_the_pod_spec_is_not_moved(tmp_path):
    text = RUNTIME_CLASS_AFTER.replace("          image: registry.example.com/a:1\n",
                                       "          image: registry.example.com/a:1\n"
                                       "          runtimeClassName: kata\n")
    write_files(tmp_path, {"deploy.yaml": text})
    result = run_gpulint("--isolated", "--fix", "--format", "json", "--select", "GL509", ".",
                         cwd=tmp_path)
    assert result.at() == [("GL509", 16, 11)]
    assert (tmp_path / "deploy.yaml").read_text() == text


def test_runtime_class_api_version_fix(tmp_path):
    write_files(tmp_path, {"rc.yaml": (K8S / "GL510" / "bad.yaml").read_text()})
    run_gpulint("--isolated", "--fix", "--select", "GL510", ".", cwd=tmp_path)
    text = (tmp_path / "rc.yaml").read_text()
    assert text.startswith("apiVersion: node.k8s.io/v1  # expect")
    assert "node.k8s.io/v1alpha1" in text  # its shape differs: not rewritten
    again = run_gpulint("--isolated", "--fix", "--format", "json", "--select", "GL510", ".",
                        cwd=tmp_path)
    assert [line for _, line, _ in again.at()] == [11, 13, 21]
    assert (tmp_path / "rc.yaml").read_text() == text


def test_selector_fixes_quote_safely_and_rename_only_when_unsafe(tmp_path):
    before = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  nodeSelector:\n"
              "    nvidia.com/gpu.count: 8\n    nvidia.com/cuda.runtime.major: \"12\"\n"
              "  containers:\n    - name: c\n      image: registry.example.com/a:1\n")
    write_files(tmp_path, {"pod.yaml": before})
    run_gpulint("--isolated", "--fix", "--select", "GL511", ".", cwd=tmp_path)
    quoted = before.replace("gpu.count: 8", 'gpu.count: "8"')
    assert (tmp_path / "pod.yaml").read_text() == quoted
    _fix_twice(tmp_path, "GL511", "--unsafe-fixes")
    assert (tmp_path / "pod.yaml").read_text() == quoted.replace(
        "cuda.runtime.major", "cuda.runtime-version.major")


def test_pod_template_annotation_suppresses(lint_files):
    text = (K8S / "GL505" / "bad.yaml").read_text().split("\n---\n")[1]
    text = text.replace("      labels:\n", "      annotations:\n"
                        "        gpulint.io/disable: \"GL505 -- metrics agent reads every GPU\"\n"
                        "      labels:\n", 1)
    result = lint_files({"deploy.yaml": text}, "--select", "GL5", "--failure-threshold", "none")
    assert result.codes() == []
    shown = lint_files({"deploy.yaml": text}, "--select", "GL5", "--no-inline-suppressions",
                       "--failure-threshold", "none")
    assert shown.codes() == ["GL505", "GL505"]


def test_gpu_management_daemonsets_are_exempt(lint_files):
    result = lint_files({"gfd.yaml": """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: gpu-feature-discovery
spec:
  selector: {matchLabels: {app: gfd}}
  template:
    spec:
      containers:
        - name: gfd
          image: nvcr.io/nvidia/k8s-device-plugin:v0.17.1
          env:
            - name: NVIDIA_VISIBLE_DEVICES
              value: all
          securityContext:
            privileged: true
          volumeMounts:
            - {name: driver, mountPath: /driver-root}
      volumes:
        - name: driver
          hostPath:
            path: /run/nvidia/driver
"""}, "--select", "GL5")
    assert result.rc == 0 and result.codes() == []


def test_templated_chart_is_checked_without_false_findings():
    result = lint_k8s("chart")
    assert result.rc == 0, result.err
    assert result.codes() == []


def test_corpus_findings_are_the_reviewed_ones():
    corpus = FIXTURES.parent.parent.parent / "shared" / "corpus" / "k8s"
    if not corpus.is_dir():
        pytest.skip("the shared manifest corpus is not present")
    result = run_gpulint("--isolated", "--preview", "--format", "json", "--select", "GL5,GL7",
                         "--failure-threshold", "none", str(corpus))
    assert result.rc == 0, result.err
    assert result.codes() == []


def _pod_limits(entries: str) -> str:
    return CONTAINER.format("        limits:\n" + "".join(f"          {e}\n" for e in entries.split(";")))


@pytest.mark.parametrize("value, says", [
    ("0.5", 'is 0.5 of a device, not a whole number: extended resources are counted in whole '
            'devices and the API server rejects the pod ("must be an integer")'),
    ('"-1"', 'is negative: extended resources are counted in whole devices and the API server '
             'rejects the pod ("must be greater than or equal to 0")'),
    ("1Gi", 'asks for 1073741824 devices: extended resources are counted in whole devices and '
            'the API server accepts it, but no node has that many: the pod stays Pending with '
            '"Insufficient nvidia.com/gpu"'),
    ("1e999999999", "is not a quantity: extended resources are counted in whole devices and the "
                    "API server rejects the pod (\"quantities must match the regular expression"),
    ("true", "is not a quantity"),
])
def test_quantity_message_names_what_the_api_server_does(lint_files, value, says):
    result = lint_files({"pod.yaml": _pod_limits(f"nvidia.com/gpu: {value}")}, "--select", "GL503")
    assert result.rc == 1, result.err
    assert result.at() == [("GL503", 11, 27)]
    message = result.findings[0]["message"]
    assert says in message and "time-slicing or MPS replicas" in message


@pytest.mark.parametrize("name, outcome", [
    ("gpu", '"gpu": "must be a standard resource for containers"'),
    ("nvidia.com/gpus", 'accepts the pod and it stays Pending with "Insufficient nvidia.com/gpus"'),
])
def test_resource_name_message_says_whether_the_pod_is_rejected(lint_files, name, outcome):
    result = lint_files({"pod.yaml": _pod_limits(f"{name}: 1")}, "--select", "GL504")
    assert outcome in result.findings[0]["message"]


def test_renames_never_write_a_duplicate_key(tmp_path):
    text = CONTAINER.format("        limits:\n          nvidia.com/GPU: 1\n          nvidia.com/gpu: 1\n")
    text = text.replace("spec:\n", "spec:\n  nodeSelector:\n    nvidia.com/cuda.driver.major: \"550\"\n"
                        "    nvidia.com/cuda.driver-version.major: \"550\"\n", 1)
    write_files(tmp_path, {"pod.yaml": text})
    result = run_gpulint("--isolated", "--fix", "--unsafe-fixes", "--format", "json", "--select",
                         "GL504,GL511", ".", cwd=tmp_path)
    assert result.at() == [("GL511", 7, 5), ("GL504", 14, 11)]
    assert [f["fix"] for f in result.findings] == [None, None]
    assert "the selector already requires `nvidia.com/cuda.driver-version.major`" in \
        result.findings[0]["message"]
    assert (tmp_path / "pod.yaml").read_text() == text


def test_selector_values_name_their_json_type(lint_files):
    result = lint_files({"pod.yaml": """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  nodeSelector:
    nvidia.com/gpu.present: true
    nvidia.com/gpu.product:
    nvidia.com/mig.capable: {value: "true"}
  containers:
    - name: c
      image: registry.example.com/a:1
"""}, "--select", "GL511")
    assert result.at() == [("GL511", 7, 29), ("GL511", 8, 5), ("GL511", 9, 29)]
    bool_, null, mapping = (f["message"] for f in result.findings)
    assert '"cannot unmarshal bool into Go struct field' in bool_
    assert "decodes as the empty string" in null and "unmarshal" not in null
    assert '"cannot unmarshal object into' in mapping
    assert [bool(f["fix"]) for f in result.findings] == [True, False, False]


def test_json_manifest_selector_is_quoted(tmp_path):
    text = ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},\n'
            ' "spec": {"nodeSelector": {"nvidia.com/gpu.count": 8},\n'
            '  "containers": [{"name": "c", "image": "registry.example.com/a:1"}]}}\n')
    write_files(tmp_path, {"pod.json": text})
    first = run_gpulint("--isolated", "--format", "json", "--select", "GL511", ".", cwd=tmp_path)
    assert first.at() == [("GL511", 2, 52)]
    assert "JSON number" in first.findings[0]["message"] and "YAML" not in first.findings[0]["message"]
    _fix_twice(tmp_path, "GL511")
    assert (tmp_path / "pod.json").read_text() == text.replace(": 8}", ': "8"}')


LWS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: vllm
spec:
  runtimeClassName: nvidia
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
          - name: leader
            image: vllm/vllm-openai:v0.6.0
    workerTemplate:
      spec:
        containers:
          - name: worker
            image: vllm/vllm-openai:v0.6.0
"""


def test_runtime_class_of_a_shared_spec_moves_into_every_pod_spec(tmp_path):
    write_files(tmp_path, {"lws.yaml": LWS})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL509", ".", cwd=tmp_path)
    assert result.at() == [("GL509", 6, 3)]
    _fix_twice(tmp_path, "GL509")
    assert (tmp_path / "lws.yaml").read_text() == LWS.replace("  runtimeClassName: nvidia\n", "").replace(
        "      spec:\n", "      spec:\n        runtimeClassName: nvidia\n")


def test_invalid_handler_is_shown_as_written(lint_files):
    result = lint_files({"rc.yaml": "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n"
                                    "  name: nvidia\nhandler: [nvidia]\n"}, "--select", "GL510")
    assert result.at() == [("GL510", 5, 10)]
    assert "handler `[nvidia]` is not" in result.findings[0]["message"]


def test_cuda_image_rule_follows_the_runtime_class_to_its_handler(lint_files):
    result = lint_files({
        "classes.yaml": """\
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: gpu
handler: gpu-runtime
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: nvidia
handler: runc
""",
        "pods.yaml": """\
apiVersion: v1
kind: Pod
metadata:
  name: on-gpu-class
spec:
  runtimeClassName: gpu
  containers:
    - name: sidecar
      image: nvidia/cuda:12.4.1-base-ubuntu22.04
      resources:
        limits:
          nvidia.com/gpu: 0
---
apiVersion: v1
kind: Pod
metadata:
  name: on-a-runc-class-named-nvidia
spec:
  runtimeClassName: nvidia
  containers:
    - name: sidecar
      image: nvidia/cuda:12.4.1-base-ubuntu22.04
""",
        "node/config.toml": """\
version = 2

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.gpu-runtime]
  runtime_type = "io.containerd.runc.v2"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.gpu-runtime.options]
  BinaryName = "/usr/bin/nvidia-container-runtime"
""",
    }, "--select", "GL513")
    assert [(f["path"], f["line"]) for f in result.findings] == [("pods.yaml", 9)]
    assert "with a GPU limit of 0 in a pod with `runtimeClassName: gpu`" in result.findings[0]["message"]


GPU_POOLS = {
    "karpenter.yaml": """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu-a100
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
      taints:
        - key: nvidia.com/gpu
          value: present
          effect: NoSchedule
""",
    "eksctl.yaml": """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata:
  name: ml
  region: us-west-2
nodeGroups:
  - name: gpu-h100
    instanceType: p5.48xlarge
    taints:
      nvidia.com/gpu: "present:NoSchedule"
      dedicated: "training:NoExecute"
""",
    "kubeadm.yaml": """\
apiVersion: kubeadm.k8s.io/v1beta3
kind: JoinConfiguration
nodeRegistration:
  taints:
    - key: gpu
      value: "true"
      effect: NoSchedule
""",
    "workloads.yaml": """\
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
spec:
  template:
    spec:
      restartPolicy: Never
      tolerations:
        - key: nvidia.com/gpu
          operator: Exists
      containers:
        - name: finetune
          image: registry.example.com/ml/finetune:0.3
          resources:
            limits:
              nvidia.com/gpu: 1
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin-daemonset
spec:
  selector:
    matchLabels: {name: nvidia-device-plugin-ds}
  template:
    metadata:
      labels: {name: nvidia-device-plugin-ds}
    spec:
      runtimeClassName: nvidia
      tolerations:
        - key: nvidia.com/gpu
          operator: Exists
          effect: NoSchedule
      containers:
        - name: nvidia-device-plugin-ctr
          image: nvcr.io/nvidia/k8s-device-plugin:v0.17.1
""",
}


def test_workloads_need_one_gpu_pool_and_node_daemons_every_pool(lint_files):
    result = lint_files(GPU_POOLS, "--select", "GL514", "--preview", "--failure-threshold", "none")
    # the Job fits the Karpenter pool; the device plugin is kept off the kubeadm pool, and
    # off the eksctl pool by its non-GPU `dedicated` taint, which a pod must tolerate too
    assert [(f["path"], f["line"], f["severity"]) for f in result.findings] == [
        ("workloads.yaml", 31, "error")]
    assert "`dedicated=training:NoExecute`, `gpu=true:NoSchedule`" in result.findings[0]["message"]
    assert sorted((r["path"], r["line"]) for r in result.findings[0]["related"]) == [
        ("eksctl.yaml", 11), ("kubeadm.yaml", 5)]


def test_configured_fleet_taints_are_a_gpu_pool(tmp_path):
    write_files(tmp_path, {
        "pyproject.toml": '[tool.gpulint]\npreview = true\n\n[tool.gpulint.fleet]\n'
                          '# dedicated=gpu:NoSchedule marks the training pool\n'
                          'taints = ["dedicated=gpu:NoSchedule"]\n',
        "job.yaml": GPU_POOLS["workloads.yaml"].split("---\n")[0],
    })
    result = run_gpulint("--format", "json", "--select", "GL514", ".", cwd=tmp_path)
    assert result.at() == [("GL514", 9, 7)]
    assert "`dedicated=gpu:NoSchedule`" in result.findings[0]["message"]
    assert [(r["path"], r["line"], r["column"]) for r in result.findings[0]["related"]] == [
        ("pyproject.toml", 6, 11)]


def test_a_misspelled_fleet_taint_stops_the_run(tmp_path):
    write_files(tmp_path, {".gpulint.toml": '[fleet]\ntaints = ["nvidia.com/gpu=present"]\n',
                           "job.yaml": GPU_POOLS["workloads.yaml"].split("---\n")[0]})
    result = run_gpulint("--format", "json", ".", cwd=tmp_path)
    assert result.rc == 2 and "fleet" in result.err and "taints" in result.err


@pytest.mark.parametrize("path, advice", [
    ("/dev/nvidiactl", "request `nvidia.com/gpu` and let the NVIDIA runtime inject"),
    ("/dev/dri", "`gpu.intel.com/i915`, `amd.com/gpu`"),
    ("/dev/dri/renderD128", "`gpu.intel.com/i915`, `amd.com/gpu`"),
    ("/run/nvidia/driver", "request `nvidia.com/gpu`"),
    ("/usr/local/nvidia/lib64", "request `nvidia.com/gpu`"),
    ("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "request `nvidia.com/gpu`"),
    ("/var/lib/kubelet/device-plugins", None),
    ("/dev/shm", None),
    ("/usr/lib/x86_64-linux-gnu", None),
])
def test_host_gpu_paths(lint_files, path, advice):
    text = CONTAINER.format("        limits:\n          cpu: \"1\"\n") + (
        f"  volumes:\n    - name: host\n      hostPath:\n        path: {path}\n")
    result = lint_files({"pod.yaml": text}, "--select", "GL507")
    if advice is None:
        assert result.findings == []
    else:
        assert result.at() == [("GL507", 15, 15)]
        assert advice in result.findings[0]["message"]


def test_invalid_handler_names_the_label_it_was_meant_to_be():
    result = lint_k8s("GL510/bad.yaml", "--select", "GL510")
    [handler] = [f for f in result.findings if f["line"] == 11]
    assert "use `nvidia-cdi` here and as the name of the containerd runtime table" in handler["message"]


def test_cuda_image_without_gpu_reports_a_hand_set_visible_devices_when_gl505_is_off():
    result = lint_k8s("GL513/reported-elsewhere.yaml", "--ignore", "GL505")
    assert sorted(result.at()) == [("GL501", 14, 11), ("GL513", 16, 14)]


# ---------------------------------------------------------------- GPU quantities the API does not read


def test_a_misspelt_resources_key_is_renamed_and_then_valid(tmp_path):
    write_files(tmp_path, {"pod.yaml": (K8S / "GL515" / "misplaced.yaml").read_text()})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL515", ".", cwd=tmp_path)
    singular = result.findings[0]["message"]
    assert "`resources.limit`" in singular and "strict decoding error: unknown field" in singular
    assert "the container requests no GPU" in singular and "write `resources.limits`" in singular
    assert "its GPUs still come from `resources.limits`" in result.findings[-1]["message"]
    run_gpulint("--isolated", "--fix", "--select", "GL515", ".", cwd=tmp_path)
    fixed = (tmp_path / "pod.yaml").read_text()
    assert "        limits:  # expect: GL515 @limit\n" in fixed and "        requests:  # expect" in fixed
    # no key to rename to: a flat quantity and `limits` outside `resources` stay for the user
    after = run_gpulint("--isolated", "--format", "json", "--select", "GL515", ".", cwd=tmp_path)
    assert [f["line"] for f in after.findings] == [29, 30]


NVIDIA_DEFAULT_NODES = {
    "node/config.toml": """\
version = 2

[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "nvidia"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
  runtime_type = "io.containerd.runc.v2"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
  BinaryName = "/usr/bin/nvidia-container-runtime"
""",
    "node/daemon.json": """\
{"default-runtime": "nvidia",
 "runtimes": {"nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": []}}}
""",
}


@pytest.mark.parametrize("config", sorted(NVIDIA_DEFAULT_NODES))
def test_a_zero_gpu_limit_under_an_nvidia_default_runtime_gets_every_gpu(tmp_path, config):
    write_files(tmp_path, {"pod.yaml": (K8S / "GL513" / "zero-limit-default-runtime.yaml").read_text(),
                           config: NVIDIA_DEFAULT_NODES[config]})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL513", ".", cwd=tmp_path)
    assert [(f["line"], f["severity"]) for f in result.findings] == [(11, "warning"), (31, "warning")]
    assert "makes the NVIDIA runtime the default, so it gets every GPU of the node" in result.findings[0]["message"]


CUDA_POD_WITHOUT_GPUS = """\
apiVersion: v1
kind: Pod
metadata:
  name: cpu-side
spec:
  containers:
    - name: prep
      image: nvidia/cuda:12.4.1-runtime-ubuntu22.04
"""


@pytest.mark.parametrize("config", sorted(NVIDIA_DEFAULT_NODES))
def test_no_gpu_limit_where_every_node_defaults_to_the_nvidia_runtime(tmp_path, config):
    """NVIDIA/k8s-device-plugin#87: without a runtime class the pod runs under the node's
    default runtime; when that is NVIDIA's on every linted node, the image's
    NVIDIA_VISIBLE_DEVICES=all hands it every GPU."""
    write_files(tmp_path, {"pod.yaml": CUDA_POD_WITHOUT_GPUS, config: NVIDIA_DEFAULT_NODES[config]})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL513", ".", cwd=tmp_path)
    assert [(f["line"], f["severity"]) for f in result.findings] == [(8, "warning")]
    assert "every linted node configuration makes the NVIDIA runtime the default" in result.findings[0]["message"]


def test_no_gpu_limit_is_not_judged_without_an_nvidia_default_on_every_node(tmp_path):
    write_files(tmp_path, {"pod.yaml": CUDA_POD_WITHOUT_GPUS,
                           "gpu/daemon.json": NVIDIA_DEFAULT_NODES["node/daemon.json"],
                           "cpu/daemon.json": '{"log-driver": "json-file"}\n'})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL513", ".", cwd=tmp_path)
    assert result.findings == []
    write_files(tmp_path / "alone", {"pod.yaml": CUDA_POD_WITHOUT_GPUS})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL513", "alone", cwd=tmp_path)
    assert result.findings == []


# ---------------------------------------------------------------- Kustomize patches


def test_a_kustomize_patch_is_a_partial_object(tmp_path):
    """No GL501 for a limit the base may hold, and no fix that rewrites a patch."""
    import shutil

    shutil.copytree(K8S / "kustomize", tmp_path / "kustomize")
    result = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", ".", cwd=tmp_path)
    found = {(f["path"].split("kustomize/")[-1], f["line"], f["code"]): f.get("fix") for f in result.findings}
    assert set(found) == {("overlay/runtime.yaml", 7, "GL509"), ("overlay/standalone.yaml", 12, "GL501")}
    assert found[("overlay/runtime.yaml", 7, "GL509")] is None
    assert found[("overlay/standalone.yaml", 12, "GL501")] is not None  # not listed as a patch
    before = (tmp_path / "kustomize" / "overlay" / "runtime.yaml").read_text()
    run_gpulint("--isolated", "--fix", ".", cwd=tmp_path)
    assert (tmp_path / "kustomize" / "overlay" / "runtime.yaml").read_text() == before


# ---------------------------------------------------------------- what kubectl reads


def test_a_key_written_twice_is_a_warning_at_the_second_key():
    """kubectl apply -f keeps the later value silently (kubernetes/kubernetes#99286);
    kustomize refuses the file with go-yaml v3's message."""
    result = lint_fixture("kubernetes/reading/duplicate-keys.yaml", "--failure-threshold", "none")
    assert [(f["code"], f["severity"], f["line"], f["column"]) for f in result.findings] \
        == [("GL001", "warning", 13, 9)]
    found = result.findings[0]
    assert 'mapping key "limits" already defined at line 11' in found["message"]
    assert "`kubectl apply -f` keeps this later value" in found["message"]
    assert [(r["line"], r["column"]) for r in found["related"]] == [(11, 9)]


def test_a_fix_inside_an_anchor_is_unsafe_and_names_the_alias(tmp_path):
    text = (K8S / "reading" / "anchored-request.yaml").read_text()
    write_files(tmp_path, {"pod.yaml": text})
    result = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", ".", cwd=tmp_path)
    assert result.at() == [("GL502", 12, 11)]  # the request is written at the anchor
    assert "container `eval` requests 2" in result.findings[0]["message"]
    fix = result.findings[0]["fix"]
    assert fix["safe"] is False
    assert "`&two-gpus` (line 10), which `*two-gpus` also uses at line 18" in fix["description"]
    run_gpulint("--isolated", "--fix", "--failure-threshold", "none", ".", cwd=tmp_path)
    assert (tmp_path / "pod.yaml").read_text() == text  # a safe-only run leaves it alone


def test_a_merge_key_must_name_mappings(lint_files):
    result = lint_files({"pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  <<: 3\n  name: p\n"},
                        "--failure-threshold", "none")
    assert result.at() == [("GL001", 4, 7)]
    assert "map merge requires a mapping or a sequence of mappings" in result.findings[0]["message"]


def test_a_manifest_template_named_without_yaml_is_read(lint_files):
    text = ("# rendered by the installer\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ name }}\nspec:\n"
            "  containers:\n  - name: c\n    image: nvidia/cuda:12.9.1-base-ubuntu24.04\n"
            "    resources:\n      requests:\n        nvidia.com/gpu: 1\n")
    run = lint_files({"pod.template": text, "notes.template": "apiVersion is explained below\n"})
    assert [(f["path"], f["code"], f["line"]) for f in run.findings] == [("pod.template", "GL501", 12)]
    assert (run.json["summary"]["files_checked"], run.json["summary"]["files_skipped"]) == (1, 1)


def test_gpu_quota_entries_the_quota_never_counts(tmp_path):
    """Extended resources are charged to a quota only as requests.<name> (kubeflow/website#2460)."""
    write_files(tmp_path, {"quota.yaml": "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\nspec:\n  hard:\n"
                                         "    nvidia.com/mig-2g.20gb: 1\n    limits.nvidia.com/mig-1g.10gb: 2\n"
                                         "    limits.cpu: 4\n    requests.nvidia.com/gpu: 1\n"
                                         "    limits.nvidia.com/gpu: 1\n"})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL518", ".", cwd=tmp_path)
    # the bare name and a `limits.` entry alone; beside `requests.` of the same resource it is redundant
    assert [(f["line"], f["column"]) for f in result.findings] == [(7, 5), (8, 5)]


def test_gpu_resource_types_of_one_container(tmp_path):
    """k8s-device-plugin#728: each resource's allocation sets NVIDIA_VISIBLE_DEVICES and kubelet
    keeps one, so a container asking for two MIG types (or a MIG type and full GPUs) sees one."""
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
           "  - name: a\n    image: registry.example.com/a:1\n    resources:\n      requests:\n"
           "        nvidia.com/mig-2g.20gb: 1\n        nvidia.com/gpu: '{{ .Values.gpus }}'\n"
           "  - name: b\n    image: registry.example.com/b:1\n    resources:\n      limits:\n"
           "        nvidia.com/gpu: 1\n        nvidia.com/gpu.shared: 1\n        alpha.kubernetes.io/nvidia-gpu: 1\n"
           "        nvidia.com/mlnxics: 1\n"
           "  - name: c\n    image: registry.example.com/c:1\n    resources:\n      limits:\n"
           "        nvidia.com/mig-1g.5gb: 1\n        nvidia.com/mig-1g.10gb: null\n")
    write_files(tmp_path, {"pod.yaml": pod})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL519", ".", cwd=tmp_path)
    # requests alone are read when there are no limits, and a templated count asks for GPUs;
    # a pair without a MIG type, the legacy name, NICs and a null (zero) quantity are left alone
    assert [(f["line"], f["column"]) for f in result.findings] == [(12, 9)]
    finding = result.findings[0]
    assert finding["severity"] == "warning"
    assert "`nvidia.com/gpu` besides `nvidia.com/mig-2g.20gb`" in finding["message"]
    assert "k8s-device-plugin#728" in finding["message"]


def test_mig_strategy_of_a_device_plugin_without_the_monitor_capability(tmp_path):
    """k8s-device-plugin#229, #399: a MIG strategy without NVIDIA_MIG_MONITOR_DEVICES=all stops
    the plugin; the variable without SYS_ADMIN is refused by the runtime hook."""
    head = ("apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: p\nspec:\n  template:\n    spec:\n"
            "      containers:\n")
    plugin = head + ("      - name: plugin\n        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0\n"
                     "        env:\n        - name: MIG_STRATEGY\n          value: single\n")
    gfd = head + ("      - name: gfd\n        image: nvcr.io/nvidia/gpu-feature-discovery:v0.8.2\n"
                  "        env:\n        - name: GFD_MIG_STRATEGY\n          value: mixed\n"
                  "        - name: NVIDIA_MIG_MONITOR_DEVICES\n          value: all\n")
    chart = head + ("      - name: plugin\n        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0\n"
                    "        env:\n        - name: MIG_STRATEGY\n          value: {{ .Values.migStrategy }}\n"
                    "      - name: literal\n        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0\n"
                    "        args: [--mig-strategy=mixed]\n        env:\n        - name: NVIDIA_MIG_MONITOR_DEVICES\n"
                    "          value: all\n        securityContext:\n"
                    "          {{- include \"plugin.securityContext\" . | nindent 10 }}\n")
    other = head + ("      - name: other\n        image: registry.example.com/tools/probe:1\n"
                    "        args: [--mig-strategy=mixed]\n")
    write_files(tmp_path, {"plugin.yaml": plugin, "gfd.yaml": gfd, "templates/ds.yaml": chart, "other.yaml": other})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL521", ".", cwd=tmp_path)
    got = sorted((f["path"], f["line"], f["column"], f["severity"]) for f in result.findings)
    # a templated strategy, a templated security context and an image that is neither the
    # plugin nor GFD are left alone
    assert got == [("gfd.yaml", 14, 17, "error"), ("plugin.yaml", 13, 18, "error")]
    by_path = {f["path"]: f["message"] for f in result.findings}
    assert "GPU feature discovery container `gfd`" in by_path["gfd.yaml"]
    assert "cannot set MIG_MONITOR_DEVICES in non privileged container" in by_path["gfd.yaml"]
    assert "MIG strategy `single` (MIG_STRATEGY)" in by_path["plugin.yaml"]
    assert "set NVIDIA_MIG_MONITOR_DEVICES=all and add the SYS_ADMIN capability" in by_path["plugin.yaml"]


def test_a_manifest_under_a_name_that_mentions_dockerfile_is_read_as_a_manifest(lint_files):
    """Content decides where the name only mentions a Dockerfile: a Job saved as
    `eks_Dockerfile.job` is judged as Kubernetes; text that is neither stays unread."""
    job = ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n"
           "      containers:\n        - name: train\n          image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
           "          resources:\n            requests:\n              nvidia.com/gpu: 1\n")
    run = lint_files({"eks_Dockerfile.job": job, "notes_Dockerfile.txt2": "build it with make\n"})
    assert [(f["code"], f["path"], f["line"]) for f in run.findings] == [("GL501", "eks_Dockerfile.job", 13)]
    assert run.json["summary"]["files_skipped"] == 1
