"""Dynamic Resource Allocation rules (GL471-GL480): the shapes of DRA objects per
`resource.k8s.io` version, the releases that serve them, device classes and CEL
selectors against what the NVIDIA DRA driver publishes, the claims pods and containers
name, and the driver's opaque configuration.
"""

from __future__ import annotations

from gpulint.formats.template import is_placeholder
from gpulint.kinds.kubernetes.dra import (
    cel_references,
    claim_spec,
    defined_names,
    dra_api_version,
    dra_objects,
    place_in_scalar,
    requests,
    selector_expressions,
)
from gpulint.kinds.kubernetes.facts import (
    gpu_limits,
    object_kind,
    pod_specs,
    quantity,
    scalar_str,
)
from gpulint.kinds.kubernetes.support import container_label
from gpulint.knowledge import dra
from gpulint.model import Document, Node, sequence
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding, related
from gpulint.spelling import closest_key

_STRICT = "kubectl's default strict field validation rejects the object"


def _unknown_fields(node: Node, shape: dict, path: str):
    """(entry, JSON path) of each key of `node` (and below) that `shape` does not know."""
    for key, child in node.items():
        if is_placeholder(key):
            continue  # a key a template writes
        where = f"{path}.{key}" if path else key
        if key not in shape:
            yield child, where
            continue
        inner = shape[key]
        if inner is None:
            continue
        if child.is_seq:
            for number, item in enumerate(child.value):
                if item.is_map:
                    yield from _unknown_fields(item, inner, f"{where}[{number}]")
        elif child.is_map:
            yield from _unknown_fields(child, inner, where)


def _unknown_field_hint(version: str, key: str, known) -> str:
    short = version.rsplit("/", 1)[1]
    if key in dra.EXACT_FIELDS and "exactly" in known:
        return (f"in {version} a request's `{key}` goes under `exactly` (the flat shape is "
                f"v1beta1's)")
    if key == "exactly" and "deviceClassName" in known:
        return (f"`exactly` is the shape of resource.k8s.io/v1beta2 and v1; in {short} its "
                f"fields sit on the request itself (or write `apiVersion: {dra.GROUP}/v1`)")
    near = closest_key(key, known)
    return f"did you mean `{near}`?" if near else f"{short} knows {', '.join(f'`{k}`' for k in known)} there"


@check("GL471", kinds=("kubernetes",))
def dra_unknown_field(doc: Document, ctx: Context):
    for obj in dra_objects(doc):
        version, kind = dra_api_version(obj), object_kind(obj)
        shape = dra.SPECS.get(version, {}).get(kind)
        spec = obj.get("spec")
        if shape is None or spec is None or not spec.is_map:
            continue
        for entry, path in _unknown_fields(spec, shape, "spec"):
            key = path.rsplit(".", 1)[1]
            known = _shape_at(shape, path)
            yield finding(
                doc, "GL471", entry,
                f"`{key}` is not a field of {kind} {version} here: {_STRICT} (`{kind} in version "
                f"\"{version.rsplit('/', 1)[1]}\" cannot be handled as a {kind}: strict decoding error: "
                f"unknown field \"{path}\"`); {_unknown_field_hint(version, key, known)}")
    # `source` was a field up to 1.30 (the alpha API of classic DRA)
    allowed = dra.POD_CLAIM_FIELDS + (("source",) if (_fleet_minor(ctx) or 99) < 31 else ())
    for pod in pod_specs(doc):
        yield from _pod_claim_fields(doc, pod, allowed)


def _shape_at(shape: dict, path: str) -> tuple[str, ...]:
    """The fields known where the last part of `path` sits."""
    node = {"spec": shape}
    for part in path.split(".")[:-1]:
        node = node.get(part.split("[")[0]) or {}
    return tuple(node)


def _pod_claim_fields(doc: Document, pod, allowed: tuple[str, ...]):
    prefix = "spec" if pod.kind == "Pod" else "...spec"
    for number, claim in enumerate(sequence(pod.spec.get("resourceClaims"))):
        for key, entry in claim.items():
            if key in allowed or is_placeholder(key):
                continue
            hint = ("`source` was removed in Kubernetes 1.31: write its `resourceClaimTemplateName` "
                    "or `resourceClaimName` on the entry itself" if key == "source"
                    else _near(key, dra.POD_CLAIM_FIELDS))
            yield finding(doc, "GL471", entry,
                          f"`{key}` is not a field of a pod's `resourceClaims[{number}]`: {_STRICT} "
                          f"(`strict decoding error: unknown field \"{prefix}.resourceClaims[{number}].{key}\"`)"
                          f"{_without_source(claim)}; {hint}")
    for container in pod.containers:
        for number, claim in enumerate(sequence(container.node.get("resources", "claims"))):
            for key, entry in claim.items():
                if key in dra.CONTAINER_CLAIM_FIELDS or is_placeholder(key):
                    continue
                yield finding(doc, "GL471", entry,
                              f"`{key}` is not a field of {container_label(container)}'s "
                              f"`resources.claims[{number}]` (it takes `name` and `request`): {_STRICT} "
                              f"(`strict decoding error: unknown field`); {_near(key, dra.CONTAINER_CLAIM_FIELDS)}")


def _without_source(claim: Node) -> str:
    if claim.get("resourceClaimName") is not None or claim.get("resourceClaimTemplateName") is not None:
        return ""
    return (", and where validation is off the field is dropped and the entry names no claim "
            "(`must specify one of: resourceClaimName, resourceClaimTemplateName`)")


def _near(key: str, known) -> str:
    near = closest_key(key, known)
    return f"did you mean `{near}`?" if near else "the entry takes " + ", ".join(f"`{k}`" for k in known)


# ---------------------------------------------------------------- served versions

def _fleet_minor(ctx: Context) -> int | None:
    return dra.stated_minor(ctx.options, ctx.settings)


def _served(minor: int, kind: str) -> list[str]:
    """The `resource.k8s.io` versions holding `kind` that Kubernetes 1.`minor` serves, those it
    has not deprecated when there are any."""
    served = [v for v in dra.LIFECYCLE if dra.serves(v, kind, minor)]
    current = [v for v in served if dra.LIFECYCLE[v][1] is None or minor < dra.LIFECYCLE[v][1]]
    return current or served


def _words(version: str, minor: int) -> str:
    if version in dra.ALPHA_VERSIONS:
        return f"`{version}` (alpha: only with `--runtime-config`)"
    if minor < dra.ON_BY_DEFAULT_FROM:
        return f"`{version}` (off by default before 1.{dra.ON_BY_DEFAULT_FROM}: `--runtime-config`)"
    return f"`{version}`"


@check("GL472", kinds=("kubernetes",))
def dra_version_not_served(doc: Document, ctx: Context):
    minor = _fleet_minor(ctx)
    if minor is None:
        return
    for obj in dra_objects(doc):
        version, kind = dra_api_version(obj), object_kind(obj)
        lifecycle = dra.LIFECYCLE.get(version)
        if lifecycle is None:
            continue
        introduced, deprecated, removed = lifecycle
        served = _served(minor, kind)
        instead = f"; Kubernetes 1.{minor} serves {kind} in {', '.join(_words(v, minor) for v in served)}" if served else \
            f"; Kubernetes 1.{minor} serves no {kind} in any DRA API version"
        node = obj.get("apiVersion")
        if minor < introduced or (removed is not None and minor >= removed) or kind not in dra.VERSION_KINDS[version]:
            when = (f"added in 1.{introduced}" if minor < introduced else f"removed in 1.{removed}"
                    if removed is not None and minor >= removed else f"which holds no {kind}")
            yield finding(doc, "GL472", node.span,
                          f"`{version}` ({when}) is not served by Kubernetes 1.{minor}, the cluster's stated "
                          f"release: kubectl fails with `no matches for kind \"{kind}\" in "
                          f"version \"{version}\"`{instead}")
        elif deprecated is not None and minor >= deprecated:
            yield finding(doc, "GL472", node.span,
                          f"`{version}` is deprecated since Kubernetes 1.{deprecated} and removed in "
                          f"1.{removed}; the cluster runs 1.{minor}{instead}", severity="warning")


def _alpha_successor(version: str, kind: str) -> str:
    if kind not in dra.DRA_KINDS:
        return (f"classic DRA has no successor for {kind}: a DeviceClass selects the devices and a claim's "
                f"`config` carries the driver's parameters")
    if version.endswith("v1alpha3"):
        return (f"write `apiVersion: {dra.GROUP}/v1` (1.34 and later, requests under `exactly`) or "
                f"`{dra.GROUP}/v1beta1` (the same flat requests)")
    return (f"rewrite it for `{dra.GROUP}/v1`, where each of `spec.devices.requests` names a DeviceClass "
            f"(`exactly.deviceClassName`) in place of classic DRA's `resourceClassName`")


@check("GL480", kinds=("kubernetes",))
def dra_alpha_version(doc: Document, ctx: Context):
    if _fleet_minor(ctx) is not None:
        return  # GL472 judges the version against the stated release
    for obj in dra_objects(doc):
        version, kind = dra_api_version(obj), object_kind(obj)
        if version not in dra.ALPHA_VERSIONS:
            continue
        introduced, _, removed = dra.LIFECYCLE[version]
        classic = "structured parameters" if version.endswith("v1alpha3") else "classic DRA"
        yield finding(doc, "GL480", obj.get("apiVersion").span,
                      f"`{version}` ({classic}) was served only by Kubernetes 1.{introduced} to 1.{removed - 1}, "
                      f"and there only with `--runtime-config={version}=true`: from 1.{removed} kubectl fails with "
                      f"`no matches for kind \"{kind}\" in version \"{version}\"`, and the NVIDIA DRA driver "
                      f"for GPUs needs Kubernetes 1.{dra.NVIDIA_DRIVER_MIN_MINOR} or later; "
                      + _alpha_successor(version, kind)
                      + " (or state the cluster's release: `--kubernetes-version`)")


# ---------------------------------------------------------------- device classes

def _with_shared(doc: Document, ctx: Context, key: str, names) -> dict:
    """`names(documents)` (name -> (document, object), first of each) over the file and then
    the linted set: the linted set's part is worked out once per run, as every manifest asks
    for it (once per manifest, it made a large run's time grow with the square of its size)."""
    shared = ctx.memo(f"kubernetes.dra:{key}", lambda: names(ctx.of_kind("kubernetes")))
    ids = ctx.memo("kubernetes.dra:shared", lambda: {id(d) for d in ctx.of_kind("kubernetes")})
    if id(doc) in ids:
        return dict(shared)  # the caller may add to it
    out = names([doc])
    for name, found in shared.items():
        out.setdefault(name, found)
    return out


def _classes(doc: Document, ctx: Context) -> dict:
    return _with_shared(doc, ctx, "classes", lambda docs: defined_names(docs, ("DeviceClass",)))


@check("GL473", kinds=("kubernetes",))
def dra_device_class_unknown(doc: Document, ctx: Context):
    for obj in dra_objects(doc):
        for request in requests(obj):
            name = request.device_class
            if name in dra.DRIVER_CLASSES:
                yield from _class_switched_off(doc, ctx, request)
            if name is None or "$" in name or name in dra.DRIVER_CLASSES:
                continue
            classes = _classes(doc, ctx)
            if name in classes:
                continue
            outcome = (f"no device can be allocated for request `{request.name}`: the scheduler finds "
                       f"no DeviceClass `{name}` and the pod stays Pending")
            drivers = ", ".join(f"`{c}`" for c in dra.DRIVER_CLASSES)
            if dra.is_nvidia_domain(name.split(".", 1)[-1]) or "nvidia" in name.lower():
                near = closest_key(name, [*dra.DRIVER_CLASSES, *classes])
                hint = f"; did you mean `{near}`?" if near else ""
                yield finding(doc, "GL473", request.class_node.span,
                              f"deviceClassName `{name}` is not a class the NVIDIA DRA driver creates "
                              f"({drivers}) nor one the linted files define: {outcome}{hint}")
            elif classes:
                known = ", ".join(f"`{c}`" for c in sorted(classes))
                yield finding(doc, "GL473", request.class_node.span,
                              f"deviceClassName `{name}` names no DeviceClass in the linted files (they "
                              f"define {known}) and no NVIDIA DRA driver class: unless another driver "
                              f"creates it, {outcome}", severity="info")


def _class_switched_off(doc: Document, ctx: Context, request):
    """The driver's class, where every linted chart values file turns its part off."""
    group = dra.DRIVER_CLASSES[request.device_class]
    values = ctx.fact("dra-driver-values")
    if not values or any(group not in v.disabled for v in values):
        return
    yield finding(doc, "GL473", request.class_node.span,
                  f"deviceClassName `{request.device_class}` is created by the NVIDIA DRA driver's chart only "
                  f"with `resources.{group}.enabled`, which the linted chart values turn off: no device can "
                  f"be allocated for request `{request.name}` and the pod stays Pending",
                  related=[v.disabled[group] for v in values])


# ---------------------------------------------------------------- CEL selectors

_DRIVER_TEST = lazy(r"""\bdevice\s*\.\s*driver\s*==\s*(["'])([^"'\\]*)\1""")


@check("GL474", kinds=("kubernetes",))
def dra_cel_attribute_unknown(doc: Document, ctx: Context):
    for obj in dra_objects(doc):
        for node in selector_expressions(obj):
            text = scalar_str(node)
            for problem, at, lookup in _cel_problems(text):
                how = (" (a plain reference fails with CEL's \"no such key\" and aborts the allocation)"
                       if lookup else "")
                yield finding(doc, "GL474", place_in_scalar(doc, node, text, at),
                              f"{problem}, so the selector never matches an NVIDIA device{how}: "
                              f"the claim stays unallocated and its pod Pending")


def _cel_problems(text: str):
    """(what is wrong, [start, end) in the expression, whether it is a map lookup) for each
    reference to NVIDIA attributes, capacities or drivers that no NVIDIA driver publishes."""
    import re

    for ref in cel_references(text):
        if not dra.is_nvidia_domain(ref.domain):
            continue
        names = (dra.ATTRIBUTES if ref.what == "attributes" else dra.CAPACITIES).get(ref.domain)
        if names is None:
            yield (f"`device.{ref.what}[\"{ref.domain}\"]` names a domain no NVIDIA driver publishes "
                   f"{ref.what} under (`{dra.GPU_DRIVER}`, `{dra.COMPUTE_DOMAIN_DRIVER}`)"), ref.domain_at, True
            continue
        pattern = dra.CAPACITY_PATTERNS.get(ref.domain) if ref.what == "capacity" else None
        if ref.name is None or ref.name in names or (pattern and re.fullmatch(pattern, ref.name)):
            continue
        other = dra.CAPACITIES if ref.what == "attributes" else dra.ATTRIBUTES
        if ref.name in other.get(ref.domain, ()):
            where = "a capacity" if ref.what == "attributes" else "an attribute"
            yield (f"`{ref.name}` is {where} of `{ref.domain}` devices, not one of their {ref.what} "
                   f"(write `device.{'capacity' if ref.what == 'attributes' else 'attributes'}"
                   f"[\"{ref.domain}\"].{ref.name}`)"), ref.name_at, True
            continue
        near = closest_key(ref.name, names)
        hint = f" (did you mean `{near}`?)" if near else ""
        yield (f"the NVIDIA driver publishes no {ref.what[:-1] if ref.what == 'attributes' else 'capacity'} "
               f"`{ref.name}` under `{ref.domain}`{hint}"), ref.name_at, True
    for match in _DRIVER_TEST.finditer(text):
        driver = match.group(2)
        if dra.is_nvidia_domain(driver) and driver not in (dra.GPU_DRIVER, dra.COMPUTE_DOMAIN_DRIVER):
            yield (f"`device.driver == '{driver}'` names no NVIDIA DRA driver (they are "
                   f"`{dra.GPU_DRIVER}` and `{dra.COMPUTE_DOMAIN_DRIVER}`)"), match.span(2), False


# ---------------------------------------------------------------- claims of pods

@check("GL475", kinds=("kubernetes",))
def dra_container_claim_undefined(doc: Document, ctx: Context):
    for pod in pod_specs(doc):
        names = [scalar_str(c.get("name")) for c in sequence(pod.spec.get("resourceClaims"))]
        if None in names:
            continue  # a templated name may be any of them
        for container in pod.containers:
            for number, claim in enumerate(sequence(container.node.get("resources", "claims"))):
                name_node = claim.get("name")
                name = scalar_str(name_node)
                if name is None or name in names:
                    continue
                listed = (f"which lists {', '.join(f'`{n}`' for n in names)}" if names
                          else "which is empty")
                yield finding(doc, "GL475", name_node.span,
                              f"{container_label(container)} uses claim `{name}`, which the pod's "
                              f"`resourceClaims` ({listed}) does not define: the API server rejects the "
                              f"pod (`resources.claims[{number}]: Not found: \"{name}\"`: must be one "
                              f"of the names in pod.spec.resourceClaims)")


def _claim_sources(doc: Document, ctx: Context) -> tuple[dict, dict]:
    """(templates, claims): name -> (document, object) of the ResourceClaimTemplates (also
    those a ComputeDomain creates) and ResourceClaims in the file and the linted set."""
    templates = _with_shared(doc, ctx, "templates", lambda docs: defined_names(docs, ("ResourceClaimTemplate",)))
    # a template the file or a shared manifest defines wins over one a ComputeDomain creates
    for name, found in _with_shared(doc, ctx, "domains", _domain_templates).items():
        templates.setdefault(name, found)
    return templates, _with_shared(doc, ctx, "claims", lambda docs: defined_names(docs, ("ResourceClaim",)))


def _domain_templates(docs) -> dict:
    """name -> (document, ComputeDomain) of the ResourceClaimTemplates ComputeDomains create."""
    out: dict = {}
    for other in docs:
        for obj in other.tree or ():
            if object_kind(obj) == "ComputeDomain":
                name = scalar_str(obj.get("spec", "channel", "resourceClaimTemplate", "name"))
                if name:
                    out.setdefault(name, (other, obj))
    return out


def _pod_claim_source(claim: Node) -> tuple[str, Node | None, str | None]:
    """(which kind the entry names, the name node, the name)."""
    for key, kind in (("resourceClaimTemplateName", "ResourceClaimTemplate"), ("resourceClaimName", "ResourceClaim")):
        node = claim.get(key)
        if node is not None:
            return kind, node, scalar_str(node)
    return "", None, None


def _gpu_class(name: str | None, classes: dict) -> bool:
    """Whether a device class hands out NVIDIA GPUs: the driver's GPU and MIG classes, or a
    linted class whose selectors test for the GPU driver."""
    if name in dra.GPU_CLASSES:
        return True
    if name not in classes:
        return False
    return any(dra.GPU_DRIVER in (scalar_str(e) or "") for e in selector_expressions(classes[name][1]))


@check("GL476", kinds=("kubernetes",))
def dra_gpu_requested_twice(doc: Document, ctx: Context):
    for pod in pod_specs(doc):
        claims = {scalar_str(c.get("name")): c for c in sequence(pod.spec.get("resourceClaims"))}
        for container in pod.containers:
            limits = {n: v for n, v in gpu_limits(container).items()
                      if quantity(v) is None or quantity(v) > 0}
            if not limits:
                continue
            for used in sequence(container.node.get("resources", "claims")):
                source = _gpu_claim(doc, ctx, claims.get(scalar_str(used.get("name"))), scalar_str(used.get("request")))
                if source is None:
                    continue
                resource = next(iter(limits))
                yield finding(doc, "GL476", (used.get("name") or used).span,
                              f"{container_label(container)} asks for GPUs both through `{resource}` (the "
                              f"device plugin) and through claim `{scalar_str(used.get('name'))}` ({source}): "
                              f"the two allocators do not see each other's allocations, so the same GPU "
                              f"can be handed to two pods; ask through one of them",
                              related=[related(doc, limits[resource], f"`{resource}` limit")])


def _gpu_claim(doc: Document, ctx: Context, entry: Node | None, request: str | None) -> str | None:
    """Words for the GPU device class the pod's claim entry resolves to, or None."""
    if entry is None:
        return None
    kind, _, name = _pod_claim_source(entry)
    templates, claims = _claim_sources(doc, ctx)
    found = (templates if kind == "ResourceClaimTemplate" else claims).get(name)
    if found is None or object_kind(found[1]) == "ComputeDomain":
        return None
    classes = _classes(doc, ctx)
    for req in requests(found[1]):
        if (request is None or req.name == request) and _gpu_class(req.device_class, classes):
            return f"{object_kind(found[1])} `{name}`, device class `{req.device_class}`"
    return None


@check("GL477", kinds=("kubernetes",))
def dra_claim_source_missing(doc: Document, ctx: Context):
    if doc.templated:
        return
    for pod in pod_specs(doc):
        for claim in sequence(pod.spec.get("resourceClaims")):
            kind, node, name = _pod_claim_source(claim)
            if name is None or "$" in name:
                continue
            templates, claims = _claim_sources(doc, ctx)
            defined = templates if kind == "ResourceClaimTemplate" else claims
            if not defined or name in defined:
                continue  # no such objects linted: they are created elsewhere
            known = ", ".join(f"`{n}`" for n in sorted(defined))
            yield finding(doc, "GL477", node.span,
                          f"{kind} `{name}` is not among the linted files (they define {known}): unless "
                          f"it is created some other way, the pod is not scheduled (`{kind.lower()}.resource.k8s.io "
                          f"\"{name}\" not found` in its events)")


# ---------------------------------------------------------------- NVIDIA opaque configuration

def _configs(obj: Node) -> list[Node]:
    """The `config[].opaque` entries of a claim or a DeviceClass."""
    holder = obj.get("spec") if object_kind(obj) == "DeviceClass" else (claim_spec(obj) or Node(None, 0)).get("devices")
    return [c.get("opaque") for c in sequence(holder.get("config") if holder is not None else None)
            if c.get("opaque") is not None and c.get("opaque").is_map]


@check("GL478", kinds=("kubernetes",))
def nvidia_opaque_config_invalid(doc: Document, ctx: Context):
    for obj in dra_objects(doc):
        for opaque in _configs(obj):
            if scalar_str(opaque.get("driver")) != dra.GPU_DRIVER:
                continue
            parameters = opaque.get("parameters")
            if parameters is None or not parameters.is_map:
                continue
            for where, message in _parameter_problems(parameters):
                yield finding(doc, "GL478", where,
                              f"{message}: the NVIDIA GPU driver decodes its configuration strictly, so "
                              f"preparing the claim fails (\"error getting opaque device configs\") and "
                              f"the pod stays in ContainerCreating; with the driver's validating webhook "
                              f"the claim is rejected when it is created")


def _parameter_problems(parameters: Node):
    version, kind = parameters.get("apiVersion"), parameters.get("kind")
    if scalar_str(version) is not None and scalar_str(version) != dra.CONFIG_API_VERSION:
        yield version.span, f"`apiVersion: {scalar_str(version)}` is not the driver's configuration API (`{dra.CONFIG_API_VERSION}`)"
        return
    shape = dra.CONFIG_KINDS.get(scalar_str(kind) or "")
    if shape is None:
        if scalar_str(kind) is not None:
            gpu_kinds = ", ".join(f"`{k}`" for k in dra.CONFIG_KINDS)
            other = (f" (`{scalar_str(kind)}` is for driver `{dra.COMPUTE_DOMAIN_DRIVER}`)"
                     if scalar_str(kind) in dra.COMPUTE_DOMAIN_CONFIG_KINDS else "")
            yield kind.span, f"`kind: {scalar_str(kind)}` is no configuration the GPU driver knows ({gpu_kinds}){other}"
        return
    for entry, path in _unknown_fields(parameters, {"apiVersion": None, "kind": None, **shape}, ""):
        key = path.rsplit(".", 1)[-1]
        yield entry, (f"`{key}` is not a field of {scalar_str(kind)} (`strict decoding error: unknown field "
                      f"\"{path}\"`; {_near(key, _shape_at(shape, 'spec.' + path))})")
    sharing = parameters.get("sharing")
    if sharing is not None and sharing.is_map:
        yield from _sharing_problems(sharing, scalar_str(kind))


def _sharing_problems(sharing: Node, kind: str):
    strategy_node = sharing.get("strategy")
    strategy = scalar_str(strategy_node)
    if strategy is not None and strategy not in dra.SHARING_STRATEGIES:
        yield strategy_node.span, (f"sharing strategy `{strategy}` is unknown (\"unknown GPU sharing strategy: "
                              f"{strategy}, supported GPU sharing strategies: TimeSlicing, MPS\")")
    interval = sharing.get("timeSlicingConfig", "interval")
    if scalar_str(interval) is not None and scalar_str(interval) not in dra.TIME_SLICE_INTERVALS:
        yield interval.span, (f"time-slice interval `{scalar_str(interval)}` is unknown (\"unknown time-slice "
                         f"interval\"; the driver takes {', '.join(dra.TIME_SLICE_INTERVALS)})")
    percentage = sharing.get("mpsConfig", "defaultActiveThreadPercentage")
    value = quantity(percentage) if percentage is not None else None
    if value is not None and not 0 <= value <= 100:
        yield percentage.span, ("`defaultActiveThreadPercentage` must lie between 0 and 100 (\"active thread "
                           "percentage must not be " + ("negative\")" if value < 0 else "greater than 100\")"))
    other = {"TimeSlicing": "mpsConfig", "MPS": "timeSlicingConfig"}.get(strategy or "")
    if other and sharing.get(other) is not None:
        yield sharing.get(other), (f"`{other}` does not go with strategy `{strategy}` (\"cannot use "
                                   f"{other[0].upper() + other[1:]} with the '{strategy}' strategy\")")


@check("GL479", kinds=("kubernetes",))
def nvidia_sharing_gate_off(doc: Document, ctx: Context):
    for obj in dra_objects(doc):
        for opaque in _configs(obj):
            strategy = opaque.get("parameters", "sharing", "strategy")
            gate = dra.SHARING_STRATEGIES.get(scalar_str(strategy) or "")
            if scalar_str(opaque.get("driver")) != dra.GPU_DRIVER or gate is None:
                continue
            values = ctx.fact("dra-driver-values")
            # only chart values that write `featureGates` (v25.8 and later) say the gate is off
            if not values or any(v.gates is None or gate in v.gates for v in values):
                continue
            yield finding(doc, "GL479", strategy.span,
                          f"sharing strategy `{scalar_str(strategy)}` needs the NVIDIA DRA driver's `{gate}` "
                          f"feature gate, which the linted chart values do not turn on: preparing the claim "
                          f"fails (`\"{scalar_str(strategy)}\" is selected as the GPU sharing strategy, but "
                          f"the \"{gate}\" feature gate is not enabled`) and the pod stays in "
                          f"ContainerCreating; set `featureGates.{gate}: true`",
                          related=[v.gates_at for v in values if v.gates_at is not None])
