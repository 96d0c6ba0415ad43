"""The NVIDIA driver capabilities of Compose GPU services. GL919: a GPU reservation whose
capabilities name NVIDIA driver capabilities but not `compute`. GL921: a service that encodes
or decodes video on the GPU without the `video` capability.

Docker's `nvidia` device driver (moby daemon/nvidia_linux.go setNvidiaGPUs) copies the NVIDIA
driver capabilities among a request's `capabilities` into NVIDIA_DRIVER_CAPABILITIES, and
only those: `[gpu, utility]` becomes `NVIDIA_DRIVER_CAPABILITIES=utility`, which mounts
nvidia-smi and NVML but not libcuda, whatever the image sets.
"""

from __future__ import annotations

from gpulint.common.capabilities import (
    effective_capabilities,
    video_without_capability,
    without_video_message,
)
from gpulint.common.containers import (
    capabilities_without_compute,
    without_compute_message,
)
from gpulint.kinds.compose.facts import (
    Service,
    device_requests,
    environment,
    image,
    is_gpu_device,
    requests_gpus,
    services,
)
from gpulint.model import Document, sequence
from gpulint.registry import Context, check, finding, related


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


@check("GL921", kinds=("compose",))
def video_capability_missing(doc: Document, ctx: Context):
    for service in services(doc):
        if not requests_gpus(doc, service):
            continue
        commands = [node for node in (service.get("entrypoint"), service.get("command")) if node is not None]
        found = video_without_capability((str(part.value) for node in commands
                                          for part in ([node] if node.is_scalar else sequence(node))),
                                         lambda: _effective(doc, service))
        if found is None:
            continue
        used, effective, where = found
        fix = {"request": f"add `video` to the reservation's `capabilities` (`[gpu, {effective.written.replace(',', ', ')}, video]`)",
               "environment": f"set `NVIDIA_DRIVER_CAPABILITIES={effective.written},video`",
               "image": "set `NVIDIA_DRIVER_CAPABILITIES=compute,utility,video` in `environment`"}[effective.source]
        yield finding(doc, "GL921", where.span,
                      without_video_message(f"service `{service.name}`", used, effective, fix),
                      related=[related(doc, commands[-1].span, "the command")])


def _effective(doc: Document, service: Service):
    """(the capabilities the service's GPU container runs with, the node that decides them)."""
    for item in device_requests(service):
        caps = item.get("capabilities") if is_gpu_device(item) else None
        named = [str(c.value) for c in sequence(caps)]
        effective = effective_capabilities(named, None, None)
        if effective is not None:
            return effective, caps
    written = image(doc, service)
    for name, node, value in environment(doc, service):
        if name == "NVIDIA_DRIVER_CAPABILITIES":
            effective = effective_capabilities((), value, written[1] if written else None) if value is not None else None
            return (effective, node) if effective is not None else None
    if service.get("env_file") is not None or service.get("build") is not None or written is None:
        return None  # an env file or a built image may set the capabilities
    effective = effective_capabilities((), None, written[1])
    return (effective, written[0]) if effective is not None else None
