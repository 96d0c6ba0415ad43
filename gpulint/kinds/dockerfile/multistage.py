"""Multi-stage checks (GL4xx): the gap between the stage that builds CUDA code and
the stage that ships it — CUDA version, OS, libraries — and CUDA-suffixed Python
packages that do not match the CUDA a stage is built on."""

from __future__ import annotations

from gpulint.kinds.dockerfile.facts import (
    CudaVersion,
    Hit,
    StageFacts,
    copied_paths,
    cuda_builds,
    cuda_variant,
    cuda_wheels,
    facts,
    glibc,
    image_os,
    linked_libraries,
    locate,
    native_builds,
    plain_image,
    provided_libraries,
    stage_cuda,
)
from gpulint.knowledge.images import smallest_flavor_with
from gpulint.model import Document
from gpulint.record import Record
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding, related

KINDS = ("dockerfile",)


class Copy(Record):
    """A `COPY --from=<stage>` into the shipped stage (or a stage it is built on)."""

    __slots__ = ("instruction", "source", "where")

    instruction: object
    source: StageFacts
    where: object  # Span of `--from=<stage>`

    def __init__(self, instruction: object, source: StageFacts, where: object) -> None:
        self.instruction = instruction
        self.source = source
        self.where = where


def _copies_into_final(doc: Document) -> list[Copy]:
    all_facts = facts(doc)
    final = all_facts.final
    if final is None:
        return []
    out = []
    for stage in final.chain:
        for ins in stage.instructions:
            ref = ins.flags.get("from") if ins.keyword in ("COPY", "ADD") else None
            source = doc.tree.stage_named(ref) if ref else None
            if source is not None and source.index not in {s.index for s in final.chain}:
                out.append(Copy(ins, all_facts.stages[source.index],
                                locate(doc, ins, f"--from={ref}")))
    return out


def _label(sf: StageFacts) -> str:
    name = f"`{sf.stage.name}`" if sf.stage.name else f"#{sf.stage.index}"
    return f"{name} (`{sf.image}`)" if sf.image else name


def _cuda_text(cuda: CudaVersion) -> str:
    return f"CUDA {cuda.version}"


def _built_here(sf: StageFacts) -> list[Hit]:
    """CUDA code compiled or CUDA libraries linked in the stage or the stages it is built on."""
    hits = [h for member in sf.family for h in cuda_builds(member)]
    return hits + [h for member in sf.family for h in linked_libraries(member).values()]


# ---------------------------------------------------------------- GL401 CUDA version


@check("GL401", kinds=KINDS)
def stage_cuda_mismatch(doc: Document, ctx: Context):
    final = facts(doc).final
    target = stage_cuda(doc, final.stage) if final is not None else None
    if target is None:
        return
    for copy in _copies_into_final(doc):
        source = stage_cuda(doc, copy.source.stage)
        built = _built_here(copy.source)
        if source is None or not built or source.major_minor <= target.major_minor:
            continue
        major = source.major > target.major
        consequence = (f"CUDA {source.major} code needs CUDA {source.major} libraries "
                       f"(`libcudart.so.{source.major}: cannot open shared object file` when linked "
                       f"dynamically) and a driver for CUDA {source.major}, while the image's "
                       f"start-up check only guarantees {target.major_minor[0]}."
                       f"{target.major_minor[1]}" if major
                       else "code built with the newer toolkit can need symbols and PTX versions "
                       "the older runtime does not have (`PTX was compiled with an unsupported "
                       "toolchain`, undefined symbols)")
        yield finding(doc, "GL401", copy.where,
                      f"artifacts built on {_cuda_text(source)} in stage {_label(copy.source)} are "
                      f"copied into the shipped stage, which runs {_cuda_text(target)}: "
                      f"{consequence}; build and run on the same CUDA version",
                      severity="error" if major else "warning",
                      related=[related(doc, target.where, f"shipped stage: {_cuda_text(target)}")])


# ---------------------------------------------------------------- GL402 OS


@check("GL402", kinds=KINDS)
def stage_os_mismatch(doc: Document, ctx: Context):
    final = facts(doc).final
    target_os = image_os(final) if final is not None else None
    if target_os is None:
        return
    for copy in _copies_into_final(doc):
        source_os = image_os(copy.source)
        if source_os is None or source_os == target_os or stage_cuda(doc, copy.source.stage) is None:
            continue
        if not any(native_builds(member) for member in copy.source.family):
            continue
        src_glibc, dst_glibc = glibc(source_os), glibc(target_os)
        if source_os[0] == target_os[0] and (src_glibc is None or dst_glibc is None
                                             or src_glibc <= dst_glibc):
            continue  # same distribution, older or equal release: binaries keep working
        what = (f"a newer glibc ({src_glibc} vs {dst_glibc})" if source_os[0] == target_os[0]
                else "another distribution")
        yield finding(doc, "GL402", copy.where,
                      f"binaries built on {_os_text(source_os)} in stage {_label(copy.source)} are "
                      f"copied into a shipped stage on {_os_text(target_os)}, {what}: expect "
                      f"`GLIBC_2.xx not found` / `GLIBCXX_... not found` or missing shared "
                      f"libraries at run time; build on the OS the image ships")


def _os_text(os_name: tuple[str, str]) -> str:
    distro, release = os_name
    return f"RHEL-family {release}" if distro == "el" else f"{distro.capitalize()} {release}"


# ---------------------------------------------------------------- GL403 libraries


@check("GL403", kinds=KINDS)
def final_stage_missing_libraries(doc: Document, ctx: Context):
    final = facts(doc).final
    image = final.cuda_image if final is not None else None
    if image is None or not image.libraries:
        return
    have = set(image.libraries)
    for member in final.family:
        have |= provided_libraries([p.name for p in member.packages])
        have |= provided_libraries(copied_paths(member.stage))
    reported = set()  # (stage, library): once, at the first copy from that stage
    for copy in _copies_into_final(doc):
        linked = {}
        for member in copy.source.family:
            linked.update(linked_libraries(member))
        for library, hit in sorted(linked.items()):
            if library in have or (copy.source.stage.index, library) in reported:
                continue
            reported.add((copy.source.stage.index, library))
            try:
                smallest = smallest_flavor_with(library)
            except KeyError:
                smallest = None
            advice = f"; `{smallest}` is the smallest flavor that has it" if smallest else ""
            yield finding(doc, "GL403", copy.where,
                          f"stage {_label(copy.source)} links {library} (`{hit.text}`) and its "
                          f"artifacts are copied into a final stage on `{image.ref.raw}`, whose "
                          f"`{image.flavor}` flavor does not ship {library}: `{_soname(hit)}: "
                          f"cannot open shared object file` at start{advice}",
                          related=[related(doc, locate(doc, hit.instruction, hit.text), "linked here")])


def _soname(hit: Hit) -> str:
    """The shared library a link flag names, as the loader reports it missing
    (`-lnvinfer` and `CUDA::nvinfer` -> `libnvinfer.so...`)."""
    return f"lib{hit.text.removeprefix('-l').removeprefix('CUDA::')}.so..."


# ---------------------------------------------------------------- GL404 no CUDA at all

_CUDA_PATH = lazy(r"/usr/local/cuda|libcudart|/nvidia/|cuda-\d")


@check("GL404", kinds=KINDS)
def final_stage_not_cuda(doc: Document, ctx: Context):
    final = facts(doc).final
    if final is None or not plain_image(final) or stage_cuda(doc, final.stage) is not None:
        return  # a CUDA base, `scratch` (an export stage), or an image gpulint cannot tell
    for member in final.family:
        if provided_libraries([p.name for p in member.packages]) \
                or any(_CUDA_PATH.search(p) for p in copied_paths(member.stage)):
            return  # the final stage brings its own CUDA runtime
    for copy in _copies_into_final(doc):
        built = _built_here(copy.source)
        if not built:
            continue
        source = stage_cuda(doc, copy.source.stage)
        runtime = cuda_variant(source.image, "runtime") if source and source.image else None
        advice = f"run on `{runtime}`" if runtime else "run on a CUDA runtime image of the same version"
        library = f"libcudart.so.{source.major}" if source is not None else "libcudart.so"
        yield finding(doc, "GL404", copy.where,
                      f"CUDA code built in stage {_label(copy.source)} is copied into a final stage "
                      f"on `{final.image}`, which has no CUDA runtime and installs none: "
                      f"anything linked against the CUDA libraries fails with `{library}: cannot "
                      f"open shared object file`, and without `NVIDIA_REQUIRE_CUDA` "
                      f"nothing checks the host driver at start; {advice}",
                      related=[related(doc, locate(doc, built[0].instruction, built[0].text),
                                       "CUDA built here")])


# ---------------------------------------------------------------- GL405 wheels

@check("GL405", kinds=KINDS)
def cuda_wheel_mismatch(doc: Document, ctx: Context):
    for sf in facts(doc).stages:
        cuda = stage_cuda(doc, sf.stage)
        if cuda is None:
            continue
        for cmd in sf.commands:
            for word, major in cuda_wheels(cmd):
                if major == cuda.major:
                    continue
                base = f"`{sf.image}`" if cuda.source == "image" else "its ENV"
                torch = (", and CUDA extensions built here fail PyTorch's check `The detected "
                         "CUDA version ... mismatches the version that was used to compile "
                         "PyTorch`" if "torch" in word.lower() else "")
                yield finding(doc, "GL405", locate(doc, cmd.instruction, word),
                              f"`{word}` is built for CUDA {major}, but this stage runs "
                              f"{_cuda_text(cuda)} ({base}): its libraries look for "
                              f"`lib*.so.{major}` that the image does not have, or it brings a "
                              f"second CUDA {major} runtime{torch}; use the CUDA "
                              f"{cuda.major} build",
                              related=[related(doc, cuda.where, f"{_cuda_text(cuda)} here")])
