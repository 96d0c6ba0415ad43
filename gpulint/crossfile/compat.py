"""CUDA / driver compatibility (GL6xx): will this image run on these nodes?

The image side: the CUDA version of an image reference (nvidia/cuda, NGC,
pytorch/pytorch), of the final stage of a Dockerfile (its base image, `ENV
CUDA_VERSION` / `NVIDIA_REQUIRE_CUDA` on custom bases, CUDA wheels as a last
resort), and of images that `[tool.gpulint.images]` maps to a Dockerfile. The node
side comes from gpulint.crossfile.fleet. The comparison follows the two mechanisms NVIDIA has:

* images with the container toolkit's start check (`NVIDIA_REQUIRE_CUDA`, or a
  legacy `CUDA_VERSION`) start only when the driver's CUDA level reaches the
  image's X.Y, or through forward compatibility on the branches the image lists,
  which works on data-center GPUs only;
* images without it (pytorch/pytorch runtime, plain bases with CUDA wheels) start
  anywhere and then need the major's minor-version floor, and the toolkit's own
  driver for PTX JIT and the newest APIs.
"""

from __future__ import annotations

import functools
from pathlib import Path
from types import SimpleNamespace

from gpulint.crossfile.fleet import (
    HELM_VALUES,
    Driver,
    Fleet,
    Origin,
    config_driver,
    fleet_for,
    operator_declarations,
    pod_driver,
)
from gpulint.crossfile.imagemap import (
    dockerfile_at,
    mapped_dockerfile,
    replaces_arg_default,
)
from gpulint.formats.template import is_placeholder
from gpulint.kinds.kubernetes.facts import (
    env_vars,
    is_gpu_management,
    pod_specs,
    requests_gpus,
    scalar_str,
)
from gpulint.knowledge.cuda import (
    branch_numbers,
    branch_problem,
    compare_versions,
    cuda_as_of,
    driver_max_cuda,
    forward_compat_ok,
    gpu_info,
    image_admits,
    latest_known_cuda,
    minor_version_floor,
    required_compute_capability,
    toolkit,
)
from gpulint.knowledge.images import cuda_image, jetson_image, tag_cuda
from gpulint.model import Document, Finding, Related, Span
from gpulint.numbers import whole
from gpulint.record import Frozen, freeze, replace
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding

_BRAND_CLAUSE = lazy(r"brand=\w+,driver>=(\d{3}),driver<(\d{3})")
# A space-separated term of its own: any driver from that version on satisfies it.
_BARE_DRIVER = lazy(r"(?:^|\s)driver>=(\d{3})(?:\.[\d.]*)?(?=\s|$)")
# The values Go's strconv.ParseBool reads as true: the container toolkit parses
# NVIDIA_DISABLE_REQUIRE with it, so `yes` or `on` leave the check on.
_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})


# ------------------------------------------------------------------ the image side


class ImageCuda(Frozen):
    """The CUDA an image runs and how the container toolkit treats it.

    version: "12.4.1", "12.4", or "12" (wheels: major only); exact: False when the
    version is only a lower bound (an NGC month without its own release-notes row);
    start_check: the image refuses to run on a driver below its X.Y; brand_branches:
    the driver branches its `NVIDIA_REQUIRE_CUDA` accepts through forward
    compatibility (None: take gpulint's forward-compatibility table).
    """

    __slots__ = ("label", "version", "major", "major_minor", "start_check", "brand_branches", "image",
                 "family", "release", "exact", "basis", "compat_removed", "related")

    label: str
    version: str
    major: int
    major_minor: tuple[int, int] | None
    start_check: bool
    brand_branches: tuple[int, ...] | None
    image: object | None  # gpulint.knowledge.images.CudaImage
    family: str
    release: str | None
    exact: bool
    basis: str | None  # what in a Dockerfile states the CUDA ("final stage `FROM ...`")
    compat_removed: str | None  # how the Dockerfile deletes the cuda-compat libraries
    related: tuple[Related, ...]

    def __init__(self, label: str, version: str, major: int, major_minor: tuple[int, int] | None,
                 start_check: bool, brand_branches: tuple[int, ...] | None = None, image: object | None = None,
                 family: str = "custom", release: str | None = None, exact: bool = True,
                 basis: str | None = None, compat_removed: str | None = None,
                 related: tuple[Related, ...] | None = None) -> None:
        freeze(self, label, version, major, major_minor, start_check, brand_branches,
               image, family, release, exact, basis, compat_removed, () if related is None else related)

    @property
    def xy(self) -> str:
        return f"{self.major_minor[0]}.{self.major_minor[1]}" if self.major_minor else f"{self.major}.x"

    @property
    def cuda_text(self) -> str:
        """"CUDA 12.4", or "CUDA 13.1 or newer" for a lower bound."""
        return f"CUDA {self.xy}" + ("" if self.exact else " or newer")


@functools.lru_cache(maxsize=1024)  # asked of the same references by several rules and files
def image_cuda(ref: str) -> ImageCuda | None:
    """The CUDA of an image reference gpulint recognises (nvidia/cuda, NGC, pytorch/pytorch)."""
    img = cuda_image(ref) or tag_cuda(ref)
    if img is None:
        return None
    branches = image_admits(img.cuda_major_minor) if img.family in ("nvidia-cuda", "cuda-sample", "serving") else None
    said = f" (its tag says CUDA {img.cuda})" if img.family == "tag" else ""
    return ImageCuda(f"image `{ref.strip()}`{said}", img.cuda, img.cuda_major_minor[0], img.cuda_major_minor,
                     img.has_start_check, branches, img, img.family, img.release, img.cuda_exact)


def disables_require(value: str | None) -> bool:
    """`NVIDIA_DISABLE_REQUIRE` as the container toolkit reads it."""
    return (value or "").strip() in _GO_TRUE


def require_brands(require: str) -> tuple[int, ...]:
    """Driver branches the `brand=...,driver>=N,driver<N+1` clauses of an
    `NVIDIA_REQUIRE_CUDA` value accept, and every known branch from N on for a bare
    `driver>=N` clause; () when it has none (only `cuda>=X.Y`)."""
    admitted = {whole(m[1]) for m in _BRAND_CLAUSE.finditer(require)}
    for floor in _BARE_DRIVER.findall(require):
        admitted |= {n for n in branch_numbers() if n >= whole(floor)}
    return tuple(sorted(admitted))


def dockerfile_cuda(doc: Document) -> tuple[ImageCuda, Span] | None:
    """The CUDA of the image a Dockerfile builds (its final stage) and where it is stated."""
    if "compat.dockerfile" not in doc.cache:
        doc.cache["compat.dockerfile"] = _dockerfile_cuda(doc)
    return doc.cache["compat.dockerfile"]


def _dockerfile_cuda(doc: Document) -> tuple[ImageCuda, Span] | None:
    # Dockerfile facts and parser: only when a Dockerfile is consulted
    from gpulint.kinds.dockerfile.facts import facts, final_stage_cuda

    final = facts(doc).final if doc.tree is not None else None
    if final is None:
        return None
    cuda = final_stage_cuda(doc)
    if cuda is None:
        return _wheel_cuda(doc, final)
    env = {name: value.value for name, value in final.env.items()}
    start = not disables_require(env.get("NVIDIA_DISABLE_REQUIRE"))
    removed = _compat_removed(doc)
    # An NVIDIA_REQUIRE_CUDA set here replaces the base image's, brand clauses and all;
    # a custom base with CUDA_VERSION alone is a "legacy" image: `cuda>=X.Y`, no brands.
    require = env.get("NVIDIA_REQUIRE_CUDA")
    brands = require_brands(require) if require is not None else None
    if cuda.source == "image":
        found = image_cuda(final.image or "")
        if found is None:
            return None
        return replace(_built(doc, found, f"final stage `FROM {final.image}`"),
                       start_check=found.start_check and start, compat_removed=removed,
                       brand_branches=found.brand_branches if brands is None else brands), cuda.where
    name = "CUDA_VERSION" if "CUDA_VERSION" in final.env and final.env["CUDA_VERSION"].span == cuda.where \
        else "NVIDIA_REQUIRE_CUDA"
    img = ImageCuda("", cuda.version, cuda.major, cuda.major_minor, start, brands or (), compat_removed=removed)
    return _built(doc, img, f"`{name}` says CUDA {cuda.version}"), cuda.where


def _compat_removed(doc: Document) -> str | None:
    # Dockerfile facts and parser: only when a Dockerfile is consulted
    from gpulint.kinds.dockerfile.facts import compat_removed, locate

    hit = compat_removed(doc)
    if hit is None:
        return None
    return f"{hit.shown} on line {locate(doc, hit.instruction, hit.text).line}"


def _built(doc: Document, img: ImageCuda, basis: str) -> ImageCuda:
    return replace(img, label=f"the image built by {doc.path} ({basis})", basis=basis)


def _wheel_cuda(doc: Document, final) -> tuple[ImageCuda, Span] | None:
    """The CUDA major of CUDA wheels the final stage installs (`torch==2.3.0+cu121`,
    `nvidia-*-cu12`, `cupy-cuda12x`, `.../whl/cu121`): they bundle their CUDA runtime
    and have no start check, so only the major's floor applies. With wheels of
    several majors, the newest needs the newest driver."""
    # Dockerfile facts and parser: only when a Dockerfile is consulted
    from gpulint.kinds.dockerfile.facts import cuda_wheels, locate

    if not final.known or final.cuda_image is not None:
        return None
    wheels = [(major, word, cmd) for cmd in final.chain_commands() for word, major in cuda_wheels(cmd)]
    if not wheels:
        return None
    major, word, cmd = max(wheels, key=lambda wheel: wheel[0])
    img = ImageCuda("", str(major), major, None, False)
    return _built(doc, img, f"CUDA {major} wheels: `{word}`"), locate(doc, cmd.instruction, word)


def container_cuda(ctx: Context, container) -> ImageCuda | None:
    """The CUDA of a container's image: the mapped Dockerfile first, then the reference;
    the container's own `NVIDIA_REQUIRE_CUDA` / `NVIDIA_DISABLE_REQUIRE` replace the image's."""
    ref = container.image
    if not ref:
        return None
    found = _built_cuda(mapped_dockerfile(ctx, ref), f"image `{ref}`", "built by ") or image_cuda(ref)
    if found is None:
        return None
    env = {name: scalar_str(value) for name, _, value in env_vars(container)}
    if env.get("NVIDIA_REQUIRE_CUDA"):
        found = replace(found, brand_branches=require_brands(env["NVIDIA_REQUIRE_CUDA"]))
    if disables_require(env.get("NVIDIA_DISABLE_REQUIRE")):
        found = replace(found, start_check=False)
    return found


# ------------------------------------------------------------------ the verdict


class Verdict(Frozen):
    __slots__ = ("severity", "message", "by_class")

    severity: str
    message: str
    by_class: bool  # the GPU class decided it (forward compatibility)

    def __init__(self, severity: str, message: str, by_class: bool = False) -> None:
        freeze(self, severity, message, by_class)


def judge(img: ImageCuda, fleet: Fleet) -> Verdict | None:
    """What GL601 says about running `img` on `fleet`'s driver; None when it runs."""
    driver = fleet.driver
    if driver is None or is_beyond_data(img):
        return None
    if img.family == "tag":  # only the tag speaks: whether cuda-compat rides along is unknown
        return _judge_tag(img, driver, fleet)
    if img.start_check and img.major_minor is not None:
        return _judge_start_check(img, driver, fleet)
    return _judge_minor_compat(img, driver)


def _judge_tag(img: ImageCuda, driver: Driver, fleet: Fleet) -> Verdict | None:
    """An image whose CUDA only its tag states: on data-center or Jetson GPUs it may run
    through forward compatibility if it carries cuda-compat, which nothing says, so no
    verdict there; elsewhere the minor-version rules, at most a warning."""
    if fleet.gpu_class in ("datacenter", "embedded"):
        return None
    verdict = _judge_minor_compat(img, driver)
    if verdict is None:
        return None
    if fleet.gpu_class is None:  # data-center GPUs among them may run it through cuda-compat
        return Verdict("warning", f"{verdict.message}; on data-center GPUs it may run through forward "
                                  f"compatibility instead, if the image carries cuda-compat (state the GPU "
                                  f"class with `--gpu-class` to judge it)")
    return replace(verdict, severity="warning")


def is_beyond_data(img: ImageCuda) -> bool:
    latest = latest_known_cuda()
    return img.major_minor > latest if img.major_minor else img.major > latest[0]


def _native_max(driver: Driver) -> tuple[int, int | None] | None:
    if driver.max_cuda is not None:
        return driver.max_cuda
    return driver_max_cuda(driver.version) if driver.version else None


def _cuda_text(level: tuple[int, int | None]) -> str:
    return f"{level[0]}.{level[1]}" if level[1] is not None else f"{level[0]}.x"


def _driver_text(driver: Driver, level: tuple[int, int | None] | None) -> str:
    if driver.version is None:
        return f"the nodes' driver (CUDA {_cuda_text(level)} at most; from {driver.origin.description})"
    most = f", CUDA {_cuda_text(level)} at most" if level is not None else ""
    return f"driver {driver.version} (R{driver.branch}{most}; from {driver.origin.description})"


def release_of(img: ImageCuda):
    """The toolkit release of the image (the X.Y GA when the patch is unknown)."""
    if img.major_minor is None:
        return None
    return toolkit(img.version) or toolkit(img.xy)


def native_driver(img: ImageCuda) -> str | None:
    """The driver that runs every feature of the image's CUDA (Table 3)."""
    rel = release_of(img)
    return rel.min_driver if rel is not None and not rel.unconfirmed else None


def _needs(img: ImageCuda) -> str:
    need = native_driver(img)
    if need is None:
        return f"a driver that supports {img.cuda_text}"
    return f"driver >= {need}" + ("" if img.exact else f" (more if its CUDA is newer than {img.xy})")


def _judge_start_check(img: ImageCuda, driver: Driver, fleet: Fleet) -> Verdict | None:
    level = _native_max(driver)
    if level is None:
        return None  # a branch newer than gpulint's data runs everything it knows
    need = img.major_minor
    if level[1] is None:  # only the major is stated: same major may or may not be enough
        if level[0] >= need[0]:
            return None
    elif (level[0], level[1]) >= need:
        return None
    head = f"{img.label} needs {img.cuda_text}, but {_driver_text(driver, level)} is older"
    branch = driver.branch
    if branch is not None and img.brand_branches is None and not _forward_compat(img, branch) \
            and fleet.gpu_class != "consumer":
        # Only the branch's absence from NVIDIA's forward-compatibility lists speaks
        # against it, and those lists drop branches that went end of life.
        return Verdict("warning", f"{head}; no NVIDIA source gpulint knows lists R{branch} among the branches "
                                  f"that run {img.cuda_text} through forward compatibility, so most likely "
                                  f"{_refused(img, driver)}. It needs {_needs(img)}")
    if branch is None or not _forward_compat(img, branch):
        return Verdict("error", f"{head}: {_refused(img, driver)}{_not_accepted(img, branch)}. "
                                f"It needs {_needs(img)}")
    klass, origin = fleet.gpu_class, fleet.class_origin
    if img.compat_removed:
        return _judge_without_compat(img, driver, fleet, head)
    if klass in ("datacenter", "embedded"):
        return Verdict("info", by_class=True, message=(
            f"{head}; it runs through forward compatibility (the image's cuda-compat libraries) on these "
            f"{_CLASS_WORDS[klass]} GPUs ({origin.description}). Native support needs {_needs(img)}"))
    if klass == "consumer":
        return Verdict("error", by_class=True, message=(
            f"{head}: R{branch} could run it only through forward compatibility, which consumer GPUs "
            f"({origin.description}) do not have: {_on_geforce(img)}. It needs {_needs(img)}"))
    if klass == "workstation":
        return Verdict("warning", by_class=True, message=(
            f"{head}: it runs only through forward compatibility (the image's cuda-compat libraries), which "
            f"workstation RTX cards ({origin.description}) have only on select NGC-ready SKUs; on the others "
            f"CUDA fails with error 804 (`forward compatibility was attempted on non supported HW`). Use "
            f"{_needs(img)}"))
    return Verdict("warning", f"{head}: it runs only through forward compatibility (the image's cuda-compat "
                              f"libraries), which only data-center GPUs have (on GeForce cards "
                              f"{_on_geforce(img, detail=False)}); "
                              f"state the GPU class (`--gpu-class`, `gpu-class` in [tool.gpulint.fleet], or a "
                              f"`nvidia.com/gpu.product` selector) or use {_needs(img)}")


_CLASS_WORDS = {"datacenter": "data-center", "embedded": "Jetson (embedded)"}


def _judge_without_compat(img: ImageCuda, driver: Driver, fleet: Fleet, head: str) -> Verdict:
    """The image deletes its cuda-compat libraries but keeps the brand clauses of its
    `NVIDIA_REQUIRE_CUDA`: on data-center and workstation GPUs the container starts on
    the older branch, and CUDA then runs on the host driver alone, by minor-version
    compatibility; on GeForce cards it does not start."""
    klass, origin = fleet.gpu_class, fleet.class_origin
    if klass == "consumer":
        return Verdict("error", by_class=True, message=(
            f"{head}: on consumer GPUs ({origin.description}) {_on_geforce(img)}. It needs {_needs(img)}"))
    floor = minor_version_floor(img.major)
    gone = (f"{head}; its `NVIDIA_REQUIRE_CUDA` still admits R{driver.branch} on data-center and workstation "
            f"GPUs, but the image deletes its cuda-compat libraries ({img.compat_removed}), so there is no "
            f"forward compatibility and CUDA {img.xy} runs on the host driver alone")
    below = driver.max_cuda[0] < img.major if driver.version is None else floor is None or _below(driver, floor)
    if below:
        minimum = f"the CUDA {img.major}.x minimum {floor}" if floor else f"what CUDA {img.version} needs"
        return Verdict("error", f"{gone}, and the driver is below {minimum}: the container starts, then CUDA "
                                f"fails with `CUDA driver version is insufficient for CUDA runtime version`. "
                                f"It needs {_needs(img)}")
    geforce = "" if klass in ("datacenter", "embedded", "workstation") else \
        "; on GeForce cards the container does not start"
    return Verdict("warning", f"{gone}, through minor-version compatibility (CUDA {img.major}.x needs >= "
                              f"{floor}): PTX JIT compilation and APIs newer than the driver fail "
                              f"(`cudaErrorCallRequiresNewerDriver`, `the provided PTX was compiled with an "
                              f"unsupported toolchain`){geforce}. Every CUDA {img.xy} feature needs {_needs(img)}")


def _refused(img: ImageCuda, driver: Driver) -> str:
    """What users see when the driver is too old for an image with a start check.

    The container toolkit refuses images whose `NVIDIA_REQUIRE_CUDA` is unmet; NGC
    framework images check the driver in their entrypoint instead, so they start and
    CUDA then fails."""
    if img.family == "ngc":
        need = native_driver(img)
        built = ".".join(need.split(".")[:2]) if need else "..."
        return (f"the container starts, but its entrypoint prints `ERROR: This container was built for NVIDIA "
                f"Driver Release {built} or later, but version {_shown(driver)} was detected and "
                f"compatibility mode is UNAVAILABLE` and CUDA cannot be used")
    return (f"the container does not start (`nvidia-container-cli: requirement error: unsatisfied condition: "
            f"cuda>={img.xy}, please update your driver to a newer version, or use an earlier cuda container`)")


def _shown(driver: Driver) -> str:
    """The driver as the NGC entrypoint would print it (only a branch may be known)."""
    if driver.version is None:
        return "..."
    return driver.version if driver.is_full else f"{driver.version}.x"


def _on_geforce(img: ImageCuda, detail: bool = True) -> str:
    """What forward compatibility comes to on a GeForce card: NGC images try it and
    CUDA fails with error 804; the brand clauses of `NVIDIA_REQUIRE_CUDA` name
    data-center and workstation brands only (tesla, nvidia, quadro, nvidiartx ...,
    never geforce), so other images are refused at start."""
    if img.family == "ngc":
        return "CUDA fails with error 804" + (" (`forward compatibility was attempted on non supported HW`, "
                                               "`CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE`)" if detail else "")
    return ("the container does not start: its `NVIDIA_REQUIRE_CUDA` admits older branches only on data-center "
            "and workstation GPU brands" + (f" (`unsatisfied condition: cuda>={img.xy}`)" if detail else ""))


def _not_accepted(img: ImageCuda, branch: int | None) -> str:
    """Why forward compatibility does not start it on `branch`."""
    if branch is None:
        return ""
    if img.brand_branches == ():
        return f"; its requirement is `cuda>={img.xy}` alone, which admits no older branch"
    listed = f" ({', '.join(f'R{b}' for b in img.brand_branches)})" if img.brand_branches else ""
    return f"; R{branch} is not among the branches it accepts through forward compatibility{listed}"


def _forward_compat(img: ImageCuda, branch: int) -> bool:
    if img.brand_branches is not None:
        return branch in img.brand_branches
    return forward_compat_ok(img.major_minor, branch)


def _below(driver: Driver, version: str) -> bool:
    """The driver is older than `version`; a bare branch is older only when its
    branch is lower (its patch level is unknown)."""
    if driver.is_full:
        return compare_versions(driver.version, version) < 0
    return driver.branch < whole(version.split(".")[0])


def _judge_minor_compat(img: ImageCuda, driver: Driver) -> Verdict | None:
    floor = minor_version_floor(img.major)
    full = native_driver(img)
    insufficient = "`CUDA driver version is insufficient for CUDA runtime version`"
    head = f"{img.label} has no start check" if img.family != "tag" else \
        f"{img.label} is not known to check the driver at start"
    if driver.version is None:
        return _judge_minor_by_level(img, driver, head, insufficient)
    text = _driver_text(driver, _native_max(driver))
    if floor is None:  # CUDA 10 and older: every minor needs its own driver
        if full and _below(driver, full):
            return Verdict("error", f"{head} and {text} is older than CUDA {img.version} needs ({full}; CUDA "
                                    f"{img.major}.x has no minor-version compatibility): CUDA fails with "
                                    f"{insufficient}")
        return None
    if _below(driver, floor):
        fails = "the container starts, then CUDA fails" if img.family != "tag" else \
            "CUDA fails (or the container does not start)"
        return Verdict("error", f"{head} and {text} is below the CUDA {img.major}.x minimum {floor}: "
                                f"{fails} with {insufficient}. It needs driver >= "
                                f"{floor}" + (f" (>= {full} for every CUDA {img.xy} feature)" if full else ""))
    if full and _below(driver, full):
        return Verdict("warning", f"{img.label} needs driver >= {full} for CUDA {img.xy}; {text} runs it only "
                                  f"through minor-version compatibility (CUDA {img.major}.x needs >= {floor}): "
                                  f"PTX JIT compilation and APIs newer than the driver fail "
                                  f"(`cudaErrorCallRequiresNewerDriver`, `the provided PTX was compiled with an "
                                  f"unsupported toolchain`)")
    return None


def _judge_minor_by_level(img: ImageCuda, driver: Driver, head: str, insufficient: str) -> Verdict | None:
    """Only the nodes' CUDA level is known (a `nvidia.com/cuda.runtime-version` selector)."""
    level = driver.max_cuda
    text = _driver_text(driver, level)
    if level[0] < img.major:
        return Verdict("error", f"{head} and {text} predates CUDA {img.major}: CUDA fails with {insufficient}")
    if img.major_minor and level[0] == img.major and level[1] is not None and level[1] < img.major_minor[1]:
        return Verdict("warning", f"{img.label} is CUDA {img.xy}; {text} runs it only through minor-version "
                                  f"compatibility: PTX JIT compilation and APIs newer than the driver fail "
                                  f"(`cudaErrorCallRequiresNewerDriver`)")
    return None


# ------------------------------------------------------------------ what is judged


class Subject(Frozen):
    """One image to judge: its CUDA, where to point, and the nodes it runs on."""

    __slots__ = ("img", "where", "fleet")

    img: ImageCuda
    where: object  # a Node or a Span
    fleet: Fleet

    def __init__(self, img: ImageCuda, where: object, fleet: Fleet) -> None:
        freeze(self, img, where, fleet)


def subjects(doc: Document, ctx: Context) -> list[Subject]:
    """Images of GPU containers (Kubernetes) or the image a Dockerfile builds."""
    if "compat.subjects" not in doc.cache:
        doc.cache["compat.subjects"] = list(_subjects(doc, ctx))
    return doc.cache["compat.subjects"]


def _subjects(doc: Document, ctx: Context):
    """GPU-management images (driver containers, DCGM, the container toolkit, device
    plugins) and images that never call CUDA (packaging jobs, NVML-only tools) are left
    out: they bring or manage the driver rather than run CUDA on it."""
    # Dockerfile facts and parser: only when a Dockerfile is consulted
    from gpulint.kinds.dockerfile.facts import not_cuda_workload

    if doc.kind == "dockerfile":
        built = dockerfile_cuda(doc)
        if built is not None and not_cuda_workload(doc) is None:
            yield Subject(built[0], built[1], _fleet(ctx))
        return
    if doc.kind == "devcontainer":  # a dev container that asks for GPUs
        # here, not at the top: a run over Dockerfiles does not load the dev container modules
        from gpulint.crossfile.devcontainers import gpu_devcontainer, gpu_feature_cuda
        from gpulint.kinds.devcontainer.facts import build_args

        runs, built = gpu_devcontainer(doc)
        img = image_cuda(runs[0]) if runs is not None else None
        if img is not None:
            yield Subject(img, runs[1], _fleet(ctx, docker_host=True))
        dockerfile = dockerfile_at(ctx, Path(built[0])) if built is not None else None
        if dockerfile is not None and not replaces_arg_default(build_args(doc), dockerfile):
            yield from _built_image(ctx, built[0], built[1], "the dev container's image")
        feature = gpu_feature_cuda(doc)
        if feature is not None:  # NVIDIA's libraries from its repository: no start check
            img = ImageCuda(f"the CUDA {feature.version} the `nvidia-cuda` Feature installs", feature.version,
                            feature.major_minor[0], feature.major_minor, start_check=False)
            yield Subject(img, feature.node.key_span or feature.node.span, _fleet(ctx, docker_host=True))
        return
    if doc.kind in ("compose", "commands"):  # containers that get GPUs on a Docker host
        from gpulint.crossfile.imageuse import gpu_images

        for use in gpu_images(doc):
            img = image_cuda(use.ref)
            if img is not None and use.combination:
                img = replace(img, label=f"{img.label} {use.combination}", related=img.related + use.related)
            if img is not None:
                yield Subject(img, use.where, _fleet(ctx, docker_host=True))
        yield from _compose_builds(doc, ctx)
        return
    for pod in pod_specs(doc):
        if is_gpu_management(pod):
            continue
        fleet = None
        for container in pod.containers:
            if not requests_gpus(container):
                continue
            img = _container_cuda(doc, ctx, container)
            if img is not None:
                fleet = fleet or _pod_fleet(doc, ctx, pod)
                yield Subject(img, container.image_node.span, fleet)


def _fleet(ctx: Context, docker_host: bool = False) -> Fleet:
    """The nodes an image outside any pod runs on: the same for every file of a run."""
    return ctx.memo(f"compat.fleet:{docker_host}", lambda: fleet_for(ctx, docker_host=docker_host))


def _pod_fleet(doc: Document, ctx: Context, pod) -> Fleet:
    """The nodes a pod of `doc` runs on, worked out once for GL601-GL605 (kept with the
    document, as its pods are)."""
    fleets = doc.cache.setdefault("compat.pod_fleets", {})
    if id(pod) not in fleets:
        fleets[id(pod)] = fleet_for(ctx, pod)
    return fleets[id(pod)]


def _container_cuda(doc: Document, ctx: Context, container) -> ImageCuda | None:
    """`container_cuda` of a container of `doc`, worked out once for GL601-GL605."""
    found = doc.cache.setdefault("compat.container_cuda", {})
    if id(container) not in found:
        found[id(container)] = container_cuda(ctx, container)
    return found[id(container)]


def _compose_builds(doc: Document, ctx: Context):
    """The images GPU services of a Compose file build, judged by their Dockerfile."""
    # Compose facts: only for Compose files
    from gpulint.kinds.compose.facts import gpu_service_builds

    for path, node, name, args in gpu_service_builds(doc) if doc.kind == "compose" else ():
        dockerfile = dockerfile_at(ctx, Path(path))
        if dockerfile is not None and replaces_arg_default(args, dockerfile):
            continue  # `build.args` replace an ARG default: the image's CUDA may be another
        yield from _built_image(ctx, path, node.key_span or node.span, f"the image service `{name}` builds")


def _built_image(ctx: Context, path: str, at: Span, what: str):
    """The image a Dockerfile at `path` builds for a dev container or a Compose service,
    judged where `at` names it, on the Docker host it runs on."""
    img = _built_cuda(dockerfile_at(ctx, Path(path)), what)
    if img is not None:
        yield Subject(img, at, _fleet(ctx, docker_host=True))


def _built_cuda(dockerfile: Document | None, what: str, by: str = "") -> ImageCuda | None:
    """The CUDA of the image a Dockerfile builds, named `what` with the Dockerfile beside
    it, and related to where the Dockerfile sets it."""
    built = dockerfile_cuda(dockerfile) if dockerfile is not None else None
    if built is None:
        return None
    img, where = built
    return replace(img, label=f"{what} ({by}{dockerfile.path}, {img.basis})",
                   related=(Related(dockerfile.path, where.line, where.column,
                                    f"the image's CUDA {img.version} comes from here"),))


def _origin_related(origin: Origin | None, message: str) -> tuple[Related, ...]:
    return origin.related(message) if origin is not None else ()


@check("GL601", kinds=("kubernetes", "dockerfile", "compose", "commands", "devcontainer"))
def cuda_driver_incompatible(doc: Document, ctx: Context):
    for subject in subjects(doc, ctx):
        verdict = judge(subject.img, subject.fleet)
        if verdict is None:
            continue
        related = subject.img.related + _origin_related(subject.fleet.driver.origin, "the driver comes from here")
        if verdict.by_class:
            related += _origin_related(subject.fleet.class_origin, "the GPU class comes from here")
        yield finding(doc, "GL601", subject.where, verdict.message, severity=verdict.severity, related=related)


@check("GL603", kinds=("kubernetes", "dockerfile", "compose", "commands", "devcontainer"))
def cuda_version_unknown(doc: Document, ctx: Context):
    for subject in subjects(doc, ctx):
        if subject.fleet.driver is None or not is_beyond_data(subject.img):
            continue
        latest = latest_known_cuda()
        yield finding(doc, "GL603", subject.where,
                      f"{subject.img.label} is CUDA {subject.img.xy}, newer than gpulint's CUDA data (CUDA "
                      f"{latest[0]}.{latest[1]}, data as of {cuda_as_of()}), so it was not checked against the "
                      f"driver; update gpulint", related=subject.img.related)


@check("GL604", kinds=("kubernetes", "dockerfile", "compose", "commands", "devcontainer"))
def gpu_arch_unsupported(doc: Document, ctx: Context):
    for subject in subjects(doc, ctx):
        gpu = subject.fleet.gpu
        info = gpu_info(gpu.product) if gpu is not None and gpu.product else None
        img = subject.img
        if info is None:
            continue
        described = img.image or SimpleNamespace(family=img.family, release=img.release,
                                                  cuda_major_minor=img.major_minor or (img.major, 0))
        needed = required_compute_capability(described)
        if needed is None or info.compute_capability >= needed:
            continue
        cc = ".".join(map(str, info.compute_capability))
        yield finding(doc, "GL604", subject.where,
                      f"{img.label} needs compute capability >= {needed[0]}.{needed[1]}, but the "
                      f"{gpu.product} GPUs ({gpu.product_origin.description}) are {info.arch}, compute "
                      f"capability {cc}: its kernels fail with `no kernel image is available for execution "
                      f"on the device`",
                      related=img.related + _origin_related(gpu.product_origin, "the GPU comes from here"))


@check("GL605", kinds=("kubernetes", "compose", "commands"))
def gpu_image_not_judged(doc: Document, ctx: Context):
    """A container that gets GPUs on nodes whose driver is known, running an image whose CUDA
    gpulint cannot tell: said once per image and file, rather than passed in silence."""
    seen: set[str] = set()
    for ref, where, fleet in _unjudged(doc, ctx):
        if ref in seen or fleet.driver is None:
            continue
        seen.add(ref)
        driver = fleet.driver
        shown = f"driver {driver.version}" if driver.version else "the nodes' driver"
        if jetson_image(ref) is not None:
            message = (f"image `{ref}` is a Jetson (L4T) image: it runs on the CUDA driver of the Jetson Linux "
                       f"BSP flashed on a Jetson device, so it is not judged against {shown} "
                       f"({driver.origin.description}): L4T images are built for the integrated GPU of a "
                       f"Jetson module, not for the discrete GPUs such a driver serves")
        else:
            message = (f"image `{ref}` gets GPUs, but gpulint cannot tell which CUDA it is built for, so "
                       f"it is not judged against {shown} ({driver.origin.description}); map it to the "
                       f"Dockerfile that builds it in `[tool.gpulint.images]`, or name an image whose tag "
                       f"states its CUDA")
        yield finding(doc, "GL605", where, message,
                      related=_origin_related(driver.origin, "the driver comes from here"))


def _unjudged(doc: Document, ctx: Context):
    """(image, where, fleet) of the GPU containers whose image has no CUDA gpulint knows."""
    if doc.kind in ("compose", "commands"):
        from gpulint.crossfile.imageuse import gpu_images

        uses = gpu_images(doc)
        if not uses:
            return
        fleet = _fleet(ctx, docker_host=True)
        built = _built_names(doc)
        for use in uses:
            ref = use.ref
            if image_cuda(ref) is None and mapped_dockerfile(ctx, ref) is None and ref.strip() not in built \
                    and not _placeholder(ref):
                yield ref.strip(), use.where, fleet
        return
    for pod in pod_specs(doc):
        if is_gpu_management(pod):
            continue
        for container in pod.containers:
            ref = container.image
            if ref and requests_gpus(container) and not _placeholder(ref) \
                    and _container_cuda(doc, ctx, container) is None:
                yield ref.strip(), container.image_node.span, _pod_fleet(doc, ctx, pod)


def _built_names(doc: Document) -> set[str]:
    """The `image:` names of Compose services that build their image (judged by their
    Dockerfile, GL601)."""
    if doc.kind != "compose":
        return set()
    # Compose facts: only for Compose files
    from gpulint.kinds.compose.facts import services

    return {str(s.get("image").value).strip() for s in services(doc)
            if s.get("build") is not None and s.get("image") is not None and s.get("image").is_scalar}


def _placeholder(ref: str) -> bool:
    """An image written as a variable, a template expression or a documentation placeholder
    (`<image>`): what it is is not known."""
    ref = ref.strip()
    return is_placeholder(ref) or "$" in ref or "{{" in ref or (ref.startswith("<") and ref.endswith(">"))


# ------------------------------------------------------------------ GL602


@check("GL602", kinds=("kubernetes", "gpu-operator-values"))
def driver_branch_eol(doc: Document, ctx: Context):
    seen = set()
    for pod in pod_specs(doc) if doc.kind == "kubernetes" else ():
        driver = pod_driver(pod)
        if driver is None or driver.version is None or driver.origin.span in seen:
            continue
        seen.add(driver.origin.span)
        problem = branch_problem(driver.version)
        if problem is not None:
            yield finding(doc, "GL602", driver.origin.span, f"the pod selects nodes with driver "
                          f"{driver.version}; {problem[1]}", severity=problem[0])
    for declared in operator_declarations(doc):
        problem = branch_problem(declared.version)
        if problem is not None:
            verb = "install" if declared.kind == HELM_VALUES else "installs"
            yield finding(doc, "GL602", declared.node.span, f"the {declared.kind} {verb} driver "
                          f"{declared.version}; {problem[1]}", severity=problem[0])


@check("GL602", project=True)
def configured_driver_branch_eol(ctx: Context):
    driver = config_driver(ctx.settings)
    if driver is None or driver.origin.span is None:
        return
    problem = branch_problem(driver.version)
    if problem is not None:
        yield Finding("GL602", "", problem[0], driver.origin.path, driver.origin.span,
                      f"the fleet configuration declares driver {driver.version}; {problem[1]}")
