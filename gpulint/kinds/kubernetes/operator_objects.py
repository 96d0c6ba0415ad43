"""GPU Operator custom resources (GL481, GL482): ClusterPolicy and NVIDIADriver objects
judged against their CRD's schema at the release the cluster runs."""

from __future__ import annotations

from gpulint.common.crd_validation import validate
from gpulint.kinds.kubernetes.facts import is_kustomize_patch, object_kind, scalar_str
from gpulint.knowledge import gpu_operator
from gpulint.model import Document
from gpulint.registry import Context, check, finding

KINDS = ("ClusterPolicy", "NVIDIADriver")
GROUP = "nvidia.com/"


def operator_objects(doc: Document):
    """(object, its kind) of each ClusterPolicy and NVIDIADriver of the nvidia.com group."""
    for obj in doc.tree or ():
        kind = object_kind(obj)
        api = scalar_str(obj.get("apiVersion")) or ""
        if kind in KINDS and api.startswith(GROUP):
            yield obj, kind, api[len(GROUP):]


def _problems(doc: Document, ctx: Context):
    """(object, kind, problem, judged release) of each schema problem, worked out once for both rules."""
    def compute():
        judged = gpu_operator.judged_release(ctx.settings)
        out = []
        patch = is_kustomize_patch(doc)
        for obj, kind, version in operator_objects(doc):
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
