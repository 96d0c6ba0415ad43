"""mig-parted's MIG partition configs: on their own, in ConfigMaps, in the GPU Operator's chart
values, and the config names the MIG manager looks up."""

from __future__ import annotations

from conftest import FIXTURES, run_gpulint, write_files

MIG = FIXTURES / "mig_config"


def lint(path, *args):
    return run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", *args, str(path))


def test_a_working_custom_config_is_clean():
    result = lint(MIG / "custom-mig-config.yaml")
    assert result.json["summary"]["files_checked"] == 1
    assert result.findings == []


def test_broken_config_findings_point_at_the_key_or_value():
    result = lint(MIG / "broken-mig-config.yaml")
    assert result.at() == [("GL464", 6, 7), ("GL461", 9, 7), ("GL461", 10, 7), ("GL461", 13, 7),
                           ("GL461", 14, 7), ("GL461", 16, 9), ("GL462", 23, 9), ("GL467", 25, 23),
                           ("GL463", 29, 9), ("GL465", 36, 7)]
    messages = {(f["line"], f["code"]): f["message"] for f in result.findings}
    assert "`missing required field: mig-enabled`" in messages[(9, "GL461")]
    assert messages[(10, "GL461")].endswith("did you mean `mig-enabled`?")
    assert "cannot unmarshal number into Go value of type []int" in messages[(13, "GL461")]
    assert "invalid format for '1g10gb'" in messages[(16, "GL461")]
    assert "(A100-40GB) have no profile `3g.40gb`" in messages[(23, "GL462")]
    assert "did you mean `0x233010DE`?" in messages[(25, "GL467")]
    assert "take 8 compute slices, more than the 7" in messages[(29, "GL463")]
    assert "the entry at line 32" in messages[(36, "GL465")]


def test_a_profile_on_no_gpu_and_profiles_of_two_models(tmp_path):
    write_files(tmp_path, {"mig-config.yaml": 'version: v1\nmig-configs:\n  odd:\n    - devices: all\n'
                                              '      mig-enabled: true\n      mig-devices:\n'
                                              '        "3g.10gb": 1\n  mixed:\n    - devices: all\n'
                                              '      mig-enabled: true\n      mig-devices:\n'
                                              '        "1g.5gb": 2\n        "3g.40gb": 1\n'})
    result = lint(tmp_path)
    assert result.at() == [("GL462", 7, 9), ("GL462", 11, 7)]
    assert "no MIG-capable GPU has the profile `3g.10gb`" in result.findings[0]["message"]
    assert "no GPU has all of `1g.5gb`, `3g.40gb`" in result.findings[1]["message"]


def test_counts_are_judged_against_every_model_the_profiles_allow():
    result = lint(MIG / "operator" / "mig-manager.yaml")
    assert result.at() == [("GL463", 17, 13)]
    message = result.findings[0]["message"]
    assert "on A100-40GB, `1g.10gb: 8` asks for more than the 4" in message
    assert "on A100-80GB and H100-80GB, `1g.10gb: 8` asks for more than the 7" in message


def test_a_configmap_file_is_read_where_its_config_is_written(tmp_path):
    write_files(tmp_path, {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: custom-mig-config}\n"
                                      "data:\n  config.yaml: |\n    version: v1\n    mig-configs:\n"
                                      "      all-disabled:\n        - devices: all\n"
                                      "          mig-enabled: no\n          mig-devices: {\"1g.5gb\": 1}\n"})
    result = lint(tmp_path)
    assert result.json["summary"]["files_checked"] == 1
    assert result.at() == [("GL464", 11, 11)]


def test_names_the_mig_manager_looks_up_are_judged_against_the_linted_configmaps():
    # the ClusterPolicy holds only what the MIG manager reads (the CRD's schema is GL481's)
    result = lint(MIG / "operator", "--select", "GL46")
    assert result.at() == [("GL466", 17, 28), ("GL463", 17, 13), ("GL466", 4, 54)]
    assert [f["path"].rsplit("/", 1)[-1] for f in result.findings] == ["clusterpolicy.yaml", "mig-manager.yaml",
                                                                      "setup.sh"]
    assert "`selected mig-config not present: all-1g.5gb`" in result.findings[0]["message"]
    assert "`all-2g.20gb` is not a config of the linted MIG manager ConfigMaps" in result.findings[2]["message"]


def test_without_a_linted_configmap_names_are_not_judged():
    result = lint(MIG / "operator" / "clusterpolicy.yaml", "--select", "GL46")
    assert result.findings == []


# the GPU Operator chart's values up to the text of `migManager.config.data`
_VALUES = ("driver:\n  enabled: true\nmig:\n  strategy: mixed\nmigManager:\n  config:\n    name: custom-mig-config\n"
           "    create: true\n    default: all-disabled\n    data:\n")


def test_chart_values_configs_and_default(tmp_path):
    write_files(tmp_path, {"values.yaml": _VALUES + "      config.yaml: |-\n        version: v1\n"
                                          "        mig-configs:\n          custom:\n            - devices: [0]\n              mig-enabled: true\n"
                                          "              mig-devices:\n                \"1g.10gb\": 7\n"
                                          "                \"7g.80gb\": 1\n"})
    result = lint(tmp_path)
    assert result.at() == [("GL466", 9, 14), ("GL463", 18, 17)]
    assert "they define `custom`" in result.findings[0]["message"]


def test_configs_outside_config_yaml_are_not_read_by_the_mig_manager(tmp_path):
    write_files(tmp_path, {"values.yaml": _VALUES + "      mig.yaml: |-\n        version: v1\n"
                                          "        mig-configs:\n          all-disabled:\n            - devices: all\n              mig-enabled: false\n"})
    result = lint(tmp_path)
    assert result.at() == [("GL466", 10, 5)]
    assert "reads only the key `config.yaml`" in result.findings[0]["message"]


def test_recognised_by_name_only_with_a_top_level_key(tmp_path):
    write_files(tmp_path, {"my-mig-config.yaml": "mig-configs:\n  all-disabled:\n    - devices: all\n"
                                                 "      mig-enabled: false\n",
                           "mig-config-notes.yaml": "owner: gpu-team\n"})
    result = lint(tmp_path)
    assert result.json["summary"]["files_checked"] == 1
    assert result.at() == [("GL461", 1, 1)]
    assert "missing 'version' field" in result.findings[0]["message"]


def test_recognised_by_content_whatever_its_name(tmp_path):
    write_files(tmp_path, {"layout.yaml": "version: v1\nmig-configs:\n  x:\n    - devices: all\n"
                                          "      mig-enabled: true\n      mig-devices: {\"1g.5gb\": 8}\n"})
    assert lint(tmp_path).at() == [("GL463", 6, 21)]


def test_kind_can_be_forced(tmp_path):
    write_files(tmp_path, {"layout.yaml": "mig-configs:\n  x:\n    - devices: all\n      mig-enabled: false\n"})
    assert lint(tmp_path / "layout.yaml").json["summary"]["files_checked"] == 0
    assert lint(tmp_path / "layout.yaml", "--kind", "mig-config").at() == [("GL461", 1, 1)]


def test_broken_embedded_yaml_is_a_finding_not_a_traceback(tmp_path):
    write_files(tmp_path, {"mig.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata:\n"
                                       "  config.yaml: |\n    version: v1\n    mig-configs: [\n---\n"
                                       "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n"})
    result = lint(tmp_path)
    assert result.rc == 0, result.err
    assert result.at() == [("GL461", 8, 1)]  # and no device plugin finding for it


def test_gpulint_mig_lists_the_models_and_a_models_profiles():
    listed = run_gpulint("mig", "--format", "json")
    assert listed.rc == 0
    models = {m["model"]: m for m in listed.json["models"]}
    assert {"A30", "A100-40GB", "H100-80GB", "H200-141GB", "B200", "GB200"} <= set(models)
    a100 = run_gpulint("mig", "a100-sxm4-40gb", "--format", "json")
    assert a100.rc == 0
    profiles = {p["name"]: p for p in a100.json["profiles"]}
    assert profiles["1g.5gb"] == {"name": "1g.5gb", "compute": 1, "memory": 1, "max": 7,
                                  "starts": [0, 1, 2, 3, 4, 5, 6]}
    assert profiles["3g.20gb"]["memory"] == 4 and profiles["3g.20gb"]["starts"] == [0, 4]
    assert "getting-started-with-mig.html" in a100.json["source"]
    by_id = run_gpulint("mig", "0x20B710DE")
    assert by_id.rc == 0 and by_id.out.startswith("A30") and "4g.24gb" in by_id.out


def test_gpulint_mig_says_when_a_model_is_not_known():
    result = run_gpulint("mig", "V100")
    assert result.rc == 1
    assert "no MIG-capable GPU model V100 is known" in result.err


def test_gpulint_mig_is_completed():
    script = run_gpulint("completion", "bash")
    assert " mig " in script.out


def test_a_clusterpolicy_default_missing_from_its_custom_configmap(tmp_path):
    write_files(tmp_path, {"cp.yaml": "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n"
                                      "  migManager:\n    config:\n      name: custom-mig-config\n"
                                      "      default: all-disabled\n",
                           "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: custom-mig-config}\ndata:\n"
                                      "  config.yaml: \"version: v1\\nmig-configs:\\n  custom:\\n    - devices: all\\n"
                                      "      mig-enabled: true\\n      mig-devices: {'1g.5gb': 8}\\n\"\n"})
    result = lint(tmp_path, "--select", "GL46")
    assert result.at() == [("GL463", 5, 16), ("GL466", 8, 16)]
    assert "`all-disabled` is not a config of the linted ConfigMap `custom-mig-config`" in result.findings[1]["message"]


def test_a_profile_whose_gpu_the_sources_do_not_name_is_not_judged_by_model(tmp_path):
    write_files(tmp_path, {"mig-config.yaml": 'version: v1\nmig-configs:\n  big:\n'
                                              '    - device-filter: "0x294110DE"\n      devices: all\n'
                                              '      mig-enabled: true\n      mig-devices:\n'
                                              '        "3g.95gb": 1\n        "1g.23gb": 1\n'})
    assert lint(tmp_path).findings == []


def test_decoder_errors_are_quoted_as_encoding_json_words_them(tmp_path):
    write_files(tmp_path, {"mig-config.yaml": 'version: v1\nmig-configs:\n  x:\n    - devices: [0, "1"]\n'
                                              '      device-filter: [0x20B010DE]\n      mig-enabled: true\n'
                                              '      mig-devices: {"1g.5gb": 1.5}\n',
                           "empty-mig-config.yaml": "version: v1\nmig-configs:\n"})
    messages = [f["message"] for f in lint(tmp_path).findings]
    assert any("`at least one entry in 'mig-configs' is required`" in m for m in messages)
    assert any("json: cannot unmarshal string into Go value of type int)`" in m for m in messages)
    assert any("json: cannot unmarshal number into Go value of type string)`" in m for m in messages)
    assert any("`json: cannot unmarshal number 1.5 into Go value of type int`" in m for m in messages)


def test_profiles_are_matched_as_mig_parted_matches_them(tmp_path):
    # go-nvlib compares the numbers, so `1g.05gb` is `1g.5gb`; `1c.7g.40gb` is a compute
    # instance in a 7g.40gb GPU instance
    write_files(tmp_path, {"mig-config.yaml": 'version: v1\nmig-configs:\n  a:\n'
                                              '    - device-filter: "0x20B010DE"\n      devices: all\n'
                                              '      mig-enabled: true\n      mig-devices:\n'
                                              '        "1g.05gb": 8\n  b:\n'
                                              '    - device-filter: "0x20B010DE"\n      devices: all\n'
                                              '      mig-enabled: true\n      mig-devices:\n'
                                              '        "1c.7g.40gb": 7\n'})
    result = lint(tmp_path)
    assert result.at() == [("GL463", 8, 9)]
    assert "more than the 7 instance(s) of `1g.05gb`" in result.findings[0]["message"]


def test_the_bundled_profile_table_is_consistent():
    for model in run_gpulint("mig", "--format", "json").json["models"]:
        assert model["device_ids"] and all(i.startswith("0x") and i.endswith("10DE") for i in model["device_ids"])
        for profile in model["profiles"]:
            # a `<n>g` profile takes n compute slices, and its instances fit in the GPU's
            assert profile["compute"] == int(profile["name"].split("g.")[0]), profile
            assert profile["compute"] * profile["max"] <= model["compute_slices"], (model["model"], profile)
            if profile["memory"] is not None:
                assert profile["memory"] * profile["max"] <= model["memory_slices"], (model["model"], profile)
            if profile["starts"] is not None:
                # each placement lies within the memory slices, and the instances that fit have
                # as many placements that do not overlap
                assert profile["memory"] is not None and all(
                    0 <= s and s + profile["memory"] <= model["memory_slices"] for s in profile["starts"])
                apart = [s for i, s in enumerate(profile["starts"])
                         if all(s >= t + profile["memory"] for t in profile["starts"][:i])]
                assert len(apart) >= profile["max"], (model["model"], profile)


def test_a_mix_with_no_layout_on_the_memory_slices_names_the_profile_left_out(tmp_path):
    entry = "  {name}:\n    - devices: all\n      device-filter: \"{id}\"\n      mig-enabled: true\n      mig-devices:\n"
    write_files(tmp_path, {"mig.yaml": "version: v1\nmig-configs:\n"
                           + entry.format(name="a100", id="0x20B010DE") + '        "1g.10gb": 4\n        "1g.5gb": 1\n'
                           + entry.format(name="h100", id="0x233010DE") + '        "1g.20gb": 3\n        "2g.20gb": 1\n'
                           '        "1g.10gb": 1\n'
                           + entry.format(name="h100-fits", id="0x233010DE") + '        "4g.40gb": 1\n        "3g.40gb": 1\n'
                           + entry.format(name="a100-fits", id="0x20B010DE") + '        "3g.20gb": 1\n        "2g.10gb": 1\n'
                           '        "1g.5gb": 2\n'})
    result = lint(tmp_path)
    # at the profile that finds no free start, though the compute slices (5 and 6 of 7) fit
    assert result.at() == [("GL463", 9, 9), ("GL463", 17, 9)]
    a100, h100 = (f["message"] for f in result.findings)
    assert "on A100-40GB, no layout of these MIG devices leaves room for `1g.5gb`" in a100
    assert "start at memory slice 0 to 6 and take 1" in a100 and "take 9 of the 8 memory slices" in a100
    assert "on H100-80GB, no layout of these MIG devices leaves room for `1g.10gb`" in h100


def test_newer_gpus_profiles_and_counts_are_judged_by_their_device_filter():
    result = lint(MIG / "newer-gpus-mig-config.yaml")
    # per GPU: the config that fits is clean, another GPU's profile is GL462, counts that do
    # not fit are GL463
    assert result.at() == [("GL462", 18, 9), ("GL463", 26, 9), ("GL462", 40, 9), ("GL463", 48, 9),
                           ("GL462", 62, 9), ("GL463", 68, 9), ("GL462", 82, 9), ("GL463", 88, 9),
                           ("GL462", 102, 9), ("GL463", 108, 9), ("GL462", 122, 9), ("GL463", 128, 9)]
    messages = [f["message"] for f in result.findings]
    assert "names (GH200-144GB) have no profile `3g.71gb`" in messages[0]
    # the memory slices of the GH200 144GB and the GB200: 6 + 2 + 1 of 8, though 6 compute slices fit
    assert "on GH200-144GB, no layout of these MIG devices leaves room for `1g.18gb`" in messages[1]
    assert "take 9 of the 8 memory slices" in messages[1]
    assert "names (GB200) have no profile `3g.90gb`; `3g.90gb` is a profile of B200" in messages[2].replace(
        ", so applying the config fails on them", "")
    assert "on GB200, no layout of these MIG devices leaves room for `1g.23gb`" in messages[3]
    assert "names (H100-96GB) have no profile `1g.10gb`" in messages[4]
    assert "`1g.24gb: 5` asks for more than the 4 instance(s)" in messages[5]
    assert "names (B300) have no profile `1g.35gb`" in messages[6]
    assert "on B300, `1g.67gb: 5` asks for more than the 4" in messages[7]
    assert "names (GB300) have no profile `3g.135gb`" in messages[8]
    assert "on GB300, these MIG devices take 8 compute slices, more than the 7" in messages[9]
    # the Workstation Editions' device IDs stand for the RTX PRO 6000's profiles
    assert "names (RTX-PRO-6000-Blackwell) have no profile `7g.96gb`" in messages[10]
    assert "on RTX-PRO-6000-Blackwell, these MIG devices take 5 compute slices, more than the 4" in messages[11]


def test_gpulint_mig_shows_the_newer_gpus():
    for model, profile, memory, starts in (("GH200-144GB", "1g.36gb", 2, [0, 2, 4, 6]),
                                           ("0x294110DE", "3g.93gb", 4, [0, 4]),
                                           ("GB200", "1g.23gb+me", 1, [0, 1, 2, 3, 4, 5, 6])):
        shown = run_gpulint("mig", model, "--format", "json")
        assert shown.rc == 0, shown.err
        assert shown.json["memory_slices"] == 8
        profiles = {p["name"]: p for p in shown.json["profiles"]}
        assert (profiles[profile]["memory"], profiles[profile]["starts"]) == (memory, starts)
        assert "nvidia-smi mig -lgip" in shown.json["source"]
    for model, name in (("0x2BB410DE", "RTX-PRO-6000-Blackwell"), ("0x2BB110DE", "RTX-PRO-6000-Blackwell"),
                        ("H100 96GB", "H100-96GB"), ("h20", "H100-96GB"), ("0x318210DE", "B300"),
                        ("0x31C210DE", "GB300")):
        shown = run_gpulint("mig", model, "--format", "json")
        assert shown.rc == 0 and shown.json["model"] == name, (model, shown.err)
    # no source gives the B300's memory slices: gpulint shows none
    b300 = run_gpulint("mig", "B300")
    assert "7 compute slices\n" in b300.out and "1g.67gb                 1       -        4  -" in b300.out
