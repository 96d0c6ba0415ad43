"""Dockerfile rules GL301-GL313, through the CLI's JSON report."""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import FIXTURES, ROOT, lint_fixture, run_gpulint

FAMILY = "GL3"


def _found(relative: str, *args: str) -> list[tuple[str, int, int]]:
    run = lint_fixture(f"dockerfile/{relative}", "--failure-threshold", "none", *args)
    assert run.rc == 0, run.err
    return [a for a in run.at() if a[0].startswith(FAMILY)]


def _messages(relative: str, code: str) -> list[dict]:
    run = lint_fixture(f"dockerfile/{relative}", "--failure-threshold", "none")
    return [f for f in run.findings if f["code"] == code]


@pytest.mark.parametrize("relative, expected", [
    ("seed/Dockerfile", [("GL302", 2, 6), ("GL302", 8, 6)]),
    ("seed/verify.Dockerfile", [("GL301", 1, 6)]),
    ("seed/legacy.Dockerfile", [("GL301", 1, 6)]),
    ("tags/bad.Dockerfile", [("GL301", 2, 6), ("GL301", 3, 6), ("GL301", 4, 6), ("GL302", 5, 6),
                             ("GL301", 6, 13)]),
    ("tags/good.Dockerfile", []),
    ("tags/arg-chain.Dockerfile", [("GL302", 4, 6), ("GL302", 7, 6)]),
    ("tags/eol-major.Dockerfile", [("GL302", 1, 6), ("GL301", 2, 6)]),
    ("tags/platform.Dockerfile", [("GL301", 2, 29), ("GL301", 3, 31), ("GL301", 4, 31), ("GL302", 5, 6)]),
    ("tags/platform-good.Dockerfile", []),
    ("tags/inline-default.Dockerfile", [("GL301", 1, 6)]),
    ("templated/Dockerfile.j2", []),
    ("devel/bad.Dockerfile", [("GL303", 1, 6)]),
    ("devel/plain.Dockerfile", [("GL303", 1, 6)]),
    ("devel/jit.Dockerfile", [("GL303", 1, 6)]),
    ("devel/good.Dockerfile", []),
    ("devel/jit-requirements.Dockerfile", [("GL303", 1, 6)]),
    ("devel/torch-compile.Dockerfile", [("GL303", 1, 6)]),
    ("devel/tritonserver.Dockerfile", [("GL303", 1, 6)]),
    ("devel/horovod-gpu.Dockerfile", [("GL303", 1, 6)]),
    ("devel/horovod-cpu.Dockerfile", [("GL303", 1, 6)]),
    ("devel/mlx.Dockerfile", [("GL303", 1, 6)]),
    ("devel/eol.Dockerfile", [("GL302", 1, 6), ("GL303", 1, 6)]),
    ("devel/eol-major.Dockerfile", [("GL302", 1, 6), ("GL303", 1, 6)]),
    ("nvcc/bad.Dockerfile", [("GL304", 3, 5), ("GL304", 8, 5), ("GL304", 11, 29), ("GL304", 14, 1)]),
    ("nvcc/good.Dockerfile", []),
    ("nvcc/echo-header.Dockerfile", [("GL304", 2, 13)]),
    ("driver/bad.Dockerfile", [("GL305", 4, 7), ("GL305", 5, 7), ("GL305", 7, 27), ("GL305", 9, 13),
                               ("GL305", 10, 24), ("GL305", 10, 59)]),
    ("driver/good.Dockerfile", []),
    ("driver/with-toolkit.Dockerfile", [("GL305", 3, 73)]),
    ("meta/bad.Dockerfile", [("GL306", 4, 42), ("GL306", 5, 48), ("GL306", 5, 66), ("GL306", 6, 24),
                             ("GL303", 8, 6), ("GL306", 9, 42)]),
    ("meta/good.Dockerfile", []),
    ("meta/stage-args.Dockerfile", [("GL306", 11, 42)]),
    # NVIDIA's installers: the CUDA runfile's default selection and `--driver` bring the
    # driver; Debian's and Ubuntu's driver packages
    ("driver/runfile.Dockerfile", [("GL305", 4, 8), ("GL305", 6, 7), ("GL305", 8, 15), ("GL305", 9, 48),
                                   ("GL305", 9, 57), ("GL305", 9, 68), ("GL305", 10, 42), ("GL305", 11, 24),
                                   ("GL305", 12, 14)]),  # `sh -c '...'` is read once
    ("driver/runfile-good.Dockerfile", []),
    # installers saved under another name (`wget -O`, `curl --output`) are known by their
    # address, pointed at where they run; a later download under the same name wins
    ("driver/saved.Dockerfile", [("GL306", 3, 8), ("GL305", 4, 133), ("GL306", 4, 133), ("GL305", 5, 116)]),
    # a second CUDA on a CUDA base: the distribution's, the newest of NVIDIA's repository,
    # a pinned other version, a runfile of another version
    ("meta/second.Dockerfile", [("GL306", 2, 66), ("GL306", 3, 24), ("GL306", 4, 24), ("GL306", 4, 40),
                                ("GL306", 5, 8), ("GL303", 7, 6), ("GL306", 8, 42)]),
    ("meta/second-good.Dockerfile", []),
    ("env/bad.Dockerfile", [("GL307", 3, 28)]),
    ("env/cuda-base.Dockerfile", [("GL307", 2, 28)]),
    ("env/custom-base.Dockerfile", []),
    ("env/good.Dockerfile", []),
    ("env/expanded.Dockerfile", [("GL307", 6, 28)]),  # ENV values expanded: `${NVIDIA_GPUS:-all}`
    ("caps/bad.Dockerfile", [("GL308", 2, 32), ("GL308", 6, 6)]),
    ("caps/all.Dockerfile", [("GL308", 2, 32)]),
    ("caps/graphics.Dockerfile", [("GL308", 2, 32)]),
    ("caps/good.Dockerfile", []),
    ("caps/all-in-build.Dockerfile", [("GL308", 2, 32)]),
    ("toolkit/bad.Dockerfile", [("GL309", 2, 24), ("GL309", 2, 64), ("GL309", 5, 42), ("GL309", 6, 20)]),
    ("toolkit/good.Dockerfile", []),
    ("toolkit/apt-key-gone.Dockerfile", [("GL309", 2, 70), ("GL309", 4, 5), ("GL309", 6, 106),
                                         ("GL309", 8, 70)]),
    # each apt-key fed an NVIDIA key (across a line continuation), not the RUN's first
    # apt-key nor one fed another vendor's key
    ("toolkit/apt-key-second.Dockerfile", [("GL309", 3, 70), ("GL309", 6, 9)]),
    ("toolkit/apt-key-other.Dockerfile", []),
    ("buildtime/bad.Dockerfile", [("GL310", 2, 5), ("GL310", 3, 31), ("GL310", 4, 31), ("GL310", 5, 5)]),
    ("buildtime/good.Dockerfile", []),
    # the driver's libcuda/NVML is mounted at run time only (NVIDIA/nvidia-docker#1033); the stub is fine
    ("buildtime/driver-library.Dockerfile", [("GL310", 2, 49), ("GL310", 3, 14)]),
    ("buildtime/driver-stub.Dockerfile", []),
    ("ldpath/bad.Dockerfile", [("GL311", 3, 21), ("GL311", 4, 45), ("GL312", 5, 21), ("GL312", 6, 10)]),
    ("ldpath/good.Dockerfile", []),
    ("ldpath/chain.Dockerfile", [("GL311", 6, 21)]),
    ("require/bad.Dockerfile", [("GL313", 2, 28), ("GL313", 3, 26)]),
    ("require/custom.Dockerfile", [("GL313", 3, 26)]),
    ("require/good.Dockerfile", []),
    ("require/expanded.Dockerfile", [("GL313", 5, 26)]),  # CUDA_VERSION from an ARG default
    # images that manage GPUs or never run CUDA: no GL307 / GL313
    ("workload/device-plugin.Dockerfile", []),
    ("workload/packaging.Dockerfile", []),
    ("workload/exporter.Dockerfile", []),
    ("workload/compat-removed.Dockerfile", [("GL303", 1, 6)]),
    ("workload/nvml-only.Dockerfile", []),
    ("workload/graphics.Dockerfile", [("GL307", 3, 28)]),  # graphics still takes a GPU
    ("workload/app.Dockerfile", [("GL313", 3, 28)]),  # `model_exporter.py` is no exporter binary
    ("env/repeats-base.Dockerfile", []),  # the nvidia/cuda base sets `all` already
    ("jetson/l4t.Dockerfile", []),
    ("jetson/cuda-layer.Dockerfile", []),
    ("jetson/not-jetson.Dockerfile", [("GL307", 3, 28), ("GL308", 4, 32)]),
    # CUDA used at build time on a Jetson base: once per stage, beside the GPU checks
    ("jetson/build-r32.Dockerfile", [("GL310", 3, 11), ("GL310", 5, 5)]),
    ("jetson/build.Dockerfile", [("GL310", 4, 5), ("GL310", 5, 31)]),
    ("jetson/build-good.Dockerfile", []),
    ("jetson/build-layer.Dockerfile", [("GL310", 3, 5)]),  # a Jetson image by its package repository
    # CUDA packages on an L4T r32 base, whose CUDA is the device's, mounted read-only
    ("jetson/cuda-r32.Dockerfile", [("GL306", 2, 66), ("GL306", 3, 24)]),
    ("ldpath/expanded.Dockerfile", [("GL312", 5, 21), ("GL311", 7, 21)]),
    ("ldpath/expanded-good.Dockerfile", []),
    ("ldpath/doubling.Dockerfile", [("GL311", 34, 21)]),
])
def test_findings_and_positions(relative, expected):
    assert _found(relative) == expected


def test_seed_example_has_only_eol_warnings():
    """The multi-stage example builds in devel and runs on runtime of one version: nothing
    but the end-of-life note for 12.0.0 (superseded by 12.0.1)."""
    run = lint_fixture("dockerfile/seed/Dockerfile", "--failure-threshold", "none", "--preview")
    assert {f["code"] for f in run.findings} == {"GL302"}
    assert all("12.0.1" in f["message"] for f in run.findings)


def test_invalid_tag_message_names_the_real_tag():
    messages = [f["message"] for f in _messages("tags/bad.Dockerfile", "GL301")]
    assert "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04" in messages[0]
    assert "ARG defaults" in messages[0]
    assert "nvidia/cuda:12.0.1-runtime-ubuntu22.04" in _messages("seed/verify.Dockerfile", "GL301")[0]["message"]


def test_eol_names_the_supported_successor():
    """An end-of-life major gets the supported successor named, without a fix: a new CUDA
    major is more than a tag edit. A misspelt flavor suggests the flavor it meant."""
    eol, wrong_case = _messages("tags/eol-major.Dockerfile", "GL302") + _messages(
        "tags/eol-major.Dockerfile", "GL301")
    assert "supported successor is `nvidia/cuda:12.9.2-cudnn-runtime-ubuntu22.04`" in eol["message"]
    assert eol.get("fix") is None
    assert "Use `nvidia/cuda:12.0.1-runtime-ubuntu22.04`" in wrong_case["message"]


def test_platform_without_an_image_for_it():
    mariner, amazon, power = _messages("tags/platform.Dockerfile", "GL301")
    assert "has no linux/arm64 image" in mariner["message"]
    assert "`no matching manifest for linux/arm64 in the manifest list entries`" in mariner["message"]
    assert "Use `nvidia/cuda:12.6.3-base-ubuntu22.04`" in mariner["message"]
    assert "gained arm64 with CUDA 12.9.0" in amazon["message"]  # --platform from an ARG default
    assert "ppc64le" in power["message"] and power.get("fix") is None
    (legacy,) = _messages("tags/platform.Dockerfile", "GL302")
    assert "nvidia/cuda-arm64 repository is deprecated" in legacy["message"]
    assert "Use `nvidia/cuda:12.9.2-base-ubuntu22.04`" in legacy["message"]


def test_arg_defaults_built_from_other_args():
    (builder,) = [f for f in _messages("tags/arg-chain.Dockerfile", "GL302") if f["line"] == 4]
    assert "`nvidia/cuda:12.0.0-devel-ubuntu22.04` with the ARG defaults" in builder["message"]


def test_global_args_only_in_stages_that_declare_them():
    (meta,) = _messages("meta/stage-args.Dockerfile", "GL306")
    assert meta["message"].startswith("`cuda-12-4` is a meta-package")
    assert meta.get("fix") is None  # the name is behind ${CUDA_PACKAGE}: nothing to rewrite


def test_capabilities_all_in_a_build_stage_names_what_is_lost():
    (found,) = _messages("caps/all-in-build.Dockerfile", "GL308")
    assert "lacks compat32, display, graphics, ngx, video" in found["message"]


def test_ld_library_path_clobber_along_a_stage_chain():
    (found,) = _messages("ldpath/chain.Dockerfile", "GL311")
    assert "set before it (by line 3)" in found["message"]


def test_devel_severity_and_split_advice():
    """A warning only where nothing in the image needs the toolkit; info where the shipped
    stage compiles CUDA itself or the workload compiles kernels at run time."""
    built = _messages("devel/bad.Dockerfile", "GL303")[0]
    assert built["severity"] == "info"
    assert "nvidia/cuda:12.9.2-runtime-ubuntu24.04" in built["message"] and "line 4" in built["message"]
    assert _messages("devel/jit.Dockerfile", "GL303")[0]["severity"] == "info"
    assert _messages("devel/jit-requirements.Dockerfile", "GL303")[0]["severity"] == "info"
    assert _messages("devel/torch-compile.Dockerfile", "GL303")[0]["severity"] == "info"
    plain = _messages("devel/plain.Dockerfile", "GL303")[0]
    assert plain["severity"] == "warning"
    assert "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime" in plain["message"]
    serving = _messages("devel/tritonserver.Dockerfile", "GL303")[0]
    assert serving["severity"] == "warning"  # the Triton Inference Server compiles no kernels
    horovod = _messages("devel/horovod-gpu.Dockerfile", "GL303")[0]
    assert horovod["severity"] == "info" and "line 3" in horovod["message"]  # nvcc builds its GPU kernels
    assert _messages("devel/horovod-cpu.Dockerfile", "GL303")[0]["severity"] == "warning"
    mlx = _messages("devel/mlx.Dockerfile", "GL303")[0]  # MLX's CUDA backend compiles with NVRTC
    assert mlx["severity"] == "info" and "`mlx` compiles CUDA kernels at run time" in mlx["message"]


def test_devel_advice_names_a_supported_runtime_tag():
    """12.4.0 is end of life: the runtime to ship on is its supported patch, 12.4.1; for
    11.8.0 no 11.8 tag is supported, so no tag is named."""
    (eol,) = _messages("devel/eol.Dockerfile", "GL303")
    assert "`nvidia/cuda:12.4.1-runtime-ubuntu22.04`" in eol["message"]
    (gone,) = _messages("devel/eol-major.Dockerfile", "GL303")
    assert "the matching runtime image" in gone["message"]


def test_visible_devices_on_a_non_nvidia_base_says_the_base_does_not_set_it():
    (found,) = _messages("env/bad.Dockerfile", "GL307")
    assert found["severity"] == "warning"
    assert "non-NVIDIA base `python:3.12-slim`, which does not set it" in found["message"]
    assert _messages("env/cuda-base.Dockerfile", "GL307")[0]["severity"] == "warning"


def test_visible_devices_on_a_base_that_sets_all_recommends_void():
    """Deleting the line would expose every GPU again: the base image sets `all`."""
    (found,) = _messages("env/cuda-base.Dockerfile", "GL307")
    assert "already sets `all`" in found["message"]
    assert "`NVIDIA_VISIBLE_DEVICES=void`" in found["message"]


@pytest.mark.parametrize("relative", ["workload/device-plugin.Dockerfile",
                                      "workload/packaging.Dockerfile",
                                      "workload/exporter.Dockerfile",
                                      "workload/nvml-only.Dockerfile"])
def test_images_that_never_run_cuda_get_no_driver_verdict(relative):
    run = lint_fixture(f"dockerfile/{relative}", "--failure-threshold", "none", "--driver", "535")
    assert [f for f in run.findings if f["code"] == "GL601"] == []


@pytest.mark.parametrize("relative", ["workload/app.Dockerfile",
                                      "workload/compat-removed.Dockerfile"])
def test_a_cuda_application_still_gets_a_driver_verdict(relative):
    """Purging cuda-compat is something CUDA workloads do too: it is no evidence that the
    image never runs CUDA."""
    run = lint_fixture(f"dockerfile/{relative}", "--failure-threshold", "none", "--driver", "535")
    assert [f["code"] for f in run.findings if f["code"] == "GL601"] == ["GL601"]


def test_expanded_values_are_shown_beside_what_is_written():
    (compat,) = _messages("ldpath/expanded.Dockerfile", "GL312")
    assert "`LD_LIBRARY_PATH=${CUDA_HOME}/compat:${LD_LIBRARY_PATH}`" in compat["message"]
    assert "(`/usr/local/cuda/compat:${LD_LIBRARY_PATH}` expanded)" in compat["message"]
    (clobber,) = _messages("ldpath/doubling.Dockerfile", "GL311")
    assert len(clobber["message"]) < 1000  # a runaway `ARG A=$A$A` chain stays unexpanded


def test_apt_key_severity_follows_the_distribution_release():
    """APT 2.9.15 removed apt-key: Debian 13 and Ubuntu 25.04 fail the build; Ubuntu 24.04
    still has it (NVIDIA's own 12.8.1 ubuntu24.04 base uses it); an unknown base keeps
    the rule's default."""
    found = _messages("toolkit/apt-key-gone.Dockerfile", "GL309")
    assert [f["severity"] for f in found] == ["error", "error", "info", "warning"]
    assert "does not exist in Debian 13" in found[0]["message"]
    assert "`apt-key: not found`" in found[1]["message"]
    assert "still exists in Ubuntu 24.04" in found[2]["message"]


def test_build_time_cuda_on_jetson_names_the_builder_it_needs():
    """L4T r32 images have no CUDA of their own (warning); later ones get only the Tegra
    driver from the device (info). Either way the build needs the classic builder with the
    NVIDIA runtime as Docker's default, which GPU checks on Jetson say too."""
    r32, smi = _messages("jetson/build-r32.Dockerfile", "GL310")
    assert r32["severity"] == "warning" and "on L4T r32.7 CUDA, cuDNN and TensorRT are not in the image" in r32["message"]
    assert "(and 1 more step of this stage)" in r32["message"]
    for found in (r32, smi):
        assert "`DOCKER_BUILDKIT=0`" in found["message"] and '`"default-runtime": "nvidia"`' in found["message"]
    build, asserted = _messages("jetson/build.Dockerfile", "GL310")
    assert build["severity"] == "info" and "Tegra driver libraries" in build["message"]
    assert "`dustynv/l4t-pytorch:r36.2.0`" in build["message"]
    assert "false without them" in asserted["message"]
    (layer,) = _messages("jetson/build-layer.Dockerfile", "GL310")
    assert "in a Jetson image (`repo.download.nvidia.com/jetson`)" in layer["message"]


def test_cuda_packages_on_l4t_r32_say_the_device_mounts_cuda():
    found = _messages("jetson/cuda-r32.Dockerfile", "GL306")
    assert all(f["severity"] == "warning" and "`Read-only file system`" in f["message"] for f in found)
    assert "meta-package" not in found[1]["message"]  # one finding per package: the L4T one


def test_runfile_messages_say_what_brings_the_driver():
    default, asked, driver = _messages("driver/runfile.Dockerfile", "GL305")[:3]
    assert "`${CUDA_RUNFILE}` (`cuda_12.1.0_530.30.02_linux.run`)" in default["message"]
    assert "bundled driver 530.30.02" in default["message"] and "without `--toolkit`" in default["message"]
    assert "`--driver` asks for it" in asked["message"]
    assert "`--no-kernel-module` leaves out the kernel module" in driver["message"]
    distribution, script = _messages("driver/runfile.Dockerfile", "GL305")[-3:-1]
    assert script["severity"] == "warning" and "ollama-linux-amd64.tgz" in script["message"]
    assert distribution["severity"] == "warning" and "`libcuda1`" in distribution["message"]


def test_saved_installers_are_named_by_their_address():
    toolkit, driver = _messages("driver/saved.Dockerfile", "GL306")[0], _messages("driver/saved.Dockerfile", "GL305")[0]
    assert toolkit["message"].startswith("`cuda.run` (`cuda_12.6.0_560.28.03_linux.run`) installs CUDA 12.6")
    assert "`cuda.run` (`cuda_9.2.88_396.26_linux.run`)" in driver["message"]


def test_distribution_cuda_advice_follows_the_base_flavor():
    """On a runtime base the toolkit of the base's CUDA is named; a devel base has nvcc."""
    runtime, *_, devel = _messages("meta/second.Dockerfile", "GL306")
    assert "install NVIDIA's `cuda-toolkit-12-4`" in runtime["message"].replace("Install", "install")
    assert "`libcuda1`" in runtime["message"] and "Driver/library version mismatch" in runtime["message"]
    assert "already has `nvcc`: remove the package" in devel["message"]


def test_second_toolkit_is_a_warning():
    severities = [(f["line"], f["severity"]) for f in _messages("meta/bad.Dockerfile", "GL306")]
    assert severities == [(4, "error"), (5, "error"), (5, "error"), (6, "error"), (9, "warning")]


def _fix_twice(tmp_path, relative: str, *flags: str) -> tuple[str, str]:
    target = tmp_path / "Dockerfile"
    shutil.copy(FIXTURES / "dockerfile" / relative, target)
    first = run_gpulint("--isolated", "--fix", *flags, "--failure-threshold", "none", str(target))
    assert first.rc == 0, first.err
    once = target.read_text()
    second = run_gpulint("--isolated", "--fix", *flags, "--failure-threshold", "none", str(target))
    assert second.rc == 0, second.err
    assert target.read_text() == once  # fixing again changes nothing
    return once, second.out


def test_meta_package_fix(tmp_path):
    fixed, _ = _fix_twice(tmp_path, "meta/bad.Dockerfile")
    lines = fixed.splitlines()
    assert lines[3] == "RUN apt-get update && apt-get install -y cuda-toolkit-12-4"
    assert lines[4] == "RUN apt-get install -y --no-install-recommends cuda-libraries-12-4 cuda-toolkit"
    assert lines[5] == "RUN apt-get install -y cuda-toolkit-${CUDA_MAJOR}-${CUDA_MINOR}"
    assert lines[8] == "RUN apt-get update && apt-get install -y cuda-toolkit-11-8"  # not a meta-package


def test_tag_fixes_are_unsafe(tmp_path):
    safe, _ = _fix_twice(tmp_path, "seed/Dockerfile")
    assert "12.0.0-devel" in safe  # a new CUDA version is the user's call
    fixed, _ = _fix_twice(tmp_path, "seed/Dockerfile", "--unsafe-fixes")
    assert "FROM nvidia/cuda:12.0.1-devel-ubuntu22.04 AS builder" in fixed
    assert "FROM nvidia/cuda:12.0.1-runtime-ubuntu22.04\n" in fixed


def test_ld_library_path_fix(tmp_path):
    fixed, _ = _fix_twice(tmp_path, "ldpath/bad.Dockerfile", "--unsafe-fixes")
    lines = fixed.splitlines()
    assert lines[2] == "ENV LD_LIBRARY_PATH=/opt/app/lib:${LD_LIBRARY_PATH}"
    assert lines[3] == 'ENV PATH=/opt/app/bin:$PATH LD_LIBRARY_PATH="/opt/app/lib:/usr/local/lib:${LD_LIBRARY_PATH}"'
    assert not [a for a in _found_file(tmp_path / "Dockerfile") if a[0] == "GL311"]


def _found_file(path) -> list[tuple[str, int, int]]:
    run = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", str(path))
    return run.at()


def test_odd_dockerfiles_do_not_crash(lint_files):
    run = lint_files({
        "a.Dockerfile": "FROM\nRUN\nENV\nENV LD_LIBRARY_PATH\nCOPY --from= / /\n",
        "b.Dockerfile": "ARG X\nFROM ${X}\nFROM $X AS y\nFROM y\nRUN pip install\nRUN [\"nvcc\"\n",
        "c.Dockerfile": "FROM scratch\nENV NVIDIA_VISIBLE_DEVICES=all\nRUN 'unbalanced\n",
    }, "--failure-threshold", "none", "--preview")
    assert run.rc == 0, run.err
    assert "internal error" not in run.err


def _catalog_tags() -> list[str]:
    """Tags in every spelling users write: each catalog release with each flavor on its
    own OS list and on common others, OS-less and release-candidate forms."""
    import yaml

    data = yaml.safe_load((ROOT / "rules" / "cuda-images.yaml").read_text())
    common = ["ubuntu18.04", "ubuntu20.04", "ubuntu22.04", "ubuntu24.04", "centos7", "ubi9"]
    tags = {"latest", "12.4-devel-ubuntu22.04", "12.7.0-runtime-ubuntu22.04"}
    for row in data["versions"]:
        version = row["version"]
        flavors = ["base", "runtime", "devel", "cudnn-devel", "cudnn8-runtime", "tensorrt-runtime"]
        flavors += [f"{spelling}-runtime" for spelling in row.get("cudnn") or []]
        for flavor in flavors:
            tags.update(f"{version}-{flavor}-{os}" for os in {*(row.get("os") or []), *common})
        tags.update({f"{version}-base", f"{version}-devel-ubuntu20.04-rc"})
    return sorted(tags)


_SUGGESTED = re.compile(r"(?:Use|successor is|ship on|final stage on) `(nvidia/cuda:[^`]+)`")


def _suggested_tags(run) -> set[str]:
    return {m[1] for f in run.findings for m in _SUGGESTED.finditer(f["message"])}


def test_every_suggested_tag_is_supported(tmp_path):
    """Whatever tag a GL301/GL302/GL303 message or fix names is one the catalog calls
    supported: never removed, end of life, or on an OS that release was not built for."""
    written = tmp_path / "all.Dockerfile"
    written.write_text("".join(f"FROM nvidia/cuda:{tag}\n" for tag in _catalog_tags()))
    devel = tmp_path / "devel"
    devel.mkdir()
    for tag in _catalog_tags():
        if "-devel-" in tag and not tag.endswith("-rc"):
            (devel / f"{tag}.Dockerfile").write_text(f"FROM nvidia/cuda:{tag}\nCMD [\"serve\"]\n")
    run = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none",
                      "--select", "GL301,GL302,GL303", str(tmp_path))
    suggested = _suggested_tags(run)
    fixes = {e["content"] for f in run.findings if f.get("fix") for e in f["fix"]["edits"]}
    assert len(suggested) > 100 and fixes and fixes <= suggested
    check = tmp_path.parent / "suggested.Dockerfile"
    check.write_text("".join(f"FROM {tag}\n" for tag in sorted(suggested)))
    again = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none",
                        "--select", "GL301,GL302", str(check))
    assert again.findings == []


def _image(ref: str) -> dict | None:
    run = run_gpulint("image", ref, "--format", "json")
    return run.json if run.rc == 0 else None


@pytest.mark.parametrize("ref, cuda, exact", [
    # the CUDA sample images name their CUDA; the sample without a version is not described
    ("nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04", "12.5.0", True),
    ("nvcr.io/nvidia/k8s/cuda-sample:nbody-cuda11.7.1-ubuntu18.04", "11.7.1", True),
    ("nvcr.io/nvidia/k8s/cuda-sample:nbody", None, None),
    # Triton's TensorRT-LLM images lag the month's CUDA (24.07 is 12.4.1, not 12.5.1)
    ("nvcr.io/nvidia/tritonserver:24.07-trtllm-python-py3", "12.4.1", True),
    ("nvcr.io/nvidia/tritonserver:24.07-py3", "12.5.1", True),
    ("nvcr.io/nvidia/tritonserver:26.08-trtllm-python-py3", "13.1", False),
    # TensorRT and Kaldi containers share the month's CUDA
    ("nvcr.io/nvidia/tensorrt:24.05-py3", "12.4.1", True),
    ("nvcr.io/nvidia/kaldi:22.08-py3", "11.7.1", True),
    # integrated-GPU builds are not described as data-center images
    ("nvcr.io/nvidia/pytorch:24.08-py3-igpu", None, None),
    # NeMo months are built on older PyTorch months: no CUDA is claimed for them
    ("nvcr.io/nvidia/nemo:25.04.01", None, None),
])
def test_image_families_that_state_their_cuda(ref, cuda, exact):
    found = _image(ref)
    assert (found["cuda"], found["cuda_exact"]) == (cuda, exact) if cuda else found is None
