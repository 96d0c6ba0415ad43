"""The NVIDIA device plugin's config file, on its own, in a ConfigMap and in chart values."""

from __future__ import annotations

from conftest import FIXTURES, run_gpulint, write_files


def lint(path, *args):
    return run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", *args, str(path))


def test_a_documented_time_slicing_config_is_clean():
    result = lint(FIXTURES / "device_plugin" / "time-slicing.yaml")
    assert result.json["summary"]["files_checked"] == 1
    assert result.findings == []


def test_broken_config_findings_point_at_the_key_or_value():
    result = lint(FIXTURES / "device_plugin" / "broken.yaml")
    assert result.at() == [("GL455", 3, 16), ("GL452", 4, 20), ("GL451", 5, 3), ("GL451", 6, 3),
                           ("GL455", 8, 23), ("GL451", 10, 3), ("GL453", 13, 9), ("GL451", 14, 9),
                           ("GL454", 15, 15), ("GL453", 16, 19), ("GL451", 17, 9), ("GL453", 17, 22)]
    messages = {(f["line"], f["code"]): f["message"] for f in result.findings}
    assert "`deviceListStrategy` belongs under `flags.plugin`" in messages[(5, "GL451")]
    assert "`renameByDefault` belongs under `sharing.timeSlicing` or under `sharing.mps`" in messages[(6, "GL451")]
    assert "in the entries of `sharing.timeSlicing.resources`" in messages[(10, "GL451")]
    assert messages[(14, "GL451")].endswith("did you mean `replicas`?")
    assert "`no replicas specified`" in messages[(13, "GL453")]
    assert "`number of replicas must be >= 2`" in messages[(16, "GL453")]
    assert "Go struct field CommandLineFlags.flags.failOnInitError of type bool" in messages[(4, "GL452")]
    assert "`unknown MIG strategy: mixd`; did you mean `mixed`?" in messages[(3, "GL455")]


def test_configs_in_a_configmap_are_read_where_they_are_written():
    result = lint(FIXTURES / "device_plugin" / "configmap.yaml")
    assert result.at() == [("GL456", 14, 20), ("GL452", 19, 23)]
    assert "value of type int" in result.findings[1]["message"]


def test_configs_in_the_chart_values_are_read_where_they_are_written():
    result = lint(FIXTURES / "device_plugin" / "values.yaml")
    assert result.at() == [("GL454", 14, 15)]
    assert "the node gets the larger `replicas`" in result.findings[0]["message"]


def test_a_quoted_embedded_config_is_placed_at_its_value(tmp_path):
    write_files(tmp_path, {"cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n'
                                      '  any: "version: v1\\nflags:\\n  migStrategy: mixd\\n"\n'})
    assert lint(tmp_path).at() == [("GL455", 5, 8)]


def test_configmap_beside_a_daemonset_stays_a_manifest_and_is_judged(tmp_path):
    write_files(tmp_path, {"plugin.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n"
                                          "  any: |-\n    version: v1\n    flags:\n      migStrategy: mixd\n---\n"
                                          "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n"})
    result = lint(tmp_path)
    assert result.json["summary"]["files_checked"] == 1
    assert result.at() == [("GL455", 8, 20)]


def test_invalid_embedded_yaml_is_a_parse_error_at_its_line(tmp_path):
    write_files(tmp_path, {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n"
                                      "  any: |-\n    version: v1\n    flags:\n      migStrategy: [none\n"})
    (finding,) = lint(tmp_path).findings
    assert finding["code"] == "GL001" and finding["line"] >= 8
    assert "embedded device plugin config" in finding["message"]


def test_set_aside_fields_and_case_folded_struct_keys(tmp_path):
    write_files(tmp_path, {"config.yaml": "version: v1\nflags:\n  MigStrategy: single\nresources:\n"
                                          "  gpus:\n    - pattern: '*A100*'\n      name: a100\n"
                                          "sharing:\n  timeSlicing:\n    resources:\n"
                                          "      - name: nvidia.com/gpu\n        rename: gpu-shared\n"
                                          "        replicas: 2\n"})
    result = lint(tmp_path)
    # encoding/json reads a struct's keys in any case: `MigStrategy` is read
    assert result.at() == [("GL451", 4, 1), ("GL451", 12, 9)]
    assert "Customizing the 'resources' field is not yet supported" in result.findings[0]["message"]


def test_mps_beside_time_slicing_and_mig_strategies(tmp_path):
    write_files(tmp_path, {"config.yaml": "version: v1\nflags:\n  migStrategy: single\nsharing:\n"
                                          "  timeSlicing:\n    resources:\n"
                                          "      - {name: nvidia.com/gpu, replicas: 2}\n"
                                          "  mps:\n    resources:\n"
                                          "      - {name: nvidia.com/mig-1g.5gb, replicas: 2}\n"})
    result = lint(tmp_path)
    assert result.at() == [("GL456", 3, 16), ("GL456", 5, 3), ("GL454", 10, 16)]
    severities = [f["severity"] for f in result.findings]
    assert severities == ["warning", "warning", "warning"]


def test_resource_names_the_plugin_refuses(tmp_path):
    long = "a" * 60
    write_files(tmp_path, {"config.yaml": "version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
                                          f"      - {{name: amd.com/gpu, replicas: 2}}\n"
                                          f"      - {{name: {long}, replicas: 2}}\n"})
    result = lint(tmp_path)
    assert result.at() == [("GL454", 5, 16), ("GL454", 6, 16)]
    assert "incorrect format for resource name 'nvidia.com/amd.com/gpu'" in result.findings[0]["message"]
    assert "63 characters or less" in result.findings[1]["message"]


def test_kind_option_reads_a_config_under_any_name(tmp_path):
    write_files(tmp_path, {"plugin-config": "version: v1\nflags:\n  migStrategy: mixd\n"})
    assert lint(tmp_path / "plugin-config", "--kind", "device-plugin").at() == [("GL455", 3, 16)]


def test_other_yaml_with_a_version_is_not_a_device_plugin_config(tmp_path):
    write_files(tmp_path, {"app.yaml": "version: v1\nname: app\nsettings:\n  flags: 1\n"})
    assert lint(tmp_path).json["summary"]["files_checked"] == 0


def test_pods_against_the_linted_plugin_configs():
    result = lint(FIXTURES / "device_plugin" / "mps-pool")
    assert [(f["path"].rsplit("/", 1)[1], f["code"], f["line"], f["column"], f["severity"])
            for f in result.findings] == [("training.yaml", "GL457", 14, 31, "error"),
                                          ("training.yaml", "GL457", 27, 11, "warning"),
                                          # a full GPU and a MIG type in one container
                                          ("training.yaml", "GL519", 27, 11, "warning")]
    refused, mig, _ = result.findings
    assert "`maximum request size for shared resources is 1; found 2`" in refused["message"]
    assert refused["related"][0]["line"] == 14
    assert mig["related"][0]["line"] == 10 and mig["related"][0]["column"] == 20


def test_a_pool_without_sharing_serves_several_gpus(tmp_path):
    write_files(tmp_path, {
        "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n"
                   "  plain: |-\n    version: v1\n    flags:\n      migStrategy: mixed\n"
                   "  mps: |-\n    version: v1\n    sharing:\n      mps:\n        resources:\n"
                   "          - {name: nvidia.com/gpu, replicas: 2}\n",
        "pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                    "  - name: a\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n    resources:\n"
                    "      limits: {nvidia.com/gpu: 2}\n"
                    "  - name: b\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n    resources:\n"
                    "      limits: {nvidia.com/mig-1g.10gb: 1}\n"})
    assert lint(tmp_path).findings == []


def test_time_slicing_allows_several_unless_told(tmp_path):
    config = ("version: v1\nsharing:\n  timeSlicing:\n{extra}    resources:\n"
              "      - {{name: nvidia.com/gpu, replicas: 4}}\n")
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
           "  - name: a\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n    resources:\n"
           "      limits: {nvidia.com/gpu: 2}\n")
    write_files(tmp_path, {"config.yaml": config.format(extra=""), "pod.yaml": pod})
    assert lint(tmp_path).findings == []
    write_files(tmp_path, {"config.yaml": config.format(extra="    failRequestsGreaterThanOne: true\n")})
    assert lint(tmp_path).at() == [("GL457", 9, 32)]


def test_odd_shapes_are_reported_never_a_traceback(tmp_path):
    write_files(tmp_path, {
        "a.yaml": "version: v1\nflags: 3\nsharing: [1, 2]\n",
        "b.yaml": "version: v1\nflags:\nsharing:\n  timeSlicing:\n",
        "c.yaml": "version: v1\nsharing:\n  timeSlicing:\n    resources: [1, null, {name: gpu, replicas: null}]\n"
                  "  mps: 5\n",
        "d.yaml": "version: v2\nflags:\n  plugin: {deviceListStrategy: [envvar, 3, cdi]}\n",
        "e.yaml": "- version: v1\n- flags: {}\n"})
    result = lint(tmp_path, "--kind", "device-plugin")
    assert [(f["path"].rsplit("/", 1)[1], f["code"], f["line"], f["column"]) for f in result.findings] == [
        ("a.yaml", "GL452", 2, 8), ("a.yaml", "GL452", 3, 10), ("b.yaml", "GL453", 4, 3),
        ("c.yaml", "GL453", 4, 17), ("c.yaml", "GL453", 4, 20), ("c.yaml", "GL453", 4, 48),
        ("c.yaml", "GL452", 5, 8), ("d.yaml", "GL452", 1, 10), ("d.yaml", "GL452", 3, 32),
        ("d.yaml", "GL455", 3, 44), ("e.yaml", "GL001", 1, 1)]
    messages = [f["message"] for f in result.findings]
    assert "`no resources specified`" in messages[2]
    assert "`no resource name specified`" in messages[4]
    assert "`replicas: null`" in messages[5]


def test_configs_in_the_gpu_operator_values_are_judged_in_place():
    result = lint(FIXTURES / "device_plugin" / "operator")
    assert [(f["code"], f["line"], f["column"]) for f in result.findings if f["code"].startswith("GL45")] == [
        ("GL456", 28, 24), ("GL451", 29, 11), ("GL453", 34, 27)]


def test_operator_values_configs_serve_the_cross_file_check(tmp_path):
    values = (FIXTURES / "device_plugin" / "operator" / "values.yaml").read_text()
    write_files(tmp_path, {
        "values.yaml": values.replace("replicas: 1", "replicas: 2"),
        "pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                    "  - name: a\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n    resources:\n"
                    "      limits: {nvidia.com/mig-1g.10gb: 1}\n"})
    assert [f["code"] for f in lint(tmp_path).findings if f["path"].endswith("pod.yaml")] == ["GL457"]


def test_configmap_beside_the_daemonset_is_judged_and_serves_pods(tmp_path):
    write_files(tmp_path, {
        "plugin.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n"
                       "  any: |-\n    version: v1\n    sharing:\n      mps:\n        resources:\n"
                       "          - name: nvidia.com/gpu\n            replicas: 1\n"
                       "  big: |-\n    version: v1\n    sharing:\n      mps:\n        resources:\n"
                       "          - name: nvidia.com/gpu\n            replicas: 4\n---\n"
                       "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n",
        "pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                    "  - name: a\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n    resources:\n"
                    "      limits: {nvidia.com/gpu: 3}\n"})
    result = lint(tmp_path)
    assert [(f["path"].rsplit("/", 1)[1], f["code"], f["line"], f["column"]) for f in result.findings] == [
        ("plugin.yaml", "GL453", 11, 23), ("pod.yaml", "GL457", 9, 32)]


def test_keys_and_values_newer_than_the_linted_plugin_release(tmp_path):
    write_files(tmp_path, {
        "config.yaml": "version: v1\nflags:\n  plugin:\n    deviceListStrategy: [envvar, cdi-cri]\n"
                       "sharing:\n  mps:\n    resources:\n      - {name: nvidia.com/gpu, replicas: 2}\n",
        "plugin.yaml": "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec:\n  template:\n"
                       "    spec:\n      containers:\n      - name: plugin\n"
                       "        image: nvcr.io/nvidia/k8s-device-plugin:v0.14.5\n"})
    result = lint(tmp_path)
    assert result.at() == [("GL455", 4, 34), ("GL451", 6, 3)]
    assert "`cdi-cri` arrived in device plugin v0.15.0: device plugin v0.14.5" in result.findings[0]["message"]
    assert "`mps` arrived in device plugin v0.15.0" in result.findings[1]["message"]
    write_files(tmp_path, {"plugin.yaml": (tmp_path / "plugin.yaml").read_text().replace("v0.14.5", "v0.17.0")})
    assert lint(tmp_path).findings == []


def test_a_helm_template_of_the_config_is_read_with_its_expressions_set_aside(tmp_path):
    write_files(tmp_path, {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n"
                                      "data:\n  config.yaml: |-\n    version: v1\n    flags:\n"
                                      "      migStrategy: {{ .Values.migStrategy }}\n      failOnInitError: x\n"
                                      "    sharing:\n      timeSlicing:\n        resources:\n"
                                      "          - name: {{ .Values.resource }}\n"
                                      "            devices: {{ .Values.devices }}\n"
                                      "            replicas: {{ .Values.replicas }}\n"})
    assert lint(tmp_path).at() == [("GL452", 10, 24)]


def test_a_default_config_that_does_not_exist(tmp_path):
    chart = (FIXTURES / "device_plugin" / "values.yaml").read_text()
    operator = (FIXTURES / "device_plugin" / "operator" / "values.yaml").read_text()
    write_files(tmp_path, {"chart/values.yaml": chart.replace("default: time-sliced", "default: timesliced"),
                           "operator/values.yaml": operator.replace("default: any", "default: all")})
    result = lint(tmp_path)
    found = [(f["path"].split("/")[-2], f["line"], f["column"], f["message"]) for f in result.findings
             if f["code"] == "GL458"]
    assert [f[:3] for f in found] == [("chart", 4, 12), ("operator", 13, 14)]
    assert found[0][3].endswith("did you mean `time-sliced`?")
    assert "`specified config all does not exist`" in found[1][3]


def test_the_operator_default_is_looked_up_in_the_linted_configmap(tmp_path):
    write_files(tmp_path, {
        "values.yaml": "driver:\n  version: '570.172.08'\ntoolkit:\n  enabled: true\ndevicePlugin:\n"
                       "  config:\n    name: time-slicing-config\n    default: tesla-t4\n",
        "configmap.yaml": (FIXTURES / "device_plugin" / "configmap.yaml").read_text()
                          .replace("name: device-plugin-config", "name: time-slicing-config")})
    result = lint(tmp_path)
    assert [(f["code"], f["line"], f["column"]) for f in result.findings if f["code"] == "GL458"] == [
        ("GL458", 8, 14)]
    assert "the configs of the linted ConfigMap `time-slicing-config`" in [
        f["message"] for f in result.findings if f["code"] == "GL458"][0]


def test_a_rename_the_plugin_refuses_stops_it_before_it_is_set_aside(tmp_path):
    write_files(tmp_path, {"config.yaml": "version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
                                          "      - {name: nvidia.com/gpu, rename: GPU_Shared, replicas: 2}\n"})
    result = lint(tmp_path)
    assert result.at() == [("GL451", 5, 32), ("GL454", 5, 40)]
    assert "incorrect format for resource name 'nvidia.com/GPU_Shared'" in result.findings[1]["message"]


def test_imex_channels_other_than_zero(tmp_path):
    write_files(tmp_path, {"config.yaml": "version: v1\nflags:\n  migStrategy: none\nimex:\n  channelIDs: [1, 2]\n"})
    result = lint(tmp_path)
    assert result.at() == [("GL455", 5, 15)]
    assert "channelIDs must be [] or [0]; found [1 2]" in result.findings[0]["message"]
    write_files(tmp_path, {"config.yaml": "version: v1\nflags:\n  migStrategy: none\nimex:\n  channelIDs: [0]\n"})
    assert lint(tmp_path).findings == []


def test_a_node_label_naming_a_config_no_linted_configmap_holds(tmp_path):
    write_files(tmp_path, {
        "configmap.yaml": (FIXTURES / "device_plugin" / "configmap.yaml").read_text(),
        "nodes.yaml": "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-1\n  labels:\n"
                      "    nvidia.com/device-plugin.config: a100-mp\n---\n"
                      "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n"
                      "    metadata:\n      labels:\n        nvidia.com/device-plugin.config: default\n"})
    result = lint(tmp_path)
    found = [f for f in result.findings if f["path"].endswith("nodes.yaml")]
    assert [(f["code"], f["line"], f["column"]) for f in found] == [("GL458", 6, 38)]
    assert found[0]["message"].endswith("did you mean `a100-mps`?")


def test_struct_keys_are_read_in_any_case_as_the_plugin_reads_them(tmp_path):
    write_files(tmp_path, {"config.yaml": "version: v1\nflags:\n  MigStrategy: mixed\nSharing:\n  MPS:\n"
                                          "    resources:\n      - {name: nvidia.com/gpu, replicas: 2}\n"})
    assert lint(tmp_path).at() == [("GL456", 3, 16)]


def test_chart_flag_values_are_judged_as_the_template_passes_them():
    result = lint(FIXTURES / "device_plugin" / "chart-flags.yaml")
    assert result.at() == [("GL455", 2, 14), ("GL452", 3, 18), ("GL455", 5, 21)]
    messages = [f["message"] for f in result.findings]
    assert "`MIG_STRATEGY=Mixed`" in messages[0] and "`unknown MIG strategy: Mixed`; did you mean `mixed`?" in messages[0]
    # the chart drops a value of another type: the plugin starts, without the setting
    assert result.findings[1]["severity"] == "warning" and '`typeIs "bool"`' in messages[1]
    assert "`invalid --device-list-strategy option: invalid strategy: cdi`" in messages[2]


def test_chart_values_without_a_config_are_not_read_as_one(tmp_path):
    write_files(tmp_path, {"values.yaml": "migStrategy: mixed\nfailOnInitError: false\nnodeSelector: {}\n"})
    result = lint(tmp_path)
    assert result.json["summary"]["files_checked"] == 1 and result.findings == []


MIG_POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: a\n"
           "    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources:\n      limits:\n"
           "        nvidia.com/mig-1g.5gb: 1\n")
OPERATOR_VALUES = ("toolkit:\n  enabled: true\ndevicePlugin:\n  config:\n    create: true\n    name: plugin-config\n"
                   "    default: any\n    data:\n      any: |-\n        version: v1\n        flags:\n"
                   "          migStrategy: mixed\n")


def test_the_operator_mig_strategy_overrides_its_device_plugin_config(tmp_path):
    """The GPU Operator passes `mig.strategy` (the chart's default: single) to its device plugin as
    MIG_STRATEGY, which the plugin takes over its config file's `migStrategy`."""
    write_files(tmp_path, {"values.yaml": OPERATOR_VALUES, "pod.yaml": MIG_POD})
    result = lint(tmp_path)
    assert [(f["path"].rsplit("/", 1)[1], f["code"], f["line"], f["column"], f["severity"])
            for f in result.findings] == [("pod.yaml", "GL457", 10, 9, "warning"),
                                          ("values.yaml", "GL451", 12, 24, "warning")]
    assert "the chart's default `mig.strategy: single`" in result.findings[1]["message"]
    # the strategy set where the operator reads it: both agree, the pod is served
    write_files(tmp_path, {"values.yaml": OPERATOR_VALUES + "mig:\n  strategy: mixed\n"})
    assert lint(tmp_path).findings == []


def test_a_cluster_policy_mig_strategy_decides_what_its_plugin_advertises(tmp_path):
    policy = ("apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: cluster-policy}\nspec:\n"
              "  mig:\n    strategy: {strategy}\n")
    write_files(tmp_path, {"policy.yaml": policy.replace("{strategy}", "single"), "pod.yaml": MIG_POD})
    result = lint(tmp_path)
    assert [(f["code"], f["line"]) for f in result.findings if f["code"] == "GL457"] == [("GL457", 10)]
    assert result.findings[0]["related"][0]["message"] == "`spec.mig.strategy: single`"
    write_files(tmp_path, {"policy.yaml": policy.replace("{strategy}", "mixed")})
    assert [f for f in lint(tmp_path).findings if f["code"] == "GL457"] == []


MPS_CONFIGMAP = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plugin-configs}\ndata:\n  config: |-\n"
                 "    version: v1\n    sharing:\n      mps:\n        resources:\n        - name: nvidia.com/gpu\n"
                 "          replicas: 4\n")


def _plugin_daemonset(image="nvcr.io/nvidia/k8s-device-plugin:v0.17.0", env="", name="nvidia-device-plugin",
                      args=""):
    return ("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: " + name + "}\nspec:\n"
            "  selector: {matchLabels: {app: " + name + "}}\n  template:\n    metadata: {labels: {app: " + name
            + "}}\n    spec:\n      containers:\n      - name: ctr\n        image: " + image + "\n"
            + (f"        args: [{args}]\n" if args else "")
            + "        env:\n        - {name: CONFIG_FILE, value: /config/config}\n" + env)


def test_gl459_mps_config_run_by_a_hand_written_plugin_daemonset(tmp_path):
    """The plugin refuses MPS without a root (NVIDIA/k8s-device-plugin#1132) and waits forever
    without the MPS control daemon (#634), both of which its Helm chart provides."""
    write_files(tmp_path, {"configs.yaml": MPS_CONFIGMAP, "plugin.yaml": _plugin_daemonset()})
    result = lint(tmp_path)
    assert [(f["code"], f["line"], f["column"], f["severity"]) for f in result.findings] == [
        ("GL459", 8, 7, "error")]
    assert "`using MPS requires --mps-root to be specified`" in result.findings[0]["message"]
    assert result.findings[0]["related"][0]["path"].endswith("plugin.yaml")
    # a root (as MPS_ROOT, `--mps-root` or the config's flags.mpsRoot), but no control daemon
    for plugin, configs in (
            (_plugin_daemonset(env="        - {name: MPS_ROOT, value: /run/nvidia/mps}\n"), MPS_CONFIGMAP),
            (_plugin_daemonset(args="--mps-root=/run/nvidia/mps"), MPS_CONFIGMAP),
            (_plugin_daemonset(), MPS_CONFIGMAP.replace("    sharing:\n", "    flags: {mpsRoot: /run/nvidia/mps}\n"
                                                                          "    sharing:\n"))):
        write_files(tmp_path, {"configs.yaml": configs, "plugin.yaml": plugin})
        assert [(f["code"], f["severity"]) for f in lint(tmp_path).findings] == [("GL459", "warning")]
    # and the control daemon beside it: nothing to say
    daemon = _plugin_daemonset(name="mps-control-daemon", args="mps-control-daemon")
    write_files(tmp_path, {"daemon.yaml": daemon})
    assert lint(tmp_path).findings == []


def test_gl459_needs_a_linted_plugin_daemonset_that_knows_mps(tmp_path):
    write_files(tmp_path, {"configs.yaml": MPS_CONFIGMAP})
    assert lint(tmp_path).findings == []  # deployed by a chart or the operator elsewhere: unknown
    write_files(tmp_path, {"plugin.yaml": _plugin_daemonset(image="nvcr.io/nvidia/k8s-device-plugin:v0.14.5")})
    assert [f["code"] for f in lint(tmp_path).findings] == ["GL451"]  # v0.14 drops `mps` altogether


_RUNC_NODE = ('version = 2\n\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "runc"\n\n'
              '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n  runtime_type = "io.containerd.runc.v2"\n\n'
              '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
              '  BinaryName = "/usr/bin/nvidia-container-runtime"\n')
_CHART_VALUES = ("config:\n  map:\n    default: |-\n      version: v1\n      sharing:\n        timeSlicing:\n"
                 "          resources:\n            - name: nvidia.com/gpu\n              replicas: 4\n")


def test_chart_values_without_runtime_class_on_runc_nodes(tmp_path):
    """The chart's DaemonSet runs with containerd's default unless runtimeClassName is set
    (NVIDIA/k8s-device-plugin#477)."""
    write_files(tmp_path, {"values.yaml": _CHART_VALUES, "etc/containerd/config.toml": _RUNC_NODE})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL703", ".", cwd=tmp_path)
    assert [(f["path"].rsplit("/", 1)[-1], f["line"]) for f in result.findings] == [("values.yaml", 1)]
    write_files(tmp_path, {"values.yaml": _CHART_VALUES + "runtimeClassName: nvidia\n"})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL703", ".", cwd=tmp_path)
    assert result.findings == []
