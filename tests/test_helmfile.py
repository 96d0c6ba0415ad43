"""Helmfile state files: the GPU Operator releases they install, judged where they are
written (GL483, GL484)."""

from __future__ import annotations

from conftest import FIXTURES, run_gpulint, write_files

HELMFILE = FIXTURES / "helmfile"


def lint(*args):
    return run_gpulint("--isolated", "--format", "json", *map(str, args))


def test_gpu_operator_release_values_and_settings():
    run = lint(HELMFILE / "bad")
    assert [(f["code"], f["line"], f["column"], f["severity"]) for f in run.findings] == [
        ("GL484", 15, 22, "error"), ("GL483", 17, 11, "warning"), ("GL484", 22, 16, "error"),
        ("GL483", 23, 15, "warning")]
    messages = [f["message"] for f in run.findings]
    assert "judged by GPU Operator v25.3.4 (`version: v25.3.4` of the Helmfile release)" in messages[0]
    assert "`devicePlugin.enable` is no value of the gpu-operator chart" in messages[1]
    # a quoted "true" in a `set:` entry still reaches Helm's --set, which types it
    assert messages[2].startswith("Helmfile hands `set:` entries to `helm --set`, which, YAML quotes or not, "
                                  "makes `true` a boolean")
    assert "a `setString:` entry keeps it a string" in messages[2]
    assert "(did you mean `version`?)" in messages[3]
    # the other chart's values are not the GPU Operator's business
    assert all(f["line"] < 25 for f in run.findings)


def test_a_templated_helmfile_d_file_with_string_settings_is_clean():
    run = lint(HELMFILE / "good")
    assert run.rc == 0 and run.findings == [] and run.json["summary"]["files_checked"] == 1


def test_helmfile_kind_by_name_folder_content_and_force(tmp_path):
    release = "releases:\n  - name: x\n    chart: nvidia/gpu-operator\n    values:\n      - driver: {versoin: '1'}\n"
    write_files(tmp_path, {"helmfile.yaml": release, "helmfile.d/a.yaml": release,
                           "stack.yaml": "repositories: []\n" + release, "other.yaml": release})
    run = lint(tmp_path)
    assert sorted(f["path"].rsplit("/", 1)[-1] for f in run.findings) == ["a.yaml", "helmfile.yaml", "stack.yaml"]
    forced = lint("--kind", "helmfile", tmp_path / "other.yaml")
    assert [f["code"] for f in forced.findings] == ["GL483"]
