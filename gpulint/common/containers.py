"""What a Docker host does with a container's GPU settings, shared by the Compose,
command-line and dev container checks: runtime names against the linted daemon.json,
the `NVIDIA_VISIBLE_DEVICES` variable, `--gpus` values as the docker CLI parses them,
and privileged containers with GPUs.
"""

from __future__ import annotations

import re

from gpulint.common.capabilities import DOCKER_CAPABILITIES
from gpulint.knowledge import dockerd_config
from gpulint.knowledge.runtimes import NOT_RUNTIMES, NVIDIA_BINARIES, is_nvidia_handler
from gpulint.model import Related, Span
from gpulint.regex import lazy

# Flags of `docker run`/`create` (and podman's and nerdctl's) that take no value; any
# other flag takes the next argument unless written `--flag=value`.
FLAGS_WITHOUT_VALUE = frozenset({
    "--rm", "--privileged", "--init", "--read-only", "--publish-all", "--detach", "--interactive",
    "--tty", "--sig-proxy", "--no-healthcheck", "--oom-kill-disable", "--help", "--quiet",
    "--disable-content-trust", "--use-api-socket", "--replace", "--rmi", "--no-hosts",
    "--env-host", "--read-only-tmpfs", "--http-proxy", "--tls-verify", "--passwd", "--no-hostname",
    "--net-host", "--null-io", "--cni", "--privileged-without-host-devices", "--rootfs",
    "--systemd-cgroup", "--all-platforms", "--remote", "-d", "-i", "-t", "-P", "-q", "--attach-stdin",
})
# the one-letter ones, which combine (`-it`, `-dit`)
SHORT_FLAGS_WITHOUT_VALUE = frozenset("ditPq")
_GPUS_KEYS = ("driver", "count", "device", "capabilities", "options")
# NVIDIA_VISIBLE_DEVICES values that select GPUs: `all`, indices, UUIDs, MIG devices
DEVICE_LIST = lazy(r"all|(\d+|GPU-[0-9a-fA-F-]+|MIG-[\w/-]+)(,(\d+|GPU-[0-9a-fA-F-]+|MIG-[\w/-]+))*$")


def selects_gpus(value: str) -> bool:
    """An `NVIDIA_VISIBLE_DEVICES` value that hands GPUs to a container (not `void`,
    `none` or empty, which opt out)."""
    return DEVICE_LIST.match(value.strip()) is not None


def _daemon_configs(ctx):
    return ctx.memo("containers.daemon-configs",
                    lambda: [c for c in ctx.fact("node-configs") if c.kind == "daemon-json"])


# A finding names at most this many of the daemon.json it searched: a project of many hosts'
# configs would otherwise repeat all of them under every finding.
SHOWN_CONFIGS = 3


def _shown(places: list[Related], what: str) -> tuple[Related, ...]:
    """The first SHOWN_CONFIGS places, the last of them saying how many more there are."""
    if len(places) <= SHOWN_CONFIGS:
        return tuple(places)
    last = places[SHOWN_CONFIGS - 1]
    more = len(places) - SHOWN_CONFIGS
    return (*places[:SHOWN_CONFIGS - 1],
            Related(last.path, last.line, last.column, f"{last.message}; {more} more {what} not listed"))


def _runtimes_place(config) -> Related:
    node = config.doc.tree.get("runtimes") if config.doc.tree is not None else None
    span = node.key_span if node is not None and node.key_span else Span.point(1, 1)
    names = ", ".join(f"`{n}`" for n in sorted(config.runtimes)) or "none"
    return Related(config.doc.path, span.line, span.column, f"daemon.json searched (runtimes: {names})")


# Docker reads CDI device names from 25.0, behind `"features": {"cdi": true}` until 28.3,
# which turns the feature on by default (shared reference runtime.md §2.2, DKR-010)
CDI_SINCE = (25, 0)
CDI_DEFAULT_SINCE = (28, 3)


# a fully qualified CDI device name: vendor/class=name (container-device-interface parser)
_CDI_NAME = lazy(r"^[A-Za-z0-9][A-Za-z0-9.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*=\S+$")


def is_cdi_device(text: str | None) -> bool:
    return text is not None and bool(_CDI_NAME.match(text.strip()))


def _cdi_feature(config) -> bool | None:
    """`features.cdi` of a daemon.json: True, False, or None when it is not set."""
    tree = config.doc.tree
    node = tree.get("features", "cdi") if tree is not None and tree.is_map else None
    return node.value if node is not None and isinstance(node.value, bool) else None


def cdi_problem(ctx) -> tuple[str, str, tuple[Related, ...]] | None:
    """(severity, message, related) for a CDI device asked of Docker when the linted
    daemon.json files leave Docker's CDI feature off for the release the nodes run (once
    per run: every file with a CDI device asks)."""
    return ctx.memo("containers.cdi-problem", lambda: _cdi_problem(ctx))


def _cdi_problem(ctx) -> tuple[str, str, tuple[Related, ...]] | None:
    configs = _daemon_configs(ctx)
    states = [_cdi_feature(c) for c in configs]
    if not configs or any(state is True for state in states):
        return None
    version = dockerd_config.fleet_release(ctx.settings)
    places = _shown([Related(c.doc.path, 1, 1, "daemon.json without `\"features\": {\"cdi\": true}`")
                     for c in configs], "daemon.json")
    refused = "dockerd answers `could not select device driver \"cdi\" with capabilities: []`"
    if any(state is False for state in states):
        return ("error", f"the linted daemon.json turns CDI off (`\"features\": {{\"cdi\": false}}`): "
                         f"{refused}; set it to true", places)
    # before 25.0 there is no CDI at all; from 28.3 on, and so for a release not stated (current
    # Docker), it is on by default
    if version is None or not CDI_SINCE <= tuple(version) < CDI_DEFAULT_SINCE:
        return None
    return ("error",
            f"a CDI device needs CDI turned on in Docker {version[0]}.{version[1]} (25.0 to 28.2 need "
            f"it; 28.3 and later turn it on by default), and no linted daemon.json does: {refused}; add "
            f"`\"features\": {{\"cdi\": true}}` to daemon.json (`nvidia-ctk runtime configure "
            f"--runtime=docker --cdi.enabled`)", places)


def runtime_problem(ctx, name: str) -> tuple[str, str, tuple[Related, ...]] | None:
    """(severity, message, related) for a runtime name Docker would not know.

    With daemon.json files among the linted ones, a name none of them defines; without,
    only the names of NVIDIA binaries, which the toolkit never registers as runtimes
    (`runtime: nvidia` is then fine: the host's daemon.json is not here to say)."""
    name = name.strip()
    if not name or "$" in name:
        return None
    # once per name and run: every service and container that names a runtime asks
    return ctx.memo(f"containers.runtime-problem:{name}", lambda: _runtime_problem(ctx, name))


def _runtime_problem(ctx, name: str) -> tuple[str, str, tuple[Related, ...]] | None:
    configs = _daemon_configs(ctx)
    # a unit's `--add-runtime` counts too where no daemon.json of its node is linted
    if any(c.defines(name) for c in ctx.fact("node-configs") if c.kind in ("daemon-json", "dockerd")):
        return None
    refused = f"Docker refuses the container (`unknown or invalid runtime name: {name}`)"
    binary = name in NVIDIA_BINARIES or name in NOT_RUNTIMES
    hint = (f"; `{name}` is an NVIDIA binary, which `nvidia-ctk runtime configure --runtime=docker` "
            f"registers as the runtime `nvidia`") if binary else ""
    if configs:
        return ("error", f"runtime `{name}` is not defined in the linted daemon.json: {refused}{hint}",
                _shown([_runtimes_place(c) for c in configs], "daemon.json searched"))
    if binary:
        return ("warning", f"runtime `{name}` names an NVIDIA binary, not a runtime: unless the host's "
                           f"daemon.json defines a runtime of that name, {refused}; the NVIDIA "
                           f"Container Toolkit registers its runtime as `nvidia`", ())
    return None


def _nvidia_default(ctx) -> bool | None:
    """Whether a linted daemon.json makes an NVIDIA runtime the default (None: none linted)."""
    return ctx.memo("containers.nvidia-default", lambda: _finds_nvidia_default(ctx))


def _finds_nvidia_default(ctx) -> bool | None:
    configs = _daemon_configs(ctx)
    if not configs:
        return None
    for config in configs:
        default = config.default_runtime
        entry = config.runtimes.get(default) if default else None
        if default and (entry.is_nvidia if entry is not None else is_nvidia_handler(default, None)):
            return True
    return False


def visible_devices_problem(ctx, value: str, advice: str) -> tuple[str, str, tuple] | None:
    """(severity, message, related) for `NVIDIA_VISIBLE_DEVICES` set on a container that
    requests no GPU: only the NVIDIA runtime reads it, so it works where that runtime is
    the host's default and is inert elsewhere."""
    if not selects_gpus(value):
        return None
    default = _nvidia_default(ctx)
    if default:
        return None  # the linted host runs every container with the NVIDIA runtime
    shown = f"`NVIDIA_VISIBLE_DEVICES={value.strip()}`"
    where = ("the linted daemon.json does not make the NVIDIA runtime the default, so" if default is False
             else "unless the NVIDIA runtime is the host's default (`default-runtime` in daemon.json),")
    return ("warning", f"{shown} without a GPU request: only the NVIDIA runtime reads the variable; "
                       f"{where} the container gets no GPU; {advice}", ())


def limited_gpus_note(limited: str) -> str:
    return (f"a privileged container sees the device files of every GPU of the host, not only "
            f"{limited}, and can use or disturb other containers' GPUs; drop privileged mode and "
            f"add only the capabilities it needs")




def capabilities_without_compute(capabilities, image: str | None = None) -> list[str]:
    """The NVIDIA driver capabilities of a device request when they leave out `compute` where
    the container needs it: Docker then sets NVIDIA_DRIVER_CAPABILITIES to exactly these, so
    the container gets no CUDA driver library (libcuda). Empty when the request names none (the
    image's own NVIDIA_DRIVER_CAPABILITIES stays) or names `compute`, and for a list without
    `video` (NVENC/NVDEC load libcuda) unless `image` is one gpulint knows to run CUDA: `[gpu,
    utility]` is how a GPU exporter asks for NVML alone."""
    caps = [c.strip().lower() for c in capabilities]
    named = [c for c in caps if c in DOCKER_CAPABILITIES]
    if not named or "compute" in named:
        return []
    if "video" in named or (image and _runs_cuda(image)):
        return named
    return []


# names of images built to run CUDA (a `-cuda`/`cu121` variant, the frameworks)
_CUDA_NAME = lazy(r"(^|[/:._-])(cuda|cu1\d{2}|pytorch|torch|tensorflow|jax|vllm|sglang|tritonserver)([/:._-]|\d|$)",
                  re.IGNORECASE)


def _runs_cuda(image: str) -> bool:
    """An image gpulint knows to run CUDA (its tables), or one whose name says it does."""
    from gpulint.knowledge.images import cuda_image, tag_cuda

    return bool(cuda_image(image) or tag_cuda(image) or _CUDA_NAME.search(image))


def without_compute_message(named: list[str], fix: str) -> str:
    """What a GPU request whose NVIDIA capabilities leave out `compute` does, and `fix`."""
    listed = ",".join(named)
    return (f"capabilities {', '.join(f'`{c}`' for c in named)} without `compute`, and the container's "
            f"driver capabilities become exactly those (Docker appends `NVIDIA_DRIVER_CAPABILITIES={listed}` "
            f"after any value of the image or the container): it gets no CUDA driver library (libcuda), which "
            f"CUDA programs (PyTorch, TensorFlow: `Found no NVIDIA driver`) and NVENC/NVDEC encoding "
            f"(`Cannot load libcuda.so.1`) need; {fix}")


def gpus_capabilities(value: str) -> list[str]:
    """The capabilities a `--gpus` value asks for (docker/cli opts/gpus.go: the `capabilities`
    field split at commas, `gpu` added; `[gpu]` without one)."""
    import csv  # only where a command line has `--gpus`: a Dockerfile run does not load it

    try:
        fields = next(csv.reader([value]), [])
    except csv.Error:
        return []
    for field in fields:
        key, eq, val = field.partition("=")
        if eq and key.strip() == "capabilities":
            return [*val.split(","), "gpu"]
    return ["gpu"]


def gpus_problem(value: str) -> tuple[str, str] | None:
    """(severity, what happens) for a `--gpus` value as the docker and nerdctl CLIs parse it
    (docker/cli opts/gpus.go): CSV fields of `key=value`, or a bare count (`all` or a number),
    each key once."""
    import csv  # only here: a run without a `--gpus` value does not pay for importing it

    try:
        fields = next(csv.reader([value]), [])
    except csv.Error:
        return None
    count = device = None
    seen: set[str] = set()
    for field in fields:
        key, eq, val = field.partition("=")
        if key in seen or (not eq and "count" in seen):
            return "error", f"the CLI rejects it (`gpu request key '{key}' can be specified only once`)"
        seen.update((key, "count") if not eq else (key,))
        if not eq:
            count = key.strip()
            if count != "all" and not count.lstrip("-").isdigit():
                return "error", (f"the CLI rejects it (`invalid count ({count}): value must be either "
                                 f"\"all\" or an integer`; older releases: `count must be an integer: "
                                 f"strconv.Atoi: parsing \"{count}\": invalid syntax`)")
            continue
        if key not in _GPUS_KEYS:
            return "error", f"the CLI rejects it (`unexpected key '{key}' in '{field}'`)"
        if key == "device":
            device = val
        if key == "count":
            count = val.strip()
    if device is not None and count is not None and count != "0":
        return "error", ("the CLI splits it at the comma into `device=...` and a count, and the container "
                         "is refused (`cannot set both Count and DeviceIDs on device request`)")
    if count == "0" and device is None:
        return "warning", "it requests zero GPUs: the container gets none (`NVIDIA_VISIBLE_DEVICES=void`)"
    return None


def limited_gpus(values) -> str | None:
    """How the first `--gpus` value that asks for particular GPUs (a count or device IDs,
    not `all`) reads in a message; None when none does."""
    for value in values:
        value = value.strip()
        if value and value != "all" and gpus_problem(value) is None \
                and not any(field.split("=")[-1] == "all" for field in value.split(",")):
            return f"the ones `--gpus {value}` selects"
    return None


# ---------------------------------------------------------------- GL920 device list values

# One entry of NVIDIA_VISIBLE_DEVICES as the toolkit and nvidia-container-cli read it
# (nvidia-container-toolkit internal/config/image/cuda_image.go devicesFromEnvvars: split at
# commas, each entry trimmed, empty entries skipped, from v1.12.0; libnvidia-container
# src/cli/common.c select_devices: `all`, a GPU UUID, a PCI bus ID, a decimal index, a MIG
# UUID or a `<gpu>:<mig>` index), or a fully qualified CDI name, which the toolkit's CDI mode
# takes as it is.
_NVIDIA_DEVICE = lazy(r"(?i:all|none|void)$|\d+$|(?i:GPU|MIG)-[\w/-]+$|\d+:\d+$"
                      r"|[0-9a-fA-F]{1,8}:[0-9a-fA-F]{1,2}:[0-9a-fA-F]{1,2}\.0$"
                      r"|[A-Za-z0-9][A-Za-z0-9.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*=\S+$")
# One entry of CUDA_VISIBLE_DEVICES as CUDA documents it: an index (a negative one ends the
# list: `-1` is how a process is kept off every GPU), a GPU UUID (CUDA takes a prefix), a MIG
# device, or the Slurm placeholder `NoDevFiles`, which hides every GPU on purpose.
_CUDA_DEVICE = lazy(r"-?\d+$|(?i:GPU|MIG)-[\w/-]*$|NoDevFiles$")
_RANGE = lazy(r"(\d+)\s*-\s*(\d+)$")
_NAMED = lazy(r"(?i:gpu|cuda|device|nvidia)\s*[:#_-]?\s*(\d+)$")
VISIBLE_DEVICES_NAMES = ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")


def _entries(value: str):
    """(entry trimmed, its start offset in value) for each comma-separated entry."""
    start = 0
    for part in value.split(","):
        stripped = part.strip()
        if stripped:
            yield stripped, start + part.index(stripped)
        start += len(part) + 1


def visible_devices_unreadable(name: str, value: str | None, shown: str | None = None
                               ) -> tuple[str, str, int, int] | None:
    """(severity, message, start, end) for a value of NVIDIA_VISIBLE_DEVICES or
    CUDA_VISIBLE_DEVICES that names no device its reader knows; start/end are offsets of
    the wrong part in `value`. None for a good value, an empty one, or one holding a
    variable or template gpulint cannot resolve. `shown`: how the message names the value
    (`NAME=value`), for a value that becomes the variable (Docker's device IDs)."""
    if name not in VISIBLE_DEVICES_NAMES or value is None or "$" in value or "{{" in value:
        return None
    nvidia = name == "NVIDIA_VISIBLE_DEVICES"
    shown = shown or f"`{name}={value}`"
    for quote in ('"', "'"):
        at = value.find(quote)
        if at >= 0:
            reader = ("the NVIDIA runtime reads a device named with the quote in it and refuses to "
                      "start the container (`nvidia-container-cli: device error: ...: unknown device`)"
                      if nvidia else "CUDA reads no device from it and the process sees no GPU")
            return ("error" if nvidia else "warning",
                    f"{shown} holds quote characters: where it is written the quotes are "
                    f"part of the value, not around it; {reader}; write the value without quotes",
                    at, len(value))
    pattern = _NVIDIA_DEVICE if nvidia else _CUDA_DEVICE
    for entry, at in _entries(value):
        if pattern.match(entry):
            if not nvidia and entry.startswith("-"):
                return None  # CUDA stops at a negative index: the rest is hidden on purpose
            continue
        return ("error" if nvidia else "warning", _unreadable_message(shown, entry, nvidia),
                at, at + len(entry))
    return None


_UNEXPANDED = lazy(r"\{[A-Za-z_][A-Za-z0-9_]*(:?[-+?][^}]*)?\}$")


def _unreadable_message(shown: str, entry: str, nvidia: bool) -> str:
    if nvidia:
        happens = (f"the NVIDIA runtime refuses to start the container (`nvidia-container-cli: device "
                   f"error: {entry}: unknown device`; in CDI mode `unresolvable CDI devices "
                   f"nvidia.com/gpu={entry}`)")
        wanted = ("comma-separated GPU indexes (`0,1`), GPU or MIG UUIDs, PCI bus IDs, `all`, "
                  "`none` or `void`")
    else:
        happens = ("CUDA makes visible only the devices listed before an entry that is not a device "
                   "index or UUID, so the process sees fewer GPUs than meant, or none (`no "
                   "CUDA-capable device is detected`)")
        wanted = "comma-separated device indexes (`0,1`) or GPU/MIG UUIDs"
    ranged = _RANGE.match(entry)
    named = _NAMED.match(entry)
    if _UNEXPANDED.match(entry):
        what = f"`{entry}` is a variable reference without its `$`, passed on as written"
    elif ranged:
        listed = ",".join(str(i) for i in range(int(ranged[1]), int(ranged[2]) + 1)) \
            if int(ranged[1]) <= int(ranged[2]) <= int(ranged[1]) + 16 else None
        what = f"`{entry}` is a range, which is not read" + (f" (list them: `{listed}`)" if listed else "")
    elif named:
        what = f"`{entry}` is a device's name, not its index (`{named[1]}`) or UUID"
    elif any(ch.isspace() for ch in entry):
        what = f"`{entry}` is separated by spaces, and only commas separate entries"
    elif ";" in entry:
        what = f"`{entry}` is not a device identifier (entries are separated by commas)"
    elif nvidia and entry.startswith("-"):
        what = (f"`{entry}` is not a device identifier (a negative index keeps CUDA off the GPUs in "
                f"`CUDA_VISIBLE_DEVICES`; the NVIDIA runtime's way to hand out no GPU is `void`)")
    else:
        what = f"`{entry}` is not a device identifier"
    return f"{shown}: {what}: {happens}; give {wanted}"


def gpus_device_ids(value: str) -> tuple[str, int] | None:
    """The `device=` list of a `--gpus` value and where it starts in the value (docker/cli
    opts/gpus.go: CSV fields; Docker passes the list on as NVIDIA_VISIBLE_DEVICES)."""
    import csv

    try:
        fields = next(csv.reader([value]), [])
    except csv.Error:
        return None
    for field in fields:
        key, eq, val = field.partition("=")
        if eq and key.strip() == "device":
            at = value.find(val)
            return val, max(at, 0)
    return None


def visible_devices_span(doc, span, value: str, start: int, end: int):
    """The span of value[start:end] inside `span`, where the value is written as it reads
    (no quotes or escapes inside it); `span` itself otherwise."""
    if span is None:
        return span
    first, last = doc.index.offsets(span)
    at = doc.text.find(value, first, last)
    if at < 0 or not value:
        return span
    return doc.index.span(at + start, at + max(end, start + 1))
