"""GPU container command lines in scripts, Makefiles, documentation and CI files."""

from __future__ import annotations

import pytest
from conftest import lint_fixture, run_gpulint, write_files


def at(relative: str, *args: str) -> list[tuple[str, int, int]]:
    return lint_fixture(f"commands/{relative}", "--failure-threshold", "none", *args).at()


def test_the_checklist_commands_in_markdown_are_gl301():
    run = lint_fixture("commands/checklist.md")
    assert run.at() == [("GL301", 6, 28), ("GL301", 13, 5)]
    assert "`nvidia/cuda:11.0-base` was removed" in run.findings[0]["message"]
    assert "`nvidia/cuda:12.0-runtime` never existed" in run.findings[1]["message"]


def test_markdown_without_gpu_commands_is_not_read(tmp_path):
    (tmp_path / "README.md").write_text("# App\n\n```sh\ndocker run --rm python:3.12 app\n```\n")
    run = run_gpulint("--isolated", "--format", "json", ".", cwd=tmp_path)
    assert run.json["summary"]["files_checked"] == 0


def test_markdown_fast_path_skips_parsing(tmp_path, monkeypatch):
    from gpulint.kinds.commands import parse as commands

    def refuse(*_):
        raise AssertionError("parsed a file without GPU commands")

    monkeypatch.setattr(commands, "parse_commands", refuse)
    (tmp_path / "NOTES.md").write_text("```bash\ndocker run --rm -it ubuntu:24.04 bash\n```\n" * 200)
    run = run_gpulint("--isolated", "--format", "json", ".", cwd=tmp_path)
    assert run.rc == 0 and run.json["summary"]["files_checked"] == 0


def test_restructuredtext_code_blocks():
    assert at("docs.rst") == [("GL301", 6, 33), ("GL301", 10, 31)]  # a code-block and a `::` literal block


def test_gpus_values_docker_rejects_or_misreads():
    run = lint_fixture("commands/run-gpus.sh", "--failure-threshold", "none")
    assert run.at() == [("GL913", 6, 24), ("GL913", 8, 24), ("GL913", 9, 24), ("GL910", 11, 20),
                        ("GL912", 13, 15)]
    messages = [f["message"] for f in run.findings]
    assert "cannot set both Count and DeviceIDs" in messages[0]
    assert "--gpus '\"device=0,1\"'" in messages[0]
    assert run.findings[1]["severity"] == "warning" and "zero GPUs" in messages[1]
    assert 'invalid count (nvidia/cuda:12.9.2-base-ubuntu24.04)' in messages[2]


@pytest.mark.parametrize("value,ok", [
    ("all", True), ("2", True), ('"device=0,1"', True), ("device=0", True),
    ("all,capabilities=utility", True), ("device=GPU-3a23c669", True),
    ("device=0,1", False), ("0", False), ("capabilities=compute,utility", False), ("one", False),
    ("device=0,device=1", False), ("all,2", False), ("count=0,device=1", True),
])
def test_gpus_parsing_follows_the_docker_cli(value, ok):
    from gpulint.kinds.commands.checks import gpus_problem

    assert (gpus_problem(value) is None) == ok


def test_shebang_script_without_extension():
    run = lint_fixture("commands/gpu-smoke", "--failure-threshold", "none")
    assert run.at() == [("GL908", 2, 32)]
    assert "NVIDIA binary" in run.findings[0]["message"]


def test_makefile_recipes():
    assert at("Makefile") == [("GL301", 3, 3)]


def test_github_actions_and_gitlab_ci_steps_and_job_images():
    # run: steps, then the job container and its `options` (docker create flags)
    assert at(".github/workflows/gpu.yml") == [("GL913", 11, 34), ("GL301", 12, 41), ("GL301", 16, 14),
                                               ("GL913", 17, 23)]
    # the default image, a job's image, and script lines (a quoted one included)
    assert at(".gitlab-ci.yml") == [("GL301", 1, 8), ("GL301", 8, 34), ("GL913", 9, 31)]


def test_runtime_and_variable_against_the_linted_daemon_json():
    run = lint_fixture("commands/daemon", "--failure-threshold", "none")
    # the NVIDIA runtime is the default there, so the variable alone gives GPUs
    assert run.at() == [("GL908", 3, 27)]
    assert run.findings[0]["severity"] == "error"


def test_gpu_images_meet_the_driver(lint_files):
    run = lint_files({"run.sh": "docker run --gpus all nvidia/cuda:12.9.2-base-ubuntu24.04 nvidia-smi\n"
                                "docker run nvidia/cuda:12.9.2-base-ubuntu24.04 true\n"},
                     "--driver", "470.57.02")
    assert run.at() == [("GL601", 1, 23)]


def test_commands_that_are_not_gpu_commands_are_ignored(lint_files):
    run = lint_files({"ci.sh": "#!/bin/sh\n# nvidia docs: https://docs.nvidia.com\n"
                               "docker run --rm -e NVIDIA_VISIBLE_DEVICES=void python:3.12 true\n"
                               "docker build -t nvidia/cuda:11.0-base .\n"
                               "echo docker run --gpus device=0,1 x\n"})
    assert run.findings == []


def test_suppression_comment_in_a_script(lint_files):
    run = lint_files({"run.sh": "# gpulint: disable=GL913 -- the second GPU is a count here on purpose\n"
                                "docker run --gpus device=0,1 registry.example.com/app:1\n"})
    assert run.findings == []


def test_documentation_placeholders_are_left_alone(lint_files):
    run = lint_files({"README.md": "```bash\n"
                                   "docker run --gpus <N> nvidia/cuda:<version>-base nvidia-smi\n"
                                   "docker run --gpus GPU_IDS nvidia/cuda:x.y.z-base-ubuntu22.04 nvidia-smi\n"
                                   "docker run --gpus all nvidia/cuda:TAG nvidia-smi\n"
                                   "docker run --gpus all nvidia/cuda:latest nvidia-smi\n"
                                   "```\n"})
    assert run.at() == [("GL301", 5, 23)]


def test_podman_gpus_is_a_hint_and_cdi_devices_are_fine(lint_files):
    run = lint_files({"run.sh": "podman run --rm --gpus all nvidia/cuda:12.9.2-base-ubuntu24.04 nvidia-smi\n"
                                "podman run --rm --device nvidia.com/gpu=all nvidia/cuda:12.9.2-base-ubuntu24.04 x\n"
                                "docker run --rm --gpus all nvidia/cuda:12.9.2-base-ubuntu24.04 nvidia-smi\n"})
    assert [(f["code"], f["line"], f["column"], f["severity"]) for f in run.findings] == [
        ("GL914", 1, 17, "info")]


def test_suppressions_in_markdown_live_in_its_shell_blocks(lint_files):
    run = lint_files({"README.md": "Silence a rule with `# gpulint: disable=CODES -- reason`:\n\n"
                                   "```dockerfile\n# gpulint: disable=GL305 -- on purpose\n"
                                   "RUN apt-get install -y nvidia-driver-550\n```\n\n"
                                   "```bash\n# gpulint: disable=GL913 -- the count is meant\n"
                                   "docker run --gpus device=0,1 registry.example.com/app:1\n```\n"})
    assert run.findings == []


def test_crictl_pull_images_are_judged_and_nothing_else_of_crictl(lint_files):
    """`crictl run` takes its image from JSON config files and `runp --runtime` names a
    containerd handler: only the image a `crictl pull` fetches is judged."""
    run = lint_files({"node-setup.sh": (
        "#!/bin/sh\n"
        "sudo crictl -r unix:///run/containerd/containerd.sock pull nvidia/cuda:11.0-base\n"
        "crictl pull --creds user:token nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"
        "crictl pull busybox\n"
        "crictl runp --runtime nvidia pod.json\n")})
    assert [(f["code"], f["line"], f["column"]) for f in run.findings] == [("GL301", 2, 60)]


def test_restructuredtext_literal_blocks_are_read(lint_files):
    run = lint_files({"guide.rst": (
        "GPU check\n=========\n\n.. note::\n\n   Not a literal block.\n\nRun this::\n\n"
        "    docker run --gpus all nvidia/cuda:11.0-base nvidia-smi\n\nDone.\n")})
    assert [(f["code"], f["line"], f["column"]) for f in run.findings] == [("GL301", 10, 27)]


# ---------------------------------------------------------------- CI matrices


def _matrix_findings(relative: str) -> list[dict]:
    return lint_fixture(f"commands/{relative}", "--failure-threshold", "none").findings


def test_github_matrix_combinations_are_judged_and_named():
    found = _matrix_findings("matrix")
    images = [f for f in found if f["line"] == 19]
    # the product less `exclude` (11.0 on 24.04), `12.10` read as the number 12.1; the
    # `include` entry that matches no combination (12.8.1 on 24.04) is a fine image
    assert [f["message"].split("]")[0] for f in images] == [
        "[matrix: cuda=11.0, os=ubuntu22.04", "[matrix: cuda=12.1, os=ubuntu22.04",
        "[matrix: cuda=12.1, os=ubuntu24.04"]
    assert all(f["code"] == "GL301" and f["column"] == 14 and f.get("fix") is None for f in images)
    # the values are related where they are written, the YAML number with its reading
    assert [(r["line"], r["column"]) for r in images[0]["related"]] == [(8, 16), (9, 14)]
    assert "written as a YAML number, it becomes `12.1`" in images[1]["related"][0]["message"]


def test_github_matrix_include_extends_and_an_unset_key_reads_empty():
    found = [f for f in _matrix_findings("matrix") if f["line"] == 22]
    # `include` adds `gpus` to the 12.9.2 combinations; elsewhere the reference reads as
    # nothing and `--gpus` takes the image as its value
    assert [(f["code"], f["column"], f["message"].split("]")[0]) for f in found] == [
        ("GL913", 37, "[matrix: gpus=device=0,1"), ("GL913", 56, "[matrix: gpus unset")]
    assert [(r["line"], r["column"]) for r in found[0]["related"]] == [(15, 19)]
    assert [(r["line"], r["column"], r["message"]) for r in found[1]["related"]] == [
        (22, 37, "a combination without `gpus` reads `${{ matrix.gpus }}` as nothing")]


def test_github_matrix_finding_every_combination_gives_is_reported_once_unnamed():
    found = [f for f in _matrix_findings("matrix") if f["line"] == 23]
    # `--gpus 0` whatever the values; the quoted image is replaced too (before the shell)
    assert [(f["code"], f["column"]) for f in found] == [("GL913", 37), ("GL301", 39), ("GL301", 39),
                                                         ("GL301", 39)]
    assert found[0]["message"].startswith("`docker run` with `--gpus 0`")


def test_github_matrix_same_finding_in_several_combinations_names_them():
    found = [f for f in _matrix_findings("matrix") if f["code"] == "GL910"]
    assert len(found) == 1 and found[0]["message"].startswith(
        "[matrix: gpus unset, cuda=12.8.1, os=ubuntu22.04; gpus unset, cuda=12.8.1, os=ubuntu24.04] ")


def test_github_matrix_from_an_expression_is_said_once_and_not_judged():
    found = [f for f in _matrix_findings("matrix") if f["code"] == "GL917"][:1]
    # one for the GPU job; none for the job without GPU containers
    assert [(f["line"], f["column"], f["severity"]) for f in found] == [(27, 15, "info")]
    assert "job `dynamic`" in found[0]["message"] and "written as an expression" in found[0]["message"]
    assert not [f for f in _matrix_findings("matrix") if f["line"] in (29, 30, 36)]


def test_github_matrix_over_the_job_limit_is_not_expanded(lint_files):
    values = ", ".join(f'"12.{i}.0"' for i in range(17))
    run = lint_files({".github/workflows/big.yml": (
        "on: [push]\njobs:\n  big:\n    runs-on: gpu\n    strategy:\n      matrix:\n"
        f"        cuda: [{values}]\n        os: [{values}]\n"
        "    steps:\n      - run: docker run --gpus all nvidia/cuda:${{ matrix.cuda }}-base-${{ matrix.os }} x\n")})
    assert [(f["code"], f["line"]) for f in run.findings] == [("GL917", 7)]
    assert "289 jobs, more than the 256" in run.findings[0]["message"]


def test_gitlab_parallel_matrix_in_image_services_and_script():
    found = [f for f in _matrix_findings("matrix-gitlab") if f["line"] < 20]
    assert [(f["code"], f["line"], f["column"]) for f in found] == [("GL301", 5, 10), ("GL301", 14, 13),
                                                                     ("GL913", 16, 30)]
    assert found[0]["message"].startswith("[matrix: CUDA_VERSION=11.0, UBUNTU=22.04] ")
    assert [(r["line"], r["column"]) for r in found[2]["related"]] == [(12, 15)]


def test_gitlab_matrix_reaches_what_the_job_extends_and_the_default_image():
    found = [f for f in _matrix_findings("matrix-gitlab") if f["line"] >= 20]
    # the default image (not for the job that does not inherit it) and the template's script
    assert [(f["code"], f["line"], f["column"], f["message"].split("]")[0]) for f in found] == [
        ("GL301", 25, 10, "[matrix: CUDA=12.0"), ("GL301", 30, 34, "[matrix: CUDA=11.8"),
        ("GL301", 30, 34, "[matrix: CUDA=12.0")]
    assert [(r["line"], r["column"]) for r in found[1]["related"]] == [(44, 16)]


@pytest.mark.parametrize("matrix,expected", [
    # the documented example: `include` extends matching combinations, or adds its own
    ("fruit: [apple, pear]\nanimal: [cat, dog]\ninclude:\n- color: green\n- color: pink\n  animal: cat\n"
     "- fruit: apple\n  shape: circle\n- fruit: banana\n- fruit: banana\n  animal: cat\n",
     [{"fruit": "apple", "animal": "cat", "color": "pink", "shape": "circle"},
      {"fruit": "apple", "animal": "dog", "color": "green", "shape": "circle"},
      {"fruit": "pear", "animal": "cat", "color": "pink"},
      {"fruit": "pear", "animal": "dog", "color": "green"},
      {"fruit": "banana"}, {"fruit": "banana", "animal": "cat"}]),
    ("os: [a, b]\nversion: [1, 2]\nexclude:\n- os: b\n  version: 2\n",
     [{"os": "a", "version": "1"}, {"os": "a", "version": "2"}, {"os": "b", "version": "1"}]),
    ("include:\n- cuda: '12.8.1'\n- cuda: 12.0\n", [{"cuda": "12.8.1"}, {"cuda": "12"}]),
])
def test_github_matrix_expansion_follows_github(matrix, expected):
    from gpulint.formats.yamlpos import parse_yaml_documents
    from gpulint.kinds.commands.matrix import github_matrix
    from gpulint.model import LineIndex

    text = "strategy:\n  matrix:\n" + "".join(f"    {line}\n" for line in matrix.splitlines())
    job = parse_yaml_documents(text, LineIndex(text))[0]
    assert [{v.name: v.text for v in combo} for combo in github_matrix(job).combinations] == expected


@pytest.mark.parametrize("matrix,reason", [
    ("matrix:\n", "it is not a mapping of values"),
    ("matrix: [12.8.1]\n", "it is not a mapping of values"),
    ("matrix:\n        cuda: ${{ fromJSON(inputs.cuda) }}\n", "`cuda` (its values) is written as an expression"),
    ("matrix:\n        include: [1]\n", "an entry of `include` is not a mapping"),
])
def test_github_matrix_of_another_shape_is_said_not_judged(lint_files, matrix, reason):
    run = lint_files({".github/workflows/odd.yml": (
        f"on: [push]\njobs:\n  odd:\n    runs-on: gpu\n    strategy:\n      {matrix}"
        "    steps:\n      - run: docker run --gpus all nvidia/cuda:${{ matrix.cuda }}-base-ubuntu24.04 x\n")},
        "--failure-threshold", "none")
    assert [f["code"] for f in run.findings] == ["GL917"] and f"({reason})" in run.findings[0]["message"]


def test_gitlab_matrix_of_another_shape_is_said_not_judged(lint_files):
    run = lint_files({".gitlab-ci.yml": (
        "odd:\n  parallel:\n    matrix:\n      - CUDA: [[12.8.1]]\n  image: nvidia/cuda:${CUDA}-base-ubuntu24.04\n"
        "other:\n  parallel:\n    matrix: 3\n  script:\n    - docker run --gpus $N nvidia/cuda:12.9.2-base-ubuntu24.04 x\n")},
        "--failure-threshold", "none")
    assert [(f["code"], f["line"]) for f in run.findings] == [("GL917", 4), ("GL917", 8)]
    assert "(the values of `CUDA` are not strings)" in run.findings[0]["message"]


def test_gitlab_matrix_variable_with_a_shell_default(lint_files):
    run = lint_files({".gitlab-ci.yml": (
        "gpu:\n  parallel:\n    matrix:\n      - GPUS: ['0', '']\n      - OTHER: x\n  script:\n"
        "    - docker run --gpus ${GPUS:-all} nvidia/cuda:12.9.2-base-ubuntu24.04 nvidia-smi\n")},
        "--failure-threshold", "none")
    # `0` where it is set; the default where it is empty (`all`) or not in the combination
    assert [(f["code"], f["line"], f["column"], f["message"].split("]")[0]) for f in run.findings] == [
        ("GL913", 7, 25, "[matrix: GPUS=0")]


def test_github_matrix_values_reach_the_shell_through_env(lint_files):
    run = lint_files({".github/workflows/env.yml": (
        "on: [push]\nenv:\n  REGISTRY: nvcr.io\njobs:\n  smoke:\n    runs-on: gpu\n    strategy:\n"
        "      matrix:\n        cuda: ['11.0', '12.9.2']\n"
        "    env:\n      IMAGE: nvidia/cuda:${{ matrix.cuda }}-base-ubuntu22.04\n    steps:\n"
        "      - run: docker run --rm --gpus all \"$IMAGE\" nvidia-smi\n"
        "      - run: docker run --rm --gpus all ${IMAGE} nvidia-smi\n"
        "        env:\n          IMAGE: nvidia/cuda:${{ matrix.cuda }}-runtime-ubuntu22.04\n"
        "      - run: docker run --rm --gpus $GPUS $REGISTRY/cuda:12.9.2-base-ubuntu22.04 nvidia-smi\n"
        "        env:\n          GPUS: ${{ matrix.gpus || 'all' }}\n")},
        "--failure-threshold", "none")
    # the job's variable, and a step's own over it; an expression GitHub computes stays unjudged
    assert [(f["code"], f["line"], f["column"], f["message"].split("]")[0]) for f in run.findings] == [
        ("GL301", 13, 41, "[matrix: cuda=11.0"), ("GL301", 14, 41, "[matrix: cuda=11.0")]
    assert [(r["line"], r["column"]) for r in run.findings[0]["related"]] == [(9, 16)]


def test_github_matrix_from_an_expression_through_env_is_said_not_judged(lint_files):
    run = lint_files({".github/workflows/env.yml": (
        "on: [push]\njobs:\n  smoke:\n    runs-on: gpu\n    strategy:\n"
        "      matrix: ${{ fromJSON(needs.setup.outputs.matrix) }}\n    steps:\n"
        "      - run: docker run --rm --gpus all $IMAGE nvidia-smi\n"
        "        env:\n          IMAGE: nvidia/cuda:${{ matrix.cuda }}-base-ubuntu22.04\n")},
        "--failure-threshold", "none")
    assert [(f["code"], f["line"]) for f in run.findings] == [("GL917", 6)]


def test_github_matrix_reference_gpulint_does_not_evaluate_is_said_once():
    found = [f for f in _matrix_findings("matrix") if f["line"] > 48]
    # the image is judged in both combinations (and fine); what is left is said once for the
    # job; a value of several words is split where the shell splits it
    assert [(f["code"], f["line"], f["column"]) for f in found] == [("GL917", 53, 9), ("GL913", 59, 30)]
    assert "does not evaluate `${{ matrix.gpus || 'all' }}`" in found[0]["message"]
    assert found[1]["message"].startswith("[matrix: flags=--gpus device=0,1 --ipc=host] `docker run` with "
                                          "`--gpus device=0,1`")


def test_github_matrix_index_syntax_and_names_with_hyphens(lint_files):
    run = lint_files({".github/workflows/index.yml": (
        "on: [push]\njobs:\n  smoke:\n    runs-on: gpu\n    strategy:\n      matrix:\n"
        "        cuda-version: ['11.0', '12.9.2']\n    steps:\n"
        "      - run: docker run --gpus all nvidia/cuda:${{ matrix['cuda-version'] }}-base-ubuntu22.04 x\n"
        "      - run: docker run --gpus all nvidia/cuda:${{ matrix.cuda-version }}-runtime-ubuntu22.04 x\n")},
        "--failure-threshold", "none")
    assert [(f["code"], f["line"], f["message"].split("]")[0]) for f in run.findings] == [
        ("GL301", 9, "[matrix: cuda-version=11.0"), ("GL301", 10, "[matrix: cuda-version=11.0")]


def test_github_matrix_images_meet_the_driver_per_combination():
    run = lint_fixture("commands/matrix", "--failure-threshold", "none", "--driver", "470.57.02")
    found = [f for f in run.findings if f["code"] == "GL601" and f["line"] == 58]
    # the driver check names the combination and relates its value, as the file's own checks do
    assert [f["message"].split(" needs")[0] for f in found] == [
        "image `nvidia/cuda:12.8.1-base-ubuntu24.04` (matrix: cuda=12.8.1)",
        "image `nvidia/cuda:12.9.2-base-ubuntu24.04` (matrix: cuda=12.9.2)"]
    assert [(r["line"], r["column"]) for r in found[0]["related"]][-1] == (53, 26)
    # only the combination whose `flags` ask for GPUs runs a GPU container on line 59
    assert [f["message"].split(" needs")[0] for f in run.findings if f["code"] == "GL601" and f["line"] == 59] == [
        "image `nvidia/cuda:12.9.2-base-ubuntu24.04` (matrix: cuda=12.9.2)"]


def test_same_finding_in_many_combinations_names_a_few_and_counts_the_rest(lint_files):
    versions = ", ".join(f"'12.{minor}.1'" for minor in range(9))
    run = lint_files({".github/workflows/many.yml": (
        "on: [push]\njobs:\n  smoke:\n    runs-on: gpu\n    strategy:\n      matrix:\n"
        f"        cuda: [{versions}]\n        include:\n          - cuda: '12.8.1'\n            gpus: --gpus=all\n"
        "    steps:\n      - run: docker run ${{ matrix.gpus }} -e NVIDIA_VISIBLE_DEVICES=all "
        "registry.example.com/app:${{ matrix.cuda }} x\n")},
        "--failure-threshold", "none")
    assert [f["code"] for f in run.findings] == ["GL910"]
    shown = run.findings[0]["message"].split("]")[0]
    assert shown.count("gpus unset, cuda=") == 6 and shown.endswith("; and 2 more") and "12.8.1" not in shown


def test_gitlab_variables_reach_images_and_scripts():
    found = lint_fixture("commands/variables-gitlab").findings
    assert [(f["code"], f["line"], f["column"], f["message"].split("]")[0]) for f in found] == [
        # the file's variables, one naming another; not for the job that does not inherit them
        ("GL301", 14, 10, "[variables: BASE_IMAGE=nvidia/cuda:11.0-base"),
        # from the job it extends, in the shell
        ("GL913", 21, 25, "[variables: GPUS=0"),
        # a matrix value wins over the file's variable of the same name
        ("GL301", 39, 10, "[matrix: CUDA_VERSION=12.9.2"),
    ]
    assert [(r["line"], r["message"]) for r in found[1]["related"]] == [(11, 'variable `GPUS: "0"`')]


def test_gitlab_ci_file_with_gpu_images_and_no_tool_named_is_read(lint_files):
    run = lint_files({".gitlab-ci.yml": "build:\n  image: nvidia/cuda:11.0-base\n  script: [make]\n"})
    assert run.at() == [("GL301", 2, 10)]


def test_github_env_values_reach_the_shell_of_steps():
    found = lint_fixture("commands/variables-github").findings
    assert [(f["code"], f["line"], f["column"], f["message"].split("]")[0]) for f in found] == [
        ("GL913", 11, 32, "[variables: GPUS=0"),  # the job's
        ("GL301", 12, 36, "[variables: CUDA=12.9.2"),  # the step's wins over the workflow's
        ("GL301", 18, 36, "[variables: CUDA=11.0"),  # the workflow's, in a job without env
        ("GL301", 19, 36, "[variables: CUDA=11.0"),  # `${{ env.CUDA }}`, put in before the shell runs
    ]
    assert [r["line"] for r in found[1]["related"]] == [14]


# ---------------------------------------------------------------- GL918 CDI device, CDI off

CDI_RUN = "#!/bin/sh\ndocker run --rm --device nvidia.com/gpu=all ubuntu:24.04 nvidia-smi -L\n"
NO_CDI = '{"runtimes": {"nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": []}}}\n'


def _lint_cdi(tmp_path, daemon: str, release: str | None):
    files = {"run.sh": CDI_RUN, "etc/docker/daemon.json": daemon}
    if release:
        files[".gpulint.toml"] = f'[fleet]\ndocker-version = "{release}"\n'
    write_files(tmp_path, files)
    return run_gpulint(*(() if release else ("--isolated",)), "--format", "json", "--select", "GL918", ".",
                       cwd=tmp_path)


@pytest.mark.parametrize("release", ["25.0", "28.2"])
def test_gl918_cdi_device_without_the_daemon_feature(tmp_path, release):
    """NVIDIA/nvidia-container-toolkit#434: Docker 25.0 to 28.2 need `features.cdi`."""
    run = _lint_cdi(tmp_path, NO_CDI, release)
    assert [(f["line"], f["column"], f["severity"]) for f in run.findings] == [(2, 26, "error")]
    assert [r["path"] for r in run.findings[0]["related"]] == ["etc/docker/daemon.json"]


@pytest.mark.parametrize("daemon,release", [
    ('{"features": {"cdi": true}}\n', None),  # turned on
    (NO_CDI, "28.3"),  # on by default
    (NO_CDI, None),  # a release not stated: current Docker, on by default
    (NO_CDI, "24.0"),  # no CDI at all: another failure, not this one
])
def test_gl918_not_reported(tmp_path, daemon, release):
    assert _lint_cdi(tmp_path, daemon, release).findings == []


def test_gl918_turned_off_and_other_engines(tmp_path):
    write_files(tmp_path, {"run.sh": CDI_RUN + "podman run --device nvidia.com/gpu=all ubuntu:24.04 true\n",
                           "etc/docker/daemon.json": '{"features": {"cdi": false}}\n'})
    run = run_gpulint("--isolated", "--format", "json", "--select", "GL918", ".", cwd=tmp_path)
    assert [(f["line"], f["severity"]) for f in run.findings] == [(2, "error")]
    write_files(tmp_path / "alone", {"run.sh": CDI_RUN})
    run = run_gpulint("--isolated", "--format", "json", "--select", "GL918", "alone", cwd=tmp_path)
    assert run.findings == []  # no daemon.json linted: the host's is not here to say


@pytest.mark.parametrize("extra, expected", [
    # config.default alone: the chart deploys no config (NVIDIA/k8s-device-plugin#990)
    ("", [("GL458", 3, 9)]),
    # a ConfigMap of the user's, or configs the chart writes, make the default count
    (" --set config.name=time-slicing-config", []),
    (" --set-file config.map.config0=dp-example-config0.yaml", []),
    # values files may set what the line does not
    (" -f values.yaml", []),
])
def test_helm_device_plugin_default_without_configs(tmp_path, extra, expected):
    write_files(tmp_path, {"install.sh": "#!/bin/sh\nhelm upgrade -i nvdp nvdp/nvidia-device-plugin --version=0.17.0 \\\n"
                                         f"  --set config.default=time-slicing-config{extra}\n"})
    result = run_gpulint("--isolated", "--format", "json", ".", cwd=tmp_path)
    assert [(f["code"], f["line"], f["column"]) for f in result.findings] == expected


_RUNC_NODE = ('version = 2\n\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "runc"\n\n'
              '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"\n\n'
              '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n  runtime_type = "io.containerd.runc.v2"\n\n'
              '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
              '  BinaryName = "/usr/bin/nvidia-container-runtime"\n')


@pytest.mark.parametrize("extra, node, expected", [
    # the chart's DaemonSet runs with containerd's default, runc (NVIDIA/k8s-device-plugin#477)
    ("", _RUNC_NODE, [("GL703", 2, 22)]),
    (" --set runtimeClassName=nvidia", _RUNC_NODE, []),
    ("", _RUNC_NODE.replace('= "runc"', '= "nvidia"', 1), []),
    (" -f values.yaml", _RUNC_NODE, []),
    ("", None, []),
])
def test_helm_device_plugin_without_the_nvidia_runtime(tmp_path, extra, node, expected):
    files = {"install.sh": f"#!/bin/sh\nhelm upgrade -i nvdp nvdp/nvidia-device-plugin --version=0.17.0{extra}\n"}
    if node is not None:
        files["etc/containerd/config.toml"] = node
    write_files(tmp_path, files)
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL703", ".", cwd=tmp_path)
    assert [(f["code"], f["line"], f["column"]) for f in result.findings] == expected


@pytest.mark.parametrize("gpus, expected", [
    # the capabilities field replaces the container's driver capabilities (containerd/nerdctl#1023)
    ("capabilities=utility,device=0", [("GL919", 2, 19)]),
    ("'\"capabilities=compute,utility\"'", []),
    ("all", []),
])
def test_gpus_capabilities_without_compute(tmp_path, gpus, expected):
    write_files(tmp_path, {"run.sh": f"#!/bin/sh\ndocker run --gpus {gpus} nvcr.io/nvidia/pytorch:24.05-py3 python\n"})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL919", ".", cwd=tmp_path)
    assert [(f["code"], f["line"], f["column"]) for f in result.findings] == expected
