"""Dynamic Resource Allocation rules (GL471-GL480) through the CLI.

Fixtures under tests/fixtures/dra/<rule>/ mark every expected finding on its line with
`# expect: GL471 @token` (the finding starts where `token` first appears on that line);
any other GL47x finding fails the test, so the good fixtures assert they are clean. A
folder is linted as one set, for the rules that join files.
"""

from __future__ import annotations

import pytest
from conftest import FIXTURES, lint_fixture, run_gpulint, write_files
from test_kubernetes import expected

DRA = FIXTURES / "dra"
# (the `script*` folders hold shell lines, whose marks test_dra reads itself)
TARGETS = sorted(str(p.relative_to(DRA)) for p in [*DRA.glob("GL47*/*"), *DRA.glob("GL48*/*"), *DRA.glob("GL49*/*")]
                 if not p.name.startswith("script"))


def lint_dra(relative: str, *args: str):
    return lint_fixture(f"dra/{relative}", "--select", "GL47,GL480,GL493", "--preview", "--failure-threshold", "none", *args)


@pytest.mark.parametrize("target", TARGETS)
def test_fixture_findings_are_exactly_the_marked_ones(target):
    result = lint_dra(target)
    assert result.rc == 0, result.err
    assert sorted(result.at()) == expected(DRA / target)


def test_every_rule_has_bad_and_good_fixtures():
    for code in [*(f"GL47{n}" for n in range(1, 10) if n != 2), "GL480", "GL493"]:
        for side in ("bad", "good"):
            assert (DRA / code / f"{side}.yaml").is_file() or (DRA / code / side).is_dir(), (code, side)


def _lint(tmp_path, files: dict[str, str], *args: str, isolated: bool = True):
    write_files(tmp_path, files)
    head = ("--isolated",) if isolated else ()
    return run_gpulint(*head, "--format", "json", "--preview", "--select", "GL47",
                       "--failure-threshold", "none", *args, ".", cwd=tmp_path)


_V1_CLAIM = """\
apiVersion: resource.k8s.io/{version}
kind: ResourceClaim
metadata:
  name: gpu
spec:
  devices:
    requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
"""


@pytest.mark.parametrize(("cluster", "version", "severity"), [
    ("1.33", "v1", "error"),          # v1 came in 1.34
    ("1.31", "v1beta1", "error"),     # v1beta1 came in 1.32
    ("1.38.1", "v1beta1", "error"),   # removed in 1.38
    ("1.35", "v1beta1", "warning"),   # deprecated in 1.35
    ("1.34", "v1", None),
    ("1.33", "v1beta2", None),
    ("1.31", "v1alpha3", None),       # the only DRA API of 1.31
    ("1.32", "v1alpha3", "warning"),  # superseded by v1beta1
    ("1.34", "v1alpha3", "error"),    # its claim types left in 1.34
    ("1.30", "v1alpha3", "error"),
])
def test_api_version_is_judged_against_the_fleet_kubernetes_version(tmp_path, cluster, version, severity):
    shape = _V1_CLAIM if version not in ("v1beta1", "v1alpha3") else _V1_CLAIM.replace(
        "        exactly:\n          deviceClassName", "        deviceClassName")
    result = _lint(tmp_path, {".gpulint.toml": f'[fleet]\nkubernetes-version = "{cluster}"\n',
                              "claim.yaml": shape.format(version=version)}, isolated=False)
    found = [(f["code"], f["severity"], f["line"]) for f in result.findings]
    assert found == ([("GL472", severity, 1)] if severity else [])


_CLASSIC_CLASS = """\
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClass
metadata:
  name: gpu.example.com
driverName: gpu.resource.example.com
"""


@pytest.mark.parametrize(("cluster", "codes"), [("1.30", []), ("1.27", []), ("1.26", ["GL472"]),
                                                 ("1.31", ["GL472"]), (None, ["GL480"])])
def test_classic_dra_objects_are_judged_by_the_releases_that_served_them(tmp_path, cluster, codes):
    files = {"class.yaml": _CLASSIC_CLASS}
    if cluster:
        files[".gpulint.toml"] = f'[fleet]\nkubernetes-version = "{cluster}"\n'
    write_files(tmp_path, files)
    result = run_gpulint("--format", "json", "--select", "GL472,GL480", "--failure-threshold", "none", ".",
                         cwd=tmp_path)
    assert result.codes() == codes
    if cluster == "1.31":
        assert "Kubernetes 1.31 serves no ResourceClass in any DRA API version" in result.findings[0]["message"]


def test_the_versions_offered_are_the_current_ones_with_how_they_are_turned_on(tmp_path):
    write_files(tmp_path, {"claim.yaml": _V1_CLAIM.format(version="v1")})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL472", "--kubernetes-version", "1.33",
                         "--failure-threshold", "none", ".", cwd=tmp_path)
    [found] = result.findings
    assert "v1alpha3" not in found["message"]  # deprecated in 1.32
    assert "`resource.k8s.io/v1beta2` (off by default before 1.34" in found["message"]


def test_a_kind_the_version_does_not_hold_is_not_served(tmp_path):
    write_files(tmp_path, {"class.yaml": _CLASSIC_CLASS.replace("v1alpha2", "v1alpha3")})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL472", "--kubernetes-version", "1.31",
                         "--failure-threshold", "none", ".", cwd=tmp_path)
    [found] = result.findings
    assert "which holds no ResourceClass" in found["message"]


def test_without_a_kubernetes_version_no_release_is_assumed(tmp_path):
    result = _lint(tmp_path, {"claim.yaml": _V1_CLAIM.format(version="v1")})
    assert result.findings == []


def test_pod_claim_source_is_accepted_where_the_fleet_runs_an_older_release(tmp_path):
    pod = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  resourceClaims:
    - name: gpu
      source:
        resourceClaimTemplateName: single-gpu
  containers:
    - name: c
      image: ubuntu:22.04
      resources:
        claims:
          - name: gpu
"""
    old = _lint(tmp_path / "old", {".gpulint.toml": '[fleet]\nkubernetes-version = "1.30"\n',
                                   "pod.yaml": pod}, isolated=False)
    new = _lint(tmp_path / "new", {".gpulint.toml": '[fleet]\nkubernetes-version = "1.31"\n',
                                   "pod.yaml": pod}, isolated=False)
    assert old.codes() == [] and new.codes() == ["GL471"]


def _selector_claim(expression_lines: str) -> str:
    return ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: h\nspec:\n"
            "  devices:\n    requests:\n      - name: gpu\n        exactly:\n"
            "          deviceClassName: gpu.nvidia.com\n          selectors:\n            - cel:\n"
            + expression_lines)


def test_cel_finding_points_inside_a_block_scalar(tmp_path):
    text = _selector_claim(
        "                expression: |\n"
        "                  device.driver == 'gpu.nvidia.com' &&\n"
        "                  device.attributes['gpu.nvidia.com'].brand == 'Nvidia' &&\n"
        "                  device.attributes['gpu.nvidia.com'].cudaComputeCapabilty == '9.0'\n")
    result = _lint(tmp_path, {"claim.yaml": text})
    [found] = result.findings
    line = text.splitlines()[found["line"] - 1]
    assert line[found["column"] - 1:found["end_column"]] == "cudaComputeCapabilty"
    assert "did you mean `cudaComputeCapability`?" in found["message"]


def test_cel_finding_falls_back_to_the_scalar_when_escapes_change_the_text(tmp_path):
    # `\x70` is `p`: the misspelt name is not written as such in the file
    text = _selector_claim(
        '                expression: "device.attributes[\\"gpu.nvidia.com\\"].\\x70roduct == \\"x\\""\n')
    [found] = _lint(tmp_path, {"claim.yaml": text}).findings
    assert found["code"] == "GL474"
    assert (found["line"], found["column"]) == (13, 29)


def test_device_class_defined_in_another_linted_file_is_known(tmp_path):
    files = {
        "class.yaml": "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n"
                      "  name: h100.nvidia.com\nspec:\n  selectors:\n    - cel:\n"
                      "        expression: device.driver == 'gpu.nvidia.com'\n",
        "claim.yaml": _V1_CLAIM.format(version="v1").replace("gpu.nvidia.com", "h100.nvidia.com"),
    }
    assert _lint(tmp_path, files).findings == []
    (tmp_path / "class.yaml").unlink()
    assert _lint(tmp_path, {}).codes() == ["GL473"]


def test_nvidia_dra_driver_demo_specs_shapes_are_clean(tmp_path):
    """The shapes of the driver's quickstart examples (v1beta1 and v1) raise nothing."""
    template = """\
apiVersion: resource.k8s.io/{version}
kind: ResourceClaimTemplate
metadata:
  name: multiple-gpus
spec:
  spec:
    devices:
      requests:
      - name: ts-gpu
{request}
      config:
      - requests: ["ts-gpu"]
        opaque:
          driver: gpu.nvidia.com
          parameters:
            apiVersion: resource.nvidia.com/v1beta1
            kind: GpuConfig
            sharing:
              strategy: TimeSlicing
              timeSlicingConfig:
                interval: Long
"""
    files = {"v1.yaml": template.format(version="v1", request="        exactly:\n          deviceClassName: gpu.nvidia.com"),
             "v1beta1.yaml": template.format(version="v1beta1", request="        deviceClassName: gpu.nvidia.com")}
    assert _lint(tmp_path, files).findings == []


def test_chart_values_without_feature_gates_say_nothing_of_them(tmp_path):
    """A chart before v25.8, or an override file, writes no `featureGates`: the gate is unknown."""
    claim = (DRA / "GL479" / "bad" / "claim.yaml").read_text()
    result = _lint(tmp_path, {"values.yaml": "resources:\n  gpus:\n    enabled: true\n  computeDomains:\n"
                                             "    enabled: true\n", "claim.yaml": claim})
    assert result.findings == []


def test_the_driver_chart_values_are_their_own_kind():
    from gpulint.kinds import kind_by_content

    values = (DRA / "GL479" / "bad" / "values.yaml").read_text()
    chart_defaults = "nvidiaDriverRoot: /\nfeatureGates: {}\nkubeletPlugin:\n  priorityClassName: x\n"
    operator = "driver:\n  enabled: true\ndevicePlugin:\n  enabled: true\ntoolkit:\n  enabled: true\n"
    assert kind_by_content("values.yaml", values) == "dra-driver-values"
    assert kind_by_content("values.yaml", chart_defaults) == "dra-driver-values"
    assert kind_by_content("values.yaml", operator) == "gpu-operator-values"
    assert kind_by_content("values.yaml", "resources:\n  limits:\n    cpu: 1\n") is None
    assert kind_by_content("dra.yaml", "gpuResourcesEnabledOverride: true\nimage:\n  pullPolicy: Always\n") \
        == "dra-driver-values"


def test_kubernetes_version_flag_judges_like_the_configuration(tmp_path):
    write_files(tmp_path, {"claim.yaml": _V1_CLAIM.format(version="v1")})
    flagged = run_gpulint("--isolated", "--format", "json", "--select", "GL472", "--kubernetes-version", "v1.33.4",
                          "--failure-threshold", "none", ".", cwd=tmp_path)
    assert flagged.codes() == ["GL472"]


@pytest.mark.parametrize("stated", ["1", "2.0", "1.x", "latest"])
def test_a_kubernetes_version_that_is_no_release_stops_the_run(tmp_path, stated):
    write_files(tmp_path, {"claim.yaml": _V1_CLAIM.format(version="v1")})
    by_flag = run_gpulint("--isolated", "--kubernetes-version", stated, ".", cwd=tmp_path)
    assert by_flag.rc == 2 and "--kubernetes-version" in by_flag.err and "Traceback" not in by_flag.err
    write_files(tmp_path, {".gpulint.toml": f'[fleet]\nkubernetes-version = "{stated}"\n'})
    by_config = run_gpulint(".", cwd=tmp_path)
    assert by_config.rc == 2 and "kubernetes-version" in by_config.err and "Traceback" not in by_config.err


@pytest.mark.parametrize(("folder", "marked"), [("script", True), ("script-good", False), ("script-values", True)])
def test_helm_lines_of_both_charts_are_joined(folder, marked):
    result = lint_dra(f"GL493/{folder}")
    text = (DRA / "GL493" / folder / "install.sh").read_text().splitlines()
    want = [("GL493", n, line.index(line.split("expect: GL493 @", 1)[1]) + 1)
            for n, line in enumerate(text, 1) if "expect: GL493" in line]
    assert sorted(result.at()) == sorted(want + expected(DRA / "GL493" / folder)) and bool(want) == marked


_DRA_VALUES = "gpuResourcesEnabledOverride: true\nresources:\n  gpus:\n    enabled: true\n  computeDomains:\n" \
              "    enabled: false\n"
_POLICY = "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata:\n  name: cluster-policy\nspec:\n" \
          "  driver:\n    enabled: true\n"


@pytest.mark.parametrize(("files", "codes"), [
    ({"policy.yaml": _POLICY}, ["GL493"]),  # a ClusterPolicy keeps the plugin unless it says otherwise
    ({"policy.yaml": _POLICY + "  devicePlugin:\n    enabled: false\n"}, []),
    ({}, []),  # no GPU Operator linted: nothing is known of its device plugin
    ({"policy.yaml": _POLICY, "other.yaml": _POLICY.replace("cluster-policy", "b")
      + "  devicePlugin:\n    enabled: false\n"}, []),  # another cluster's may be the one
])
def test_dra_values_are_judged_against_every_linted_gpu_operator(tmp_path, files, codes):
    result = _lint(tmp_path, {"dra-values.yaml": _DRA_VALUES, **files}, "--select", "GL493")
    assert result.codes() == codes


@pytest.mark.parametrize("values", [
    _DRA_VALUES.replace("gpuResourcesEnabledOverride: true", "gpuResourcesEnabledOverride: false"),
    _DRA_VALUES.replace("gpus:\n    enabled: true", "gpus:\n    enabled: false"),
    _DRA_VALUES + "kubeletPlugin:\n  nodeSelector:\n    nvidia.com/dra-kubelet-plugin: \"true\"\n",
])
def test_dra_values_without_gpus_or_kept_to_chosen_nodes_are_not_judged(tmp_path, values):
    result = _lint(tmp_path, {"dra-values.yaml": values, "policy.yaml": _POLICY}, "--select", "GL493")
    assert result.codes() == []


def test_gpu_operator_values_without_a_cluster_policy_deploy_no_device_plugin(tmp_path):
    values = "driver:\n  enabled: true\ntoolkit:\n  enabled: true\ndevicePlugin:\n  enabled: true\n"
    result = _lint(tmp_path, {"dra-values.yaml": _DRA_VALUES, "operator.yaml": values}, "--select", "GL493")
    assert result.codes() == ["GL493"]
    write_files(tmp_path, {"operator.yaml": values + "clusterPolicy:\n  deployCR: false\n"})
    assert _lint(tmp_path, {}, "--select", "GL493").codes() == []


def test_odd_values_and_helm_lines_never_crash(tmp_path):
    files = {
        "dra.yaml": "gpuResourcesEnabledOverride: [1]\nresources: 5\nkubeletPlugin: [x]\n",
        "dra2.yaml": "gpuResourcesEnabledOverride: true\nresources:\n  gpus: [1]\n",
        "operator.yaml": "driver: [1]\ntoolkit:\n  enabled: true\ndevicePlugin: 7\nclusterPolicy: x\n"
                         "gpuCluster:\n  deployCR: \"true\"\n",
        "policy.yaml": "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: x}\nspec: [1]\n",
        "install.sh": "#!/bin/sh\nhelm install x nvidia/nvidia-dra-driver-gpu --set gpuResourcesEnabledOverride\n"
                      "helm upgrade gpu-operator nvidia/gpu-operator --set gpuCluster.deployCR=true,=,a==b --set\n",
        "classic.yaml": "apiVersion: resource.k8s.io/v1alpha2\nkind: ResourceClaimParameters\nmetadata: {name: p}\n"
                        "spec: 3\n",
    }
    write_files(tmp_path, files)
    result = run_gpulint("--isolated", "--format", "json", "--preview", "--failure-threshold", "none", ".",
                         cwd=tmp_path)
    assert result.rc == 0 and "Traceback" not in result.err, result.err


@pytest.mark.parametrize(("version", "cluster", "codes"), [
    ("resource.k8s.io/v1alpha3", "1.33", []),         # served there, behind --runtime-config
    ("resource.k8s.io/v1alpha3", "1.34", ["GL480"]),
    ("resource.k8s.io/v1alpha2", "1.30", ["GL480"]),  # holds no DeviceClass on any release
    ("resource.k8s.io/v1", None, []),
])
def test_chart_resource_api_version_is_judged_by_the_stated_release(tmp_path, version, cluster, codes):
    args = ("--kubernetes-version", cluster) if cluster else ()
    write_files(tmp_path, {"values.yaml": f"resourceApiVersion: {version}\nresources:\n  gpus:\n    enabled: false\n"
                                          "  computeDomains:\n    enabled: true\n"})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL480", *args, "--failure-threshold",
                         "none", ".", cwd=tmp_path)
    assert result.codes() == codes

_TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: single-gpu
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly:
            deviceClassName: {device_class}
"""

_POD_WITH_TEMPLATE_CLAIM = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  resourceClaims:
    - name: gpu
      resourceClaimTemplateName: single-gpu
  containers:
    - name: trainer
      image: nvcr.io/nvidia/pytorch:24.05-py3
      resources:
        limits:
          nvidia.com/gpu: 1
        claims:
          - name: gpu
"""


@pytest.mark.parametrize("first_class,second_class,found", [
    ("gpu.nvidia.com", "fpga.example.com", ["GL476"]),
    ("fpga.example.com", "gpu.nvidia.com", []),
])
def test_a_template_defined_in_two_linted_files_is_the_first_ones(tmp_path, first_class, second_class, found):
    """The claim a pod names resolves to the first definition among the linted files, in
    the order they are read, whichever file the pod is in."""
    files = {"a.yaml": _TEMPLATE.format(device_class=first_class),
             "b.yaml": _TEMPLATE.format(device_class=second_class),
             "c.yaml": _POD_WITH_TEMPLATE_CLAIM}
    assert [f["code"] for f in _lint(tmp_path, files).findings if f["code"] == "GL476"] == found
