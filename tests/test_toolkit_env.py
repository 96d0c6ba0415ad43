"""The container toolkit's node layout settings in `toolkit.env` (GL489-GL492): chart values,
ClusterPolicies, k3s/RKE2 HelmCharts and helm --set lines, through the CLI."""

from __future__ import annotations

from conftest import FIXTURES, run_gpulint, write_files

HERE = FIXTURES / "toolkit_env"
CODES = ("GL489", "GL490", "GL491", "GL492")


def lint(path):
    return run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", str(path))


def layout_findings(result):
    return [(f["code"], f["line"], f["column"]) for f in result.findings if f["code"] in CODES]


def test_a_template_stops_the_toolkit_and_points_at_the_value():
    result = lint(HERE / "values-template.yaml")
    assert layout_findings(result) == [("GL489", 7, 14)]
    message = result.findings[0]["message"]
    assert "keys cannot contain { character" in message
    assert "config-v3.toml.tmpl" in message and "CONTAINERD_SOCKET=/run/k3s/containerd/containerd.sock" in message


def test_the_generated_config_on_any_data_dir_without_the_k3s_socket():
    result = lint(HERE / "values-generated-no-socket.yaml")
    assert layout_findings(result) == [("GL490", 7, 14), ("GL491", 7, 14)]
    generated, socket = (f["message"] for f in result.findings)
    assert "`RUNTIME_CONFIG` names the containerd config k3s/RKE2 generate" in generated
    assert "default-runtime: nvidia" in generated
    assert "`CONTAINERD_SOCKET` unset, the operator's default /run/containerd/containerd.sock" in socket


def test_the_rke2_documented_settings_are_clean():
    assert lint(HERE / "values-rke2-documented.yaml").findings == []
    assert lint(HERE / "helmchart-good.yaml").findings == []  # the socket alone; NRI mode needs none


def test_cluster_policy_env_by_its_toolkit_version():
    result = lint(HERE / "clusterpolicy.yaml")
    assert layout_findings(result) == [("GL489", 11, 16), ("GL491", 13, 16), ("GL492", 15, 24)]  # `dump`
    refused = [f["message"] for f in result.findings if f["code"] == "GL492"][0]
    assert 'unable to load config: unsupported config source "dump"' in refused


def test_helmchart_says_the_nodes_run_k3s_and_spec_set_is_read():
    result = lint(HERE / "helmchart-no-socket.yaml")
    assert layout_findings(result) == [("GL491", 8, 10), ("GL492", 24, 26)]
    socket, old = (f["message"] for f in result.findings)
    assert "the nodes run k3s/RKE2 (a HelmChart of helm.cattle.io deploys the operator)" in socket
    assert "toolkit v1.17.8-ubuntu20.04 (the chart's default of GPU Operator v25.3.4" in old
    assert "does not read `RUNTIME_CONFIG_SOURCE`" in old


def test_helm_set_lines_point_at_the_value():
    result = lint(HERE / "install.sh")
    assert layout_findings(result) == [("GL492", 4, 31), ("GL489", 6, 30), ("GL491", 6, 30)]
    assert 'unsupported config source "files"' in result.findings[0]["message"]


def test_linted_k3s_containerd_files_say_the_nodes_run_k3s(tmp_path):
    values = "driver:\n  enabled: false\ntoolkit:\n  env:\n    - name: CDI_ENABLED\n      value: \"true\"\n" \
             "devicePlugin:\n  enabled: true\n"
    write_files(tmp_path, {"values.yaml": values})
    assert lint(tmp_path).findings == []  # nothing says where the nodes' containerd is
    write_files(tmp_path, {"var/lib/rancher/k3s/agent/etc/containerd/config.toml":
                           "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
                           "  default_runtime_name = \"runc\"\n"
                           "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
                           "  runtime_type = \"io.containerd.runc.v2\"\n"})
    result = lint(tmp_path)
    assert [(f["code"], f["path"].rsplit("/", 1)[-1], f["line"], f["column"]) for f in result.findings
            if f["code"] in CODES] == [("GL491", "values.yaml", 4, 3)]
    assert "var/lib/rancher/k3s/agent/etc/containerd/config.toml)" in \
        [f["message"] for f in result.findings if f["code"] == "GL491"][0]


def test_a_disabled_toolkit_and_odd_env_entries_are_left_alone(tmp_path):
    write_files(tmp_path, {
        "off.yaml": "driver:\n  enabled: false\ntoolkit:\n  enabled: false\n  env:\n"
                    "    - name: CONTAINERD_CONFIG\n      value: /var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl\n"
                    "devicePlugin:\n  enabled: true\n",
        "odd.yaml": "driver:\n  enabled: false\ntoolkit:\n  env:\n    - 5\n    - name: CONTAINERD_CONFIG\n"
                    "      valueFrom: {configMapKeyRef: {name: a, key: b}}\n    - name: RUNTIME_CONFIG_SOURCE\n"
                    "    - name: [1]\n      value: x\n    - name: CONTAINERD_CONFIG\n"
                    "      value: \"{{ .Values.config }}\"\ndevicePlugin:\n  enabled: true\n",
        "map.yaml": "driver:\n  enabled: false\ntoolkit:\n  env: {CONTAINERD_CONFIG: x}\ndevicePlugin:\n  env: 5\n"})
    result = lint(tmp_path)
    assert result.rc in (0, 1), result.err
    assert layout_findings(result) == []


def test_names_the_deployed_toolkit_does_not_read(tmp_path):
    write_files(tmp_path, {"values.yaml": "driver:\n  enabled: false\ntoolkit:\n  version: v1.17.8-ubuntu20.04\n"
                                          "  env:\n    - name: CONTAINERD_SOCKETS\n      value: /run/k3s/x.sock\n"
                                          "    - name: CONTAINERD_RESTART_MODE\n      value: none\n"
                                          "    - name: RUNTIME_RESTART_MODE\n      value: none\n"
                                          "    - name: DEVICE_LIST_STRATEGY\n      value: envvar\n"
                                          "devicePlugin:\n  enabled: true\n"})
    result = lint(tmp_path / "values.yaml")
    assert [(f["code"], f["severity"], f["line"], f["column"]) for f in result.findings] == [
        ("GL492", "warning", 6, 13), ("GL492", "warning", 8, 13)]
    typo, gone = (f["message"] for f in result.findings)
    assert "(did you mean `CONTAINERD_SOCKET`?)" in typo
    assert "toolkit v1.17.8-ubuntu20.04 (`toolkit.version`), which does not read `CONTAINERD_RESTART_MODE` " \
           "(last read by toolkit v1.16.2)" in gone


def test_a_refused_config_source_is_an_error():
    result = lint(HERE / "install.sh")
    assert [f["severity"] for f in result.findings if f["code"] == "GL492"] == ["error"]


def test_the_linted_template_it_names_is_related(tmp_path):
    write_files(tmp_path, {
        "values.yaml": (HERE / "values-template.yaml").read_text(),
        "node/var/lib/rancher/k3s/agent/etc/containerd/config-v3.toml.tmpl": "{{ template \"base\" . }}\n"})
    result = lint(tmp_path)
    template = [f for f in result.findings if f["code"] == "GL489"]
    assert [(f["line"], f["column"]) for f in template] == [(7, 14)]
    assert template[0]["related"][0]["path"].endswith("config-v3.toml.tmpl")
    assert "its `{{ ... }}` is no TOML" in template[0]["related"][0]["message"]


def test_the_refused_source_in_a_quoted_list_is_pointed_at(tmp_path):
    write_files(tmp_path, {"values.yaml": "driver:\n  enabled: false\ntoolkit:\n  env:\n"
                                          "    - name: RUNTIME_CONFIG_SOURCE\n"
                                          "      value: \"file=/etc/k0s/containerd.toml, commnd\"\n"
                                          "devicePlugin:\n  enabled: true\n"})
    result = lint(tmp_path / "values.yaml")
    assert [(f["code"], f["line"], f["column"], f["end_column"]) for f in result.findings] == [
        ("GL492", 6, 46, 51)]
    assert "(did you mean `command`?)" in result.findings[0]["message"]


def test_a_script_that_installs_rke2_says_the_nodes_run_it():
    # no toolkit.env at all: the finding is on the chart the line installs, past the flags before it
    result = lint(HERE / "rke2-install.sh")
    assert [(f["code"], f["line"], f["column"], f["end_column"]) for f in result.findings] == [
        ("GL491", 6, 72, 90)]
    assert "this file installs RKE2 (`https://get.rke2.io`, line 3)" in result.findings[0]["message"]
    assert "`CONTAINERD_SOCKET` unset, the operator's default /run/containerd/containerd.sock" in \
        result.findings[0]["message"]


def test_the_k3s_socket_values_files_a_disabled_toolkit_or_k3s_on_docker_are_left_alone():
    assert lint(HERE / "k3s-install-good.sh").findings == []
    assert lint(HERE / "k3s-docker-install.sh").findings == []  # `--docker`: k3s runs no containerd of its own


def test_a_markdown_guide_that_installs_k3s_in_one_block_and_the_operator_in_another(tmp_path):
    write_files(tmp_path, {"GPU.md": "# GPU nodes\n\n```bash\ncurl -sfL https://get.k3s.io | sh -\n```\n\n"
                                     "Then the operator:\n\n```bash\nhelm upgrade -i gpu-operator nvidia/gpu-operator \\\n"
                                     "  -n gpu-operator --create-namespace --set toolkit.env[0].name=CONTAINERD_CONFIG \\\n"
                                     "  --set toolkit.env[0].value=/etc/containerd/config.toml\n```\n"
                                     "A k3s install mentioned in prose (`curl https://get.k3s.io`) is no command.\n"})
    result = lint(tmp_path)
    assert layout_findings(result) == [("GL491", 11, 64)]  # at the first toolkit.env entry
    assert "this file installs k3s (`https://get.k3s.io`, line 4)" in result.findings[0]["message"]


def test_the_chart_is_the_argument_after_the_release_whatever_flags_come_first(tmp_path):
    write_files(tmp_path, {"install.sh": "#!/bin/sh\ncurl -sfL https://get.k3s.io | sh -\n"
                           # a release named gpu-operator installing another chart is not the operator
                           "helm install gpu-operator ./charts/stack -n gpu-operator\n"
                           # the namespace gpu-operator is not the chart: the chart word is
                           "helm upgrade --install --namespace gpu-operator --create-namespace gpu-operator nvidia/gpu-operator\n"
                           # a chart held in a variable is known by the release name
                           "helm upgrade -i gpu-operator -n gpu-operator \"$CHART\"\n"})
    result = lint(tmp_path)
    assert [(f["code"], f["line"], f["column"]) for f in result.findings] == [("GL491", 4, 81), ("GL491", 5, 17)]
