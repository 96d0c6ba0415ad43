"""GL601-GL604: CUDA image versus node driver, through the CLI's JSON report."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, run_gpulint


def test_supported_branches_are_the_current_data_center_ones():
    from gpulint.knowledge.cuda import supported_branches

    assert [(b.number, b.type) for b in supported_branches()] == [(580, "LTSB"), (595, "production"),
                                                                  (620, "LTSB")]


def _lint(relative: str, *args: str):
    return run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", *args,
                       str(FIXTURES / "compat" / relative), cwd=FIXTURES.parent.parent)


def _found(run, code: str) -> list[tuple[str, int, int, str]]:
    """(file name, line, column, severity) of every finding of `code`."""
    return [(f["path"].rsplit("/", 1)[-1], f["line"], f["column"], f["severity"])
            for f in run.findings if f["code"] == code]


def _one(run, code: str, line: int) -> dict:
    found = [f for f in run.findings if f["code"] == code and f["line"] == line]
    assert len(found) == 1, run.findings
    return found[0]


# ------------------------------------------------------------------ images with the start check


def test_start_check_severity_follows_forward_compatibility_and_gpu_class():
    run = _lint("start-check/jobs.yaml")
    assert _found(run, "GL601") == [("jobs.yaml", 14, 18, "error"), ("jobs.yaml", 31, 18, "warning"),
                                    ("jobs.yaml", 49, 18, "info")]
    refused = _one(run, "GL601", 14)
    assert "unsatisfied condition: cuda>=13.2" in refused["message"]
    assert "driver 550 (R550, CUDA 12.4 at most" in refused["message"]
    assert "R550 is not among the branches it accepts through forward compatibility (R535, R570, R580, R590)" \
        in refused["message"]
    assert "driver >= 595.58.03" in refused["message"]
    assert refused["related"][0]["line"] == 11  # the nodeSelector label that gave the driver
    assert "forward compatibility" in _one(run, "GL601", 31)["message"]
    datacenter = _one(run, "GL601", 49)
    assert "data-center GPUs (the pod's node selection `nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB`)" \
        in datacenter["message"]
    assert [r["line"] for r in datacenter["related"]] == [45, 46]


def test_forward_compatibility_never_on_consumer_gpus():
    run = _lint("start-check/workstation.yaml", "--driver", "535.104.05")
    assert _found(run, "GL601") == [("workstation.yaml", 10, 14, "error"), ("workstation.yaml", 24, 14, "warning")]
    # nvidia/cuda's brand clauses name data-center and workstation brands, never GeForce
    message = run.findings[0]["message"]
    assert "the container does not start" in message and "unsatisfied condition: cuda>=12.4" in message
    assert "error 804" not in message


def test_workstation_gpus_have_forward_compatibility_only_on_ngc_ready_parts():
    run = _lint("start-check/workstation.yaml", "--driver", "535.104.05")
    message = _one(run, "GL601", 24)["message"]
    assert "workstation RTX cards (the pod's node selection `nvidia.com/gpu.product: NVIDIA-RTX-A6000`)" in message
    assert "select NGC-ready SKUs" in message and "error 804" in message
    assert "state the GPU class" not in message  # the selector already states it
    assert [r["line"] for r in _one(run, "GL601", 24)["related"]] == [21]


def test_ngc_images_name_their_entrypoint_error():
    run = _lint("start-check/ngc.yaml")
    # NGC images state no branch list of their own: R520's absence from NVIDIA's lists is the only
    # evidence against it, which makes a warning
    assert _found(run, "GL601") == [("ngc.yaml", 14, 18, "warning"), ("ngc.yaml", 31, 18, "warning")]
    too_old = _one(run, "GL601", 14)["message"]
    assert "no NVIDIA source gpulint knows lists R520" in too_old
    # consumer GPUs have no forward compatibility at all: no list is needed to refuse it
    assert _one(_lint("start-check/ngc.yaml", "--gpu-class", "consumer"), "GL601", 14)["severity"] == "error"
    assert ("`ERROR: This container was built for NVIDIA Driver Release 550.54 or later, but version "
            "520.61.05 was detected and compatibility mode is UNAVAILABLE`") in too_old
    assert "unsatisfied condition" not in too_old
    consumer = _lint("start-check/ngc.yaml", "--gpu-class", "consumer")
    assert "error 804" in _one(consumer, "GL601", 31)["message"]


# ------------------------------------------------------------------ what an image's own requirement admits


@pytest.mark.parametrize("ref, driver, severity", [
    # the branches of an nvidia/cuda image's NVIDIA_REQUIRE_CUDA, not the guide's supported-branch list
    ("nvidia/cuda:12.5.1-runtime-ubuntu22.04", "550.54.15", "info"),
    ("nvidia/cuda:12.6.3-runtime-ubuntu22.04", "550.54.15", "info"),
    ("nvidia/cuda:13.1.2-runtime-ubuntu24.04", "550.54.15", "info"),
    ("nvidia/cuda:13.3.1-devel-ubuntu22.04", "550.54.15", "info"),
    ("nvidia/cuda:12.4.1-runtime-ubuntu22.04", "550.54.15", None),  # native
    # refused by the image's own requirement
    ("nvidia/cuda:13.2.1-runtime-ubuntu24.04", "550.54.15", "error"),
    ("nvidia/cuda:12.4.1-runtime-ubuntu22.04", "545.23.08", "error"),
    ("nvidia/cuda:12.9.1-runtime-ubuntu22.04", "470.256.02", "error"),
])
def test_forward_compatibility_is_what_the_image_admits(ref, driver, severity):
    run = run_gpulint("image", ref, "--driver", driver, "--gpu-class", "datacenter", "--format", "json")
    assert json.loads(run.out)["verdict"]["severity"] == severity


def _admits(ref: str, branch: int) -> bool:
    run = run_gpulint("image", ref, "--driver", str(branch), "--gpu-class", "datacenter", "--format", "json")
    return json.loads(run.out)["verdict"]["severity"] in (None, "info")


def test_no_cuda_minor_refuses_a_branch_both_neighbours_admit():
    """A CUDA X.Y refused on a branch that the X.Y before and after run is a data error,
    unless the image requirements record that refusal from a source."""
    from gpulint.knowledge.cuda import branch_numbers, latest_release
    from gpulint.resources import load_yaml

    rows = load_yaml("cuda-driver.yaml")["image_requirements"]
    sourced = {(row["cuda"], number) for row in rows for number in row.get("refuses") or ()}
    refs = [(row["cuda"], f"nvidia/cuda:{latest_release(tuple(map(int, row['cuda'].split('.')))).version}"
                          f"-base-ubuntu22.04") for row in rows]
    gaps = set()
    for number in branch_numbers():
        admitted = [_admits(ref, number) for _, ref in refs]
        for i in range(1, len(refs) - 1):
            if admitted[i - 1] and admitted[i + 1] and not admitted[i]:
                gaps.add((refs[i][0], number))
    assert gaps == sourced


def test_a_lower_bound_cuda_says_so():
    """NGC months without their own release-notes row: the CUDA is at least that of the month before."""
    message = _one(_lint("start-check/ngc.yaml"), "GL601", 31)["message"]
    assert "needs CUDA 13.3 or newer" in message  # 26.07 has no row: at least 26.06's 13.3


@pytest.mark.parametrize("gpu_class, severity", [("datacenter", "info"), ("consumer", "error")])
def test_gpu_class_from_the_command_line(gpu_class, severity):
    run = _lint("start-check/jobs.yaml", "--gpu-class", gpu_class)
    assert _one(run, "GL601", 31)["severity"] == severity


def test_driver_without_forward_compat_on_that_branch_is_an_error_whatever_the_class():
    run = _lint("start-check/jobs.yaml", "--gpu-class", "datacenter")
    assert _one(run, "GL601", 14)["severity"] == "error"


# ------------------------------------------------------------------ images without it


@pytest.mark.parametrize("driver, expected", [
    ("520.61.05", [("serve.yaml", 15, 18, "error")]),
    ("535.104.05", [("serve.yaml", 15, 18, "warning")]),
    ("550.54.14", []),
    ("550", []),
    ("580.65.06", []),
])
def test_minor_version_compatibility_floor_and_toolkit_minimum(driver, expected):
    run = _lint("no-start-check/serve.yaml", "--driver", driver)
    assert _found(run, "GL601") == expected  # the CPU-only container is not judged


def test_minor_version_messages_name_the_real_errors():
    below = _lint("no-start-check/serve.yaml", "--driver", "520.61.05").findings
    assert "`CUDA driver version is insufficient for CUDA runtime version`" in below[0]["message"]
    assert "525.60.13" in below[0]["message"]
    between = [f for f in _lint("no-start-check/serve.yaml", "--driver", "535.104.05").findings
               if f["code"] == "GL601"]
    assert "minor-version compatibility" in between[0]["message"]
    assert "550.54.14" in between[0]["message"]


def test_disabled_start_check_is_judged_by_minor_version_compatibility():
    run = _lint("no-start-check/disabled.yaml", "--driver", "535.104.05", "--select", "GL601")
    assert _found(run, "GL601") == [("disabled.yaml", 8, 14, "warning")]
    assert "no start check" not in run.findings[0]["message"]
    assert "minor-version compatibility" in run.findings[0]["message"]


# ------------------------------------------------------------------ where the driver comes from


def test_no_driver_known_means_no_gl601():
    assert _found(_lint("sources/plain.yaml"), "GL601") == []
    assert _found(_lint("no-start-check/serve.yaml"), "GL601") == []


def test_driver_from_the_command_line():
    run = _lint("sources/plain.yaml", "--driver", "550.54.15")
    finding = _one(run, "GL601", 8)
    assert "from `--driver 550.54.15`" in finding["message"]
    assert finding["related"] == []


def test_legacy_driver_label_and_runtime_version_affinity():
    run = _lint("sources/selectors.yaml", "--select", "GL601")
    assert _found(run, "GL601") == [("selectors.yaml", 10, 14, "warning"), ("selectors.yaml", 33, 14, "error")]
    assert "`nvidia.com/cuda.driver.major: 470`" in _one(run, "GL601", 10)["message"]
    level = _one(run, "GL601", 33)
    assert "CUDA 12.2 at most" in level["message"]
    assert level["related"][0]["line"] == 27


def test_the_pods_selection_beats_the_command_line():
    run = _lint("start-check/jobs.yaml", "--driver", "580.65.06")
    assert _one(run, "GL601", 14)["severity"] == "error"  # R550 from the nodeSelector still decides


def test_driver_and_class_from_the_fleet_configuration():
    run = run_gpulint("--format", "json", "--failure-threshold", "none", ".",
                      cwd=FIXTURES / "compat" / "sources" / "config")
    finding = _one(run, "GL601", 8)
    assert finding["severity"] == "error"  # R525 is not a branch the 12.6.3 image lists
    assert "`driver = \"525.147.05\"` in [tool.gpulint.fleet] of pyproject.toml" in finding["message"]
    assert [(r["path"], r["line"], r["column"]) for r in finding["related"]] == [("pyproject.toml", 6, 10)]
    consumer = _lint("start-check/workstation.yaml", "--driver", "535.104.05").findings[0]
    assert [r["line"] for r in consumer["related"]] == [7]  # the product selector gave the class


def test_the_command_line_beats_the_configuration():
    run = run_gpulint("--format", "json", "--failure-threshold", "none", "--driver", "560.35.05", ".",
                      cwd=FIXTURES / "compat" / "sources" / "config")
    assert _found(run, "GL601") == []


def test_driver_from_a_cluster_policy_in_the_linted_set():
    run = _lint("sources/cluster-policy")
    finding = _one(run, "GL601", 8)
    assert finding["path"].endswith("cluster-policy/pod.yaml")
    assert "the GPU Operator ClusterPolicy `cluster-policy` (`spec.driver.version: 550.127.05`)" in finding["message"]
    assert finding["related"][0]["path"].endswith("gpu-operator.yaml")
    assert finding["related"][0]["line"] == 12


def test_cluster_policy_with_the_driver_disabled_or_disagreeing_says_nothing(lint_files):
    policy = (FIXTURES / "compat" / "sources" / "cluster-policy" / "gpu-operator.yaml").read_text()
    pod = (FIXTURES / "compat" / "sources" / "plain.yaml").read_text()
    disabled = policy.replace("enabled: true\n    repository", "enabled: false\n    repository")
    assert "GL601" not in lint_files({"policy.yaml": disabled, "pod.yaml": pod}).codes()


def test_the_cluster_policy_driver_does_not_judge_docker_hosts(lint_files):
    """The GPU Operator installs its driver on the cluster's nodes; a Compose service, a
    `docker run` line or a dev container runs on a Docker host the operator does not manage."""
    policy = (FIXTURES / "compat" / "sources" / "cluster-policy" / "gpu-operator.yaml").read_text()
    pod = (FIXTURES / "compat" / "sources" / "plain.yaml").read_text()
    compose = ("services:\n  app:\n    image: nvidia/cuda:12.6.3-base-ubuntu22.04\n    gpus: all\n")
    devcontainer = '{"image": "nvidia/cuda:12.6.3-base-ubuntu22.04", "runArgs": ["--gpus", "all"]}\n'
    run = lint_files({"policy.yaml": policy, "pod.yaml": pod, "compose.yaml": compose,
                      ".devcontainer/devcontainer.json": devcontainer,
                      "run.sh": "docker run --gpus all nvidia/cuda:12.6.3-base-ubuntu22.04 nvidia-smi\n"},
                     "--failure-threshold", "none")
    assert [f["path"] for f in run.findings if f["code"] == "GL601"] == ["pod.yaml"]


def test_two_cluster_policies_that_disagree_give_no_driver(tmp_path):
    policy = (FIXTURES / "compat" / "sources" / "cluster-policy" / "gpu-operator.yaml").read_text()
    pod = (FIXTURES / "compat" / "sources" / "plain.yaml").read_text()
    for name, text in {"a.yaml": policy, "b.yaml": policy.replace("550.127.05", "580.126.20"), "pod.yaml": pod}.items():
        (tmp_path / name).write_text(text)
    run = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", ".", cwd=tmp_path)
    assert "GL601" not in run.codes()


# ------------------------------------------------------------------ image sources


def test_image_name_mapped_to_its_dockerfile():
    run = run_gpulint("--format", "json", "--failure-threshold", "none", ".", cwd=FIXTURES / "compat" / "mapping")
    assert [(f["path"], f["line"], f["column"]) for f in run.findings if f["code"] == "GL601"] == [
        ("deploy/trainer.yaml", 14, 18), ("docker/trainer.Dockerfile", 6, 6)]
    deployment = run.findings[0]
    assert "built by docker/trainer.Dockerfile, final stage `FROM nvidia/cuda:13.2.1-runtime-ubuntu24.04`" \
        in deployment["message"]
    assert [(r["path"], r["line"]) for r in deployment["related"]] == [("docker/trainer.Dockerfile", 6),
                                                                      ("pyproject.toml", 6)]


def test_mapped_dockerfile_outside_the_linted_paths_is_read():
    run = run_gpulint("--format", "json", "--failure-threshold", "none", "deploy",
                      cwd=FIXTURES / "compat" / "mapping")
    assert [(f["path"], f["line"]) for f in run.findings if f["code"] == "GL601"] == [("deploy/trainer.yaml", 14)]


@pytest.mark.parametrize("driver, expected", [
    ("520", [("Dockerfile.custom", 2, 18, "error"), ("Dockerfile.legacy", 4, 18, "error"),
             ("Dockerfile.mixed-wheels", 3, 35, "error"), ("Dockerfile.override", 1, 6, "error"),
             ("Dockerfile.wheels", 2, 32, "error")]),
    ("535.104.05", [("Dockerfile.custom", 2, 18, "warning"), ("Dockerfile.legacy", 4, 18, "error"),
                    ("Dockerfile.override", 1, 6, "error")]),
    ("580.65.06", []),
])
def test_dockerfile_env_and_wheels(driver, expected):
    run = _lint("dockerfiles", "--driver", driver)
    assert _found(run, "GL601") == expected


def test_legacy_cuda_version_alone_allows_no_older_branch():
    """CUDA_VERSION without NVIDIA_REQUIRE_CUDA: the toolkit enforces `cuda>=X.Y` only."""
    finding = _one(_lint("dockerfiles/Dockerfile.legacy", "--driver", "535.104.05"), "GL601", 4)
    assert "unsatisfied condition: cuda>=12.6" in finding["message"]
    assert "its requirement is `cuda>=12.6` alone, which admits no older branch" in finding["message"]


def test_dockerfile_requirement_without_brands_replaces_the_base_images():
    finding = _one(_lint("dockerfiles/Dockerfile.override", "--driver", "535.104.05"), "GL601", 1)
    assert finding["severity"] == "error"
    assert "unsatisfied condition: cuda>=12.8" in finding["message"]


def test_the_newest_cuda_wheel_decides():
    finding = _one(_lint("dockerfiles/Dockerfile.mixed-wheels", "--driver", "520.61.05"), "GL601", 3)
    assert "CUDA 12 wheels: `nvidia-cublas-cu12`" in finding["message"]
    assert "525.60.13" in finding["message"]


def test_pod_env_replaces_the_images_requirement():
    run = _lint("start-check/require-env.yaml", "--select", "GL601")
    assert _found(run, "GL601") == [("require-env.yaml", 10, 14, "error"), ("require-env.yaml", 18, 14, "warning")]
    # `yes` is not a boolean to the container toolkit (Go's strconv.ParseBool): the check stays on
    assert "forward compatibility" in _one(run, "GL601", 18)["message"]


def test_custom_require_cuda_lists_its_own_branches():
    run = _lint("dockerfiles/Dockerfile.custom", "--driver", "550.54.15")
    finding = _one(run, "GL601", 2)
    assert finding["severity"] == "error"  # the image's NVIDIA_REQUIRE_CUDA lists only R535
    assert "(R535)" in finding["message"]


# ------------------------------------------------------------------ GL603, GL604


def test_cuda_newer_than_the_data_is_reported_not_judged():
    run = _lint("dockerfiles/Dockerfile.future", "--driver", "580.65.06")
    assert _found(run, "GL603") == [("Dockerfile.future", 2, 18, "info")]
    assert "data as of" in run.findings[0]["message"]
    assert _found(_lint("dockerfiles/Dockerfile.future"), "GL603") == []


def test_gpu_below_the_images_compute_capability():
    run = _lint("arch/serve.yaml")
    assert _found(run, "GL604") == [("serve.yaml", 16, 18, "warning")]
    assert "Volta, compute capability 7.0" in run.findings[0]["message"]
    assert run.findings[0]["related"][0]["line"] == 13


def test_gpu_from_the_fleet_configuration(tmp_path):
    (tmp_path / ".gpulint.toml").write_text('[fleet]\ngpu = "V100"\n')
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:13.0.2-runtime-ubuntu24.04\nCMD [\"serve\"]\n")
    run = run_gpulint("--format", "json", "--failure-threshold", "none", "--select", "GL6", ".", cwd=tmp_path)
    assert [(f["code"], f["line"], f["column"]) for f in run.findings] == [("GL604", 1, 6)]
    assert run.findings[0]["related"][0]["path"] == ".gpulint.toml"


# ------------------------------------------------------------------ GL602


def test_operator_drivers_past_end_of_life():
    run = _lint("lifecycle/operator.yaml")
    assert _found(run, "GL602") == [("operator.yaml", 8, 14, "warning"), ("operator.yaml", 18, 12, "warning"),
                                    ("operator.yaml", 28, 12, "info")]
    r470, r525, r590 = (f["message"] for f in run.findings if f["code"] == "GL602")
    assert "R470 is a long-term-support branch that reached end of life in 2024-07" in r470
    assert "R525 is a production branch (not a long-term-support branch) that reached end of life in 2023-12" \
        in r525
    assert "R590 is a new feature branch" in r590


def test_selector_and_configuration_drivers_past_end_of_life(tmp_path):
    assert _found(_lint("sources/selectors.yaml"), "GL602") == [("selectors.yaml", 7, 35, "warning")]
    (tmp_path / ".gpulint.toml").write_text('[fleet]\ndriver = "470.256.02"\n')
    run = run_gpulint("--format", "json", "--failure-threshold", "none", ".", cwd=tmp_path)
    assert [(f["path"], f["line"], f["column"], f["severity"]) for f in run.findings] == [
        (".gpulint.toml", 2, 10, "warning")]


@pytest.mark.parametrize("version, severity, words", [
    ("545.23.08", "warning", "R545 is a new feature branch that reached end of life in 2024-10"),
    ("610.43.02", "warning", "R610 is a new feature branch that reached end of life in 2026-08"),
    ("590.48.01", "info", "R590 is a new feature branch: short-lived"),
])
def test_new_feature_branches_past_their_end_of_life_are_warnings(lint_files, version, severity, words):
    policy = (FIXTURES / "compat" / "sources" / "cluster-policy" / "gpu-operator.yaml").read_text()
    [found] = [f for f in lint_files({"policy.yaml": policy.replace("550.127.05", version)}).findings
               if f["code"] == "GL602"]
    assert (found["line"], found["column"], found["severity"]) == (12, 14, severity)
    assert words in found["message"]


def test_supported_branch_is_not_reported(lint_files):
    policy = (FIXTURES / "compat" / "sources" / "cluster-policy" / "gpu-operator.yaml").read_text()
    assert "GL602" not in lint_files({"policy.yaml": policy.replace("550.127.05", "580.126.20")}).codes()


# ------------------------------------------------------------------ odd shapes


@pytest.mark.parametrize("selector", [
    "nodeSelector: [nvidia.com/cuda.driver-version.major]",
    "nodeSelector:\n    nvidia.com/cuda.driver-version.major: null",
    "nodeSelector:\n    nvidia.com/cuda.driver-version.full: \"{{ .Values.driver }}\"",
    "nodeSelector:\n    nvidia.com/cuda.driver-version.major: 535",
    "nodeSelector:\n    nvidia.com/cuda.runtime-version.major: twelve",
    "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: 3}}}",
])
@pytest.mark.parametrize("image", ["nvidia/cuda:12.6.3-base-ubuntu22.04", "\"{{ .Values.image }}\"", "null",
                                   "[a, b]", "nvidia/cuda:${TAG}"])
def test_odd_shapes_never_crash(lint_files, selector, image):
    pod = (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: odd}}\nspec:\n  {selector}\n  containers:\n"
           f"    - name: app\n      image: {image}\n      resources: {{limits: {{nvidia.com/gpu: 1}}}}\n")
    run = lint_files({"pod.yaml": pod, "policy.yaml": "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\n"
                      "metadata: {name: x}\nspec: {driver: [1, 2]}\n"}, "--driver", "470")
    assert run.rc in (0, 1), run.err


def test_odd_dockerfiles_never_crash(lint_files):
    run = lint_files({"Dockerfile": "ARG BASE\nFROM ${BASE}\nENV CUDA_VERSION=\nRUN pip install torch==+cu\n",
                      "b/Dockerfile": "FROM scratch\nENV NVIDIA_REQUIRE_CUDA=\"cuda>=abc brand=x,driver>=\"\n"},
                     "--driver", "535")
    assert run.rc in (0, 1), run.err


def test_driver_from_gpu_operator_helm_values():
    run = _lint("sources/helm-values")
    finding = _one(run, "GL601", 8)
    assert finding["severity"] == "warning"  # R470 runs 12.6 only via forward compatibility
    assert "the GPU Operator Helm values (`driver.version: 470.256.02`)" in finding["message"]
    assert [(r["path"].rsplit("/", 1)[-1], r["line"], r["column"]) for r in finding["related"]] == [
        ("values.yaml", 9, 12)]
    [eol] = [f for f in run.findings if f["code"] == "GL602"]
    assert (eol["path"].rsplit("/", 1)[-1], eol["line"], eol["column"]) == ("values.yaml", 9, 12)
    assert "the GPU Operator Helm values install driver 470.256.02" in eol["message"]


def test_helm_values_with_the_driver_disabled_say_nothing(lint_files):
    source = FIXTURES / "compat" / "sources" / "helm-values"
    values = (source / "values.yaml").read_text().replace("enabled: true\n  repository",
                                                          "enabled: false\n  repository")
    run = lint_files({"values.yaml": values, "pod.yaml": (source / "pod.yaml").read_text()})
    assert [code for code in run.codes() if code.startswith("GL6")] == []
    other = lint_files({"values.yaml": "image: nginx\ndriver:\n  version: 470.256.02\n"})
    assert other.json["summary"]["files_checked"] == 1  # pod.yaml only: not the operator chart


def _affinity_pod(*terms: str) -> str:
    listed = "".join(
        "          - matchExpressions:\n"
        "              - {key: nvidia.com/cuda.driver-version.major, operator: In, values: [\"%s\"]}\n" % t
        for t in terms)
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: trainer}\nspec:\n  affinity:\n"
            "    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
            "        nodeSelectorTerms:\n" + listed +
            "  containers:\n    - name: app\n      image: nvidia/cuda:12.8.1-base-ubuntu22.04\n"
            "      resources: {limits: {nvidia.com/gpu: 1}}\n")


def test_alternative_node_selector_terms_do_not_pin_the_driver(lint_files):
    pinned = lint_files({"pod.yaml": _affinity_pod("470")})
    assert "GL602" in pinned.codes() and "GL601" in pinned.codes()
    either = lint_files({"pod.yaml": _affinity_pod("470", "580")})
    assert [c for c in either.codes() if c in ("GL601", "GL602")] == []
    same = lint_files({"pod.yaml": _affinity_pod("470", "470")})
    assert "GL602" in same.codes()


@pytest.mark.parametrize("klass, severity, words", [
    ("datacenter", "info", "data-center"),
    ("embedded", "info", "Jetson"),
    ("workstation", "warning", "NGC-ready"),
    ("consumer", "error", "consumer GPUs"),
])
def test_every_gpu_class_can_be_stated_on_the_command_line(klass, severity, words):
    run = _lint("sources/plain.yaml", "--driver", "535.104.05", "--gpu-class", klass)
    [finding] = [f for f in run.findings if f["code"] == "GL601"]
    assert finding["severity"] == severity
    assert words in finding["message"]
    assert f"`--gpu-class {klass}`" in finding["message"]


def test_cuda_stated_by_the_tag_is_judged_with_lower_confidence():
    """`-cu128` in a tag is what the image says of itself: the message says so, and it does
    not claim the image has (or lacks) a start check. A tag without X.Y is not judged."""
    run = _lint("tagged/llm.yaml", "--driver", "535.104.05")
    assert _found(run, "GL601") == [("llm.yaml", 8, 14, "warning"), ("llm.yaml", 13, 14, "warning")]
    cu128, cu130 = (f["message"] for f in run.findings if f["code"] == "GL601")
    assert "(its tag says CUDA 12.8)" in cu128
    assert "is not known to check the driver at start" in cu130
    assert "CUDA fails (or the container does not start)" in cu130
    # nothing says whether cuda-compat rides along: minor-version compatibility is not the only way
    assert "on data-center GPUs it may run through forward compatibility instead" in cu128
    consumer = _lint("tagged/llm.yaml", "--driver", "535.104.05", "--gpu-class", "consumer")
    assert _found(consumer, "GL601") == [("llm.yaml", 8, 14, "warning"), ("llm.yaml", 13, 14, "warning")]
    assert all("forward compatibility" not in f["message"] for f in consumer.findings if f["code"] == "GL601")


def test_cuda_stated_by_the_tag_gets_no_verdict_on_data_center_gpus():
    """There it may run through forward compatibility, if the image carries cuda-compat."""
    run = _lint("tagged/llm.yaml", "--driver", "535.104.05", "--gpu-class", "datacenter")
    assert _found(run, "GL601") == []


# ------------------------------------------------------------------ images that delete cuda-compat


@pytest.mark.parametrize("args, expected", [
    # the brand clauses still start it on data-center GPUs; CUDA then runs by minor-version compatibility
    (("--driver", "550.54.15", "--gpu-class", "datacenter"),
     [("Dockerfile.kept", 1, 6, "info"), ("Dockerfile.purged", 1, 6, "warning"), ("Dockerfile.rm", 1, 6, "warning")]),
    (("--driver", "535.104.05"),
     [("Dockerfile.kept", 1, 6, "warning"), ("Dockerfile.purged", 1, 6, "warning"), ("Dockerfile.rm", 1, 6, "warning")]),
    # R470 is admitted by 12.8.1's brand clauses but is below the CUDA 12.x minimum: without cuda-compat CUDA fails
    (("--driver", "470.82.01", "--gpu-class", "datacenter"),
     [("Dockerfile.kept", 1, 6, "info"), ("Dockerfile.purged", 1, 6, "error"), ("Dockerfile.rm", 1, 6, "error")]),
    (("--driver", "550.54.15", "--gpu-class", "consumer"),
     [("Dockerfile.kept", 1, 6, "error"), ("Dockerfile.purged", 1, 6, "error"), ("Dockerfile.rm", 1, 6, "error")]),
    (("--driver", "570.124.06"), []),
])
def test_deleted_cuda_compat_leaves_minor_version_compatibility(args, expected):
    assert _found(_lint("compat-removed", *args), "GL601") == expected


def test_deleted_cuda_compat_message_says_forward_compatibility_is_gone():
    run = _lint("compat-removed", "--driver", "550.54.15", "--gpu-class", "datacenter")
    gl601 = [f for f in run.findings if f["code"] == "GL601"]
    purged = next(f for f in gl601 if f["path"].endswith("Dockerfile.purged"))
    assert "deletes its cuda-compat libraries (`cuda-compat-*` on line 3)" in purged["message"]
    assert "minor-version compatibility (CUDA 12.x needs >= 525.60.13)" in purged["message"]
    assert "the image's cuda-compat libraries" not in purged["message"]
    kept = next(f for f in gl601 if f["path"].endswith("Dockerfile.kept"))
    assert "runs through forward compatibility (the image's cuda-compat libraries)" in kept["message"]
    old = _one(_lint("compat-removed/Dockerfile.rm", "--driver", "470.82.01", "--gpu-class", "datacenter"),
               "GL601", 1)
    assert "below the CUDA 12.x minimum 525.60.13" in old["message"]
    assert "`CUDA driver version is insufficient for CUDA runtime version`" in old["message"]


def test_bionemo_releases_take_the_cuda_of_the_pytorch_month_they_are_built_on():
    # BioNeMo Framework 2.5 is built FROM nvcr.io/nvidia/pytorch:25.01-py3 (CUDA 12.8.0)
    run = _lint("built-on", "--driver", "535.104.05")
    assert _found(run, "GL601") == [("Dockerfile.release", 1, 6, "warning")]
    message = _one(run, "GL601", 1)["message"]
    assert "`FROM nvcr.io/nvidia/clara/bionemo-framework:2.5`) needs CUDA 12.8" in message
    assert "driver >= 570.26" in message
    assert _found(_lint("built-on", "--driver", "570.124.06"), "GL601") == []


def test_gl605_a_gpu_image_whose_cuda_is_unknown_is_said_not_judged(lint_files):
    """Under a known driver, a GPU container whose image's CUDA gpulint cannot tell is named
    once per image and file (never a silent pass); without a driver, or for an image that
    builds from a linted Dockerfile or is a placeholder, nothing is said."""
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: a}}\nspec:\n  containers:\n"
           "{containers}")
    gpu = "  - name: {name}\n    image: {image}\n    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    text = pod.format(containers="".join(gpu.format(name=n, image=i) for n, i in (
        ("a", "vllm/vllm-openai:v0.6.3"), ("b", "vllm/vllm-openai:v0.6.3"), ("c", "<image>"),
        ("d", "nvidia/cuda:12.2.2-runtime-ubuntu22.04"))))
    run = lint_files({"pod.yaml": text}, "--driver", "535")
    assert [(f["code"], f["line"], f["column"], f["severity"]) for f in run.findings] == [("GL605", 7, 12, "info")]
    assert "not judged against driver 535 (`--driver 535`)" in run.findings[0]["message"]
    assert lint_files({"pod.yaml": text}).findings == []
    compose = ("services:\n  app:\n    image: registry.example.com/app:1\n    build: .\n    gpus: all\n"
               "  other:\n    image: ollama/ollama\n    gpus: all\n")
    run = lint_files({"compose.yaml": compose, "Dockerfile": "FROM nvidia/cuda:12.2.2-runtime-ubuntu22.04\n"},
                     "--driver", "535", "--select", "GL605")
    assert [(f["path"], f["line"]) for f in run.findings if f["path"] == "compose.yaml"] == [("compose.yaml", 7)]
