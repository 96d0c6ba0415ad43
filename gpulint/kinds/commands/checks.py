"""GPU container command lines (GL9xx): `docker run --gpus ...` and its kin in scripts,
Makefiles, documentation and CI files.

Only GPU command lines are judged: those that ask for GPUs (`--gpus`, an NVIDIA
`--runtime`, a CDI `--device nvidia.com/gpu=...`, `nvidia-docker`) or run a CUDA image.
Images written as shell variables are not judged. A CI job with a matrix is judged
once per combination, with its values in place (`ci`, `matrix`); the findings name the
combination (`combinations`), and GL917 says when a matrix cannot be expanded.
"""

from __future__ import annotations

from gpulint.common.capabilities import (
    effective_capabilities,
    video_without_capability,
    without_video_message,
)
from gpulint.common.containers import (
    capabilities_without_compute,
    cdi_problem,
    gpus_capabilities,
    gpus_problem,
    is_cdi_device,
    limited_gpus,
    limited_gpus_note,
    runtime_problem,
    visible_devices_problem,
    without_compute_message,
)
from gpulint.common.imagetags import image_tag_findings
from gpulint.formats.shell import Word
from gpulint.kinds.commands.combinations import per_command
from gpulint.kinds.commands.command import ContainerCommand, gpu_request, literal_image
from gpulint.kinds.commands.matrix import plain_reference
from gpulint.model import Document
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding, related

KINDS = ("commands",)
# engines whose `--gpus` takes Docker's CSV syntax (ctr's is a GPU index, podman maps it to CDI)
_DOCKER_GPUS = ("docker", "nerdctl")
# a value that documentation leaves for the reader to fill: `<N>`, `[ids]`, `GPU_IDS`
_PLACEHOLDER = lazy(r"[<>{}\[\]]|\.\.\.|^[A-Z][A-Z0-9_]*$")


def _span(doc: Document, word: Word):
    return doc.index.span(word.start, word.end)


@check("GL301", "GL302", kinds=KINDS)
@per_command
def command_image_tags(doc: Document, ctx: Context, command: ContainerCommand):
    word = literal_image(command)
    if word is None:
        return
    platform = next((f.text for f in command.flag("--platform") if f.text and "$" not in f.text), None)
    # the words of a documented command are its own: a fix could only rewrite the text;
    # a word holding a matrix value is a reference every combination shares, which no fix
    # should overwrite with one combination's image
    editable = not word.quoted and not any(use.start == word.start for use in command.matrix)
    yield from image_tag_findings(doc, word.text, _span(doc, word), editable=editable, platform=platform)


# ---------------------------------------------------------------- GL913 --gpus


@check("GL913", kinds=KINDS)
@per_command
def gpus_value_invalid(doc: Document, ctx: Context, command: ContainerCommand):
    for value in _gpus_values(command):
        problem = gpus_problem(value.text)
        if problem is None:
            continue
        severity, what = problem
        advice = _gpus_advice(value.text)
        yield finding(doc, "GL913", _span(doc, value),
                      f"{command.label} with `--gpus {value.text}`: {what}{advice}",
                      severity=severity)


@check("GL919", kinds=KINDS)
@per_command
def gpus_capabilities_without_compute(doc: Document, ctx: Context, command: ContainerCommand):
    for value in _gpus_values(command):
        if gpus_problem(value.text):
            continue  # GL913's
        named = capabilities_without_compute(gpus_capabilities(value.text),
                                             command.image.text if command.image is not None else None)
        if named:
            yield finding(doc, "GL919", _span(doc, value),
                          f"{command.label} with `--gpus {value.text}` asks for " + without_compute_message(
                              named, f"add `compute` (`--gpus '\"capabilities=compute,{','.join(named)}\"'`), "
                                     f"or leave `capabilities` out to keep the image's"))


def _gpus_values(command: ContainerCommand):
    """The literal `--gpus` values of an engine that reads Docker's CSV syntax."""
    if command.tool not in _DOCKER_GPUS:
        return
    for flag in command.flag("--gpus"):
        value = flag.value
        if value is not None and not value.expands and not _PLACEHOLDER.search(value.text):
            yield value


def _gpus_advice(value: str) -> str:
    if value.startswith("device=") and "," in value:
        return f"; quote the device list twice: `--gpus '\"{value}\"'`"
    if value == "0":
        return "; for the GPU with index 0 write `--gpus device=0`"
    if "=" not in value and "," not in value:
        return "; `--gpus` needs a value (`all`, a number, or `device=...`) before the image"
    return ""


# ---------------------------------------------------------------- GL908 --runtime


@check("GL908", kinds=KINDS)
@per_command
def command_runtime_undefined(doc: Document, ctx: Context, command: ContainerCommand):
    if command.tool not in ("docker", "nvidia-docker"):
        return  # podman and nerdctl name runtimes in their own configuration
    for flag in command.flag("--runtime"):
        if flag.value is None or flag.value.expands:
            continue
        problem = runtime_problem(ctx, flag.value.text)
        if problem is not None:
            severity, message, related = problem
            yield finding(doc, "GL908", _span(doc, flag.value), f"{command.label}: {message}",
                          severity=severity, related=related)


# ---------------------------------------------------------------- GL910 NVIDIA_VISIBLE_DEVICES


@check("GL910", kinds=KINDS)
@per_command
def command_visible_devices(doc: Document, ctx: Context, command: ContainerCommand):
    if command.tool not in ("docker", "nerdctl", "podman") or gpu_request(command) is not None \
            or command.flag("--runtime"):
        return
    for flag in command.flag("-e", "--env"):
        if flag.value is None or flag.value.expands:
            continue
        name, eq, value = flag.value.text.partition("=")
        if name != "NVIDIA_VISIBLE_DEVICES" or not eq:
            continue
        problem = visible_devices_problem(ctx, value, "add `--gpus` (or `--runtime nvidia`)")
        if problem is not None:
            yield finding(doc, "GL910", _span(doc, flag.value), f"{command.label}: {problem[1]}",
                          severity=problem[0], related=problem[2])


# ---------------------------------------------------------------- GL912 --privileged


def _limited(command: ContainerCommand) -> str | None:
    if command.tool not in _DOCKER_GPUS:
        return None
    return limited_gpus(flag.text or "" for flag in command.flag("--gpus")
                        if not (flag.value and flag.value.expands))


@check("GL912", kinds=KINDS)
@per_command
def command_privileged_gpu(doc: Document, ctx: Context, command: ContainerCommand):
    privileged = [f for f in command.flag("--privileged") if f.text in (None, "true")]
    limited = _limited(command) if privileged else None
    if limited is not None:
        yield finding(doc, "GL912", _span(doc, privileged[0].word),
                      f"{command.label} with `--privileged`: {limited_gpus_note(limited)}")


# ---------------------------------------------------------------- GL914 podman --gpus


@check("GL914", kinds=KINDS)
@per_command
def podman_gpus_flag(doc: Document, ctx: Context, command: ContainerCommand):
    if command.tool != "podman":
        return
    for flag in command.flag("--gpus"):
        yield finding(doc, "GL914", _span(doc, flag.word),
                      f"{command.label} with `--gpus`: Podman reaches GPUs through CDI, and releases that do "
                      "not map `--gpus` to CDI accept the flag and ignore it, so the container gets "
                      "no GPU; `--device nvidia.com/gpu=all` (Podman 4.1 and later, after `nvidia-ctk "
                      "cdi generate`) works with every CDI-capable release")


# ---------------------------------------------------------------- GL918 CDI device, CDI off

@check("GL918", kinds=KINDS)
@per_command
def cdi_device_without_cdi(doc: Document, ctx: Context, command: ContainerCommand):
    if command.tool != "docker":
        return  # Podman and nerdctl read CDI specs without a daemon feature
    for flag in command.flag("--device"):
        if not is_cdi_device(flag.text):
            continue
        problem = cdi_problem(ctx)
        if problem is None:
            return
        severity, message, places = problem
        yield finding(doc, "GL918", _span(doc, flag.value or flag.word),
                      f"{command.label} with `--device {flag.text}`: {message}",
                      severity=severity, related=list(places))


# ---------------------------------------------------------------- GL917 matrix not expanded

# an image that names one of these is a GPU image, whatever its tag
_GPU_IMAGE_HINTS = ("nvidia", "cuda", "pytorch")


@check("GL917", kinds=KINDS)
def matrix_not_expanded(doc: Document, ctx: Context):
    said = set()
    for command in doc.tree or ():
        matrix = command.unexpanded
        if matrix is None or id(matrix) in said:
            continue
        image = (command.image.text if command.image is not None else "").lower()
        if gpu_request(command) is None and not any(hint in image for hint in _GPU_IMAGE_HINTS):
            continue
        said.add(id(matrix))
        if matrix.left is None:
            why = f"gpulint cannot expand its matrix ({matrix.unknown})"
        elif plain_reference(matrix.left):
            why = f"in some combinations `{matrix.left}` is a value gpulint does not put in (not one plain word)"
        else:
            why = f"gpulint does not evaluate `{matrix.left}`, an expression over the matrix values"
        yield finding(doc, "GL917", matrix.node.span,
                      f"job `{command.job}`: {why}, so the words of GPU command lines and images that use it, "
                      f"such as {command.label} at line {doc.index.position(command.first_word.start)[0]}, are "
                      "not judged")


# ---------------------------------------------------------------- GL921 video without `video`


@check("GL921", kinds=KINDS)
@per_command
def command_video_capability(doc: Document, ctx: Context, command: ContainerCommand):
    if command.tool not in ("docker", "nerdctl", "podman", "nvidia-docker") or gpu_request(command) is None \
            or command.image is None or command.image not in command.words:
        return
    after = command.words[command.words.index(command.image) + 1:]
    found = video_without_capability((word.text for word in after), lambda: _effective(command))
    if found is None:
        return
    used, effective, word = found
    fix = {"request": f"add `video` to `capabilities=` (`--gpus '\"capabilities={effective.written},video\"'`)",
           "environment": f"pass `-e NVIDIA_DRIVER_CAPABILITIES={effective.written},video`",
           "image": "pass `-e NVIDIA_DRIVER_CAPABILITIES=compute,utility,video`"}[effective.source]
    first = used.split(" ")[0]
    hit = next((w for w in after if first in w.text), after[0])
    yield finding(doc, "GL921", _span(doc, word), without_video_message(command.label, used, effective, fix),
                  related=[related(doc, _span(doc, hit), "video use")])


def _effective(command: ContainerCommand):
    """(the capabilities the command's container runs with, the word that decides them)."""
    for value in _gpus_values(command):
        effective = effective_capabilities(gpus_capabilities(value.text), None, None)
        if effective is not None:
            return effective, value
    image = literal_image(command)
    for flag in reversed(command.flag("-e", "--env")):
        name, eq, value = (flag.text or "").partition("=")
        if name == "NVIDIA_DRIVER_CAPABILITIES":
            if not eq or flag.value is None or flag.value.expands:
                return None  # from the caller's environment, or the shell's
            effective = effective_capabilities((), value, image.text if image else None)
            return (effective, flag.value) if effective is not None else None
    if command.flag("--env-file") or image is None:
        return None
    effective = effective_capabilities((), None, image.text)
    return (effective, image) if effective is not None else None
