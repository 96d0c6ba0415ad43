"""The GPU Operator's ClusterPolicy, NVIDIADriver and chart values, judged by release."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, run_gpulint, write_files
from test_kubernetes import expected

OPERATOR = FIXTURES / "operator"


def lint(path, *args):
    return run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", *args, str(path))


def lint_for(tmp_path, release, path):
    (tmp_path / "fleet.toml").write_text(f'[fleet]\ngpu-operator-version = "{release}"\n')
    return run_gpulint("--config", str(tmp_path / "fleet.toml"), "--format", "json", "--failure-threshold",
                       "none", str(path))


def test_cluster_policy_problems_point_at_the_key_or_value():
    result = lint(OPERATOR / "clusterpolicy-bad.yaml")
    assert result.at() == [("GL482", 15, 5), ("GL481", 19, 14), ("GL481", 26, 15), ("GL481", 33, 16)]
    messages = [f["message"] for f in result.findings]
    assert 'strict decoding error: unknown field "spec.devicePlugin.enviroment"' in messages[0]
    assert "prunes it" in messages[0]
    assert ('`spec.driver.enabled: Invalid value: "string": spec.driver.enabled in body must be of type '
            'boolean: "string"`') in messages[1]
    assert '`spec.mig.strategy: Unsupported value: "mixd": supported values: "none", "single", "mixed"`' \
        in messages[2]
    assert "spec.toolkit.env[0].value in body must be of type string" in messages[3]
    assert all("GPU Operator v26.7.0 (the newest gpulint knows" in m for m in messages)


def test_a_valid_cluster_policy_is_clean():
    assert lint(OPERATOR / "clusterpolicy-good.yaml").findings == []


def test_documented_nvidiadriver_examples_are_clean():
    assert lint(OPERATOR / "nvidiadriver-good.yaml").findings == []


def test_the_fleet_release_decides_and_names_the_release_that_has_the_field(tmp_path):
    write_files(tmp_path, {"nvd.yaml": "apiVersion: nvidia.com/v1alpha1\nkind: NVIDIADriver\nmetadata:\n"
                                       "  name: default\nspec:\n  driverType: gpu\n  image: driver\n"
                                       "  repository: nvcr.io/nvidia\n  version: \"580.95.05\"\n"
                                       "  kernelModuleType: open\n"})
    assert lint(tmp_path / "nvd.yaml").findings == []
    old = lint_for(tmp_path, "24.9", tmp_path / "nvd.yaml")
    assert old.at() == [("GL482", 10, 3)]
    assert "GPU Operator v24.9.2 (`gpu-operator-version = \"24.9\"` in the fleet configuration)" \
        in old.findings[0]["message"]
    assert "the CRD of v25.3.4 has it" in old.findings[0]["message"]


def test_near_miss_field_names_the_field_meant(tmp_path):
    write_files(tmp_path, {"nvd.yaml": "apiVersion: nvidia.com/v1alpha1\nkind: NVIDIADriver\nmetadata:\n"
                                       "  name: default\nspec:\n  driverType: gpu\n  usePrecompield: true\n"})
    result = lint(tmp_path / "nvd.yaml")
    assert result.at() == [("GL482", 7, 3)]
    assert "(did you mean `usePrecompiled`?)" in result.findings[0]["message"]


def test_other_groups_versions_and_templates_are_not_judged(tmp_path):
    write_files(tmp_path, {
        "other.yaml": "apiVersion: example.com/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec: {x: 1}\n",
        "beta.yaml": "apiVersion: nvidia.com/v9\nkind: NVIDIADriver\nmetadata: {name: p}\nspec: {x: 1}\n",
        "tpl.yaml": "apiVersion: nvidia.com/v1alpha1\nkind: NVIDIADriver\nmetadata: {name: p}\n"
                    "spec:\n  driverType: gpu\n  usePrecompiled: {{ .Values.precompiled }}\n"})
    assert lint(tmp_path).findings == []


def test_required_fields_are_not_asked_of_a_kustomize_patch(tmp_path):
    write_files(tmp_path, {
        "kustomization.yaml": "resources: [base.yaml]\npatches:\n  - path: patch.yaml\n",
        "base.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: gpu}\n",
        "patch.yaml": "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: cluster-policy}\n"
                      "spec:\n  driver:\n    enabled: false\n"})
    assert lint(tmp_path).findings == []
    write_files(tmp_path, {"kustomization.yaml": "resources: [base.yaml, patch.yaml]\n"})
    assert lint(tmp_path).at()[0] == ("GL481", 4, 1)


# ------------------------------------------------------------------ chart values


def test_chart_values_problems_point_at_the_key_or_value():
    result = lint(OPERATOR / "values-bad.yaml")
    assert result.at() == [("GL483", 4, 3), ("GL484", 9, 14), ("GL483", 11, 7), ("GL483", 14, 3)]
    unknown, refused, pruned, unread = (f["message"] for f in result.findings)
    assert "`driver.usePrecompield` is no value of the gpu-operator chart" in unknown
    assert "(did you mean `usePrecompiled`?)" in unknown
    assert 'spec.toolkit.env[0].value in body must be of type string: "boolean"' in refused
    assert 'unknown field "spec.toolkit.env[1].valeu"' in pruned
    assert "`devicePlugin.nodeSelector` is no value" in unread  # the chart reads `daemonsets` for all


def test_valid_chart_values_are_clean():
    assert lint(OPERATOR / "values-good.yaml").findings == []


def test_values_are_judged_by_the_fleet_release(tmp_path):
    write_files(tmp_path, {"values.yaml": "driver:\n  enabled: true\n  kernelModuleType: open\n"
                                          "toolkit:\n  enabled: true\ndevicePlugin:\n  enabled: true\n"})
    assert lint(tmp_path / "values.yaml").findings == []
    old = lint_for(tmp_path, "24.9.1", tmp_path / "values.yaml")
    assert old.at() == [("GL483", 3, 3)]
    assert "GPU Operator v24.9.2 (`gpu-operator-version = \"24.9.1\"`" in old.findings[0]["message"]


def test_an_override_file_with_two_operator_components_is_recognised(tmp_path):
    write_files(tmp_path, {"gpu.yaml": "toolkit:\n  env:\n    - name: A\n      value: 1\ndevicePlugin:\n"
                                       "  enabled: true\n",
                           "other.yaml": "toolkit:\n  enabled: true\ngfd:\n  enabled: true\n"})
    result = lint(tmp_path)
    assert [(f["path"].rsplit("/", 1)[-1], f["code"]) for f in result.findings] == [("gpu.yaml", "GL484")]


# ------------------------------------------------------------------ objects applied together

_NVD = "apiVersion: nvidia.com/v1alpha1\nkind: NVIDIADriver\nmetadata:\n  name: {name}\nspec:\n  driverType: gpu\n"


# ------------------------------------------------------------------ the CRDs' CEL rules

# every CEL rule the bundled CRDs carry, by what gpulint does with it: "judged" rules run on
# the object; "transition" rules read `oldSelf`, the stored object an update replaces, which no
# file holds; "unsupported" ones are written in more of CEL than gpulint runs
_IMMUTABLE = "self == oldSelf"
_DEFAULT_SELECTOR = ("has(self.default) && self.default ? !has(self.nodeSelector) || "
                     "size(self.nodeSelector) == 0 : true")
KNOWN_RULES = {_IMMUTABLE: "transition", _DEFAULT_SELECTOR: "judged"}


def test_every_cel_rule_of_the_bundled_crds_is_known_with_what_gpulint_does_with_it():
    from gpulint.common import cel
    from gpulint.knowledge import gpu_operator

    def rules(node):
        if isinstance(node, dict):
            yield from (r["rule"] for r in node.get("x-kubernetes-validations", ()))
            for sub in node.values():
                yield from rules(sub)

    found = {rule for tag in gpu_operator.releases() for kind in ("ClusterPolicy", "NVIDIADriver")
             for rule in rules(gpu_operator.crd_schema(tag, kind))}
    assert {rule: cel.support(rule) for rule in found} == KNOWN_RULES


def test_a_default_nvidiadriver_with_a_node_selector_fails_the_crds_rule(tmp_path):
    result = lint(OPERATOR / "nvidiadriver-default-selector.yaml")
    assert result.at() == [("GL481", 5, 1)]
    assert ('the API server refuses this NVIDIADriver (`spec: Invalid value: "object": default NVIDIADriver '
            'must not use nodeSelector`), judged by the CRD of GPU Operator v26.7.0') in result.findings[0]["message"]
    # the rule came with v26.7.0: the CRD of v26.3 has no `default` and no rule
    older = lint_for(tmp_path, "26.3", OPERATOR / "nvidiadriver-default-selector.yaml")
    assert ("GL482", 6, 3) in older.at() and "GL481" not in [code for code, _, _ in older.at()]
    write_files(tmp_path, {"nvd.yaml": _NVD.format(name="a") + "  image: driver\n  default: true\n  nodeSelector: {}\n"
                           "---\n" + _NVD.format(name="b") + "  image: driver\n  default: false\n"
                           "  nodeSelector:\n    driver.config: gold\n"})
    assert lint(tmp_path / "nvd.yaml").findings == []


def test_a_second_cluster_policy_is_reported_at_its_name(tmp_path):
    policy = (OPERATOR / "clusterpolicy-good.yaml").read_text()
    write_files(tmp_path, {"two.yaml": policy + "---\n" + policy.replace("name: cluster-policy", "name: copy")})
    result = lint(tmp_path)
    assert result.at() == [("GL485", 38, 3)]
    assert "sets the others' `status.state` to `ignored`" in result.findings[0]["message"]
    assert result.findings[0]["related"][0]["line"] == 4


def test_nvidiadrivers_covering_each_others_nodes(tmp_path):
    write_files(tmp_path, {
        "drivers.yaml": _NVD.format(name="all") + "---\n" + _NVD.format(name="gold")
        + "  nodeSelector:\n    nvidia.com/gpu.present: \"true\"\n    driver.config: gold\n"
        + "---\n" + _NVD.format(name="silver") + "  nodeSelector:\n    driver.config: silver\n",
        "defaults.yaml": _NVD.format(name="a") + "  default: true\n---\n" + _NVD.format(name="b")
        + "  default: true\n"})
    result = lint(tmp_path)
    assert [(f["path"].rsplit("/", 1)[-1], f["line"], f["column"]) for f in result.findings] == [
        ("defaults.yaml", 15, 3), ("drivers.yaml", 14, 3)]
    default, overlap = (f["message"] for f in result.findings)
    assert "`multiple default NVIDIADrivers found: [a b]`" in default
    assert "`multiple NVIDIADrivers match the same node <node>: [all gold]`" in overlap


def test_documented_nvidiadrivers_with_distinct_selectors_are_clean(tmp_path):
    write_files(tmp_path, {"drivers.yaml": _NVD.format(name="gold") + "  nodeSelector:\n    driver.config: gold\n"
                           "---\n" + _NVD.format(name="silver") + "  nodeSelector:\n    driver.config: silver\n"})
    assert lint(tmp_path).findings == []


# ------------------------------------------------------------------ k3s/RKE2 HelmChart


def test_helmchart_values_content_and_set_keys_are_judged_by_its_version():
    result = lint(OPERATOR / "helmchart.yaml")
    # the misspelt `toolkit.envv` leaves the k3s socket unset (GL491 at the env list)
    assert result.at() == [("GL483", 13, 5), ("GL491", 20, 7), ("GL484", 22, 18), ("GL483", 23, 7)]
    typo, _, refused, newer = (f["message"] for f in result.findings)
    assert "`toolkit.envv` is no value" in typo and "(did you mean `env`?)" in typo
    assert "GPU Operator v24.9.2 (`spec.version: v24.9.2` of the HelmChart)" in refused
    assert "the chart of v25.3.4 reads it" not in newer  # a toolkit key no release reads
    assert "`toolkit.kernelModuleType` is no value" in newer


def test_helmchart_of_another_chart_or_unparsable_values_is_left_alone(tmp_path):
    write_files(tmp_path, {
        "other.yaml": "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata: {name: x}\nspec:\n"
                      "  chart: traefik\n  valuesContent: |-\n    toolkit:\n      bogus: 1\n",
        "broken.yaml": "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata: {name: y}\nspec:\n"
                       "  chart: nvidia/gpu-operator\n  valuesContent: |-\n    toolkit: [\n"})
    assert lint(tmp_path).findings == []


def test_nvidiadrivers_while_the_cluster_policy_keeps_the_driver(tmp_path):
    policy = (OPERATOR / "clusterpolicy-good.yaml").read_text()
    driver = _NVD.format(name="gold") + "  nodeSelector:\n    driver.config: gold\n"
    write_files(tmp_path, {"policy.yaml": policy, "driver.yaml": driver})
    result = lint(tmp_path)
    assert [(f["code"], f["path"].rsplit("/", 1)[-1], f["line"]) for f in result.findings] == [
        ("GL487", "driver.yaml", 2)]
    assert "useNvidiaDriverCRD is not enabled in ClusterPolicy" in result.findings[0]["message"]
    assert result.findings[0]["related"][0]["path"].endswith("policy.yaml")
    write_files(tmp_path, {"policy.yaml": policy.replace("  driver:\n", "  driver:\n    useNvidiaDriverCRD: true\n")})
    assert lint(tmp_path).findings == []
    (tmp_path / "policy.yaml").unlink()
    assert lint(tmp_path).findings == []  # no ClusterPolicy linted: nothing known


def test_odd_operator_objects_and_values_never_crash(tmp_path):
    write_files(tmp_path, {
        "cp.yaml": "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: x}\nspec: [1, 2]\n---\n"
                   "apiVersion: nvidia.com/v1alpha1\nkind: NVIDIADriver\nmetadata: {name: a}\n"
                   "spec:\n  nodeSelector: 5\n  default: yes\n",
        "hc.yaml": "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata: {name: x}\nspec:\n"
                   "  chart: gpu-operator\n  version: [1]\n  set:\n    \"\": 1\n    a..b: 2\n"
                   "    daemonsets.nodeSelector.kubernetes\\.io/os: linux\n"
                   "  valuesContent: \"toolkit:\\n  bogus: 1\\n\"\n",
        "values.yaml": "toolkit:\n  env: {a: 1}\ndevicePlugin:\n  env: 5\ndriver: [1]\n"})
    result = lint(tmp_path)
    assert result.rc in (0, 1), result.err
    assert ("GL481", 4, 7) in result.at()  # spec: [1, 2]
    # placed at the value: the unknown key, and the k3s socket the chart's toolkit lacks
    assert [(f["code"], f["line"]) for f in result.findings if f["path"].endswith("hc.yaml")] == [
        ("GL483", 11), ("GL491", 11)]


# ------------------------------------------------------------------ helm command lines


def test_helm_set_keys_and_typed_env_values_are_judged_by_the_version_flag():
    result = lint(OPERATOR / "install-gpu-operator.sh")
    assert result.at() == [("GL484", 5, 9), ("GL483", 7, 9), ("GL483", 8, 30)]
    typed, typo, unknown = (f["message"] for f in result.findings)
    assert "`--set` makes `true` a boolean" in typed and "`--set-string` keeps it a string" in typed
    assert 'spec.toolkit.env[0].value in body must be of type string: "boolean"' in typed
    assert "GPU Operator v24.9.2 (`--version v24.9.2` of the helm command)" in typo
    assert "(did you mean `env`?)" in typo
    assert "`toolkit.bogus` is no value" in unknown


def test_helm_lines_in_ci_steps_are_judged_with_the_values_the_runner_puts_in():
    result = lint(OPERATOR / "ci-github")
    # once per matrix release: `$OPERATOR_VERSION` takes each in turn
    assert result.at() == [("GL483", 16, 19), ("GL483", 16, 19), ("GL484", 17, 69), ("GL484", 17, 69)]
    first, second = (f["message"] for f in result.findings[:2])
    assert ("`toolkit.envv` is no value of the gpu-operator chart of GPU Operator v24.9.2 (`--version "
            "\"$OPERATOR_VERSION\"` of the helm command, `v24.9.2` as the CI job runs it)") in first
    assert "(did you mean `env`?)" in first
    assert "GPU Operator v25.3.4 (`--version \"$OPERATOR_VERSION\"` of the helm command, `v25.3.4`" in second
    gitlab = lint(OPERATOR / "ci-gitlab")
    assert gitlab.at() == [("GL483", 6, 87)]
    assert "GPU Operator v24.9.2" in gitlab.findings[0]["message"]
    assert lint(OPERATOR / "ci-github-good.yml").at() == []


def test_helm_lines_of_ci_jobs_without_matrix_or_variables(tmp_path):
    write_files(tmp_path, {".github/workflows/x.yml": "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n"
                           "      - run: >-\n          helm install g nvidia/gpu-operator --version v24.9.2\n"
                           "          --set toolkit.bogus=1\n",
                           ".gitlab-ci.yml": "deploy:\n  before_script:\n    - 'helm install g nvidia/gpu-operator"
                           " --set driver.bogus=1'\n"})
    result = lint(tmp_path)
    assert [(f["path"].rsplit("/", 1)[-1], f["code"], f["line"], f["column"]) for f in result.findings] == [
        ("x.yml", "GL483", 8, 17), (".gitlab-ci.yml", "GL483", 3, 49)]


def test_a_github_env_expression_in_a_helm_line_takes_the_env_value(tmp_path):
    write_files(tmp_path, {".github/workflows/x.yml": "on: push\nenv:\n  OPERATOR: v24.9.2\njobs:\n  a:\n"
                           "    runs-on: x\n    steps:\n      - run: helm install g nvidia/gpu-operator"
                           " --version '${{ env.OPERATOR }}' --set toolkit.envv=1\n"})
    result = lint(tmp_path)
    assert result.at() == [("GL483", 8, 87)]
    assert "GPU Operator v24.9.2 (`--version '${{ env.OPERATOR }}'` of the helm command, `v24.9.2` as the CI job " \
        "runs it)" in result.findings[0]["message"]


def test_a_ci_value_put_into_a_helm_key_points_at_the_word_written(tmp_path):
    write_files(tmp_path, {".github/workflows/x.yml": (
        "on: push\njobs:\n  a:\n    runs-on: x\n    strategy:\n      matrix:\n        part: [toolkit]\n"
        "    steps:\n      - run: helm install g nvidia/gpu-operator --set ${{ matrix.part }}.bogus=1\n")})
    # the key is `toolkit.bogus` once the runner has put the value in: no offset in the file holds it
    assert lint(tmp_path).at() == [("GL483", 9, 55)]


def test_helm_lines_in_markdown_and_other_charts(tmp_path):
    write_files(tmp_path, {
        "README.md": "Install:\n\n```sh\nhelm upgrade --install gpu-operator nvidia/gpu-operator "
                     "--set devicePlugin.env[0].name=FAIL_ON_INIT_ERROR --set devicePlugin.env[0].value=false\n```\n",
        "other.md": "```sh\nhelm install x bitnami/nginx --set toolkit.bogus=1\n```\nsee gpu-operator\n"})
    result = lint(tmp_path)
    assert [(f["path"].rsplit("/", 1)[-1], f["code"], f["line"]) for f in result.findings] == [
        ("README.md", "GL484", 4)]


# ------------------------------------------------------------------ toolkit vs containerd 2.x


def test_an_old_toolkit_on_containerd_2_nodes(tmp_path):
    values = "driver:\n  enabled: true\ntoolkit:\n  enabled: true\ndevicePlugin:\n  enabled: true\n"
    write_files(tmp_path, {"values.yaml": values})
    (tmp_path / "fleet.toml").write_text('[fleet]\ngpu-operator-version = "24.3"\ncontainerd-version = "2.1"\n')
    run = run_gpulint("--config", str(tmp_path / "fleet.toml"), "--format", "json", "--failure-threshold", "none",
                      str(tmp_path / "values.yaml"))
    assert run.at() == [("GL488", 3, 1)]
    message = run.findings[0]["message"]
    assert "container toolkit v1.15.0-ubuntu20.04 (the chart's default toolkit of GPU Operator v24.3.0" in message
    assert "`unable to load config: unsupported config version: 3`" in message
    assert lint_for(tmp_path, "24.9", tmp_path / "values.yaml").findings == []  # v1.17.4: reads it


def test_a_pinned_toolkit_in_a_cluster_policy_beside_a_version_3_config(tmp_path):
    policy = (OPERATOR / "clusterpolicy-good.yaml").read_text().replace(
        "  toolkit:\n    enabled: true\n", "  toolkit:\n    enabled: true\n    version: v1.14.6-centos7\n")
    config = 'version = 3\n\n[plugins."io.containerd.cri.v1.runtime".containerd]\n  default_runtime_name = "runc"\n'
    write_files(tmp_path, {"policy.yaml": policy, "etc/containerd/config.toml": config})
    result = lint(tmp_path)
    found = [(f["code"], f["line"]) for f in result.findings if f["code"] == "GL488"]
    assert found == [("GL488", 31)]
    [toolkit] = [f for f in result.findings if f["code"] == "GL488"]
    assert toolkit["related"][0]["path"].endswith("config.toml")
    write_files(tmp_path, {"etc/containerd/config.toml": config.replace("version = 3", "version = 2")
                           .replace("io.containerd.cri.v1.runtime", "io.containerd.grpc.v1.cri")})
    assert "GL488" not in lint(tmp_path).codes()


# ------------------------------------------------------------------ GL494


@pytest.mark.parametrize("target", ["GL494/bad", "GL494/good", "GL495/bad", "GL495/good"])
def test_fixture_findings_are_exactly_the_marked_ones(target):
    result = lint(OPERATOR / target, "--select", "GL494,GL495")
    assert sorted(result.at()) == expected(OPERATOR / target)


_NO_DEFAULT = ("driver:\n  enabled: {enabled}\n  nvidiaDriverCRD:\n    enabled: true\n    deployDefaultCR: false\n"
               "toolkit:\n  enabled: true\ndevicePlugin:\n  enabled: true\n")


def test_pre_installed_drivers_want_no_nvidiadriver(tmp_path):
    write_files(tmp_path, {"values.yaml": _NO_DEFAULT.format(enabled="false")})
    assert lint(tmp_path, "--select", "GL494").findings == []
    write_files(tmp_path, {"values.yaml": _NO_DEFAULT.format(enabled="true")})
    assert lint(tmp_path, "--select", "GL494").codes() == ["GL494"]


def test_helm_line_that_creates_no_nvidiadriver(tmp_path):
    line = ("helm install gpu-operator nvidia/gpu-operator --set driver.nvidiaDriverCRD.enabled=true "
            "--set driver.nvidiaDriverCRD.deployDefaultCR=false{more}\n")
    write_files(tmp_path, {"install.sh": "#!/bin/sh\n" + line.format(more="")})
    [found] = lint(tmp_path, "--select", "GL494").findings
    text = (tmp_path / "install.sh").read_text().splitlines()[found["line"] - 1]
    assert text[found["column"] - 1:found["end_column"]] == "driver.nvidiaDriverCRD.deployDefaultCR"
    for more in (" -f values.yaml", " --set driver.enabled=false"):
        write_files(tmp_path, {"install.sh": "#!/bin/sh\n" + line.format(more=more)})
        assert lint(tmp_path, "--select", "GL494").findings == [], more
    write_files(tmp_path, {"install.sh": "#!/bin/sh\n" + line.format(more=""), "driver.yaml": _NVD.format(name="a")})
    assert lint(tmp_path, "--select", "GL494").findings == []


# ------------------------------------------------------------------ GL495


def test_gpu_cluster_in_a_helm_line_is_judged_by_its_settings(tmp_path):
    line = "helm upgrade -i gpu-operator nvidia/gpu-operator --version v26.7.0 --set gpuCluster.deployCR=true{more}\n"
    cases = [("", 2), (" --set clusterPolicy.deployCR=false", 1),
             (" --set clusterPolicy.deployCR=false --set driver.nvidiaDriverCRD.enabled=true", 0),
             (" --set clusterPolicy.deployCR=false --set driver.enabled=false", 0), (" -f values.yaml", 0)]
    for more, count in cases:
        write_files(tmp_path, {"install.sh": "#!/bin/sh\n" + line.format(more=more)})
        found = lint(tmp_path, "--select", "GL495").findings
        assert len(found) == count, more
        assert all((f["line"], f["column"]) == (2, line.index("gpuCluster") + 1) for f in found)


def test_a_release_whose_chart_has_no_gpu_cluster_is_left_to_gl483(tmp_path):
    write_files(tmp_path, {"install.sh": "#!/bin/sh\nhelm install gpu-operator nvidia/gpu-operator --version v25.10.1 "
                                         "--set gpuCluster.deployCR=true\n"})
    assert lint(tmp_path, "--select", "GL495,GL483").codes() == ["GL483"]


def test_values_without_the_gpu_cluster_switch_are_not_judged(tmp_path):
    write_files(tmp_path, {"values.yaml": "gpuCluster:\n  deployCR: false\ndriver:\n  enabled: true\n"
                                          "toolkit:\n  enabled: true\n"})
    assert lint(tmp_path, "--select", "GL495").findings == []


# ------------------------------------------------------------------ component images in parts

_POLICY = ("apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata:\n  name: cluster-policy\nspec:\n"
           "  operator: {defaultRuntime: containerd}\n  daemonsets: {}\n  dcgm: {enabled: true}\n"
           "  dcgmExporter: {enabled: true}\n  devicePlugin: {enabled: true}\n  gfd: {enabled: true}\n"
           "  nodeStatusExporter: {enabled: true}\n  toolkit: {enabled: true}\n  driver:\n    enabled: true\n")


def test_component_image_given_in_part(tmp_path):
    """The operator builds repository/image:version from what is written (NVIDIA/gpu-operator#585)."""
    write_files(tmp_path, {"policy.yaml": _POLICY + "    version: 550.127.05\n    manager:\n"
                                                    "      repository: nvcr.io/nvidia/cloud-native\n"
                                                    "      image: k8s-driver-manager\n"})
    result = lint(tmp_path, "--select", "GL517")
    assert [(f["line"], f["column"]) for f in result.findings] == [(16, 14), (18, 19)]
    assert "`/:550.127.05`" in result.findings[0]["message"]
    assert "`nvcr.io/nvidia/cloud-native/k8s-driver-manager:`" in result.findings[1]["message"]


def test_component_image_whole_or_unset(tmp_path):
    # all three parts; `image` alone is the whole reference; none keeps the operator's own
    write_files(tmp_path, {"policy.yaml": _POLICY + "    repository: nvcr.io/nvidia\n    image: driver\n"
                                                    "    version: 550.127.05\n    manager:\n"
                                                    "      image: nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.7.0\n"})
    assert lint(tmp_path, "--select", "GL517").findings == []


_TOOLKIT_REFUSES_ENVVAR = """driver:
  enabled: true
toolkit:
  env:
    - name: ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED
      value: "false"
"""


def test_device_list_strategy_the_toolkit_does_not_read(tmp_path):
    """Operator values that turn off the variable for unprivileged pods but keep the plugin
    on envvar (elastisys/compliantkubernetes-apps#2470), or mount devices the toolkit does
    not read."""
    write_files(tmp_path, {"a/values.yaml": _TOOLKIT_REFUSES_ENVVAR + "devicePlugin:\n  enabled: true\n",
                           "b/values.yaml": "driver:\n  enabled: true\ntoolkit:\n  enabled: true\n"
                                            "devicePlugin:\n  env:\n    - name: DEVICE_LIST_STRATEGY\n"
                                            "      value: volume-mounts\n"})
    result = lint_for(tmp_path, "24.9", tmp_path)
    found = sorted((f["path"].split("/")[-2], f["line"], f["column"]) for f in result.findings
                   if f["code"] == "GL814")
    assert found == [("a", 6, 14), ("b", 8, 14)]
    assert "defaults to envvar" in next(f["message"] for f in result.findings if f["code"] == "GL814"
                                        and "/a/" in f["path"])


def test_device_list_strategies_that_agree_or_cdi(tmp_path):
    write_files(tmp_path, {
        # both halves changed together
        "a/values.yaml": _TOOLKIT_REFUSES_ENVVAR + "    - name: ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS\n"
                         "      value: \"true\"\ndevicePlugin:\n  env:\n    - name: DEVICE_LIST_STRATEGY\n"
                         "      value: volume-mounts\n",
        # CDI hands the devices over
        "b/values.yaml": "cdi:\n  enabled: true\n" + _TOOLKIT_REFUSES_ENVVAR,
        # the plugin's config file may choose the strategy
        "c/values.yaml": _TOOLKIT_REFUSES_ENVVAR + "devicePlugin:\n  config:\n    name: plugin-config\n",
        # the toolkit on the host is not the operator's: its env is never read
        "e/values.yaml": _TOOLKIT_REFUSES_ENVVAR.replace("  env:", "  enabled: false\n  env:")
                         + "devicePlugin:\n  enabled: true\n",
    })
    assert [f for f in lint_for(tmp_path, "24.9", tmp_path).findings if f["code"] == "GL814"] == []
    # from v25.10 CDI is the chart's default
    write_files(tmp_path, {"d/values.yaml": _TOOLKIT_REFUSES_ENVVAR + "devicePlugin:\n  enabled: true\n"})
    assert [f for f in lint_for(tmp_path, "25.10", tmp_path / "d").findings if f["code"] == "GL814"] == []
    assert [f for f in lint_for(tmp_path, "24.9", tmp_path / "d").findings if f["code"] == "GL814"] != []


def test_device_list_strategy_on_helm_lines(tmp_path):
    toolkit = ("--set toolkit.env[0].name=ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED "
               "--set-string toolkit.env[0].value=false")
    plugin = "--set devicePlugin.env[0].name=DEVICE_LIST_STRATEGY --set devicePlugin.env[0].value=volume-mounts"
    mounts = ("--set toolkit.env[1].name=ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS "
              "--set-string toolkit.env[1].value=true")
    helm = "helm install gpu-operator nvidia/gpu-operator --version {} {}\n"
    write_files(tmp_path, {"install.sh": helm.format("v24.9.2", toolkit)
                           + helm.format("v24.9.2", plugin)
                           + helm.format("v24.9.2", f"{toolkit} {plugin} {mounts}")
                           + helm.format("v25.10.1", toolkit)
                           + helm.format("v24.9.2", f"{toolkit} -f values.yaml")
                           + helm.format("v24.9.2", f"{toolkit} --set devicePlugin.enabled=false")})
    result = lint(tmp_path, "--select", "GL814")
    assert [(f["line"], f["column"]) for f in result.findings] == [(1, 159), (2, 123)]
    assert "defaults to envvar" in result.findings[0]["message"]
    assert "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS=true" in result.findings[1]["message"]


def test_a_null_list_item_is_refused_and_the_items_after_it_keep_their_places(tmp_path):
    # the API server prunes a null field of an object, not a null item of a list: its type
    # refuses it, and the next item is judged as env[2], where it is written
    write_files(tmp_path, {"cp.yaml": "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata:\n"
                                      "  name: cluster-policy\nspec:\n  toolkit:\n    env:\n"
                                      "      - name: A\n        value: x\n      - null\n      - value: 1\n"})
    found = [(f["line"], f["column"], f["message"]) for f in lint(tmp_path / "cp.yaml").findings if f["line"] > 5]
    assert [(line, column) for line, column, _ in found] == [(10, 9), (11, 9), (11, 16)]
    assert ('`spec.toolkit.env[1]: Invalid value: "null": spec.toolkit.env[1] in body must be of type '
            'object: "null"`') in found[0][2]
    assert "`spec.toolkit.env[2].name: Required value`" in found[1][2]
    assert 'spec.toolkit.env[2].value in body must be of type string: "integer"' in found[2][2]
