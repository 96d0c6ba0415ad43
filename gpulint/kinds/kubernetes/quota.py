"""GL518: GPU entries of a ResourceQuota that the quota never counts.

Kubernetes charges a pod's extended resources to a quota only as `requests.<name>`
(pkg/quota/v1/evaluator/core/pods.go podComputeUsageHelper: "only quota objects in format
of requests.resourceName is allowed for extended resource"). A `hard` entry written as the
bare name (`nvidia.com/gpu`) or as `limits.nvidia.com/gpu` is accepted by the API server but
never used: its `used` stays absent, and no pod is refused for GPUs.
"""

from __future__ import annotations

from gpulint.kinds.kubernetes.facts import (
    is_device_plugin_resource,
    is_kustomize_patch,
    objects,
)
from gpulint.model import Document
from gpulint.registry import Context, check, finding

REQUESTS = "requests."
LIMITS = "limits."
# objects that hold a ResourceQuota's spec, and where: the core object, and the quota a
# Kubeflow Profile creates for its namespace
_QUOTA_SPECS = {"ResourceQuota": ("spec",), "Profile": ("spec", "resourceQuotaSpec")}


@check("GL518", kinds=("kubernetes",))
def quota_gpu_not_counted(doc: Document, ctx: Context):
    if is_kustomize_patch(doc, ctx):
        return
    for obj, kind in objects(doc):
        where = _QUOTA_SPECS.get(kind or "")
        hard = obj.get(*where, "hard") if where else None
        if hard is None or not hard.is_map:
            continue
        keys = {key for key, _ in hard.items()}
        for key, node in hard.items():
            name = key[len(LIMITS):] if key.startswith(LIMITS) else key
            if not is_device_plugin_resource(name) or REQUESTS + name in keys:
                continue
            yield finding(doc, "GL518", node.key_span or node.span,
                          f"quota entry `{key}` is never counted: Kubernetes charges a pod's `{name}` to a quota "
                          f"only as `{REQUESTS}{name}`, so this limit is accepted but never enforced (the quota's "
                          f"`used` never lists it) and pods get GPUs beyond it; write `{REQUESTS}{name}`")
