"""A run keeps of each containerd config only what other files' checks read (its version,
imports, disabled plugins, first entry, and the CRI tables' runtimes, default and CDI keys):
what those checks and the project checks say must be what they say of the whole files, and
a config's own checks must still judge the whole file."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, run_gpulint

from gpulint.run import engine

FOLDER = FIXTURES / "crossfile" / "containerd-kept"
GPU = "gpu-node/etc/containerd/"
CPU = "cpu-node/etc/containerd/config.toml"
DOCKER = "docker-node/etc/containerd/config.toml"


@pytest.fixture(autouse=True)
def _narrowed(monkeypatch):
    # a run this small keeps whole trees; these cases are about what a large run keeps
    monkeypatch.setattr(engine, "NARROW_FROM_FILES", 0)


def _findings(jobs: str) -> list[tuple[str, str, int, int, list, str]]:
    run = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", "--jobs", jobs, str(FOLDER))
    assert run.rc == 0, run.err
    return [(f["code"], _local(f["path"]), f["line"], f["column"],
             [(_local(r["path"]), r["line"]) for r in f["related"]], f["message"])
            for f in json.loads(run.out)["findings"]]


def _local(path: str) -> str:
    return path.replace("\\", "/").split("containerd-kept/", 1)[1]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_drop_in_is_compared_with_every_table_of_its_main_config(jobs):
    # GL122 reads every plugin table of a node's files, those of no CRI plugin and the CRI
    # keys no other check reads included (read again from the text of the kept configs)
    found = {(code, path, line): (related, message) for code, path, line, _, related, message in _findings(jobs)}
    related, message = found[("GL122", GPU + "conf.d/99-nvidia.toml", 3)]
    assert related == [(GPU + "config.toml", 7)] and "lost (`pause_threshold`)" in message
    related, message = found[("GL122", GPU + "conf.d/99-nvidia.toml", 6)]
    assert related == [(GPU + "config.toml", 11)] and "lost (`sandbox_image`)" in message


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_runtimeclasses_are_judged_with_the_runtimes_of_the_kept_configs(jobs):
    codes = [(code, path, line, related) for code, path, line, _, related, _ in _findings(jobs) if code == "GL702"]
    # `nvidia` is defined by the drop-in of the GPU node; `nvidia-cdi` nowhere, and each
    # config's first runtime is named
    assert codes == [("GL702", "manifests/runtimeclasses.yaml", 11,
                      [(CPU, 9), (DOCKER, 5), (GPU + "conf.d/99-nvidia.toml", 9)])]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_default_runtime_is_not_judged_where_the_kept_config_turns_cri_off(jobs):
    # GL101 (a project check, on the kept configs) leaves runc alone where disabled_plugins
    # turns CRI off; GL110, the file's own check, says so
    assert [(code, path, line) for code, path, line, *_ in _findings(jobs) if code in ("GL101", "GL110")] == [
        ("GL110", DOCKER, 3)]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_toolkit_config_names_the_first_entry_of_the_kept_config(jobs):
    # the containerd config defines no NVIDIA runtime: GL812 points at its first entry,
    # `oom_score`, which no other check reads
    assert [(code, path, line, related) for code, path, line, _, related, _ in _findings(jobs) if code == "GL812"] == [
        ("GL812", "cpu-node/etc/nvidia-container-runtime/config.toml", 2, [(CPU, 2)])]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_kept_config_is_still_checked_whole(jobs):
    # the top-level `enable_cdi` is not kept for other files' checks; the file's own check sees it
    assert [(code, path, line) for code, path, line, *_ in _findings(jobs) if code == "GL111"] == [
        ("GL111", CPU, 4)]
