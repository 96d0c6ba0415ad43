"""Docker Compose checks (GL9xx): how a service asks for GPUs, and the images it runs.

Compose gives a service GPUs through a device reservation
(`deploy.resources.reservations.devices`), the `gpus` attribute (Compose 2.30+), or
`runtime: nvidia`. The schema errors quoted here are those of `docker compose config`
(Compose 2.40.3); values that depend on a variable the `.env` beside the file does not
set are not judged, and for the GPU request itself GL916 says so. A reservation block
indented to the wrong level is found in `placement`.
"""

from __future__ import annotations

import re

from gpulint.common.containers import (
    cdi_problem,
    is_cdi_device,
    limited_gpus_note,
    runtime_problem,
    visible_devices_problem,
    visible_devices_span,
    visible_devices_unreadable,
)
from gpulint.common.imagetags import image_tag_findings
from gpulint.kinds.compose.facts import (
    GPU_DRIVERS,
    Service,
    device_requests,
    env_file,
    environment,
    extended,
    image,
    is_gpu_device,
    requests_gpus,
    resources,
    runtime,
    services,
    substitute,
    value_of,
)
from gpulint.kinds.compose.placement import misplaced_reservations, reindent
from gpulint.knowledge.images import cuda_image
from gpulint.model import Document, Edit, Fix, Node, Span, sequence
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding, related

KINDS = ("compose",)


def _label(service: Service) -> str:
    return f"service `{service.name}`"


def _gpu_devices(service: Service, where: str = "reservations") -> list[Node]:
    return [item for item in device_requests(service, where) if is_gpu_device(item)]


def _first_key(item: Node) -> Span:
    """Where a finding about a whole device entry points: its first key."""
    first = next(iter(item.value.values()), None) if item.is_map else None
    return first.key_span if first is not None and first.key_span else item.span


def _source(doc: Document, node: Node) -> str:
    """A value as written in the file."""
    return doc.text[slice(*doc.index.offsets(node.span))]


def _line_bounds(doc: Document, node: Node) -> tuple[int, int]:
    """Offsets of the whole lines a block node (its key included) covers."""
    index = doc.index
    first = (node.key_span or node.span).line
    start = index.starts[first - 1]
    end_line = node.span.end_line
    end = index.starts[end_line] if end_line < index.line_count else len(doc.text)
    return start, end


# ---------------------------------------------------------------- GL901 devices in limits


@check("GL001", kinds=KINDS)
def duplicate_keys(doc: Document, ctx: Context):
    """A key written twice in one mapping: compose-go decodes with go-yaml v3, which
    refuses it, so `docker compose` reads nothing of the file."""
    if doc.templated:
        return
    name = doc.path.rsplit("/", 1)[-1]
    for dup in doc.cache.get("yaml.duplicates", ()):
        yield finding(
            doc, "GL001", dup.second,
            f"mapping key \"{dup.key}\" already defined at line {dup.first.line}: docker compose "
            f"refuses the file (\"failed to parse {name}: line {dup.second.line}: mapping key "
            f"\"{dup.key}\" already defined at line {dup.first.line}\")",
            related=[related(doc, dup.first, f"`{dup.key}` first defined here")])


@check("GL901", kinds=KINDS)
def gpu_devices_in_limits(doc: Document, ctx: Context):
    seen = set()
    for service in services(doc):
        yield from _kubernetes_style(doc, service, seen)
        limits = resources(service, "limits")
        devices = limits.get("devices") if limits is not None else None
        if devices is None or devices.key_span in seen:
            continue
        seen.add(devices.key_span)
        yield finding(
            doc, "GL901", devices.key_span,
            f"{_label(service)} lists devices under `deploy.resources.limits`: Compose rejects "
            f"the file (`services.{service.name}.deploy.resources.limits additional properties "
            f"'devices' not allowed`); GPUs are requested under `reservations`",
            fix=_move_to_reservations(doc, service, limits, devices))


def _kubernetes_style(doc: Document, service: Service, seen: set):
    """`nvidia.com/gpu: 1` under `limits` or `reservations`, as in a Kubernetes pod."""
    for where in ("limits", "reservations"):
        block = resources(service, where)
        for key, node in block.items() if block is not None else ():
            if key.endswith("/gpu") and node.key_span not in seen:
                seen.add(node.key_span)
                yield finding(
                    doc, "GL901", node.key_span,
                    f"{_label(service)} requests GPUs Kubernetes-style (`{key}`) under "
                    f"`deploy.resources.{where}`: Compose rejects the file (`services.{service.name}"
                    f".deploy.resources.{where} additional properties '{key}' not allowed`); "
                    f"request GPUs with `reservations.devices` (`driver: nvidia`, `count`, "
                    f"`capabilities: [gpu]`)")


def _move_to_reservations(doc: Document, service: Service, limits: Node, devices: Node) -> Fix | None:
    if resources(service).get("reservations") is not None or limits.key_span is None \
            or limits.span.line == limits.key_span.line:
        return None  # a reservations block to merge into, or a flow mapping: move it by hand
    if list(limits.value) == ["devices"]:
        return Fix("rename `limits` to `reservations`",
                   (Edit(doc.abspath, *doc.index.offsets(limits.key_span), "reservations"),))
    start, end = _line_bounds(doc, devices)
    _, block_end = _line_bounds(doc, limits)
    if end > block_end or not doc.text[start:end].endswith("\n") or not doc.text[start:block_end].endswith("\n"):
        return None
    indent = doc.index.indent(limits.key_span.line)
    moved = doc.text[end:block_end] + f"{indent}reservations:\n" + doc.text[start:end]
    return Fix("move `devices` from `limits` to `reservations`", (Edit(doc.abspath, start, block_end, moved),))


# ---------------------------------------------------------------- GL902 capabilities


def _split_partner(items: list[Node], item: Node) -> Node | None:
    """The next list item when `- driver: nvidia` and `- capabilities: [gpu]` were
    written as two devices instead of one."""
    after = items[items.index(item) + 1:]
    nxt = after[0] if after else None
    return nxt if nxt is not None and nxt.is_map and nxt.get("driver") is None \
        and nxt.get("capabilities") is not None else None


@check("GL902", kinds=KINDS)
def gpu_device_capabilities(doc: Document, ctx: Context):
    seen = set()
    for service in services(doc):
        items = device_requests(service)
        for item in items:
            if not item.is_map or item.span in seen:
                continue
            seen.add(item.span)
            caps = item.get("capabilities")
            if caps is None:
                if item.get("driver") is not None and _split_partner(items, item) is not None:
                    yield finding(
                        doc, "GL902", _first_key(item),
                        f"{_label(service)}: `driver` and `capabilities` are written as two device "
                        f"entries (two `-`), so the first has no `capabilities`: Compose rejects the "
                        f"file (`...reservations.devices.{items.index(item)} missing property "
                        f"'capabilities'`); write them as one entry")
                    continue
                yield finding(
                    doc, "GL902", _first_key(item),
                    f"{_label(service)}: a device reservation without `capabilities`: Compose rejects "
                    f"the file (`...reservations.devices.{items.index(item)} missing property "
                    f"'capabilities'`); add `capabilities: [gpu]`")
            elif caps is not None and caps.is_scalar and caps.value is not None:
                yield finding(
                    doc, "GL902", caps.span,
                    f"{_label(service)}: `capabilities: {caps.str()}` is a string, not a list: "
                    f"Compose rejects the file (`...capabilities must be a array`); write "
                    f"`capabilities: [{caps.str()}]`", fix=_listify(doc, caps))


def _listify(doc: Document, caps: Node) -> Fix | None:
    text = doc.text[slice(*doc.index.offsets(caps.span))]
    if not re.fullmatch(r"[\"']?[a-z0-9_]+[\"']?", text):
        return None
    return Fix(f"write `[{text}]`", (Edit(doc.abspath, *doc.index.offsets(caps.span), f"[{text}]"),))


# ---------------------------------------------------------------- GL903, GL904 count and device_ids


@check("GL903", kinds=KINDS)
def gpu_count_and_ids(doc: Document, ctx: Context):
    seen = set()
    for service in services(doc):
        for item in _gpu_devices(service):
            count, ids = item.get("count"), item.get("device_ids")
            if count is None or ids is None or count.key_span in seen:
                continue
            seen.add(count.key_span)
            yield finding(
                doc, "GL903", count.key_span,
                f"{_label(service)}: a device reservation with both `count` and `device_ids`: "
                f"Compose 2.30 and later reject the file (`\"count\" and \"device_ids\" attributes "
                f"are exclusive`), and older releases pass it to the Engine, which refuses the "
                f"container (`cannot set both Count and DeviceIDs on device request`); keep one")


_COUNT = lazy(r"all|-?\d+", re.IGNORECASE)


@check("GL904", kinds=KINDS)
def gpu_device_value_type(doc: Document, ctx: Context):
    seen = set()
    for service in services(doc):
        for item in _gpu_devices(service):
            if item.span in seen:
                continue
            seen.add(item.span)
            ids = item.get("device_ids")
            numbers = [i for i in sequence(ids) if i.tag == "int"]
            if numbers:
                edits = tuple(Edit(doc.abspath, *doc.index.offsets(i.span), f'"{_source(doc, i)}"')
                              for i in numbers)
                yield finding(
                    doc, "GL904", numbers[0].span,
                    f"{_label(service)}: `device_ids` holds numbers: Compose rejects the file "
                    f"(`...device_ids.{sequence(ids).index(numbers[0])} must be a string`); quote "
                    f"them", fix=Fix("quote the device IDs", edits))
            count = item.get("count")
            if count is None or not count.is_scalar or count.tag == "int":
                continue
            value = value_of(doc, count)
            if value is not None and not _COUNT.fullmatch(value.strip()):
                yield finding(
                    doc, "GL904", count.span,
                    f"{_label(service)}: `count: {count.str()}` is neither a number nor `all`: "
                    f"Compose rejects the file (`invalid value \"{value}\", the only value allowed "
                    f"is 'all' or a number`)")


# ---------------------------------------------------------------- GL905 neither count nor device_ids


@check("GL905", kinds=KINDS)
def gpu_reservation_without_count(doc: Document, ctx: Context):
    seen = set()
    for service in services(doc):
        if any(item.is_map and item.get("capabilities") is None for item in device_requests(service)):
            continue  # a device without capabilities is GL902's: the file does not load at all
        for item in _gpu_devices(service):
            if item.get("count") is not None or item.get("device_ids") is not None or item.span in seen:
                continue
            seen.add(item.span)
            yield finding(
                doc, "GL905", _first_key(item),
                f"{_label(service)}: a GPU reservation with neither `count` nor `device_ids`: "
                f"Compose 2.30 and later read it as every GPU, but older Compose releases pass no "
                f"count, and Docker Engine 27.3 and later then give the container no GPU "
                f"(`NVIDIA_VISIBLE_DEVICES=void`); state `count: all` (or a number)")


# ---------------------------------------------------------------- GL906 gpus attribute


@check("GL906", kinds=KINDS)
def gpus_attribute(doc: Document, ctx: Context):
    for service in services(doc):
        node = service.get("gpus")
        if node is None:
            continue
        problem = _gpus_problem(doc, service, node)
        if problem is not None:
            yield finding(doc, "GL906", node.span, severity="error", message=f"{_label(service)}: {problem}")
            continue
        if node.is_scalar and value_of(doc, node) is None:
            continue  # a variable the `.env` does not set: GL916 says so
        # The list form came with Compose 2.30 (compose-go's schema); the string `all` only with
        # Compose 2.33.0 (compose-go v2.4.8): 2.30 to 2.32 answer `gpus must be a list`.
        if node.is_scalar:
            written = node.str()
            form = "`gpus: all`" if written == "all" else f"`gpus: {_source(doc, node)}` (`all` after interpolation)"
            needs = ("Compose 2.33.0 or later (2.30 to 2.32 reject it: "
                     f"`services.{service.name}.gpus must be a list`; older releases: "
                     f"`Additional property gpus is not allowed`)")
        else:
            form, needs = "the `gpus` list", (
                "Compose 2.30 or later (older releases reject it: "
                "`Additional property gpus is not allowed`)")
        yield finding(
            doc, "GL906", node.key_span,
            f"{_label(service)} uses {form}, which needs {needs}; "
            f"`deploy.resources.reservations.devices` works with every Compose v2 release")


def _gpus_problem(doc: Document, service: Service, node: Node) -> str | None:
    """Why Compose rejects a `gpus` value: not a string (a number, `true`, empty, a
    mapping), or a string other than `all` after interpolation; None when it takes it
    or the value depends on a variable the `.env` does not set."""
    if node.is_seq:
        return None
    if node.is_map or node.tag != "str":
        shown = ("a `gpus` mapping" if node.is_map else "`gpus` without a value" if node.value is None
                 else f"`gpus: {_source(doc, node)}`")
        return (f"{shown}: the attribute takes `all` or a list of device requests; Compose rejects "
                f"the file (`services.{service.name}.gpus must be a string`)")
    value = value_of(doc, node)
    if value is None or value == "all":
        return None
    shown = f"`gpus: {_source(doc, node)}`" + (f" (`{value}` after interpolation)" if value != node.str() else "")
    return (f"{shown}: the attribute takes `all` (in lowercase) or a list of device requests; Compose "
            f"rejects the file (`services.{service.name}.gpus value must be 'all'`)")


# ---------------------------------------------------------------- GL916 unset variables


@check("GL916", kinds=KINDS)
def gpu_request_from_unset_variable(doc: Document, ctx: Context):
    seen = set()
    for service in services(doc):
        gpus = service.get("gpus")
        values = [("gpus", gpus, lambda v, s=service.name: None if v == "all" else f"services.{s}.gpus value must be 'all'")]
        values += [("count", item.get("count"), _count_refusal) for item in _gpu_devices(service)]
        for field, node, refusal in values:
            if node is None or node.tag != "str" or node.span in seen:
                continue
            seen.add(node.span)
            found = _unset_variables(doc, service, field, node, refusal)
            if found is not None:
                yield found


def _count_refusal(value: str) -> str | None:
    if _COUNT.fullmatch(value.strip()):
        return None
    return f"invalid value \"{value}\", the only value allowed is 'all' or a number"


def _unset_variables(doc: Document, service: Service, field: str, node: Node, refusal):
    """A GPU request value that depends on variables the `.env` beside the file does not
    set, with what Compose does where they are unset on the deploying machine too."""
    value, unknown = substitute(node.str(), env_file(doc))
    if not unknown:
        return None
    names = list(dict.fromkeys(name for name, _ in unknown))
    it = "it is" if len(names) == 1 else "they are"
    required = [name for name, op in unknown if op.endswith("?")]
    if required:
        outcome = f"where {it} unset, Compose refuses the file (`required variable {required[0]} is missing a value`)"
    elif any(op == "nested" for _, op in unknown):
        outcome = "its default names another variable, which gpulint does not follow"
    else:
        refused = refusal(value)
        outcome = (f"where {it} unset, Compose substitutes an empty string (`The \"{names[0]}\" variable is not "
                   f"set. Defaulting to a blank string.`) and " + (f"rejects the file (`{refused}`)" if refused
                                                                  else f"reads `{field}: {value}`"))
    shown = ", ".join(f"`{name}`" for name in names)
    return finding(
        doc, "GL916", node.span,
        f"{_label(service)}: `{field}: {_source(doc, node)}` depends on {shown}, which the `.env` beside the "
        f"file does not set, so gpulint cannot tell what Compose reads; {outcome}; set it in `.env` or "
        f"give it a default (`${{{names[0]}:-all}}`)")


# ---------------------------------------------------------------- GL907 device driver


@check("GL907", kinds=KINDS)
def gpu_driver_unknown(doc: Document, ctx: Context):
    seen = set()
    for service in services(doc):
        for where in ("reservations", "limits"):
            for item in device_requests(service, where):
                driver = item.get("driver") if item.is_map else None
                name = value_of(doc, driver)
                if name is None or name.strip().lower() in GPU_DRIVERS or driver.span in seen:
                    continue
                seen.add(driver.span)
                meant = f" (`{name}` names a runtime or tool, not a device driver)" \
                    if name.lower().startswith("nvidia") else ""
                yield finding(
                    doc, "GL907", driver.span,
                    f"{_label(service)}: device driver `{name}` is not one Docker has{meant}: the "
                    f"container does not start (`could not select device driver \"{name}\" with "
                    f"capabilities: [[gpu]]`); use `driver: nvidia` (or `cdi`, or leave it out)")


# ---------------------------------------------------------------- GL908 runtime


@check("GL908", kinds=KINDS)
def runtime_undefined(doc: Document, ctx: Context):
    for service in services(doc):
        found = runtime(doc, service)
        if found is None or found[1] is None:
            continue
        problem = runtime_problem(ctx, found[1])
        if problem is not None:
            severity, message, related = problem
            yield finding(doc, "GL908", found[0].span, f"{_label(service)}: {message}",
                          severity=severity, related=related)


# ---------------------------------------------------------------- GL909 service-level devices


@check("GL909", kinds=KINDS)
def gpu_request_in_service_devices(doc: Document, ctx: Context):
    for service in services(doc):
        for i, item in enumerate(sequence(service.get("devices"))):
            if item.is_map and any(item.get(k) is not None for k in ("driver", "capabilities", "count",
                                                                      "device_ids")):
                yield finding(
                    doc, "GL909", _first_key(item),
                    f"{_label(service)}: a GPU request under the service's `devices`, which maps host "
                    f"device files: Compose rejects the file (`service device "
                    f"services.{service.name}.devices.[{i}] is missing a mount target`); move it to "
                    f"`deploy.resources.reservations.devices`")


# ---------------------------------------------------------------- GL918 CDI device, CDI off


@check("GL918", kinds=KINDS)
def cdi_device_without_cdi(doc: Document, ctx: Context):
    for service in services(doc):
        # a CDI name among the service's devices, or a reservation for the `cdi` driver
        asked = [item for item in sequence(service.get("devices")) if is_cdi_device(value_of(doc, item))]
        asked += [item.get("driver") for item in device_requests(service)
                  if (value_of(doc, item.get("driver")) or "").strip() == "cdi"]
        problem = cdi_problem(ctx) if asked else None
        if problem is None:
            continue
        severity, message, places = problem
        for node in asked:
            yield finding(doc, "GL918", node.span, f"{_label(service)}: {message}",
                          severity=severity, related=list(places))


# ---------------------------------------------------------------- GL915 misplaced reservation


@check("GL915", kinds=KINDS)
def gpu_reservation_misplaced(doc: Document, ctx: Context):
    for item in misplaced_reservations(doc):
        if item.where == "":
            place = "is at the top level of the file"
        elif item.where == "services":
            place = f"is indented as a service of its own (`services.{item.key}`)"
        else:
            place = f"is written under `{item.where}`"
        refusal = f"Compose rejects the file (`{item.compose_says}`)" if item.compose_says else \
            f"Compose has no `{item.key}` there and rejects the file"
        yield finding(
            doc, "GL915", item.entry.key_span,
            f"`{item.key}`, which holds a GPU device request, {place}: {refusal}; it belongs "
            f"under `{item.belongs}`", fix=reindent(doc, item))


# ---------------------------------------------------------------- GL910 NVIDIA_VISIBLE_DEVICES


@check("GL910", kinds=KINDS)
def visible_devices_without_gpu(doc: Document, ctx: Context):
    for service in services(doc):
        found = runtime(doc, service)
        if requests_gpus(doc, service) or not extended(doc, service)[1] \
                or (found is not None and found[1] is None):
            continue  # a base gpulint cannot read, or a runtime set by a variable, may bring the GPUs
        for name, where, value in environment(doc, service):
            if name != "NVIDIA_VISIBLE_DEVICES" or value is None:
                continue
            problem = visible_devices_problem(ctx, value, "reserve GPUs (`deploy.resources.reservations"
                                                          ".devices`) or set `runtime: nvidia`")
            if problem is not None:
                yield finding(doc, "GL910", where, f"{_label(service)}: {problem[1]}",
                              severity=problem[0], related=problem[2])


# ---------------------------------------------------------------- GL911 Swarm


_SWARM_ONLY = ("placement", "update_config", "rollback_config", "endpoint_mode")


_STACK_NAME = lazy(r"(^|[.-])stack[.-]")


def _swarm_file(doc: Document) -> tuple[str, str | None] | None:
    """Why the file is meant for `docker stack deploy`: its name (warning), or a
    `deploy` key that only Swarm reads (info: Compose ignores it, so the file may still
    be meant for `docker compose`)."""
    if _STACK_NAME.search(doc.path.rsplit("/", 1)[-1].lower()):
        return "its name says it is a stack file", None
    for service in services(doc):
        deploy = service.get("deploy")
        for key in _SWARM_ONLY if deploy is not None and deploy.is_map else ():
            if deploy.get(key) is not None:
                return f"service `{service.name}` sets `deploy.{key}`, which only Swarm reads", "info"
    return None


@check("GL911", kinds=KINDS)
def gpu_reservation_in_stack(doc: Document, ctx: Context):
    swarm = None
    for service in services(doc):
        devices = _gpu_devices(service)
        if not devices:
            continue
        swarm = swarm or _swarm_file(doc)
        if swarm is None:
            return
        reason, severity = swarm
        yield finding(
            doc, "GL911", _first_key(devices[0]), severity=severity, message=
            f"{_label(service)} reserves GPUs with `devices` in a file "
            f"{'meant' if severity is None else 'that may be meant'} for `docker stack deploy` "
            f"({reason}): Swarm rejects it (`services.{service.name}.deploy.resources.reservations "
            f"Additional property devices is not allowed`); Swarm services get GPUs through "
            f"`generic_resources` (`discrete_resource_spec: {{kind: NVIDIA-GPU, value: 1}}`) and "
            f"`node-generic-resources` in each node's daemon.json")


# ---------------------------------------------------------------- GL912 privileged


def _limited(doc: Document, service: Service) -> str | None:
    """The GPUs a service reserves when they are fewer than all (None: all, or unknown)."""
    for item in _gpu_devices(service):
        ids = item.get("device_ids")
        if ids is not None:
            return "the GPUs it reserves"
        count = value_of(doc, item.get("count"))
        if count is not None and count.strip().isdigit():
            return f"the {count.strip()} GPU{'s' if count.strip() != '1' else ''} it reserves"
    return None


@check("GL912", kinds=KINDS)
def privileged_gpu_service(doc: Document, ctx: Context):
    for service in services(doc):
        node = service.get("privileged")
        if node is None or node.value is not True:
            continue
        limited = _limited(doc, service)
        if limited is not None:
            yield finding(doc, "GL912", node.span, f"{_label(service)} is privileged: "
                          f"{limited_gpus_note(limited)}")


# ---------------------------------------------------------------- images


@check("GL301", "GL302", kinds=KINDS)
def service_image_tags(doc: Document, ctx: Context):
    seen = set()
    for service in services(doc):
        found = image(doc, service)
        if found is None or found[0].span in seen or service.get("build") is not None:
            continue  # with `build`, `image` names what is built, not what is pulled
        seen.add(found[0].span)
        node, ref = found
        written = node.str()
        shown = f"`{written}` (`{ref}` after interpolation)" if written != ref else None
        platform = value_of(doc, service.get("platform"))
        yield from image_tag_findings(doc, ref, node.span, editable=written == ref, shown=shown,
                                      platform=platform if platform and "$" not in platform else None)


@check("GL512", kinds=KINDS)
def devel_image_in_service(doc: Document, ctx: Context):
    for service in services(doc):
        found = image(doc, service)
        cuda = cuda_image(found[1]) if found is not None else None
        if cuda is None or not cuda.is_devel or cuda.family != "nvidia-cuda" \
                or service.get("build") is not None:
            continue
        yield finding(
            doc, "GL512", found[0].span,
            f"{_label(service)} runs the CUDA devel image `{found[1]}`: it carries the compiler, "
            f"headers and static libraries (gigabytes to pull) that running an application does "
            f"not need; use the `runtime` (or `cudnn-runtime`) flavour of the same tag unless the "
            f"service really compiles CUDA code")


# ---------------------------------------------------------------- GL920 device list values


@check("GL920", kinds=KINDS)
def visible_devices_unreadable_value(doc: Document, ctx: Context):
    for service in services(doc):
        env = service.get("environment")
        if env is None:
            continue
        entries = []
        if env.is_map:
            entries = [(name, value, value.str() if value.is_scalar and value.value is not None else None)
                       for name, value in env.items()]
        for item in sequence(env):
            name, eq, raw = (item.str() or "").partition("=")
            entries.append((name.strip(), item, raw if eq else None))
        for name, node, raw in entries:
            if raw is None or "$" in raw:
                continue  # a value interpolated from elsewhere is judged where it is set
            problem = visible_devices_unreadable(name, raw)
            if problem is not None:
                severity, message, start, end = problem
                yield finding(doc, "GL920", visible_devices_span(doc, node.span, raw, start, end),
                              f"{_label(service)}: {message}", severity=severity)


@check("GL920", kinds=KINDS)
def device_ids_unreadable(doc: Document, ctx: Context):
    """Docker hands a reservation's `device_ids` to the NVIDIA runtime as NVIDIA_VISIBLE_DEVICES
    (moby daemon/nvidia_linux.go setNvidiaGPUs: the IDs joined with commas)."""
    seen = set()
    for service in services(doc):
        for item in _gpu_devices(service):
            driver = item.get("driver")
            if item.span in seen or driver is not None and str(driver.value).strip().lower() != "nvidia":
                continue
            seen.add(item.span)
            for entry in sequence(item.get("device_ids")):
                text = entry.str() if entry.tag == "str" else None
                if not text or "$" in text:
                    continue  # numbers are GL904's; an interpolated ID is judged where it is set
                problem = visible_devices_unreadable(
                    "NVIDIA_VISIBLE_DEVICES", text,
                    f"`device_ids` entry `{text}` (Docker hands the IDs to the NVIDIA runtime as "
                    f"`NVIDIA_VISIBLE_DEVICES`)")
                if problem is not None:
                    severity, message, start, end = problem
                    yield finding(doc, "GL920", visible_devices_span(doc, entry.span, text, start, end),
                                  f"{_label(service)}: {message}", severity=severity)
