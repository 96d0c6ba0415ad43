"""NVIDIA_DRIVER_CAPABILITIES: which driver libraries the NVIDIA runtime mounts into a
container, and the signs that a container uses what a capability brings.

The runtime mounts only the libraries of the capabilities the container's environment lists
(nvidia-container-toolkit internal/config/image/capabilities.go); `nvidia/cuda` images set
`compute,utility`, and Docker's `nvidia` device driver replaces the value with the NVIDIA
capabilities a device request names (moby daemon/nvidia_linux.go setNvidiaGPUs).
"""

from __future__ import annotations

import re

from gpulint.regex import lazy

# NVENC/NVDEC: the FFmpeg codecs and hardware decoders, the Video Codec SDK and its libraries.
VIDEO_USE = lazy(r"nvenc|nvdec|cuvid|nv-codec-headers|nvcodec|libnvidia-encode|"
                 r"video[-_]codec[-_]sdk|-hwaccel[\s=]+['\"]?(cuda|nvdec)\b", re.I)
GRAPHICS_USE = lazy(r"libnvidia-gl|10_nvidia\.json|nvidia_icd\.json|"
                    r"__GLX_VENDOR_LIBRARY_NAME=nvidia|libEGL_nvidia|nvidia_layers\.json")
# what the runtime mounts when the variable is unset, and what `nvidia/cuda` images set
DEFAULT_CAPABILITIES = frozenset({"compute", "utility"})
ALL_CAPABILITIES = frozenset({"compute", "compat32", "display", "graphics", "ngx", "utility", "video"})
# The NVIDIA driver capabilities Docker's `nvidia` device driver recognises among a device
# request's capabilities (moby daemon/nvidia_linux.go allNvidiaCaps).
DOCKER_CAPABILITIES = ("compute", "compat32", "graphics", "utility", "video", "display")


def capabilities(value: str) -> set[str]:
    """The capabilities a NVIDIA_DRIVER_CAPABILITIES value names (`all`: every one)."""
    named = {c.strip().lower() for c in value.split(",") if c.strip()}
    return set(ALL_CAPABILITIES) if "all" in named else named


class Effective:
    """The capabilities a GPU container runs with, and where they come from."""

    __slots__ = ("names", "source")

    def __init__(self, names: set[str], source: str) -> None:
        self.names = names
        self.source = source  # "request", "environment" or "image"

    @property
    def written(self) -> str:
        order = [c for c in ("compute", "utility", "graphics", "video", "display", "compat32", "ngx") if c in self.names]
        return ",".join(order)


def effective_capabilities(requested, env_value: str | None, image: str | None) -> Effective | None:
    """The capabilities of a GPU container: those a Docker device request names (`requested`,
    its capabilities), else the container's NVIDIA_DRIVER_CAPABILITIES (`env_value`), else an
    `nvidia/cuda` image's `compute,utility`. None where they are not known: another image may
    set any value, and an image without the variable that sets CUDA_VERSION gets them all.
    On Jetson the runtime mounts what its CSV files list, whatever the capabilities."""
    from gpulint.knowledge.images import cuda_image, jetson_image

    named = {c.strip().lower() for c in requested or ()} & set(DOCKER_CAPABILITIES)
    if named:
        return Effective(named, "request")
    if image and jetson_image(image) is not None:
        return None
    if env_value is not None:
        return Effective(capabilities(env_value), "environment")
    found = cuda_image(image) if image else None
    if found is not None and found.family == "nvidia-cuda":
        return Effective(set(DEFAULT_CAPABILITIES), "image")
    return None


def video_use(words) -> str | None:
    """The first sign of NVENC/NVDEC in the words of a container's command (the whole word
    that holds it: `h264_nvenc`, or `-hwaccel cuda`)."""
    text = " ".join(words)
    match = VIDEO_USE.search(text)
    if match is None:
        return None
    if " " in match.group(0):
        return match.group(0)
    start = text.rfind(" ", 0, match.start()) + 1
    end = text.find(" ", match.end())
    return text[start:end if end >= 0 else len(text)]


def video_without_capability(words, decide):
    """(the NVENC/NVDEC use, the capabilities, where they are decided) for a GPU container
    whose command (`words`) uses video while its capabilities leave `video` out; `decide()`
    gives (Effective, where) or None, and is asked only when the command uses video."""
    used = video_use(words)
    found = decide() if used is not None else None
    if found is None or "video" in found[0].names:
        return None
    return used, found[0], found[1]


def without_video_message(what: str, used: str, effective: Effective, fix: str) -> str:
    """What a container that encodes or decodes video on the GPU without `video` meets."""
    source = {"request": "Docker sets exactly the NVIDIA capabilities its GPU request names",
              "environment": "set on the container",
              "image": "the `nvidia/cuda` image's own value"}[effective.source]
    return (f"{what} uses NVENC/NVDEC (`{used}` in its command) but runs with NVIDIA_DRIVER_CAPABILITIES "
            f"`{effective.written}` ({source}), so the NVIDIA runtime mounts no video library: FFmpeg "
            f"stops with `Cannot load libnvidia-encode.so.1` (or `libnvcuvid.so.1`); {fix}")
