"""What CUDA gpulint gives images versioned by a release table: NGC frameworks beyond
PyTorch/TensorFlow/Triton, serving images (TGI, vLLM, SGLang, Ray) and Jetson (L4T) images."""

from __future__ import annotations

import pytest
from conftest import run_gpulint


def _image(ref: str, *args: str) -> dict | None:
    run = run_gpulint("image", ref, *args, "--format", "json")
    return run.json if run.rc in (0, 1) and run.out else None


@pytest.mark.parametrize("ref, cuda, exact, family", [
    # frameworks on the month's CUDA
    ("nvcr.io/nvidia/paddlepaddle:24.05-py3", "12.4.1", True, "ngc"),
    ("nvcr.io/nvidia/dgl:23.07-py3", "12.1.1", True, "ngc"),
    ("nvcr.io/nvidia/pyg:23.11-py3", "12.3.0", True, "ngc"),
    ("nvcr.io/nvidia/cuda-dl-base:25.01-cuda12.8-devel-ubuntu24.04", "12.8.0", True, "ngc"),
    ("nvcr.io/nvidia/mxnet:24.05-py3", "12.4.1", True, "ngc"),
    # NeMo 24.05 is built on PyTorch 24.02, a month without its own row: 12.3 at least
    ("nvcr.io/nvidia/nemo:24.05", "12.3", False, "ngc"),
    # MXNet 24.06 stayed on 12.4.1 while the month moved to 12.5.0
    ("nvcr.io/nvidia/mxnet:24.06-py3", "12.4.1", True, "ngc"),
    ("nvcr.io/nvidia/tritonserver:24.06-py3", "12.5.0", True, "ngc"),
    # the SDK image is built FROM the month's minimal image
    ("nvcr.io/nvidia/tritonserver:24.07-py3-sdk", "12.5.1", True, "ngc"),
    ("nvcr.io/nvidia/tritonserver:24.07-py3-min", "12.5.1", True, "ngc"),
    # TGI: the nvidia/cuda base of the final stage at the release tag
    ("ghcr.io/huggingface/text-generation-inference:0.9.4", "11.8.0", True, "serving"),
    ("ghcr.io/huggingface/text-generation-inference:2.4.1", "12.1.0", True, "serving"),
    ("ghcr.io/huggingface/text-generation-inference:3.3.7", "12.4.0", True, "serving"),
    # llm-d 0.0.x: the nvidia/cuda devel image its shipped stage is FROM at the release tag
    ("ghcr.io/llm-d/llm-d:0.0.3", "12.5.1", True, "serving"),
    ("ghcr.io/llm-d/llm-d:0.0.8", "12.8.1", True, "serving"),
    # vLLM: the X.Y the image's start check demanded in user reports
    ("vllm/vllm-openai:v0.5.0", "12.4", True, "serving"),
    ("docker.io/vllm/vllm-openai:v0.9.0", "12.8", True, "serving"),
    ("vllm/vllm-openai:v0.14.1", "12.9", True, "serving"),
    # vLLM's release notes: v0.11.1 moved the default build to CUDA 12.9, v0.20.0 to 13.0
    ("vllm/vllm-openai:v0.11.1", "12.9", True, "serving"),
    ("vllm/vllm-openai:v0.19.1", "12.9", True, "serving"),
    ("vllm/vllm-openai:v0.20.0", "13.0", True, "serving"),
    # the Dockerfile at the v0.28.0 release commit
    ("vllm/vllm-openai:v0.28.0", "13.0", True, "serving"),
    # a `-cuXYZ` tag is the release built on nvidia/cuda of that CUDA, whichever is the default
    ("vllm/vllm-openai:v0.19.1-cu130", "13.0", True, "serving"),
    ("vllm/vllm-openai:v0.22.1-cu129", "12.9", True, "serving"),
    ("lmsysorg/sglang:v0.5.5-cu129", "12.9", True, "serving"),
    # SGLang v0.5.11 moved the default build of its images to CUDA 13.0
    ("lmsysorg/sglang:v0.5.11", "13.0", True, "serving"),
    ("lmsysorg/sglang:v0.5.11-cu129", "12.9", True, "serving"),
    ("rayproject/ray:2.9.0-py310-cu121", "12.1", True, "serving"),
    ("rayproject/ray-ml:2.9.0-py310-cu118", "11.8", True, "serving"),
    ("rayproject/ray-llm:2.52.0-py311-cu128", "12.8", True, "serving"),
    # `-gpu` aliases the release's default CUDA: 12.1 for 2.47.1, whatever the Python or architecture
    ("rayproject/ray:2.47.1-py310-gpu", "12.1", True, "serving"),
    ("rayproject/ray:2.47.1-py311-gpu-aarch64", "12.1", True, "serving"),
    # JAX-Toolbox's dated nightlies: the base of the span of dates the nightly falls in, an
    # NGC CUDA DL base (its entrypoint's driver check comes with it) or nvidia/cuda
    ("ghcr.io/nvidia/jax:maxtext-2025-10-05", "13.0", True, "ngc"),
    ("ghcr.io/nvidia/jax:jax-2024-08-01", "12.5.0", True, "serving"),
    ("ghcr.io/nvidia/jax:jax-staging-2026-07-07", "13.2.1", True, "ngc"),
    # NGC's vLLM container and months whose CUDA only its release notes state
    ("nvcr.io/nvidia/vllm:25.10-py3", "13.0.2", True, "ngc"),
    ("nvcr.io/nvidia/vllm:26.01-py3", "13.1.1", True, "ngc"),
    ("nvcr.io/nvidia/pytorch:26.05-py3", "13.2.1", True, "ngc"),
    # 25.05: the build Triton's matrix gives the TensorRT-LLM 0.21.0 image, built on the 25.05 month
    ("nvcr.io/nvidia/pytorch:25.05-py3", "12.9.0", True, "ngc"),
    ("nvcr.io/nvidia/tritonserver:25.05-py3", "12.9.0", True, "ngc"),
    # TensorRT-LLM release images: the PyTorch month its release notes name as the base
    ("nvcr.io/nvidia/tensorrt-llm/release:0.21.0", "12.9.0", True, "ngc"),
    ("nvcr.io/nvidia/tensorrt-llm/release:1.0.0", "12.9.1", True, "ngc"),
    ("nvcr.io/nvidia/tensorrt-llm/release:1.1.0", "13.0.2", True, "ngc"),
    ("nvcr.io/nvidia/tensorrt-llm/release:1.2.0", "13.1.0", True, "ngc"),
    # Triton's vLLM and TensorRT-LLM images have CUDA tables of their own (Triton's matrix)
    ("nvcr.io/nvidia/tritonserver:25.06-vllm-python-py3", "12.9.0", True, "ngc"),  # the month is 12.9.1
    ("nvcr.io/nvidia/tritonserver:25.08-vllm-python-py3", "13.0.1", True, "ngc"),  # the month is 13.0.0
    ("nvcr.io/nvidia/tritonserver:25.04-trtllm-python-py3", "12.8.1", True, "ngc"),
    ("nvcr.io/nvidia/tritonserver:26.07-trtllm-python-py3", "13.1.0", True, "ngc"),
    # months whose CUDA only NVIDIA's tag of the month's CUDA DL base names (X.Y, no patch)
    ("nvcr.io/nvidia/pytorch:25.09-py3", "13.0", True, "ngc"),
    ("nvcr.io/nvidia/tensorflow:25.11-py3", "13.0", True, "ngc"),
    ("nvcr.io/nvidia/tritonserver:24.11-py3", "12.6", True, "ngc"),
    # Triton's vLLM table keeps its own 25.11 build
    ("nvcr.io/nvidia/tritonserver:25.11-vllm-python-py3", "13.0.2", True, "ngc"),
    # a month without notes still takes the month before as a lower bound
    ("nvcr.io/nvidia/pytorch:26.07-py3", "13.3", False, "ngc"),
    ("nvcr.io/nvidia/pytorch:25.07-py3", "12.9", False, "ngc"),
    ("nvcr.io/nvidia/pytorch:26.11-py3", "13.4", False, "ngc"),
])
def test_release_tables_give_the_image_cuda(ref, cuda, exact, family):
    data = _image(ref)
    assert (data["cuda"], data["cuda_exact"], data["family"]) == (cuda, exact, family)
    assert data["start_check"] is True


@pytest.mark.parametrize("ref", [
    "nvcr.io/nvidia/jax:24.04-py3",  # no source states its CUDA per month
    "nvcr.io/nvidia/nemo:24.07",  # no source states the PyTorch month of this NeMo release
    "vllm/vllm-openai:v0.6.3",  # a release without a row is not guessed from its neighbours
    "vllm/vllm-openai:latest",
    "rayproject/ray:2.46.0-py311-gpu",  # `-gpu` aliases a `-cuXYZ` image Ray does not name per release
    "lmsysorg/sglang:latest",
    "lmsysorg/sglang:v0.5.5",  # no source ties this release's unsuffixed tag to a CUDA build
    "nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6",  # release candidates are not in the notes
    "nvcr.io/nvidia/tensorrt-llm/release:0.20.0",  # its notes name no base image
    "ghcr.io/nvidia/jax:jax-2026-07-08",  # the last span of the container history has no end
    "ghcr.io/nvidia/jax:jax-2024-07-01",  # before the first base the history lists
    "ghcr.io/nvidia/jax:maxtext",  # the latest nightly, whichever day that is
    "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.8.0",  # NIM states a minimum driver, not its CUDA
    "ghcr.io/llm-d/llm-d-cuda:v0.3.0",  # later llm-d releases were not read
    "ghcr.io/huggingface/text-generation-inference:0.6.0",  # shipped on debian, no nvidia/cuda base
    "ghcr.io/huggingface/text-generation-inference:2.0.4-rocm",
    "docker.io/huggingface/text-generation-inference:3.3.7",  # not where TGI publishes
])
def test_images_without_a_row_are_not_described(ref):
    run = run_gpulint("image", ref)
    assert run.rc == 1 and "is not an image whose CUDA gpulint knows" in run.err


def test_serving_image_is_refused_by_the_toolkit_like_nvidia_cuda():
    """vLLM's v0.5.0 image on driver 530: `unsatisfied condition: cuda>=12.4` (vllm issue 5635)."""
    run = run_gpulint("image", "vllm/vllm-openai:v0.5.0", "--driver", "530.30.02", "--gpu-class", "consumer",
                      "--format", "json")
    verdict = run.json["verdict"]
    assert (run.rc, verdict["code"], verdict["severity"]) == (1, "GL601", "error")
    assert "requirement error: unsatisfied condition: cuda>=12.4" in verdict["message"]
    ok = _image("ghcr.io/huggingface/text-generation-inference:2.4.1", "--driver", "535.104.05")
    assert ok["verdict"]["code"] is None


@pytest.mark.parametrize("ref, cuda", [
    ("nvcr.io/nvidia/l4t-cuda:12.2.12-devel", "12.2.12"),
    ("nvcr.io/nvidia/l4t-cuda:11.4.19-runtime", "11.4.19"),
    ("nvcr.io/nvidia/l4t-jetpack:r36.2.0", None),
    ("nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3", None),
    ("nvcr.io/nvidia/deepstream-l4t:6.2-samples", None),
    # jetson-containers tags name a CUDA, but of the Jetson's BSP, not of a discrete-GPU driver
    ("dustynv/pytorch:2.6-r36.4.0-cu128-24.04", None),
])
def test_jetson_images_are_named_and_never_judged_against_a_discrete_gpu_driver(ref, cuda):
    data = _image(ref, "--driver", "535.104.05")
    assert (data["family"], data["cuda"]) == ("jetson", cuda)
    assert data["verdict"]["code"] is None and data["verdict"]["message"].startswith("not judged")
    text = run_gpulint("image", ref).out
    assert "Jetson (L4T): the CUDA driver is the Jetson Linux BSP on the device" in text


def _gpu_pod(*containers: tuple[str, str]) -> str:
    """A pod whose containers (name, image) each request a GPU; the first image is on line 7."""
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {{name: a}}\nspec:\n  containers:\n{containers}"
    gpu = "  - name: {name}\n    image: {image}\n    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    return pod.format(containers="".join(gpu.format(name=n, image=i) for n, i in containers))


def test_lint_judges_serving_images_and_says_why_jetson_images_are_not_judged(lint_files):
    text = _gpu_pod(("tgi", "ghcr.io/huggingface/text-generation-inference:3.3.7"),
                    ("edge", "nvcr.io/nvidia/l4t-jetpack:r36.2.0"),
                    ("old", "ghcr.io/huggingface/text-generation-inference:2.4.1"))
    run = lint_files({"pod.yaml": text}, "--driver", "535.104.05")
    assert [(f["code"], f["line"], f["severity"]) for f in run.findings] == [
        ("GL601", 7, "warning"), ("GL605", 10, "info")]
    assert "is a Jetson (L4T) image" in run.findings[1]["message"]
    assert "cannot tell which CUDA" not in run.findings[1]["message"]


def test_dockerfile_on_a_serving_image_is_judged_by_what_its_release_is_built_on(lint_files):
    """TGI 3.3.7 ships on nvidia/cuda's base flavor, which has no nvcc; a vLLM release known only
    by its start check has contents gpulint cannot tell, so nothing is said about nvcc there."""
    files = {"Dockerfile.tgi": "FROM ghcr.io/huggingface/text-generation-inference:3.3.7\nRUN nvcc --version\n",
             "Dockerfile.vllm": "FROM vllm/vllm-openai:v0.9.0\nRUN nvcc --version\n"}
    run = lint_files(files, "--select", "GL304")
    assert [(f["path"], f["line"]) for f in run.findings] == [("Dockerfile.tgi", 2)]


@pytest.mark.parametrize("ref, demand", [
    # the toolkit's refusal, quoted from the NVIDIA_REQUIRE_CUDA of the nvidia/cuda base
    ("vllm/vllm-openai:v0.20.0", "unsatisfied condition: cuda>=13.0"),
    ("vllm/vllm-openai:v0.21.0-cu129", "unsatisfied condition: cuda>=12.9"),
    ("rayproject/ray:2.9.0-py310-cu121", "unsatisfied condition: cuda>=12.1"),
    ("nvcr.io/nvidia/vllm:26.05-py3", "needs CUDA 13.2,"),
    ("nvcr.io/nvidia/pytorch:25.05-py3", "needs CUDA 12.9,"),
    ("nvcr.io/nvidia/tensorrt-llm/release:1.1.0", "needs CUDA 13.0,"),
    ("lmsysorg/sglang:v0.5.11", "needs CUDA 13.0,"),
])
def test_newly_tabled_images_are_refused_by_a_too_old_driver(ref, demand):
    run = run_gpulint("image", ref, "--driver", "525.60.13", "--gpu-class", "consumer", "--format", "json")
    verdict = run.json["verdict"]
    assert (run.rc, verdict["code"], verdict["severity"]) == (1, "GL601", "error")
    assert demand in verdict["message"]


def test_triton_2512_needs_r580_whatever_its_notes_print():
    """Triton 25.12's notes print `requires NVIDIA Driver release 575 or later`, but its CUDA
    13.1 needs R580: on R575 a consumer GPU does not start it."""
    run = run_gpulint("image", "nvcr.io/nvidia/tritonserver:25.12-py3", "--driver", "575.57.08",
                      "--gpu-class", "consumer", "--format", "json")
    assert (run.rc, run.json["verdict"]["code"], run.json["cuda"]) == (1, "GL601", "13.1.0")


def test_a_gpu_image_still_unknown_is_said_not_judged_once(lint_files):
    text = _gpu_pod(("head", "rayproject/ray:2.46.0-py311-gpu"),
                    ("worker", "rayproject/ray:2.46.0-py311-gpu"),
                    ("pinned", "rayproject/ray:2.46.0-py311-cu121"))
    run = lint_files({"pod.yaml": text}, "--driver", "535.104.05")
    assert [(f["code"], f["line"]) for f in run.findings] == [("GL605", 7)]
    assert "not judged" in run.findings[0]["message"]


def test_lint_judges_newly_tabled_images_and_still_names_the_untabled_one(lint_files):
    """A pod's TensorRT-LLM release and SGLang v0.5.11 images are judged against driver 535;
    SGLang's v0.5.5 tag, tied by no source to a CUDA build, is said not judged."""
    text = _gpu_pod(("trtllm", "nvcr.io/nvidia/tensorrt-llm/release:1.0.0"),
                    ("sglang", "lmsysorg/sglang:v0.5.11"),
                    ("old", "lmsysorg/sglang:v0.5.5"))
    run = lint_files({"pod.yaml": text}, "--driver", "535.104.05")
    assert [(f["code"], f["line"]) for f in run.findings] == [("GL601", 7), ("GL601", 10), ("GL605", 13)]
    assert "needs CUDA 12.9" in run.findings[0]["message"]
    assert "needs CUDA 13.0" in run.findings[1]["message"]
