"""Multi-stage rules GL401-GL405, through the CLI's JSON report."""

from __future__ import annotations

import pytest

from conftest import lint_fixture


def _run(relative: str):
    run = lint_fixture(f"dockerfile/{relative}", "--failure-threshold", "none", "--preview")
    assert run.rc == 0, run.err
    return run


def _found(relative: str) -> list[tuple[str, int, int]]:
    return [a for a in _run(relative).at() if a[0].startswith("GL4")]


@pytest.mark.parametrize("relative, expected", [
    ("seed/Dockerfile", []),
    ("multistage/major.Dockerfile", [("GL401", 6, 6)]),
    ("multistage/minor.Dockerfile", [("GL401", 11, 6)]),
    ("multistage/os.Dockerfile", [("GL402", 9, 6), ("GL402", 10, 6)]),
    ("multistage/libraries.Dockerfile", [("GL403", 7, 6), ("GL403", 7, 6)]),
    ("multistage/libraries-two-copies.Dockerfile", [("GL403", 6, 6)]),  # once per library
    ("multistage/tensorrt.Dockerfile", [("GL403", 6, 6)]),
    ("multistage/not-cuda.Dockerfile", [("GL404", 6, 6)]),
    ("multistage/not-cuda-alpine.Dockerfile", [("GL402", 6, 6), ("GL404", 6, 6)]),
    ("multistage/good.Dockerfile", []),
    ("wheels/bad.Dockerfile", [("GL405", 2, 41), ("GL405", 2, 54), ("GL405", 3, 41), ("GL405", 3, 72),
                               ("GL405", 4, 18), ("GL405", 7, 35)]),
    ("wheels/good.Dockerfile", []),
    ("wheels/urls.Dockerfile", [("GL405", 3, 17), ("GL405", 4, 17)]),
])
def test_findings_and_positions(relative, expected):
    assert _found(relative) == expected


def _one(relative: str, code: str) -> dict:
    (found,) = [f for f in _run(relative).findings if f["code"] == code][:1]
    return found


def test_cuda_mismatch_severity_by_major():
    assert _one("multistage/major.Dockerfile", "GL401")["severity"] == "error"
    minor = _one("multistage/minor.Dockerfile", "GL401")
    assert minor["severity"] == "warning"
    # the builder's CUDA is found through `FROM base-${TARGETARCH}` and the ARG default
    assert "CUDA 12.8.1" in minor["message"] and "CUDA 12.4.1" in minor["message"]


def test_os_mismatch_names_glibc_and_distribution():
    messages = [f["message"] for f in _run("multistage/os.Dockerfile").findings if f["code"] == "GL402"]
    assert "newer glibc (2.39 vs 2.35)" in messages[0]
    assert "RHEL-family 9" in messages[1] and "another distribution" in messages[1]


def test_missing_library_names_the_smallest_flavor():
    messages = sorted(f["message"] for f in _run("multistage/libraries.Dockerfile").findings
                      if f["code"] == "GL403")
    assert "links cublas" in messages[0] and "`runtime` is the smallest flavor" in messages[0]
    assert "links cudnn" in messages[1] and "`cudnn-runtime` is the smallest flavor" in messages[1]
    assert not any("cufft" in m for m in messages)  # linked statically
    assert "`libcudnn.so...: cannot open shared object file`" in messages[1]
    tensorrt = _one("multistage/tensorrt.Dockerfile", "GL403")["message"]
    assert "links tensorrt (`-lnvinfer`)" in tensorrt and "`libnvinfer.so...: cannot open" in tensorrt
    assert "`tensorrt-runtime` is the smallest flavor" in tensorrt


def test_not_cuda_suggests_the_runtime_image():
    message = _one("multistage/not-cuda.Dockerfile", "GL404")["message"]
    assert "`nvidia/cuda:12.9.2-runtime-ubuntu22.04`" in message and "libcudart.so.12" in message


def test_not_cuda_keeps_the_cudnn_flavor():
    message = _one("multistage/not-cuda-alpine.Dockerfile", "GL404")["message"]
    assert "on `alpine:3.20`" in message and "`nvidia/cuda:12.9.2-cudnn-runtime-ubuntu22.04`" in message


def test_wheel_mismatch_names_both_majors():
    message = _one("wheels/bad.Dockerfile", "GL405")["message"]
    assert "`cupy-cuda11x` is built for CUDA 11" in message and "CUDA 12.9.2" in message


def test_wheel_mismatch_points_at_the_word_as_written():
    torch, mxnet = [f for f in _run("wheels/urls.Dockerfile").findings if f["code"] == "GL405"]
    assert "%2Bcu102" in torch["message"] and "PyTorch's check" in torch["message"]
    assert mxnet["message"].startswith("`mxnet-cu102==${MXNET_VERSION}` is built for CUDA 10")
    assert "PyTorch" not in mxnet["message"]
