"""Dynamic Resource Allocation rules (GL471-GL478) through the CLI.

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
TARGETS = sorted(str(p.relative_to(DRA)) for p in DRA.glob("GL47*/*"))


def lint_dra(relative: str, *args: str):
    return lint_fixture(f"dra/{relative}", "--select", "GL47", "--preview", "--failure-threshold", "none", *args)


@pytest.mark.parametrize("target", TARGETS)
def test_fixture_findings_are_exactly_the_marked_ones(target):
    result = lint_dra(target)
    assert result.rc == 0, result.err
    assert sorted(result.at()) == expected(DRA / target)


def test_every_rule_has_bad_and_good_fixtures():
    for code in [f"GL47{n}" for n in range(1, 10) if n != 2]:
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
])
def test_api_version_is_judged_against_the_fleet_kubernetes_version(tmp_path, cluster, version, severity):
    shape = _V1_CLAIM if version != "v1beta1" else _V1_CLAIM.replace(
        "        exactly:\n          deviceClassName", "        deviceClassName")
    result = _lint(tmp_path, {".gpulint.toml": f'[fleet]\nkubernetes-version = "{cluster}"\n',
                              "claim.yaml": shape.format(version=version)}, isolated=False)
    found = [(f["code"], f["severity"], f["line"]) for f in result.findings]
    assert found == ([("GL472", severity, 1)] if severity else [])


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
