"""GPU Operator custom resources: ClusterPolicy and NVIDIADriver objects judged against their
CRD's schema at the release the cluster runs (GL481, GL482), and what the operator's
controllers refuse only at run time among the objects applied together (GL485, GL486), and
a ClusterPolicy component image given in part, which the operator assembles into a broken
reference (GL517)."""

from __future__ import annotations

from gpulint.common.crd_validation import validate
from gpulint.kinds.kubernetes.facts import (
    is_kustomize_patch,
    object_name,
    objects,
    scalar_str,
)
from gpulint.knowledge import gpu_operator
from gpulint.model import Document, Node
from gpulint.registry import Context, check, finding, related

KINDS = ("ClusterPolicy", "NVIDIADriver")
GROUP = "nvidia.com/"


def operator_objects(doc: Document) -> list[tuple[Node, str, str]]:
    """(object, its kind, its version) of each ClusterPolicy and NVIDIADriver of the nvidia.com
    group (memoised: several rules ask)."""
    found = doc.cache.get("operator.objects")
    if found is None:
        found = doc.cache["operator.objects"] = []
        for obj, kind in objects(doc):
            if kind in KINDS:
                api = scalar_str(obj.get("apiVersion")) or ""
                if api.startswith(GROUP):
                    found.append((obj, kind, api[len(GROUP):]))
    return found


def _problems(doc: Document, ctx: Context):
    """(object, kind, problem, judged release) of each schema problem, worked out once for both rules."""
    def compute():
        found = operator_objects(doc)
        if not found:  # most manifests: no release to work out, no kustomization to look for
            return []
        judged = gpu_operator.judged_release(ctx.settings)
        out = []
        patch = is_kustomize_patch(doc, ctx)
        for obj, kind, version in found:
            schema = gpu_operator.crd_schema(judged.tag, kind)
            if schema is None or schema.get("x-version") != version:
                continue  # no such version served: the API server finds no kind to judge it by
            for problem in validate(obj, schema):
                if patch and "Required value" in problem.message:
                    continue  # a patch holds only what it changes
                out.append((obj, kind, problem, judged))
        return out
    if "operator.problems" not in doc.cache:
        doc.cache["operator.problems"] = compute()
    return doc.cache["operator.problems"]


def _other_releases(kind: str, field: tuple, judged: gpu_operator.Judged) -> str:
    having = gpu_operator.releases_with_field(kind, field)
    return gpu_operator.other_releases(having, judged, "the CRD", ("has", "had"))


@check("GL481", kinds=("kubernetes",))
def operator_object_invalid(doc: Document, ctx: Context):
    for obj, kind, problem, judged in _problems(doc, ctx):
        if problem.unknown:
            continue
        yield finding(doc, "GL481", problem.span,
                      f"the API server refuses this {kind} (`{problem.message}`), judged by the CRD of "
                      f"{judged.words()}")


@check("GL482", kinds=("kubernetes",))
def operator_field_unknown(doc: Document, ctx: Context):
    for obj, kind, problem, judged in _problems(doc, ctx):
        if not problem.unknown:
            continue
        yield finding(doc, "GL482", problem.span,
                      f"`{problem.path}` is no field of the {kind} CRD of {judged.words()}{problem.suggestion()}"
                      f"{_other_releases(kind, problem.field, judged)}: the API server prunes it, so the "
                      f"setting is silently lost (`kubectl apply` refuses the object with `strict decoding "
                      f"error: {problem.message}`, Helm and controllers get only a warning)")


# ---------------------------------------------------------------- objects of one file together


@check("GL485", kinds=("kubernetes",))
def second_cluster_policy(doc: Document, ctx: Context):
    """Several ClusterPolicies applied together: the operator reconciles one."""
    policies = [obj for obj, kind, _ in operator_objects(doc) if kind == "ClusterPolicy"]
    for obj in policies[1:]:
        first = policies[0]
        yield finding(doc, "GL485", obj.get("metadata", "name") or obj.get("kind"),
                      f"a second ClusterPolicy (`{object_name(obj) or 'unnamed'}`) beside "
                      f"`{object_name(first) or 'unnamed'}` (line {first.span.line}): the GPU Operator "
                      f"reconciles only one ClusterPolicy (the oldest; name breaks a tie) and sets the "
                      f"others' `status.state` to `ignored`, so this one's settings never take effect",
                      related=[related(doc, first.get("metadata", "name") or first, "the other ClusterPolicy")])


def _selector(obj) -> dict[str, str] | None:
    """The labels an NVIDIADriver selects its nodes by, as the controller reads them (no
    `nodeSelector`: every GPU node, `nvidia.com/gpu.present=true`); None when unknown."""
    node = obj.get("spec", "nodeSelector")
    if node is None or (node.is_scalar and node.value is None):
        return {"nvidia.com/gpu.present": "true"}
    if not node.is_map:
        return None
    out = {}
    for key, value in node.items():
        text = scalar_str(value)
        if text is None:
            return None  # a templated label: unknown
        out[key] = text
    return out


def _default(obj) -> bool:
    return scalar_str(obj.get("spec", "default")) == "true"


@check("GL486", kinds=("kubernetes",))
def nvidiadriver_selector_conflict(doc: Document, ctx: Context):
    """NVIDIADrivers applied together that claim the same nodes, or several defaults."""
    drivers = [obj for obj, kind, _ in operator_objects(doc) if kind == "NVIDIADriver"]
    defaults = [obj for obj in drivers if _default(obj)]
    for obj in defaults[1:]:
        names = " ".join(sorted(object_name(d) or "" for d in defaults))
        yield finding(doc, "GL486", obj.get("spec", "default"),
                      f"a second default NVIDIADriver: the operator fails every NVIDIADriver "
                      f"(`multiple default NVIDIADrivers found: [{names}]`) and installs no driver",
                      related=[related(doc, defaults[0].get("spec", "default"), "the first default")])
    seen: list = []
    for obj in drivers:
        if _default(obj):
            continue
        mine = _selector(obj)
        if mine is None:
            continue
        for other, theirs in seen:
            narrow, wide = (mine, theirs) if len(mine) >= len(theirs) else (theirs, mine)
            if all(narrow.get(key) == value for key, value in wide.items()):
                where = obj.get("spec", "nodeSelector") or obj.get("kind")
                pair = sorted((object_name(obj) or "", object_name(other) or ""))
                yield finding(doc, "GL486", where,
                              f"every node this NVIDIADriver selects ({_labels(narrow)}) is also selected by "
                              f"`{object_name(other) or 'unnamed'}` ({_labels(wide)}): the operator refuses "
                              f"both on such a node (`multiple NVIDIADrivers match the same node <node>: "
                              f"[{' '.join(pair)}]`, condition ConflictingNodeSelector) and installs no driver there",
                              related=[related(doc, other.get("spec", "nodeSelector") or other.get("kind"),
                                               "the other NVIDIADriver's selection")])
                break
        seen.append((obj, mine))


def _labels(selector: dict[str, str]) -> str:
    return ", ".join(f"`{k}={v}`" for k, v in sorted(selector.items())) or "every node"


# ---------------------------------------------------------------- component images

_IMAGE_PARTS = ("repository", "image", "version")


def _image_tables(node, path=()):
    """(path, table) of every mapping under a ClusterPolicy's spec that names an image in
    parts (`repository`, `image`, `version`): each component, and tables such as
    `driver.manager` or `operator.initContainer`; a component with `enabled: false` is
    skipped, since the operator deploys nothing for it."""
    for key, child in node.items() if node is not None and node.is_map else ():
        if not child.is_map or child.get("enabled") is not None and child.get("enabled").value is False:
            continue  # a disabled component's image is never resolved
        if any(child.get(part) is not None for part in _IMAGE_PARTS):
            yield (*path, key), child
        yield from _image_tables(child, (*path, key))


@check("GL517", kinds=("kubernetes",))
def operator_image_in_parts(doc: Document, ctx: Context):
    """The operator builds a component's image as `repository/image:version` (`@version` for a
    digest) once `repository` or `version` is set, whatever is empty; only `image` alone is
    taken as the whole reference, and with none of them it uses its own environment (OLM)."""
    if is_kustomize_patch(doc, ctx):
        return  # the base it is merged into may hold the other parts
    for obj, kind, _ in operator_objects(doc):
        if kind != "ClusterPolicy":
            continue  # the NVIDIADriver CRD gives its image parts defaults
        for path, table in _image_tables(obj.get("spec")):
            parts = {part: scalar_str(table.get(part)) or "" for part in _IMAGE_PARTS}
            if not (parts["repository"] or parts["version"]) or all(parts.values()):
                continue
            missing = [part for part in _IMAGE_PARTS if not parts[part]]
            built = f"{parts['repository']}/{parts['image']}" + (
                "@" if parts["version"].startswith("sha256:") else ":") + parts["version"]
            given = next(part for part in ("version", "repository", "image") if parts[part])
            yield finding(doc, "GL517", table.get(given).span,
                          f"`spec.{'.'.join(path)}` sets {', '.join(f'`{p}`' for p in _IMAGE_PARTS if parts[p])} "
                          f"but not {', '.join(f'`{p}`' for p in missing)}: the operator then builds the image "
                          f"`{built}` from the parts as written (it falls back to its own default image only "
                          f"when `repository`, `image` and `version` are all unset), and the pods fail with "
                          f"`InvalidImageName`; set all three, or none")
