"""A kept object of a shared manifest holds only what other files' checks read of it
(`gpulint/kinds/kubernetes/kept.py`): a kubeadm ClusterConfiguration its kind and
apiVersion, a device plugin DaemonSet its containers' images, arguments and environment, a
ResourceClaimTemplate its name and device requests ... Each case here fails when a key such
a check reads, or the place a finding's related entry points at, is left out of the copy."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, run_gpulint

from gpulint.run import engine

FOLDER = FIXTURES / "kept-objects"
JOBS = ["1", "2"]  # two: the kept part is made in a worker and sent back


@pytest.fixture(autouse=True)
def _narrowed(monkeypatch):
    # a run this small keeps whole trees; these cases are about what a large run keeps
    monkeypatch.setattr(engine, "NARROW_FROM_FILES", 0)


def _report(case: str, jobs: str) -> list[dict]:
    run = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", "--preview",
                      "--jobs", jobs, str(FOLDER / case))
    assert run.rc == 0, run.err
    return json.loads(run.out)["findings"]


def _findings(case: str, jobs: str) -> list[tuple]:
    return [(f["code"], f["path"].rsplit("/", 1)[-1], f["line"], f["column"],
             [(r["path"].rsplit("/", 1)[-1], r["line"], r["column"], r["message"]) for r in f["related"]])
            for f in _report(case, jobs)]


def _where(found: list[tuple]) -> list[tuple]:
    return [(code, path, line, column, [r[:3] for r in related]) for code, path, line, column, related in found]


@pytest.mark.parametrize("jobs", JOBS)
def test_kubeadm_objects_keep_their_api_version_and_node_taints(jobs):
    # the KubeletConfiguration leaves cgroupDriver to kubeadm (systemd) only beside a kubeadm
    # object (its apiVersion); the Init- and JoinConfiguration's taints make two GPU pools,
    # the first of which the `finetune` Job tolerates
    assert _where(_findings("kubeadm", jobs)) == [
        ("GL107", "a-config.toml", 6, 3, [("b-kubeadm.yaml", 51, 1)]),
        ("GL514", "c-job.yaml", 25, 5, [("b-kubeadm.yaml", 15, 7), ("b-kubeadm.yaml", 44, 7),
                                        ("b-kubeadm.yaml", 47, 7)])]


@pytest.mark.parametrize("jobs", JOBS)
def test_a_cluster_configuration_alone_says_kubeadm_writes_the_cgroup_driver(jobs):
    assert _where(_findings("kubeadm-cluster", jobs)) == [
        ("GL107", "a-config.toml", 6, 3, [("b-kubeadm.yaml", 7, 1)])]


@pytest.mark.parametrize("jobs", JOBS)
def test_node_objects_and_node_pools_keep_their_taints(jobs):
    # a Node's, a Karpenter NodePool's and an eksctl ClusterConfig's node groups' (both
    # forms): four GPU pools, none of which the Job tolerates
    assert _where(_findings("pools", jobs)) == [
        ("GL514", "b-job.yaml", 7, 5, [("a-nodes.yaml", 10, 5), ("a-nodes.yaml", 27, 9), ("a-nodes.yaml", 43, 7),
                                       ("a-nodes.yaml", 48, 9)])]


@pytest.mark.parametrize("jobs", JOBS)
def test_a_runtimeclass_keeps_its_name_and_handler(jobs):
    # GL702 reports on the kept RuntimeClass itself, at its handler; GL701 points at its name
    assert _where(_findings("runtime", jobs)) == [
        ("GL702", "a-runtimeclass.yaml", 6, 10, [("b-config.toml", 4, 1)]),
        ("GL701", "c-pods.yaml", 6, 21, [("a-runtimeclass.yaml", 4, 3)]),
        ("GL516", "c-pods.yaml", 24, 9, [("b-config.toml", 3, 3)])]


@pytest.mark.parametrize("jobs", JOBS)
def test_a_kubelet_configuration_keeps_its_cgroup_driver(jobs):
    assert _where(_findings("kubelet", jobs)) == [("GL107", "a-config.toml", 11, 21, [("b-kubelet.yaml", 6, 1)])]


@pytest.mark.parametrize("jobs", JOBS)
def test_a_device_plugin_daemonset_keeps_its_containers_image_and_environment(jobs):
    # the plugin's release (its image), that it reads a config (CONFIG_FILE), the container
    # and the DaemonSet named at the container's place
    assert _findings("plugin", jobs) == [
        ("GL459", "a-configs.yaml", 8, 7,
         [("b-plugin.yaml", 23, 9, "device plugin container `ctr` of DaemonSet `nvidia-device-plugin`")])]


@pytest.mark.parametrize("jobs", JOBS)
def test_a_device_plugin_daemonset_keeps_its_env_values_and_arguments(jobs):
    # MPS_ROOT's value (or `--mps-root`) gives the plugin its MPS root, and the control
    # daemon's DaemonSet is told by the arguments or the command of one of its containers (an
    # init container's): left out, GL459 says the root or the daemon is missing
    assert _findings("plugin-root", jobs) == []
    assert _findings("plugin-args", jobs) == []
    # the same files, with neither the root nor the daemon: the config is judged
    assert [f[0] for f in _findings("plugin", jobs)] == ["GL459"]


@pytest.mark.parametrize("jobs", JOBS)
def test_the_release_a_plugin_pod_runs_is_read_from_its_image(jobs):
    found = _report("plugin-old", jobs)
    assert [(f["code"], f["line"], f["column"]) for f in found] == [("GL451", 8, 7)]
    assert "the linted manifests run device plugin v0.14.5" in found[0]["message"]


@pytest.mark.parametrize("jobs", JOBS)
def test_dra_objects_keep_their_names_requests_and_selectors(jobs):
    # pods' templates and claims resolve to the named request (written as the request
    # itself, under `exactly`, under `firstAvailable`) of a linted DeviceClass whose
    # selector picks the GPU driver; the names the linted set defines include the template a
    # ComputeDomain creates
    found = _report("dra", jobs)
    assert [(f["code"], f["line"], f["column"], [(r["line"], r["column"]) for r in f["related"]])
            for f in found] == [
        ("GL476", 16, 15, [(14, 9)]), ("GL476", 34, 15, [(32, 9)]), ("GL477", 44, 32, []),
        ("GL476", 67, 15, [(65, 9)]), ("GL476", 85, 15, [(83, 9)]), ("GL476", 103, 15, [(101, 9)]),
        ("GL476", 121, 15, [(119, 9)])]
    said = [f["message"].split(" (the device plugin) and ")[-1].split(":")[0] for f in found]
    assert said == [
        "through claim `gpus` (ResourceClaimTemplate `two-gpus`, device class `big-gpus`)",
        "through claim `shared` (ResourceClaim `shared-gpu`, device class `big-gpus`)",
        said[2],
        "through claim `gpus` (ResourceClaimTemplate `one-gpu`, device class `big-gpus`)",
        "through claim `gpus` (ResourceClaimTemplate `any-gpu`, device class `big-gpus`)",
        "through claim `gpus` (ResourceClaim `direct-gpu`, device class `big-gpus`)",
        "through claim `gpus` (ResourceClaim `exact-gpu`, device class `big-gpus`)"]
    assert "(they define `any-gpu`, `imex-channel`, `one-gpu`, `two-gpus`)" in found[2]["message"]


@pytest.mark.parametrize("jobs", JOBS)
def test_a_linted_nvidiadriver_is_seen_by_the_chart_values(jobs):
    # GL494: values that create no NVIDIADriver, in a set that defines one (by its kind and
    # its `nvidia.com/` apiVersion)
    assert [f[0] for f in _findings("driver", jobs)] == []
