"""Dockerfile check of the device lists an image's ENV sets (GL920): NVIDIA_VISIBLE_DEVICES
and CUDA_VISIBLE_DEVICES values their readers cannot read."""

from __future__ import annotations

from gpulint.common.containers import (
    VISIBLE_DEVICES_NAMES,
    visible_devices_span,
    visible_devices_unreadable,
)
from gpulint.kinds.dockerfile.facts import facts
from gpulint.model import Document
from gpulint.registry import Context, check, finding


@check("GL920", kinds=("dockerfile",))
def visible_devices_unreadable_env(doc: Document, ctx: Context):
    for sf in facts(doc).stages:
        for env in sf.assignments:
            if env.name not in VISIBLE_DEVICES_NAMES or "$" in env.written:
                continue  # a value from an ARG is set at build time
            problem = visible_devices_unreadable(env.name, env.written)
            if problem is not None:
                severity, message, start, end = problem
                yield finding(doc, "GL920", visible_devices_span(doc, env.span, env.written, start, end),
                              message, severity=severity)
