"""GL921: GPU containers that encode or decode video with NVENC/NVDEC but run without the
`video` driver capability, in Compose, `docker run` lines and pods."""

from __future__ import annotations

from conftest import FIXTURES, run_gpulint


def _found(*args: str) -> list[tuple[str, int, int]]:
    run = run_gpulint("--isolated", "--format", "json", "--select", "GL921", *args, cwd=FIXTURES / "video")
    return [(f["path"], f["line"], f["column"]) for f in run.findings]


def test_the_value_that_decides_is_the_one_pointed_at():
    assert _found(".") == [
        ("compose.yaml", 11, 29),  # the reservation's capabilities win over everything
        ("compose.yaml", 15, 9),  # the service's environment
        ("compose.yaml", 19, 12),  # the nvidia/cuda image's compute,utility
        ("pod.yaml", 12, 18),
        ("pod.yaml", 17, 14),
        ("transcode.sh", 2, 31),
        ("transcode.sh", 3, 28),
        ("transcode.sh", 4, 24),
    ]


def test_the_message_names_the_use_the_value_and_the_fix():
    run = run_gpulint("--isolated", "--format", "json", "--select", "GL921", "compose.yaml", cwd=FIXTURES / "video")
    requested, environment, image = run.findings
    assert "`-hwaccel cuda` in its command" in requested["message"]
    assert "`compute,utility` (Docker sets exactly the NVIDIA capabilities its GPU request names)" in requested["message"]
    assert "`[gpu, compute, utility, video]`" in requested["message"]
    assert "`Cannot load libnvidia-encode.so.1`" in environment["message"]
    assert "`NVIDIA_DRIVER_CAPABILITIES=compute,utility,video`" in environment["message"]
    assert "the `nvidia/cuda` image's own value" in image["message"]
    assert requested["related"][0]["line"] == 4


def test_a_value_gpulint_cannot_see_is_not_judged(lint_files):
    """An env file, envFrom or an image that may set its own value: nothing said."""
    compose = ("services:\n  built:\n    build: .\n    command: ffmpeg -c:v h264_nvenc out.mp4\n    gpus: all\n"
               "  unset:\n    image: nvidia/cuda:12.4.1-runtime-ubuntu22.04\n    environment:\n"
               "      - NVIDIA_DRIVER_CAPABILITIES\n    command: ffmpeg -c:v h264_nvenc out.mp4\n    gpus: all\n"
               "  jetson:\n    image: nvcr.io/nvidia/l4t-base:r36.2.0\n    environment:\n"
               "      NVIDIA_DRIVER_CAPABILITIES: compute\n    command: ffmpeg -c:v h264_nvenc out.mp4\n"
               "    runtime: nvidia\n")
    assert "GL921" not in lint_files({"compose.yaml": compose, "Dockerfile": "FROM ubuntu:24.04\n"}).codes()
