"""GL919: a Compose GPU reservation whose capabilities name NVIDIA driver capabilities but
not `compute`.

Docker's `nvidia` device driver (moby daemon/nvidia_linux.go setNvidiaGPUs) copies the NVIDIA
driver capabilities among a request's `capabilities` into NVIDIA_DRIVER_CAPABILITIES, and
only those: `[gpu, utility]` becomes `NVIDIA_DRIVER_CAPABILITIES=utility`, which mounts
nvidia-smi and NVML but not libcuda, whatever the image sets.
"""

from __future__ import annotations

from gpulint.common.containers import (
    capabilities_without_compute,
    without_compute_message,
)
from gpulint.kinds.compose.facts import device_requests, image, is_gpu_device, services
from gpulint.model import Document, sequence
from gpulint.registry import Context, check, finding


@check("GL919", kinds=("compose",))
def gpu_capabilities_without_compute(doc: Document, ctx: Context):
    for service in services(doc):
        for item in device_requests(service):
            caps = item.get("capabilities") if is_gpu_device(item) else None
            written = image(doc, service)
            named = capabilities_without_compute((str(c.value) for c in sequence(caps)),
                                                 written[1] if written else None)
            if not named:
                continue
            listed = ",".join(named)
            yield finding(doc, "GL919", caps.span,
                          f"service `{service.name}`: the GPU reservation names " + without_compute_message(
                              named, f"add `compute` (`[gpu, compute, {listed}]`), or keep only `[gpu]` to "
                                     f"leave the image's capabilities"))
