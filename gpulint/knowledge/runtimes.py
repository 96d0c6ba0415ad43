"""What gpulint knows about container runtime names: NVIDIA's runtime binaries, the
NVIDIA programs that are not OCI runtimes, and containerd shim names."""

from __future__ import annotations

import posixpath

NVIDIA_BINARIES = ("nvidia-container-runtime", "nvidia-container-runtime.cdi",
                   "nvidia-container-runtime.legacy")
# NVIDIA binaries that users put where a runtime belongs although they are not OCI
# runtimes (or no longer ship), with the runtime meant instead.
NOT_RUNTIMES = {
    "nvidia-container-runtime-hook": "nvidia-container-runtime",
    "nvidia-container-toolkit": "nvidia-container-runtime",
    "nvidia-container-cli": "nvidia-container-runtime",
    "nvidia-docker": "nvidia-container-runtime",
    "nvidia-container-runtime-experimental": "nvidia-container-runtime",
}

# OCI runtimes that add no GPUs: a runtime named for NVIDIA that runs one of these is plain
OTHER_OCI_RUNTIMES = ("runc", "crun", "youki")


def is_nvidia_handler(name: str, binary: str | None) -> bool:
    """A runtime whose binary is an NVIDIA runtime, or whose name starts with `nvidia`."""
    if binary and posixpath.basename(binary.strip()) in NVIDIA_BINARIES:
        return True
    return name.startswith("nvidia")


def is_shim_name(name: str) -> bool:
    """dockerd accepts a containerd shim name (`io.containerd.runc.v2`) as a runtime:
    a name with a dot, no slash, not starting with a dot."""
    return "." in name and "/" not in name and not name.startswith(".")
