"""Dockerfile checks (GL3xx): CUDA image tags and flavors, the driver and the
container toolkit inside images, and the NVIDIA_* environment an image bakes in.

Stage facts (root image, CUDA image, ENV, commands, packages) come from
gpulint.kinds.dockerfile.facts; image knowledge from gpulint.knowledge.images.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from gpulint.common.capabilities import (
    ALL_CAPABILITIES,
    DEFAULT_CAPABILITIES,
    GRAPHICS_USE,
    VIDEO_USE,
)
from gpulint.common.containers import selects_gpus
from gpulint.common.imagetags import tag_advice, tag_finding
from gpulint.formats.template import has_template_syntax
from gpulint.kinds.dockerfile.facts import (
    REQUIRE_CUDA,
    Hit,
    StageFacts,
    command_name,
    cuda_builds,
    cuda_variant,
    env_values,
    facts,
    first_mention,
    image_os,
    installs_toolkit,
    is_nvidia_image,
    jetson_image,
    jetson_stage,
    l4t_release,
    locate,
    not_cuda_workload,
    package_span,
    plain_image,
    run_mentions,
    stage_cuda,
    stage_text,
)
from gpulint.kinds.dockerfile.parse import expand
from gpulint.knowledge.images import parse_cuda_tag, parse_image_ref, tag_status
from gpulint.model import Document, Edit, Fix, Span
from gpulint.numbers import whole
from gpulint.regex import lazy, may_match
from gpulint.registry import Context, check, finding, related

KINDS = ("dockerfile",)


def _where(doc: Document, hit: Hit) -> Span:
    return locate(doc, hit.instruction, hit.text)


# ---------------------------------------------------------------- GL301 / GL302 tags


def _image_uses(doc: Document):
    """(written, resolved, span, instruction) for every image a FROM or COPY --from names,
    except those a template fills in."""
    df = doc.tree
    uses = [(s.image, s.resolved, s.image_span, s.from_instruction) for s in df.stages
            if s.parent is None]
    for ins in df.instructions:
        ref = ins.flags.get("from") if ins.keyword in ("COPY", "ADD") else None
        if ref and df.stage_named(ref) is None and not ref.isdigit():
            uses.append((ref, ref, locate(doc, ins, ref), ins))
    for use in uses:
        ins = use[3]
        if not (doc.templated and has_template_syntax(doc.text[ins.start:ins.end])):
            yield use


@check("GL301", "GL302", kinds=KINDS)
def cuda_tags(doc: Document, ctx: Context):
    for written, resolved, span, ins in _image_uses(doc):
        ref = parse_image_ref(resolved)
        status = tag_status(ref, _platform(doc, ins)) if ref is not None else None
        if status is None or status.status in ("supported", "unknown"):
            continue
        from_args = written != resolved
        if from_args and status.status == "never-existed" and _placeholder(doc, written, ref):
            continue
        shown = f"`{written}` (`{resolved}` with the ARG defaults)" if from_args else f"`{resolved}`"
        better = ref.with_tag(status.suggestion, status.repository) if status.suggestion else None
        advice, fix = tag_advice(doc, ref, better, span, editable=not from_args)
        yield tag_finding(doc, span, shown, status, advice, fix)


def _platform(doc: Document, ins) -> str | None:
    """The platform a FROM asks for with `--platform`, when the ARG defaults settle it
    (`$BUILDPLATFORM` and `$TARGETPLATFORM` are the builder's to choose)."""
    value = ins.flags.get("platform") if ins.keyword == "FROM" else None
    platform = expand(value, doc.tree.global_args) if value else None
    return platform if platform and "$" not in platform else None


# a variable used without an inline default (`${CUDA}`, `$CUDA`; not `${CUDA:-12.9.2}`)
_BARE_VARIABLE = lazy(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _placeholder(doc: Document, written: str, ref) -> bool:
    """An ARG default that is a placeholder meant for `--build-arg` (`notset`, empty)."""
    names = [m[1] or m[2] for m in _BARE_VARIABLE.finditer(written)]
    empty = any(not doc.tree.global_args.get(n) for n in names)
    return empty or parse_cuda_tag(ref.tag or "") is None


# ---------------------------------------------------------------- GL303 devel final stage

# Applications that compile CUDA kernels at run time and so may need the toolkit in the
# image: DeepSpeed ops, vLLM/SGLang/FlashInfer kernels, DeepGEMM, OpenAI Triton (not the
# Triton Inference Server), torch.compile, flash-attn source builds, MLX's CUDA backend
# (NVRTC with the toolkit's headers, found from CUDA_HOME: ml-explore/mlx
# mlx/backend/cuda/jit_module.cpp).
_JIT_USERS = lazy(r"\b(vllm|sglang|flashinfer|deep_gemm|deepgemm|deepspeed|flash[-_]attn|mlx|"
                        r"torch\.compile|TORCHINDUCTOR_\w+|"
                        r"triton(?![-_.]?(?:inference|server|client|sdk)))\b", re.I)
# where they show: installed or started, or their requirements copied in
_JIT_EVIDENCE = ("RUN", "ENTRYPOINT", "CMD", "COPY", "ADD", "ENV")


def dev_container(doc: Document, ctx: Context) -> bool:
    """A dev container's Dockerfile, made to compile in: in a `.devcontainer` folder, or
    the one a linted devcontainer.json builds."""
    return ".devcontainer" in PurePath(doc.abspath).parts[:-1] or \
        doc.abspath in ctx.fact("devcontainer-dockerfiles")


@check("GL303", kinds=KINDS)
def devel_final_stage(doc: Document, ctx: Context):
    final = facts(doc).final
    image = final.cuda_image if final is not None else None
    if image is None or not image.is_devel or dev_container(doc, ctx):
        return
    runtime = cuda_variant(image, "runtime")
    if runtime is None and not (image.family == "nvidia-cuda" and image.os):
        return  # NGC frameworks and OS-less tags have no runtime counterpart to name
    jit = first_mention(final.chain, _JIT_EVIDENCE, _JIT_USERS)
    builds = [h for sf in final.family for h in cuda_builds(sf)]
    where = final.stage.image_span
    shown = image.ref.raw
    target = f"`{runtime}`" if runtime else "the matching runtime image"
    if jit is not None:
        yield finding(doc, "GL303", where, f"the shipped stage runs on the devel image `{shown}`; "
                      f"`{jit.text}` compiles CUDA kernels at run time and may need the toolkit, "
                      f"so this may be deliberate (otherwise {target} is the same CUDA without "
                      f"the toolchain)",
                      severity="info", related=[related(doc, _where(doc, jit), "used here")])
    elif builds:
        line = builds[0].instruction.line
        yield finding(doc, "GL303", where, f"the shipped stage runs on the devel image `{shown}` "
                      f"and compiles CUDA code in it (line {line}); to ship less, split the build: "
                      f"compile in a devel stage and `COPY --from` the result into a final stage "
                      f"on {target} (without compiler, headers and static libraries, roughly half "
                      f"the size)", severity="info",
                      related=[related(doc, _where(doc, builds[0]), "CUDA code compiled here")])
    else:
        yield finding(doc, "GL303", where, f"the shipped stage runs on the devel image `{shown}`: "
                      f"the CUDA compiler, headers and static libraries roughly double the image "
                      f"and are only needed to build; unless the application compiles CUDA at run "
                      f"time, ship on {target}")


# ---------------------------------------------------------------- GL304 nvcc without devel


@check("GL304", kinds=KINDS)
def nvcc_in_non_devel_stage(doc: Document, ctx: Context):
    for sf in facts(doc).stages:
        image = sf.cuda_image
        if image is None and not plain_image(sf) or image is not None and (image.is_devel or not image.flavor):
            # a devel image, or a base whose contents gpulint cannot tell (a serving release
            # known only by the CUDA its start check demands has no flavor)
            continue
        hits = cuda_builds(sf)
        if not hits or installs_toolkit(sf):
            continue
        for hit in hits:
            if image is not None:
                devel = cuda_variant(image, "devel")
                advice = f"build in `{devel}` and copy the result into this stage" if devel else \
                    "build in a devel image and copy the result into this stage"
                why = f"a `{image.flavor}` image without the CUDA compiler and headers"
            else:
                advice = "build in an nvidia/cuda devel image and copy the result into this stage"
                why = "which has no CUDA toolkit, and nothing in this stage installs one"
            yield finding(doc, "GL304", _where(doc, hit),
                          f"{hit.shown} compiles CUDA code in a stage built on `{sf.image}`, "
                          f"{why}: the build fails with `nvcc: not found` or a missing "
                          f"`cuda_runtime.h`; {advice}")


# ---------------------------------------------------------------- GL307 visible devices


def _builds_cuda_base(sf: StageFacts) -> bool:
    """The image is itself a CUDA base image in the nvidia/cuda mould (sets CUDA_VERSION
    and NVIDIA_REQUIRE_CUDA), which the container toolkit expects to carry the NVIDIA_* env."""
    return "NVIDIA_REQUIRE_CUDA" in sf.env and "CUDA_VERSION" in sf.env




@check("GL307", kinds=KINDS)
def visible_devices_baked(doc: Document, ctx: Context):
    final = facts(doc).final
    env = final.env.get("NVIDIA_VISIBLE_DEVICES") if final is not None else None
    if env is None or not selects_gpus(env.value):
        return
    if _builds_cuda_base(final) or not_cuda_workload(doc) is not None or jetson_image(doc) is not None:
        return
    image = final.cuda_image
    if image is not None and image.sets_visible_devices:
        if env.value.strip() != "all":  # `all` repeats what the base image sets: nothing changes
            yield finding(doc, "GL307", env.span,
                          f"`NVIDIA_VISIBLE_DEVICES={env.value}` is baked into the shipped image: "
                          f"wherever the NVIDIA runtime is the default (or `runtimeClassName: "
                          f"nvidia`), every container of it gets these GPUs, even pods that "
                          f"requested none. The base `{final.image}` already sets `all`, so "
                          f"deleting the line exposes every GPU; set `NVIDIA_VISIBLE_DEVICES=void` "
                          f"instead (`--gpus` and the device plugin still set it at run time)")
        return
    foreign = final.known and not final.scratch and not is_nvidia_image(final.image)
    base = f" on the non-NVIDIA base `{final.image}`, which does not set it" if foreign else ""
    yield finding(doc, "GL307", env.span,
                  f"`NVIDIA_VISIBLE_DEVICES={env.value}` is baked into the shipped image{base}: "
                  f"wherever the NVIDIA runtime is the default (or `runtimeClassName: nvidia`), "
                  f"every container of it gets GPUs it never requested, bypassing Kubernetes GPU "
                  f"accounting; let `--gpus` or the device plugin set it at run time")


# ---------------------------------------------------------------- GL308 driver capabilities

def _capabilities(value: str) -> set[str]:
    return {c.strip().lower() for c in value.split(",") if c.strip()}


def _feeding_stages(doc: Document, final: StageFacts) -> list[StageFacts]:
    """The stages whose files end up in the final stage: its chain and every stage it
    (transitively) copies from."""
    all_facts = facts(doc).stages
    out, todo = [], [final]
    seen = set()
    while todo:
        sf = todo.pop()
        for member in sf.family:
            if member.stage.index in seen:
                continue
            seen.add(member.stage.index)
            out.append(member)
            for ins in member.stage.instructions:
                ref = ins.flags.get("from") if ins.keyword in ("COPY", "ADD") else None
                source = doc.tree.stage_named(ref) if ref else None
                if source is not None:
                    todo.append(all_facts[source.index])
    return out


def _uses(stages: list[StageFacts], pattern: re.Pattern) -> Hit | None:
    return first_mention((sf.stage for sf in stages), ("RUN", "COPY", "ADD", "ENV", "ENTRYPOINT", "CMD"),
                         pattern)


@check("GL308", kinds=KINDS)
def driver_capabilities(doc: Document, ctx: Context):
    final = facts(doc).final
    if final is None or final.scratch or jetson_image(doc) is not None:
        return  # on Jetson the runtime mounts what its CSV lists name, whatever the capabilities
    env = final.env.get("NVIDIA_DRIVER_CAPABILITIES")
    capabilities = _capabilities(env.value) if env is not None else DEFAULT_CAPABILITIES
    if "all" in capabilities:
        yield finding(doc, "GL308", env.span, "`NVIDIA_DRIVER_CAPABILITIES=all` mounts every "
                      "driver library (graphics, video, display, compat32, ngx) into every "
                      "container; name only what the image uses, e.g. `compute,utility`")
        return
    feeding = _feeding_stages(doc, final)
    for needed, pattern, what in (("video", VIDEO_USE, "NVENC/NVDEC video encoding or decoding"),
                                  ("graphics", GRAPHICS_USE, "OpenGL/EGL/Vulkan on the NVIDIA driver")):
        hit = _uses(feeding, pattern) if needed not in capabilities else None
        if hit is None:
            continue
        current = f"`{env.value}`" if env is not None else "unset (`compute,utility`)"
        message = (f"the image uses {what} (`{hit.text}`, line {hit.instruction.line}) but "
                   f"NVIDIA_DRIVER_CAPABILITIES is {current} in the shipped stage, so the runtime "
                   f"does not mount the {needed} libraries (`Cannot load libnvidia-encode.so.1`, "
                   f"`libnvcuvid.so.1`, or no EGL/Vulkan device); add `{needed}`")
        where = env.span if env is not None else final.stage.image_span
        yield finding(doc, "GL308", where, message,
                      related=[related(doc, _where(doc, hit), f"{needed} use")])
    if env is None:
        yield from _capabilities_in_build_stage(doc, final, feeding)


def _capabilities_in_build_stage(doc: Document, final: StageFacts, feeding: list[StageFacts]):
    chain = {s.index for s in final.chain}
    for sf in feeding:
        if sf.stage.index in chain:
            continue
        for ins in sf.stage.instructions:
            if ins.keyword != "ENV":
                continue
            for env in env_values(doc, ins):
                named = _capabilities(env.value) if env.name == "NVIDIA_DRIVER_CAPABILITIES" else set()
                extra = (ALL_CAPABILITIES if "all" in named else named) - DEFAULT_CAPABILITIES
                if extra:
                    yield finding(doc, "GL308", env.span, f"`NVIDIA_DRIVER_CAPABILITIES="
                                  f"{env.value}` is set only in build stage "
                                  f"`{sf.stage.name or sf.stage.index}`; ENV does not cross FROM, "
                                  f"so the shipped stage runs with `compute,utility` and lacks "
                                  f"{', '.join(sorted(extra))}: set what it needs in the final stage")


# ---------------------------------------------------------------- GL309 old toolkit installs

_OLD_PACKAGES = lazy(r"(nvidia-docker2?|nvidia-container-runtime)([=:].*)?$")
_OLD_REPOS = lazy(r"nvidia\.github\.io/(nvidia-docker|nvidia-container-runtime)\b|"
                        r"\b(nvidia-docker|nvidia-container-runtime)\.(list|repo)\b")
_NVIDIA_KEY_SOURCE = lazy(r"nvidia\.github\.io|download\.nvidia\.com|nvidia\.com/")


@check("GL309", kinds=KINDS)
def deprecated_toolkit_install(doc: Document, ctx: Context):
    for sf in facts(doc).stages:
        for package in sf.packages:
            if package.manager != "pip" and _OLD_PACKAGES.match(package.name):
                yield finding(doc, "GL309", package_span(doc, package),
                              f"`{package.name}` is a deprecated package: nvidia-docker2 and "
                              f"nvidia-container-runtime were last shipped with NVIDIA Container "
                              f"Toolkit 1.14 and are gone from current repositories; install "
                              f"`nvidia-container-toolkit`")
        for ins, match in run_mentions(sf.stage, _OLD_REPOS):
            yield finding(doc, "GL309", locate(doc, ins, match[0]),
                          f"`{match[0]}` is the old nvidia-docker package repository; use "
                          f"the libnvidia-container repository with a `signed-by` keyring "
                          f"(mixing both fails with `Conflicting values set for option "
                          f"Signed-By`)")
        yield from _apt_key(doc, sf)


# The first release of each distribution without `apt-key`: APT removed it in 2.9.15
# (APT 3.0), which Debian 13 and Ubuntu 25.04 ship; Ubuntu 24.04 (APT 2.7) still has it.
_APT_KEY_GONE = {"debian": (13,), "ubuntu": (25, 4)}


def _apt_key_exists(sf: StageFacts) -> bool | None:
    """Whether the stage's distribution release still has `apt-key`; None when unknown."""
    os_name = image_os(sf)
    gone = _APT_KEY_GONE.get(os_name[0]) if os_name else None
    if gone is None or not re.fullmatch(r"\d+(\.\d+)?", os_name[1]):
        return None
    return tuple(whole(p) for p in os_name[1].split(".")) < gone


# One `&&`/`||`/`;`/newline-separated list item of a RUN: `curl <key> | apt-key add -` and
# `apt-key adv --fetch-keys <key>` name the key in the same item as the `apt-key` that adds it.
# A line continuation does not end an item.
_LIST_ITEM = lazy(r"(?:\\\r?\n|[^&|;\n]|\|(?!\|)|&(?!&))+")
_APT_KEY_ADDS = lazy(r"\bapt-key\s+(?:add|adv)\b")


def _nvidia_apt_keys(doc: Document, ins) -> list[int]:
    """The offsets of the `apt-key`s that add NVIDIA's key in a RUN: those in the same list
    item as an NVIDIA key's address, else (the key fetched to a file by an earlier command)
    the first `apt-key add`/`adv` of a RUN that names an NVIDIA address at all."""
    if not _NVIDIA_KEY_SOURCE.search(ins.value):
        return []
    adding, first = [], []
    for item in _LIST_ITEM.finditer(doc.text, ins.start, ins.end):
        adds = _APT_KEY_ADDS.search(item[0])
        if adds is not None:
            at = item.start() + adds.start()
            (adding if _NVIDIA_KEY_SOURCE.search(item[0]) else first).append(at)
    return adding or first[:1]


def _apt_key(doc: Document, sf: StageFacts):
    runs = []  # each RUN once, however many apt-key commands it holds
    for cmd in sf.commands:
        name, args = command_name(cmd)
        if name == "apt-key" and args[:1] in (["add"], ["adv"]) \
                and all(ins is not cmd.instruction for ins in runs):
            runs.append(cmd.instruction)
    offsets = [at for ins in runs for at in _nvidia_apt_keys(doc, ins)]
    if not offsets:
        return
    exists = _apt_key_exists(sf)
    distro, version = image_os(sf) or ("", "")
    release = f"{distro.capitalize()} {version}"
    advice = ("store the key with `gpg --dearmor -o /usr/share/keyrings/...` and "
              "reference it with `signed-by=` in the source list")
    if exists is False:
        message = (f"`apt-key` does not exist in {release} (APT 2.9.15 removed it; Debian "
                   f"13 and Ubuntu 25.04 ship without it), so this RUN fails with "
                   f"`apt-key: not found`; {advice}")
        severity = "error"
    else:
        where = f"it still exists in {release}, but " if exists else ""
        message = (f"`apt-key` is deprecated ({where}APT 2.9.15 removed it: Debian 13 and "
                   f"Ubuntu 25.04 no longer have it) and trusts the NVIDIA key for every "
                   f"repository; {advice}")
        severity = "info" if exists else None
    for at in offsets:
        yield finding(doc, "GL309", doc.index.span(at, at + len("apt-key")), message,
                      severity=severity)


# ---------------------------------------------------------------- GL310 GPU at build time

# What `(assert\s+[\w.]*cuda\.(is_available|device_count)\(\)|[\w.]*cuda\.(is_available|
# device_count)\(\)[^;\n]*(exit|raise|assert))` finds first, worked out in time linear in the
# text: searched as that pattern, `[\w.]*` is tried from every letter of a long word and
# `[^;\n]*` from every call on a long line.
_GPU_CALL = lazy(r"(?<![\w.])[\w.]*?cuda\.(?:is_available|device_count)\(\)")
_GPU_FAILS = lazy(r"(?=(exit|raise|assert))")
_GPU_SEGMENT_END = lazy(r"[;\n]")


def _gpu_assert(text: str) -> str | None:
    if not may_match(_GPU_CALL, text):
        return None
    segment_end, last_word = -1, None  # the `;`/newline ending the call's segment, its last word
    for call in _GPU_CALL.finditer(text):
        word_start = call.start()  # the call's word starts here: `[\w.]*` cannot start earlier
        at = word_start
        while at > 0 and text[at - 1].isspace():
            at -= 1
        if word_start > at >= 6 and text[at - 6:at] == "assert":
            return text[at - 6:call.end()]
        if call.end() > segment_end:
            found = _GPU_SEGMENT_END.search(text, call.end())
            segment_end = found.start() if found else len(text)
            last_word = None
            for last_word in _GPU_FAILS.finditer(text, call.end(), segment_end):
                pass
        if last_word is not None and last_word.start() >= call.end():
            return text[word_start:last_word.start() + len(last_word[1])]
    return None
_NATIVE_ARCH = lazy(r"(CMAKE_CUDA_ARCHITECTURES[= ]\"?native|CUDA_ARCHITECTURES\s+native|"
                          r"-arch[= ]native|--gpu-architecture[= ]native)")


# A path to the driver's libcuda or NVML outside the CUDA toolkit's `stubs` folder: outside
# Jetson, those files reach a container only through the NVIDIA runtime. A step that makes,
# moves or removes such a file (the stub symlink trick) is no use of it.
_DRIVER_LIBRARY = lazy(r"(?<![\w.$}-])/(?:[\w.+-]+/)*(?:libcuda|libnvidia-ml)\.so(?:\.[\d.]+)?(?![\w.])")
_FILE_EDIT = lazy(r"(?:^|[\s;&|(])(?:ln|rm|cp|mv|touch)\s")


def _driver_library(text: str) -> str | None:
    if not may_match(_DRIVER_LIBRARY, text) or "stubs" in text or _FILE_EDIT.search(text):
        return None
    found = _DRIVER_LIBRARY.search(text)
    return found[0] if found else None


_TORCH_CUDA = lazy(r"\btorch\.cuda\.\w+")
# How a Jetson gets its GPU into build steps: the classic builder runs them with Docker's
# default runtime; BuildKit never uses it (dusty-nv/jetson-containers builds with
# DOCKER_BUILDKIT=0 for this).
_JETSON_BUILDER = ("the classic builder (`DOCKER_BUILDKIT=0`) with `\"default-runtime\": \"nvidia\"` "
                   "in the device's `/etc/docker/daemon.json` (BuildKit ignores the default runtime)")


@check("GL310", kinds=KINDS)
def gpu_at_build_time(doc: Document, ctx: Context):
    for sf in facts(doc).stages:
        evidence = jetson_stage(sf)
        jetson = evidence is not None
        why = ("build steps on Jetson get the GPU only from " + _JETSON_BUILDER if jetson else
               "`docker build` has no GPU (BuildKit does not use the NVIDIA runtime)")
        reported = set()
        for cmd in sf.commands:
            if command_name(cmd)[0] == "nvidia-smi":
                reported.add(cmd.instruction.start)
                yield finding(doc, "GL310", locate(doc, cmd.instruction, "nvidia-smi"),
                              f"`nvidia-smi` runs at build time, but {why}: "
                              f"{'without them' if jetson else 'there'} it fails with "
                              f"`nvidia-smi: not found` or `NVIDIA-SMI has failed`; check GPUs "
                              f"when the container starts instead")
        text = stage_text(sf.stage, ("RUN", "ENV", "ARG"))
        sieved = not (may_match(_GPU_CALL, text) or may_match(_NATIVE_ARCH, text) or
                      may_match(_DRIVER_LIBRARY, text))  # then none of them finds anything
        for ins in () if sieved else sf.stage.instructions:
            if ins.keyword not in ("RUN", "ENV", "ARG"):
                continue
            asserted = _gpu_assert(ins.value) if ins.keyword == "RUN" else None
            if asserted:
                reported.add(ins.start)
                yield finding(doc, "GL310", locate(doc, ins, asserted),
                              f"`{asserted}` is asserted at build time, but {why}, so it is "
                              f"{'false without them' if jetson else 'always false there'} and the "
                              f"build fails")
            match = _NATIVE_ARCH.search(ins.value) if may_match(_NATIVE_ARCH, ins.value) else None
            if match:
                reported.add(ins.start)
                yield finding(doc, "GL310", locate(doc, ins, match[0]),
                              f"`{match[0]}` detects the GPU architecture at build time, but "
                              f"{why}: it fails or builds for no GPU; list the targets, e.g. "
                              f"`CMAKE_CUDA_ARCHITECTURES=\"80;90\"`")
            driver = None if jetson else _driver_library(ins.value)
            if driver is not None:
                reported.add(ins.start)
                yield finding(doc, "GL310", locate(doc, ins, driver),
                              f"`{driver}` is the driver's own library, which the NVIDIA runtime "
                              f"mounts when a container starts; {why}, so a build step does not "
                              f"have it and linking fails (`No rule to make target '{driver}'`, "
                              f"`cannot find -lcuda`); link against the CUDA toolkit's stub "
                              f"(`/usr/local/cuda/lib64/stubs/libcuda.so`) instead")
        if jetson:
            yield from _jetson_build_time_cuda(doc, sf, evidence, reported)


def _jetson_build_time_cuda(doc: Document, sf: StageFacts, evidence: Hit, reported: set[int]):
    """CUDA compiled or used at build time on a Jetson base: the device's Tegra driver (on
    L4T r32 CUDA, cuDNN and TensorRT too) reaches build steps only through the NVIDIA
    runtime. One finding per stage, at the first such step."""
    uses = [h for h in cuda_builds(sf) if h.instruction.start not in reported]
    uses += [Hit(ins, m[0]) for ins in sf.stage.instructions if ins.keyword == "RUN"
             and ins.start not in reported for m in [_TORCH_CUDA.search(ins.value)] if m]
    if not uses:
        return
    first = min(uses, key=lambda h: h.instruction.start)
    release = l4t_release(sf)
    others = len({h.instruction.start for h in uses}) - 1
    more = f" (and {others} more step{'s' if others > 1 else ''} of this stage)" if others else ""
    if release is not None and release < (34, 0):
        what = (f"on L4T r{release[0]}.{release[1]} CUDA, cuDNN and TensorRT are not in the image "
                f"but mounted from the device by the NVIDIA runtime")
        failure = "`nvcc: not found` or missing CUDA libraries"
        severity = "warning"
    else:
        what = ("the Tegra driver libraries (`libcuda`, `libnvmedia`, ...) are mounted from the "
                "device by the NVIDIA runtime")
        failure = "link errors against the driver libraries, or `torch.cuda.is_available()` false"
        severity = "info"
    yield finding(doc, "GL310", _where(doc, first),
                  f"{first.shown}{more} needs CUDA at build time in a Jetson image ({evidence.shown}), "
                  f"and {what}, so the build needs {_JETSON_BUILDER}; without them: {failure}",
                  severity=severity)


# ---------------------------------------------------------------- GL311 / GL312 LD_LIBRARY_PATH

_SELF = lazy(r"\$\{?LD_LIBRARY_PATH\b")
_COMPAT = lazy(r"/usr/local/cuda(-[\d.]+)?/compat(/lib)?/?")


def _env_assignments(sf: StageFacts, name: str):
    """The stage's own assignments of `name`, values expanded with the ARGs and ENV set
    before them (`${CUDA_HOME}/compat` -> `/usr/local/cuda/compat`)."""
    return (e for e in sf.assignments if e.name == name)


def _shown(env) -> str:
    """`NAME=value` as written, with the expanded value when they differ (and it is short
    enough to read)."""
    if env.written == env.value or len(env.value) > 200:
        return f"`{env.name}={env.written}`"
    return f"`{env.name}={env.written}` (`{env.value}` expanded)"


@check("GL311", kinds=KINDS)
def ld_library_path_clobbered(doc: Document, ctx: Context):
    all_facts = facts(doc).stages
    for sf in all_facts:
        if stage_cuda(doc, sf.stage) is None:
            continue
        parent = all_facts[sf.chain[1].index] if len(sf.chain) > 1 else None
        inherited = parent.env.get("LD_LIBRARY_PATH") if parent is not None else None
        before = (f"line {inherited.instruction.line}" if inherited is not None else
                  f"the base image `{sf.image}`" if sf.cuda_image is not None else None)
        for env in _env_assignments(sf, "LD_LIBRARY_PATH"):
            if before is not None and not _SELF.search(env.written) and _DRIVER_DIR not in env.value:
                yield _clobber_finding(doc, env, before)
            before = f"line {env.instruction.line}"


_DRIVER_DIR = "/usr/local/nvidia/lib64"


def _clobber_finding(doc: Document, env, before: str):
    start, end = doc.index.offsets(env.span)
    at = end - 1 if doc.text[end - 1:end] in ("'", '"') else end
    fix = Fix("append :${LD_LIBRARY_PATH}", (Edit(doc.abspath, at, at, ":${LD_LIBRARY_PATH}"),),
              safe=False)
    return finding(doc, "GL311", env.span,
                   f"{_shown(env)} drops the search path set before it (by "
                   f"{before}); CUDA images keep the driver mount points `/usr/local/nvidia/lib:"
                   f"{_DRIVER_DIR}` there (where GKE and other runtimes without the NVIDIA hook "
                   f"mount libcuda) and, on newer tags, `/usr/local/cuda/lib64`, so the application fails with "
                   f"`libcuda.so.1: cannot open shared object file` or does not find the CUDA "
                   f"libraries; append `:${{LD_LIBRARY_PATH}}`", fix=fix)


@check("GL312", kinds=KINDS)
def compat_libs_forced(doc: Document, ctx: Context):
    why = ("forces the CUDA forward-compatibility libraries on every host: on consumer GPUs and "
           "on drivers newer than the compat package CUDA fails with error 803 (`system has "
           "unsupported display driver / cuda driver combination`) or 804; enable them only when "
           "the host driver is older (the NVIDIA images' entrypoint does this)")
    for sf in facts(doc).stages:
        for env in _env_assignments(sf, "LD_LIBRARY_PATH"):
            match = _COMPAT.search(env.value)
            if match and match[0] in env.written:
                yield finding(doc, "GL312", locate(doc, env.instruction, match[0]),
                              f"`{match[0]}` in LD_LIBRARY_PATH {why}")
            elif match:
                yield finding(doc, "GL312", env.span, f"{_shown(env)} puts `{match[0]}` in "
                              f"LD_LIBRARY_PATH, which {why}")
        for ins in sf.stage.instructions:
            if ins.keyword != "RUN":
                continue
            match = _COMPAT.search(ins.value)
            if match and ("ld.so.conf" in ins.value or re.search(r"\bldconfig\s+/", ins.value)):
                yield finding(doc, "GL312", locate(doc, ins, match[0]),
                              f"`{match[0]}` registered with the dynamic linker {why}")


# ---------------------------------------------------------------- GL313 requirement check

_TRUE = {"1", "t", "true"}


@check("GL313", kinds=KINDS)
def require_check_disabled(doc: Document, ctx: Context):
    tool = not_cuda_workload(doc) is not None
    for sf in facts(doc).stages:
        for env in _env_assignments(sf, "NVIDIA_DISABLE_REQUIRE"):
            if env.value.strip().lower() in _TRUE and not tool:
                yield finding(doc, "GL313", env.span,
                              "`NVIDIA_DISABLE_REQUIRE` turns off the container toolkit's check "
                              "that the host driver supports this image's CUDA: on an old driver "
                              "the container starts and the application fails later with `CUDA "
                              "driver version is insufficient for CUDA runtime version`")
        yield from _require_mismatch(doc, sf)


def _require_mismatch(doc: Document, sf: StageFacts):
    base = sf.cuda_image
    hint = sf.env.get("CUDA_VERSION")
    for env in _env_assignments(sf, "NVIDIA_REQUIRE_CUDA"):
        match = REQUIRE_CUDA.search(env.value)
        if not match:
            continue
        required = (whole(match[1]), whole(match[2]))
        if base is not None and base.cuda_exact:
            actual, source = base.cuda_major_minor, f"the base image `{base.ref.raw}`"
        elif hint is not None and re.match(r"\d+\.\d+", hint.value):
            actual = tuple(whole(p) for p in hint.value.split(".")[:2])
            source = f"`CUDA_VERSION={hint.value}`"
        else:
            continue
        if required != actual:
            effect = ("refuses hosts whose driver would run it" if required > actual else
                      "lets it start on drivers too old for it, which then fail with `CUDA driver "
                      "version is insufficient`")
            yield finding(doc, "GL313", locate(doc, env.instruction, match[0]),
                          f"`NVIDIA_REQUIRE_CUDA` asks for `{match[0]}` but {source} is CUDA "
                          f"{actual[0]}.{actual[1]}: the start-up check {effect}; require "
                          f"`cuda>={actual[0]}.{actual[1]}`")
