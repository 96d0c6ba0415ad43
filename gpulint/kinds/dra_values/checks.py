"""NVIDIA DRA driver chart values judged alone: a `resourceApiVersion` (the chart renders its
DeviceClasses in it, in place of the newest version the cluster serves) in an alpha
`resource.k8s.io` version (GL480)."""

from __future__ import annotations

from gpulint.knowledge import dra
from gpulint.model import Document
from gpulint.registry import Context, check, finding


@check("GL480", kinds=("dra-driver-values",))
def resource_api_version_alpha(doc: Document, ctx: Context):
    node = doc.tree.get("resourceApiVersion") if doc.tree is not None and doc.tree.is_map else None
    version = node.value if node is not None and isinstance(node.value, str) else ""
    if version not in dra.ALPHA_VERSIONS:
        return
    minor = dra.stated_minor(ctx.options, ctx.settings)
    if minor is not None and dra.serves(version, "DeviceClass", minor):
        return  # the stated release serves it (behind `--runtime-config`)
    introduced, _, removed = dra.LIFECYCLE[version]
    if "DeviceClass" not in dra.VERSION_KINDS[version]:
        outcome = (f"`{version}` is classic DRA's and has no DeviceClass, so installing the chart fails with "
                   f"`no matches for kind \"DeviceClass\" in version \"{version}\"` on every release")
    else:
        outcome = (f"`{version}` was served only by Kubernetes 1.{introduced} to 1.{removed - 1}, with "
                   f"`--runtime-config`: elsewhere installing the chart fails with `no matches for kind "
                   f"\"DeviceClass\" in version \"{version}\"`")
    yield finding(doc, "GL480", node.span,
                  f"the chart renders its DeviceClasses in `resourceApiVersion`, and {outcome}; leave it empty "
                  f"(the chart picks the newest of `{dra.GROUP}/v1`, `v1beta2` and `v1beta1` the cluster serves)")
