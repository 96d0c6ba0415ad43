"""devcontainer.json checks: the CUDA image tag a dev container runs (GL301, GL302), a
second CUDA the `nvidia-cuda` Feature adds to a CUDA image (GL306), the GPU flags of
`runArgs` judged as those of a `docker run` line (GL908, GL910, GL912, GL913), the device
lists `runArgs` and `containerEnv` set (GL920), and a
`runArgs` GPU request that keeps the dev container from starting without GPUs (GL606), and a
`runArgs` item that holds a flag and its value, which the docker CLI refuses (GL607).

The CUDA-vs-driver checks of the image it runs or builds (GL601, GL603, GL604) join it to
the node's driver in gpulint.crossfile.compat; the Dockerfile it builds is judged as a
Dockerfile, as one that exists to compile (no GL303).
"""

from __future__ import annotations

from gpulint.common.containers import (
    gpus_problem,
    limited_gpus,
    limited_gpus_note,
    runtime_problem,
    visible_devices_problem,
    visible_devices_span,
    visible_devices_unreadable,
)
from gpulint.common.imagetags import image_tag_findings
from gpulint.kinds.devcontainer.facts import (
    FEATURE_DEFAULT_CUDA,
    cuda_feature,
    gpu_request,
    host_gpu,
    image,
    run_args,
    run_gpus,
    string_span,
)
from gpulint.knowledge.images import cuda_image
from gpulint.model import Document
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding

KINDS = ("devcontainer",)


@check("GL301", "GL302", kinds=KINDS)
def cuda_tags(doc: Document, ctx: Context):
    node = image(doc)
    if node is None:
        return
    span, plain = string_span(doc, node)
    yield from image_tag_findings(doc, node.value.strip(), span, editable=plain)


@check("GL306", kinds=KINDS)
def second_cuda(doc: Document, ctx: Context):
    node, feature = image(doc), cuda_feature(doc)
    img = cuda_image(node.value.strip()) if node is not None and feature is not None else None
    if img is None or img.cuda_major_minor == feature.major_minor:
        return
    version = "`cudaVersion` " + (f"{feature.version}" if feature.stated else
                                  f"unset, so the Feature's default {FEATURE_DEFAULT_CUDA}")
    what = "libraries and toolkit" if feature.toolkit else "libraries"
    x, y = img.cuda_major_minor
    yield finding(doc, "GL306", feature.node.key_span or feature.node.span,
                  f"the `nvidia-cuda` Feature installs the CUDA {feature.version} {what} ({version}) "
                  f"into the CUDA {img.cuda} image `{node.value.strip()}`: two CUDAs end up in the "
                  f"container and which `libcudart` (and `nvcc`) wins depends on the linker cache and "
                  f"PATH; the image already has CUDA: remove the Feature, or set `cudaVersion` to "
                  f"\"{x}.{y}\"", severity="warning")


# ---------------------------------------------------------------- runArgs, as `docker run` reads them


@check("GL913", kinds=KINDS)
def run_args_gpus_invalid(doc: Document, ctx: Context):
    for arg in run_args(doc):
        if arg.name != "--gpus":
            continue
        if arg.value is None:
            yield finding(doc, "GL913", arg.node.span,
                          "`runArgs` ends with `--gpus` and no value: it takes whatever argument follows it in "
                          "the `docker run` line the dev container tool builds, and the CLI rejects that as a "
                          "GPU request; give it a value (`\"--gpus=all\"`)")
            continue
        problem = gpus_problem(arg.value)
        if problem is None:
            continue
        severity, what = problem
        advice = ""
        if arg.value.startswith("device=") and "," in arg.value:
            # each runArgs item reaches the CLI as one argument, unquoted: the inner quotes
            # that keep the list together must be in the JSON string itself
            advice = f"; write the device list with inner quotes: `\"--gpus=\\\"{arg.value}\\\"\"`"
        elif arg.value == "0":
            advice = "; for the GPU with index 0 write `\"--gpus=device=0\"`"
        yield finding(doc, "GL913", arg.span or arg.node.span,
                      f"`runArgs` `--gpus {arg.value}`: {what}{advice}", severity=severity)


@check("GL908", kinds=KINDS)
def run_args_runtime_undefined(doc: Document, ctx: Context):
    for arg in run_args(doc):
        if arg.name != "--runtime" or arg.value is None:
            continue
        problem = runtime_problem(ctx, arg.value)
        if problem is not None:
            severity, message, related = problem
            yield finding(doc, "GL908", arg.span or arg.node.span, f"`runArgs`: {message}",
                          severity=severity, related=related)


def _environment(doc: Document):
    """(name, value, span) of the variables `runArgs` (`-e`, `--env`) and `containerEnv` set."""
    for arg in run_args(doc):
        if arg.name in ("-e", "--env") and arg.value is not None and "=" in arg.value:
            name, _, value = arg.value.partition("=")
            yield name, value, arg.span or arg.node.span
    env = doc.tree.get("containerEnv") if doc.tree is not None else None
    for name, node in env.items() if env is not None and env.is_map else ():
        if node.tag == "str":
            yield name, node.value, string_span(doc, node)[0]


@check("GL910", kinds=KINDS)
def run_args_visible_devices(doc: Document, ctx: Context):
    if gpu_request(doc) is not None or any(arg.name == "--runtime" for arg in run_args(doc)):
        return
    for name, value, span in _environment(doc):
        if name != "NVIDIA_VISIBLE_DEVICES":
            continue
        problem = visible_devices_problem(ctx, value, "add `\"--gpus=all\"` to `runArgs` or "
                                                      "`\"hostRequirements\": {\"gpu\": \"optional\"}`")
        if problem is not None:
            yield finding(doc, "GL910", span, f"the dev container: {problem[1]}", severity=problem[0],
                          related=problem[2])


@check("GL920", kinds=KINDS)
def visible_devices_unreadable_env(doc: Document, ctx: Context):
    for name, value, span in _environment(doc):
        problem = visible_devices_unreadable(name, value)
        if problem is not None:
            severity, message, start, end = problem
            yield finding(doc, "GL920", visible_devices_span(doc, span, value, start, end),
                          f"the dev container: {message}", severity=severity)


@check("GL912", kinds=KINDS)
def run_args_privileged_gpu(doc: Document, ctx: Context):
    args = run_args(doc)
    privileged = [arg for arg in args if arg.name == "--privileged" and arg.value in (None, "true")]
    limited = limited_gpus(arg.value or "" for arg in args if arg.name == "--gpus") if privileged else None
    if limited is not None:
        yield finding(doc, "GL912", privileged[0].node.span,
                      f"the dev container runs with `--privileged`: {limited_gpus_note(limited)}")


@check("GL606", kinds=KINDS)
def gpus_in_run_args(doc: Document, ctx: Context):
    arg = run_gpus(doc)
    if arg is None or arg.name != "--gpus":
        return
    host = host_gpu(doc)
    fails = ("Docker refuses to start the container where it has no NVIDIA GPU support (`could not select "
             "device driver \"\" with capabilities: [[gpu]]`), on a laptop without one or in a GPU-less "
             "Codespace")
    if host is not None and host.value == "optional":
        yield finding(doc, "GL606", arg.node.span,
                      f"`hostRequirements.gpu` is \"optional\", but `runArgs` passes `--gpus` on every host: "
                      f"{fails}; drop `--gpus` from `runArgs`: the devcontainer CLI adds `--gpus all` itself "
                      f"where it finds GPU support", severity="warning")
    elif host is None:
        yield finding(doc, "GL606", arg.node.span,
                      f"`runArgs` asks for GPUs with `--gpus`, so {fails}; `\"hostRequirements\": {{\"gpu\": "
                      f"\"optional\"}}` makes the devcontainer CLI add `--gpus all` only where it finds GPU "
                      f"support (`true` where a GPU is required)")


# A long flag and its value in one item: the docker CLI (pflag) takes everything after `--`
# up to an `=` as the flag's name, so a space there makes a name no flag has.
_FLAG_WITH_SPACE = lazy(r"--([A-Za-z][\w-]*)\s+\S")


@check("GL607", kinds=KINDS)
def run_args_flag_and_value_in_one_item(doc: Document, ctx: Context):
    args = doc.tree.get("runArgs") if doc.tree is not None else None
    for item in args.value if args is not None and args.is_seq else ():
        text = item.value if item.tag == "str" else ""
        name = text.partition("=")[0]
        match = _FLAG_WITH_SPACE.match(name)
        if match is None:
            continue
        flag, value = match[1], text[match.end(1):].strip()
        yield finding(doc, "GL607", string_span(doc, item)[0],
                      f"`runArgs` item \"{text}\" reaches `docker run` as one argument (no shell splits "
                      f"it), so the CLI looks for a flag named `{name[2:]}` and stops with `unknown flag: "
                      f"{name}`: the dev container does not start; write \"--{flag}={value}\" or two items "
                      f"\"--{flag}\", \"{value}\"")
