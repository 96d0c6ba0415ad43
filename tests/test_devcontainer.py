"""Dev containers: devcontainer.json read as JSONC, the image it runs and the Dockerfile it
builds, through the CLI's JSON report."""

from __future__ import annotations

import shutil

import pytest
from conftest import FIXTURES, lint_fixture, run_gpulint


def _found(relative: str, *args: str) -> list[tuple[str, str, int, int]]:
    run = lint_fixture(f"devcontainer/{relative}", "--failure-threshold", "none", *args)
    assert run.rc == 0, run.err
    return [(f["path"].split(f"devcontainer/{relative}/", 1)[-1], f["code"], f["line"], f["column"])
            for f in run.findings]


@pytest.mark.parametrize("relative, expected", [
    # the image's tag is judged inside its quotes, and against the node's driver when the
    # dev container asks for GPUs (`runArgs: --gpus`)
    ("image", [(".devcontainer/devcontainer.json", "GL302", 4, 13),
               (".devcontainer/devcontainer.json", "GL601", 4, 13),
               (".devcontainer/devcontainer.json", "GL606", 5, 15)]),
    # a devel image is right for a Dockerfile made to compile in: no GL303 for the one in
    # .devcontainer nor for the one `build.dockerfile` names elsewhere; the image it builds
    # is judged at `build.dockerfile` (hostRequirements.gpu asks for GPUs)
    ("build", [(".devcontainer/Dockerfile", "GL601", 1, 6),
               (".devcontainer/devcontainer.json", "GL601", 3, 28),
               ("docker/Dockerfile.dev", "GL601", 1, 6)]),
    # comments (and `//` inside strings), trailing commas, `--gpus=all`
    # `build.args` replaces the ARG default the Dockerfile's FROM uses: the dev container's
    # image is not judged by that default (the Dockerfile alone still is)
    ("build-args", [(".devcontainer/Dockerfile", "GL601", 2, 6), (".devcontainer/devcontainer.json", "GL606", 4, 15)]),
    ("jsonc", [(".devcontainer/devcontainer.json", "GL601", 3, 13), (".devcontainer/devcontainer.json", "GL606", 6, 5)]),
    ("broken", [(".devcontainer/devcontainer.json", "GL001", 3, 3)]),
    # no GPU asked for: nothing to judge against the driver
    ("nogpu", []),
    # the `nvidia-cuda` Feature: CUDA 11.8 (its default) on a CUDA 12.4 image; the same
    # CUDA as the image; the container's only CUDA, judged against the driver
    ("feature/second", [("devcontainer.json", "GL601", 2, 13), ("devcontainer.json", "GL306", 3, 16)]),
    ("feature/same", []),
    ("feature/runs", [("devcontainer.json", "GL601", 3, 16)]),
])
def test_findings_and_positions(relative, expected):
    assert _found(relative, "--driver", "470") == expected


def test_devel_dockerfile_outside_a_dev_container_is_still_reported():
    """The same Dockerfile linted without the devcontainer.json that builds it ships a devel image."""
    run = lint_fixture("devcontainer/build/docker/Dockerfile.dev", "--failure-threshold", "none")
    assert run.codes() == ["GL303"]


def test_the_built_image_names_its_dockerfile():
    run = lint_fixture("devcontainer/build", "--failure-threshold", "none", "--driver", "470")
    (built,) = [f for f in run.findings if f["path"].endswith("devcontainer.json")]
    assert built["message"].startswith("the dev container's image (")
    assert "docker/Dockerfile.dev, final stage" in built["message"]
    assert built["related"][0]["path"].endswith("docker/Dockerfile.dev")


def test_broken_jsonc_names_the_problem():
    (broken,) = lint_fixture("devcontainer/broken", "--failure-threshold", "none").findings
    assert broken["severity"] == "error" and "Expecting ',' delimiter" in broken["message"]


def test_tag_fix_rewrites_inside_the_quotes(tmp_path):
    target = tmp_path / ".devcontainer.json"
    shutil.copy(FIXTURES / "devcontainer/image/.devcontainer/devcontainer.json", target)
    run = run_gpulint("--isolated", "--fix", "--unsafe-fixes", "--failure-threshold", "none", str(target))
    assert run.rc == 0, run.err
    assert '"image": "nvidia/cuda:12.0.1-devel-ubuntu22.04",' in target.read_text()
    assert target.read_text().startswith("// A CUDA dev container")  # comments kept


def test_odd_definitions_do_not_crash(lint_files):
    run = lint_files({
        "a/devcontainer.json": '{"image": 5, "build": "Dockerfile", "runArgs": "--gpus all"}',
        "b/devcontainer.json": '{"build": {"dockerfile": 3}, "hostRequirements": {"gpu": {"cores": 2}}, '
                               '"image": "nvidia/cuda:12.4.1-base-ubuntu22.04", "dockerFile": ""}',
        "c/devcontainer.json": '[1, 2] // a list\n',
        "d/devcontainer.json": '/* never closed\n{"image": "x"}',
        "e/devcontainer.json": '{"image": "nvidia/cuda:12.4.1-base-ubuntu22.04\\u0020", '
                               '"runArgs": ["--gpus"], "build": {"dockerfile": "../../../../../x"}}',
    }, "--failure-threshold", "none", "--driver", "470")
    assert run.rc == 0, run.err
    assert "internal error" not in run.err
    assert sorted((f["path"], f["code"]) for f in run.findings) == [
        ("b/devcontainer.json", "GL601"), ("c/devcontainer.json", "GL001"),
        ("d/devcontainer.json", "GL001"), ("e/devcontainer.json", "GL601"), ("e/devcontainer.json", "GL606"),
        ("e/devcontainer.json", "GL913")]


def test_feature_message_names_the_default_version():
    run = lint_fixture("devcontainer/feature/second", "--failure-threshold", "none")
    (second,) = [f for f in run.findings if f["code"] == "GL306"]
    assert "CUDA 11.8 libraries and toolkit (`cudaVersion` unset, so the Feature's default 11.8)" in second["message"]
    assert 'set `cudaVersion` to "12.4"' in second["message"]


@pytest.mark.parametrize("relative, expected", [
    # each runArgs item is one docker argument: `device=0,1` splits at the comma (GL913);
    # `--gpus` in runArgs keeps the container from starting without GPUs (GL606, info)
    ("runargs/split", [("GL606", 3, 15, "info"), ("GL913", 3, 26, "error")]),
    # "optional" GPUs, yet runArgs makes them mandatory
    ("runargs/optional", [("GL606", 4, 15, "warning")]),
    # NVIDIA_VISIBLE_DEVICES without a GPU request; hostRequirements.gpu is one
    ("runargs/env", [("GL910", 3, 22, "warning")]),
    ("runargs/contenv", []),
    ("runargs/privileged", [("GL912", 3, 15, "warning"), ("GL606", 3, 31, "info")]),
    # a runtime named after an NVIDIA binary; any --runtime leaves NVIDIA_VISIBLE_DEVICES alone
    ("runargs/runtime", [("GL908", 3, 26, "warning")]),
    # a long flag and its value in one item is one argument: `unknown flag: --shm-size 8g`;
    # a space after `=` or in a separate value item is part of the value
    ("runargs/spaced", [("GL607", 3, 16, "error")]),
])
def test_run_args_are_judged_as_docker_run_flags(relative, expected):
    run = lint_fixture(f"devcontainer/{relative}", "--failure-threshold", "none")
    assert [(f["code"], f["line"], f["column"], f["severity"]) for f in run.findings] == expected


def test_run_args_messages_give_the_json_spelling():
    run = lint_fixture("devcontainer/runargs/split", "--failure-threshold", "none")
    (split,) = [f for f in run.findings if f["code"] == "GL913"]
    assert split["message"].endswith('write the device list with inner quotes: `"--gpus=\\"device=0,1\\""`')
    run = lint_fixture("devcontainer/runargs/optional", "--failure-threshold", "none")
    assert "the devcontainer CLI adds `--gpus all` itself" in run.findings[0]["message"]


def test_a_linted_daemon_json_decides_the_runtime_name(lint_files):
    files = {"devcontainer.json": '{"image": "ubuntu:24.04", "runArgs": ["--runtime", "nvidia"]}',
             "daemon.json": '{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}'}
    assert lint_files(files, "--select", "GL908").findings == []
    files["daemon.json"] = '{"runtimes": {}}'
    (undefined,) = lint_files(files, "--select", "GL908").findings
    assert (undefined["line"], undefined["column"], undefined["severity"]) == (1, 53, "error")
