"""CUDA container image knowledge: reference parsing, CUDA image recognition, tag catalog.

gpulint uses this to learn what a `FROM` line or a `image:` field really runs: which
CUDA version and flavor (and so which libraries and tools are present), whether the
image checks the host driver at start-up, and whether an `nvidia/cuda` tag exists,
is end of life, was removed or never existed. The facts live in
`rules/cuda-images.yaml`; nothing is loaded until first use.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping

from gpulint.knowledge import lookup_source
from gpulint.numbers import whole
from gpulint.record import Frozen, freeze, replace
from gpulint.regex import lazy
from gpulint.resources import load_yaml

# `typing` costs a one-file run about 2 ms to import: its names are for type checkers only
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ImageRef",
    "CudaImage",
    "CudaTag",
    "TagStatus",
    "FLAVOR_LIBRARIES",
    "parse_image_ref",
    "parse_cuda_tag",
    "cuda_image",
    "tag_cuda",
    "tag_status",
    "smallest_flavor_with",
    "cudnn_major_for",
    "drops_driver_path",
    "ngc_cuda",
    "images_as_of",
    "JetsonImage",
    "jetson_image",
]

_DOCKER_HUB_ALIASES = frozenset({"docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"})


# --------------------------------------------------------------------------- data


@functools.lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    """The parsed cuda-images.yaml, loaded once on first use."""
    return load_yaml("cuda-images.yaml")


def images_as_of() -> str:
    """Date (YYYY-MM-DD) of the image catalog, so findings can say how fresh it is."""
    return str(_data()["as_of"])


def _source_url(source_id: str) -> str:
    """Resolve a source ID from cuda-images.yaml to its URL."""
    return lookup_source(_data()["sources"], source_id)


# --------------------------------------------------------------------------- references


class ImageRef(Frozen):
    """A parsed container image reference.

    registry is None for the implicit Docker Hub default, so that `nvidia/cuda` and
    `docker.io/nvidia/cuda` compare equal on `repository`.
    """

    __slots__ = ("raw", "registry", "repository", "tag", "digest")

    raw: str
    registry: str | None
    repository: str
    tag: str | None
    digest: str | None

    def __init__(self, raw: str, registry: str | None, repository: str, tag: str | None, digest: str | None) -> None:
        freeze(self, raw, registry, repository, tag, digest)

    @property
    def is_docker_hub(self) -> bool:
        """True for Docker Hub, whether the registry was written or implied."""
        return self.registry is None or self.registry == "docker.io"

    def with_tag(self, tag: str, repository: str | None = None) -> str:
        """The same reference with another tag (and repository), for suggested replacements."""
        prefix = f"{self.registry}/" if self.registry else ""
        return f"{prefix}{repository or self.repository}:{tag}"


_VAR_RE = lazy(r"\$(\{|[A-Za-z_])")


# the same references come back in file after file and rule after rule; the records are frozen
@functools.lru_cache(maxsize=8192)
def parse_image_ref(text: str) -> ImageRef | None:
    """Parse `[registry[:port]/]repo[:tag][@digest]`.

    Returns None for empty text, `scratch`, and references that still contain
    unresolved `$VAR` / `${VAR}` parts, because nothing reliable can be said about them.
    """
    raw = text
    text = text.strip()
    if not text or text.lower() == "scratch" or _VAR_RE.search(text):
        return None
    digest = None
    if "@" in text:
        text, digest = text.split("@", 1)
        digest = digest or None
    registry = None
    first, sep, rest = text.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        registry = first.lower()
        text = rest
    tag = None
    last_slash = text.rfind("/")
    colon = text.rfind(":")
    if colon > last_slash:
        text, tag = text[:colon], text[colon + 1 :] or None
    if not text:
        return None
    if registry in _DOCKER_HUB_ALIASES:
        registry = "docker.io"
    repository = text
    if registry in (None, "docker.io") and repository.startswith("library/"):
        repository = repository[len("library/") :]
    return ImageRef(raw=raw, registry=registry, repository=repository, tag=tag, digest=digest)


def _coerce(ref: str | ImageRef) -> ImageRef | None:
    """Accept either a reference string or an ImageRef, as every public helper does."""
    return ref if isinstance(ref, ImageRef) else parse_image_ref(ref)


def _is_nvidia_cuda(ref: ImageRef) -> bool:
    """nvidia/cuda on Docker Hub or nvcr.io (the same tags are published on both), or one
    of the old per-architecture repositories (nvidia/cuda-arm64, nvidia/cuda-ppc64le)."""
    return (ref.repository == "nvidia/cuda" or _legacy_arch(ref) is not None) and (
        ref.is_docker_hub or ref.registry == "nvcr.io")


def _legacy_arch(ref: ImageRef) -> str | None:
    """The architecture an old per-architecture repository names, else None."""
    for row in _data()["architectures"]["legacy_repositories"]:
        if ref.repository == row["repository"]:
            return str(row["arch"])
    return None


# --------------------------------------------------------------------------- flavors


class _FlavorLibraries(Mapping[str, frozenset[str]]):
    """Generic flavor -> libraries it ships, computed from the YAML on first access.

    A lazy mapping keeps `import gpulint.knowledge.images` free of file I/O.
    """

    def _table(self) -> dict[str, frozenset[str]]:
        return _flavor_table()

    def __getitem__(self, key: str) -> frozenset[str]:
        return self._table()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return f"FLAVOR_LIBRARIES({self._table()!r})"


@functools.lru_cache(maxsize=1)
def _flavor_table() -> dict[str, frozenset[str]]:
    """Resolve each flavor's `builds_on` chain into the full set of libraries."""
    entries = {f["name"]: f for f in _data()["flavors"]}
    table: dict[str, frozenset[str]] = {}

    def resolve(name: str) -> frozenset[str]:
        if name not in table:
            entry = entries[name]
            parent = entry.get("builds_on")
            inherited = resolve(parent) if parent else frozenset()
            table[name] = inherited | frozenset(entry["adds"])
        return table[name]

    for name in entries:
        resolve(name)
    return {name: table[name] for name in entries}


FLAVOR_LIBRARIES: Mapping[str, frozenset[str]] = _FlavorLibraries()


def smallest_flavor_with(library: str) -> str:
    """The generic flavor with the fewest libraries that still ships `library`.

    Used to suggest the lightest tag that fixes a missing library (e.g. nvcc -> devel).
    Raises KeyError for a library name that no flavor ships.
    """
    candidates = [(len(libs), i, name) for i, (name, libs) in enumerate(_flavor_table().items()) if library in libs]
    if not candidates:
        raise KeyError(f"no nvidia/cuda flavor ships {library!r}")
    return min(candidates)[2]


# --------------------------------------------------------------------------- nvidia/cuda tags


class CudaTag(Frozen):
    """The parts of an nvidia/cuda tag `<version>-<flavor>-<os>[-rc]`."""

    __slots__ = ("version", "flavor", "os", "rc")

    version: str
    flavor: str
    os: str | None
    rc: bool

    def __init__(self, version: str, flavor: str, os: str | None, rc: bool = False) -> None:
        freeze(self, version, flavor, os, rc)

    @property
    def generic_flavor(self) -> str | None:
        """Flavor with any cuDNN major removed (cudnn8-devel -> cudnn-devel); None if unknown."""
        m = _FLAVOR_RE.match(self.flavor)
        if not m:
            return None
        if m.group("cudnn") is not None:
            return f"cudnn-{m.group('kind')}"
        if m.group("trt"):
            return f"tensorrt-{m.group('kind')}"
        return m.group("plain")

    @property
    def cudnn_spelling(self) -> str | None:
        """`cudnn`, `cudnn8`, ... as written, or None when the flavor has no cuDNN."""
        m = _FLAVOR_RE.match(self.flavor)
        if m and m.group("cudnn") is not None:
            return "cudnn" + m.group("cudnn")
        return None


_VERSION_RE = lazy(r"^(?P<ver>\d+\.\d+(?:\.\d+)?)(?:-(?P<rest>.+))?$")
_FLAVOR_RE = lazy(
    r"^(?:(?P<plain>base|runtime|devel)|(?:cudnn(?P<cudnn>\d*)|(?P<trt>tensorrt))-(?P<kind>runtime|devel))$"
)
_OS_RE = lazy(r"^(?:ubuntu\d+(?:\.\d+)?|centos\d+|ubi\d+|rockylinux\d+|oraclelinux\d+|amzn\d+|cm\d+|azl\d+|opensuse\d+)$")


def parse_cuda_tag(tag: str) -> CudaTag | None:
    """Split an nvidia/cuda tag into version, flavor and OS; None if it has no version."""
    m = _VERSION_RE.match(tag.strip())
    if not m:
        return None
    rest = m.group("rest") or ""
    rc = False
    if rest.endswith("-rc") or rest == "rc":
        rc = True
        rest = rest[:-3] if rest.endswith("-rc") else ""
    parts = rest.split("-") if rest else []
    os_name = None
    if parts and _OS_RE.match(parts[-1]):
        os_name = parts.pop()
    return CudaTag(version=m.group("ver"), flavor="-".join(parts), os=os_name, rc=rc)


def _vtuple(version: str) -> tuple[int, ...]:
    """Numeric tuple for ordering dotted versions."""
    return tuple(whole(p) for p in version.split("."))


# --------------------------------------------------------------------------- catalog


class _Version(Frozen):
    """One published nvidia/cuda version from the catalog."""

    __slots__ = ("version", "os", "cudnn", "cudnn_os", "tensorrt_os", "status", "reason", "superseded_by",
                 "complete", "source")

    version: str
    os: tuple[str, ...]
    cudnn: tuple[str, ...]
    cudnn_os: tuple[str, ...]
    tensorrt_os: tuple[str, ...]
    status: str
    reason: str | None
    superseded_by: str | None
    complete: bool
    source: str

    def __init__(self, version: str, os: tuple[str, ...], cudnn: tuple[str, ...], cudnn_os: tuple[str, ...],
                 tensorrt_os: tuple[str, ...], status: str, reason: str | None, superseded_by: str | None,
                 complete: bool, source: str) -> None:
        freeze(self, version, os, cudnn, cudnn_os, tensorrt_os, status, reason, superseded_by, complete, source)

    @property
    def key(self) -> tuple[int, ...]:
        return _vtuple(self.version)

    @property
    def major_minor(self) -> tuple[int, int]:
        k = self.key
        return (k[0], k[1])

    def os_for(self, generic_flavor: str) -> tuple[str, ...]:
        """OS suffixes built for a flavor of this version."""
        if generic_flavor.startswith("cudnn"):
            return self.cudnn_os if self.cudnn else ()
        if generic_flavor.startswith("tensorrt"):
            return self.tensorrt_os
        return self.os


@functools.lru_cache(maxsize=1)
def _versions() -> dict[str, _Version]:
    """Catalog of versions keyed by the version token used in tags."""
    out: dict[str, _Version] = {}
    for row in _data()["versions"]:
        os_list = tuple(row.get("os") or ())
        cudnn = tuple(row.get("cudnn") or ())
        out[row["version"]] = _Version(
            version=row["version"],
            os=os_list,
            cudnn=cudnn,
            cudnn_os=tuple(row.get("cudnn_os") or os_list) if cudnn else (),
            tensorrt_os=tuple(row.get("tensorrt_os") or ()),
            status=row["status"],
            reason=row.get("reason"),
            superseded_by=row.get("superseded_by"),
            complete=bool(row.get("complete", True)),
            source=row["source"],
        )
    return out


@functools.lru_cache(maxsize=1)
def _os_table() -> dict[str, dict[str, Any]]:
    """OS suffix -> first/last CUDA version built and distribution EOL facts."""
    return {row["name"]: row for row in _data()["operating_systems"]}


@functools.lru_cache(maxsize=1)
def _removed_tags() -> dict[str, dict[str, Any]]:
    """Exact tags users confirmed missing."""
    return {row["tag"]: row for row in _data()["removed_tags"]}


def _lines(major_minor: tuple[int, int]) -> list[_Version]:
    """All catalog versions of one X.Y, oldest first."""
    return sorted((v for v in _versions().values() if v.major_minor == major_minor), key=lambda v: v.key)


def _latest_version() -> _Version:
    return max(_versions().values(), key=lambda v: v.key)


def drops_driver_path(version: str) -> str | None:
    """The LD_LIBRARY_PATH of an nvidia/cuda release whose base images leave out the
    driver mount point /usr/local/nvidia/lib64; None for the others."""
    row = _data()["driver_path_dropped"]
    key = _vtuple(version)
    return str(row["value"]) if _vtuple(row["from"]) <= key < _vtuple(row["until"]) else None


def cudnn_major_for(version: str) -> int | None:
    """cuDNN major inside the plain `cudnn-*` flavors (12.4.1+ dropped it from the tag)."""
    v = _versions().get(version)
    if v is None and _VERSION_RE.match(version):
        v = _nearest_record(_vtuple(version))
    if v is None or "cudnn" not in v.cudnn:
        return None
    for row in _data()["cudnn_spelling"]:
        if row["spelling"] == "cudnn":
            return int(row["cudnn_major"])
    return None


def _nearest_record(key: tuple[int, ...]) -> _Version | None:
    """Latest catalog record not newer than `key` (used for post-catalog assumptions)."""
    older = [v for v in _versions().values() if v.key <= key]
    return max(older, key=lambda v: v.key) if older else None


# --------------------------------------------------------------------------- CUDA images


class CudaImage(Frozen):
    """What gpulint knows about a CUDA-based image from its reference alone.

    cuda_exact is False when the CUDA version is only a lower bound (an NGC month
    without its own release-notes row). release is the NGC YY.MM or the torch version.
    """

    __slots__ = ("ref", "family", "cuda", "cuda_major_minor", "flavor", "os", "cudnn", "has_start_check",
                 "is_devel", "libraries", "cuda_exact", "release", "arch")

    ref: ImageRef
    family: str
    cuda: str
    cuda_major_minor: tuple[int, int]
    flavor: str
    os: str | None
    cudnn: int | None
    has_start_check: bool
    is_devel: bool
    libraries: frozenset[str]
    cuda_exact: bool
    release: str | None
    arch: str | None  # the architecture the reference names (nvidia/cuda-arm64), if any

    def __init__(self, ref: ImageRef, family: str, cuda: str, cuda_major_minor: tuple[int, int], flavor: str,
                 os: str | None, cudnn: int | None, has_start_check: bool, is_devel: bool,
                 libraries: frozenset[str], cuda_exact: bool = True, release: str | None = None,
                 arch: str | None = None) -> None:
        freeze(self, ref, family, cuda, cuda_major_minor, flavor, os,
               cudnn, has_start_check, is_devel, libraries, cuda_exact, release, arch)

    @property
    def sets_visible_devices(self) -> bool:
        """The published image sets `NVIDIA_VISIBLE_DEVICES=all` itself."""
        return self.family in _data()["visible_devices_all"]["families"]


@functools.lru_cache(maxsize=8192)  # as parse_image_ref
def cuda_image(text_or_ref: str | ImageRef) -> CudaImage | None:
    """Recognise nvidia/cuda, NGC framework, pytorch/pytorch images and the serving images
    of the release tables; None for anything else."""
    ref = _coerce(text_or_ref)
    if ref is None or ref.tag is None:
        return None
    if _is_nvidia_cuda(ref):
        return _nvidia_cuda_image(ref)
    if ref.registry == "nvcr.io" and ref.repository == "nvidia/k8s/cuda-sample":
        return _cuda_sample_image(ref)
    if ref.registry == "nvcr.io" and ref.repository.startswith("nvidia/"):
        return _ngc_image(ref)
    if ref.is_docker_hub and ref.repository == "pytorch/pytorch":
        return _pytorch_image(ref)
    return _serving_image(ref)


def _mm(version: str) -> tuple[int, int]:
    parts = _vtuple(version)
    return (parts[0], parts[1])


def _nvidia_cuda_image(ref: ImageRef) -> CudaImage | None:
    """Describe an nvidia/cuda image from its tag (even a tag that does not exist)."""
    assert ref.tag is not None
    tag = parse_cuda_tag(ref.tag)
    if tag is None:
        return None
    generic = tag.generic_flavor
    cudnn: int | None = None
    spelling = tag.cudnn_spelling
    if spelling:
        cudnn = whole(spelling[5:]) if spelling != "cudnn" else cudnn_major_for(tag.version)
    return CudaImage(
        ref=ref,
        family="nvidia-cuda",
        cuda=tag.version,
        cuda_major_minor=_mm(tag.version),
        flavor=tag.flavor,
        os=tag.os,
        cudnn=cudnn,
        has_start_check=True,
        is_devel=tag.flavor.endswith("devel"),
        libraries=FLAVOR_LIBRARIES.get(generic, frozenset()) if generic else frozenset(),
        arch=_legacy_arch(ref),
    )


# YY.MM, or YY.MM.P for the occasional patch release (tritonserver:21.06.1-py3).
_NGC_TAG_RE = lazy(r"^(?P<yy>\d{2})\.(?P<mm>\d{2})(?:\.(?P<patch>\d+))?(?:-|$)")


def ngc_cuda(release: str, table: str = "releases") -> tuple[str, bool] | None:
    """CUDA version of an NGC YY.MM (or YY.MM.P patch) release and whether it is exact;
    `table` names the release table (`trtllm_releases` for Triton's TensorRT-LLM images).

    Months without their own row take the nearest earlier row's X.Y as a lower bound,
    because CUDA never goes backwards between monthly releases; a patch release
    without its own row likewise takes its month's X.Y.
    """
    rows = sorted(_data()["ngc"][table], key=lambda r: r["release"])
    exact = [r for r in rows if r["release"] == release]
    if exact:
        return str(exact[0]["cuda"]), True
    earlier = [r for r in rows if r["release"] < release]
    if not earlier:
        return None
    mm = _mm(str(earlier[-1]["cuda"]))
    return f"{mm[0]}.{mm[1]}", False


def _ngc_image(ref: ImageRef) -> CudaImage | None:
    """Describe an NGC framework image from its YY.MM[.P] tag, or an image versioned by
    its own release that is built on a framework month (`built_on`)."""
    framework = ref.repository.split("/", 1)[1]
    built_on = _data()["ngc"]["built_on"].get(framework)
    if built_on is not None:
        base = next((r["base"] for r in built_on["releases"] if r["release"] == ref.tag), None)
        framework, tag = built_on["framework"], base
    else:
        tag = ref.tag or ""
    info = _data()["ngc"]["frameworks"].get(framework)
    m = _NGC_TAG_RE.match(tag or "")
    if info is None or m is None or _data()["ngc"]["integrated_gpu_suffix"] in tag:
        return None
    release = f"{m.group('yy')}.{m.group('mm')}"
    if m.group("patch") is not None:
        release = f"{release}.{m.group('patch')}"
    variant = next((v for v in _data()["ngc"]["variants"]
                    if v["framework"] == framework and v["tag_contains"] in (ref.tag or "")), None)
    own = next((r for r in info.get("releases") or () if r["release"] == release), None)
    found = (str(own["cuda"]), True) if own else ngc_cuda(release, variant["table"] if variant else "releases")
    if found is None:
        return None
    cuda, exact = found
    libraries = frozenset(info["libraries"])
    return CudaImage(
        ref=ref,
        family="ngc",
        cuda=cuda,
        cuda_major_minor=_mm(cuda),
        flavor=framework,
        os=None,
        cudnn=None,
        has_start_check=True,
        is_devel=bool(info["is_devel"]),
        libraries=libraries,
        cuda_exact=exact,
        release=release,
    )


def _serving_image(ref: ImageRef) -> CudaImage | None:
    """A serving image versioned by its own release (TGI `3.3.7`, vLLM `v0.9.0`) or by the
    date of a nightly (JAX-Toolbox `jax-2025-10-05`) whose release or span of dates has a
    row: the base its final stage is FROM, or the X.Y its start check demands. An image whose Dockerfile builds FROM the nvidia/cuda of the
    CUDA its tag names (`cuda_suffix`: vLLM `v0.21.0-cu129`, Ray `2.9.0-py310-cu121`)
    demands that X.Y. Releases without a row are not described."""
    for entry in _data()["serving"]:
        if ref.repository not in _serving_repositories(entry) or (ref.registry or "docker.io") not in entry["registries"]:
            continue
        prefix = entry["tag_prefix"]
        tag = ref.tag or ""
        if not tag.startswith(prefix):
            return None
        named = _release_in_tag(entry, tag[len(prefix):])
        row = _release_row(entry, named)
        if row is None:
            cuda = _cuda_in_tag(tag) if entry.get("cuda_suffix") else None
            release = f"{entry['name']} {tag[len(prefix):]}"
        elif "base" in row:
            base = cuda_image(row["base"])
            if base is None:
                return None
            # built on an NGC image (a JAX-Toolbox nightly on cuda-dl-base), the image keeps
            # that image's entrypoint and driver check, as BioNeMo's do; on nvidia/cuda, its
            # NVIDIA_REQUIRE_CUDA start check
            family = base.family if base.family == "ngc" else "serving"
            return replace(base, ref=ref, family=family, release=f"{entry['name']} {named}")
        else:
            cuda, release = str(row["cuda"]), f"{entry['name']} {named}"
        if cuda is None:
            return None
        # what else the image holds is not told by a start check: no flavor, no libraries
        return CudaImage(ref=ref, family="serving", cuda=cuda, cuda_major_minor=_mm(cuda), flavor="", os=None,
                         cudnn=None, has_start_check=True, is_devel=False, libraries=frozenset(),
                         release=release)
    return None


def _release_in_tag(entry: dict[str, Any], tag: str) -> str | None:
    """The release a serving tag names: the tag itself, or what `release_pattern` takes from
    it where one release has several tags (Ray's `2.47.1-py310-gpu` is release 2.47.1)."""
    pattern = entry.get("release_pattern")
    if pattern is None:
        return tag
    m = re.fullmatch(pattern, tag)
    return m.group("release") if m else None


def _release_row(entry: dict[str, Any], named: str | None) -> dict[str, Any] | None:
    """The row of a serving entry that describes the release a tag names: the row of that
    release, or, for images published nightly under a date (`jax-2025-10-05`), the row of the
    span of dates `[from, until)` built on one base (ISO dates compare as strings)."""
    if named is None:
        return None
    for row in entry.get("releases") or ():
        if row.get("release") == named or ("from" in row and row["from"] <= named < row["until"]):
            return row
    return None


def _serving_repositories(entry: dict[str, Any]) -> tuple[str, ...]:
    """The repositories one serving entry describes (Ray publishes ray, ray-ml, ray-llm)."""
    return tuple(entry.get("repositories") or (entry["repository"],))


class JetsonImage(Frozen):
    """A Jetson (L4T) image: its CUDA driver is the device's Jetson Linux BSP.

    cuda: the CUDA release the tag names (l4t-cuda only), else None."""

    __slots__ = ("ref", "cuda", "source")

    ref: ImageRef
    cuda: str | None
    source: str

    def __init__(self, ref: ImageRef, cuda: str | None, source: str) -> None:
        freeze(self, ref, cuda, source)


_L4T_CUDA_TAG = lazy(r"^(?P<ver>\d+\.\d+\.\d+)(?:-|$)")


def jetson_image(text_or_ref: str | ImageRef) -> JetsonImage | None:
    """Recognise a Jetson (L4T) image (`nvcr.io/nvidia/l4t-*`, `deepstream-l4t`,
    `dustynv/*`); None for anything else."""
    ref = _coerce(text_or_ref)
    facts = _data()["jetson"]
    if ref is None or not any((ref.registry or "docker.io") == row["registry"] and ref.repository.startswith(row["prefix"])
                              for row in facts["repositories"]):
        return None
    m = _L4T_CUDA_TAG.match(ref.tag or "") if ref.repository in facts["cuda_in_tag"] else None
    return JetsonImage(ref, m.group("ver") if m else None, _source_url(facts["source"]))


# `cu128`, `cu118`, `cu92` or `cuda12.1` / `cuda-12.1.1` as one dash/underscore-separated
# part of a tag (vLLM, Ray, TGI and many community images name their CUDA this way).
_TAG_CUDA_RE = lazy(r"(?:^|[-_])(?:cu(?P<short>\d{2,3})|cuda-?(?P<x>\d{1,2})\.(?P<y>\d))(?:\.\d+)?(?=$|[-_])")


def _cuda_in_tag(tag: str) -> str | None:
    """The CUDA X.Y a tag names (`-cu128`, `-cuda12.8`), or None."""
    m = _TAG_CUDA_RE.search(tag.lower())
    if m is None:
        return None
    if m.group("short"):
        digits = m.group("short")
        major, minor = (digits[:-1], digits[-1])
    else:
        major, minor = m.group("x"), m.group("y")
    if not 7 <= whole(major) <= 20:
        return None
    return f"{int(major)}.{minor}"


def tag_cuda(text_or_ref: str | ImageRef) -> CudaImage | None:
    """The CUDA X.Y an image's tag states (`registry.example.com/llm:1.4-cu128` -> 12.8),
    for images gpulint knows nothing else about: lower confidence than `cuda_image`
    (nothing says whether the image checks the driver at start), so family "tag" and
    no start check. None when `cuda_image` describes the image or the tag names no X.Y."""
    ref = _coerce(text_or_ref)
    if ref is None or not ref.tag or cuda_image(ref) is not None or _is_nvidia_cuda(ref) \
            or jetson_image(ref) is not None:
        return None
    version = _cuda_in_tag(ref.tag)
    if version is None:
        return None
    return CudaImage(ref=ref, family="tag", cuda=version, cuda_major_minor=_mm(version),
                     flavor="", os=None, cudnn=None, has_start_check=False, is_devel=False,
                     libraries=frozenset())


_CUDA_SAMPLE_RE = lazy(r"-cuda(\d+\.\d+\.\d+)(?:-|$)")


def _cuda_sample_image(ref: ImageRef) -> CudaImage | None:
    """NVIDIA's Kubernetes CUDA samples (`vectoradd-cuda12.5.0-ubuntu22.04`): the sample
    copied onto the nvidia/cuda base image of the CUDA the tag names."""
    m = _CUDA_SAMPLE_RE.search(ref.tag or "")
    if m is None:
        return None
    info = _data()["cuda_sample"]
    return CudaImage(
        ref=ref,
        family="cuda-sample",
        cuda=m.group(1),
        cuda_major_minor=_mm(m.group(1)),
        flavor=info["base_flavor"],
        os=None,
        cudnn=None,
        has_start_check=True,
        is_devel=False,
        libraries=FLAVOR_LIBRARIES[info["base_flavor"]],
    )


_PYTORCH_TAG_RE = lazy(
    r"^(?P<torch>\d+\.\d+(?:\.\d+)?)-cuda(?P<cuda>\d+\.\d+)-cudnn(?P<cudnn>\d+)-(?P<flavor>runtime|devel)$"
)


def _pytorch_image(ref: ImageRef) -> CudaImage | None:
    """Describe a pytorch/pytorch `<torch>-cuda<X.Y>-cudnn<N>-{runtime,devel}` image."""
    m = _PYTORCH_TAG_RE.match(ref.tag or "")
    if m is None:
        return None
    flavor = m.group("flavor")
    info = _data()["pytorch"]["flavors"][flavor]
    if "libraries" in info:
        libraries = frozenset(info["libraries"])
    else:
        libraries = FLAVOR_LIBRARIES[info["base_flavor"]]
    return CudaImage(
        ref=ref,
        family="pytorch",
        cuda=m.group("cuda"),
        cuda_major_minor=_mm(m.group("cuda")),
        flavor=flavor,
        os=None,
        cudnn=whole(m.group("cudnn")),
        has_start_check=bool(info["has_start_check"]),
        is_devel=bool(info["is_devel"]),
        libraries=libraries,
        release=m.group("torch"),
    )


# --------------------------------------------------------------------------- tag status


class TagStatus(Frozen):
    """Verdict on an nvidia/cuda tag.

    status: supported | eol | removed | never-existed | unknown.
    suggestion: a real tag (tag string only) to use instead, or None.
    platform: the architecture the verdict is about, when the tag exists but not for it.
    repository: the repository the suggestion belongs to, when it is another one
    (nvidia/cuda for the old nvidia/cuda-arm64 repository).
    """

    __slots__ = ("status", "reason", "suggestion", "source", "platform", "repository")

    status: str
    reason: str
    suggestion: str | None
    source: str
    platform: str | None
    repository: str | None

    def __init__(self, status: str, reason: str, suggestion: str | None, source: str,
                 platform: str | None = None, repository: str | None = None) -> None:
        freeze(self, status, reason, suggestion, source, platform, repository)


@functools.lru_cache(maxsize=4096)  # a CI matrix names the same images once per combination
def tag_status(ref: str | ImageRef, platform: str | None = None) -> TagStatus | None:
    """Judge an nvidia/cuda or nvcr.io/nvidia/cuda reference against the bundled catalog,
    for `platform` (`linux/arm64`, `arm64`, ...) when the build names one.

    None for other images (and for unparsable references).
    """
    ref = _coerce(ref)
    if ref is None or not _is_nvidia_cuda(ref):
        return None
    legacy = _legacy_arch(ref)
    if legacy is not None:
        return _legacy_status(ref, legacy)
    verdict = _tag_verdict(ref)
    arch = _arch_name(platform) if platform else None
    if arch is None or verdict.status not in ("supported", "eol"):
        return verdict
    arch_verdict = _arch_verdict(ref, arch)
    return _vet(arch_verdict) if arch_verdict is not None else verdict


def _tag_verdict(ref: ImageRef) -> TagStatus:
    """The verdict on the tag alone, whatever the architecture."""
    if ref.tag is None and ref.digest:
        return TagStatus(
            "unknown",
            "The image is pinned by digest only, so gpulint cannot tell which CUDA tag it was.",
            None,
            _source_url("S5"),
        )
    tag = ref.tag or "latest"
    removed = _removed_tags().get(tag)
    if tag == "latest":
        reason = removed["reason"] if removed else "The latest tag was removed."
        if ref.tag is None:
            reason = "No tag means `latest`. " + reason
        return TagStatus("removed", reason, _default_suggestion(), _source_url(removed["source"] if removed else "S5"))
    parsed = parse_cuda_tag(tag)
    if parsed is None:
        return TagStatus(
            "never-existed",
            f"`{tag}` does not follow the nvidia/cuda tag scheme <version>-<flavor>-<os>.",
            None,
            _source_url("S5"),
        )
    verdict = _vet(_judge(parsed))
    if removed and verdict.status not in ("never-existed", "removed"):
        return TagStatus(
            "removed",
            f"`{tag}` was reported missing from the registry. {verdict.reason}",
            verdict.suggestion,
            _source_url(removed["source"]),
        )
    return verdict


def _arch_name(platform: str) -> str:
    """`linux/arm64/v8` -> arm64, `x86_64` -> amd64: the names the catalog uses."""
    parts = platform.lower().split("/")
    name = parts[1] if len(parts) > 1 and parts[0] == "linux" else parts[0]
    return {"x86_64": "amd64", "aarch64": "arm64", "sbsa": "arm64"}.get(name, name)


def _arch_verdict(ref: ImageRef, arch: str) -> TagStatus | None:
    """A never-existed verdict when NVIDIA built this tag but not for `arch`; None when
    it was built for it or the catalog cannot tell (ppc64le before 12.5)."""
    facts = _data()["architectures"]
    t = parse_cuda_tag(ref.tag or "")
    record = _versions().get(t.version) if t else None
    if t is None or record is None or t.os is None:
        return None
    generic = t.generic_flavor or "runtime"
    if arch == "ppc64le":
        power = facts["ppc64le"]
        if record.key <= _vtuple(str(power["last"])):
            return None
        return TagStatus("never-existed", power["note"], None, _source_url(power["source"]), platform=arch)
    if arch not in facts["multi_arch"]:
        return TagStatus("never-existed", f"nvidia/cuda images are built for "
                         f"linux/{' and linux/'.join(facts['multi_arch'])} only.", None,
                         _source_url(facts["source"]), platform=arch)
    for row in facts["amd64_only_os"]:
        until = row.get("until")
        if arch != "amd64" and row["os"] == t.os and (until is None or record.key <= _vtuple(str(until))):
            others = [o for o in record.os_for(generic) if o not in _amd64_only(record)]
            suggestion = _build_tag(record, generic, _nearest_os(t.os, others)) if others else None
            return TagStatus("never-existed", row["note"], suggestion, _source_url(row["source"]), platform=arch)
    return None


def _amd64_only(record: _Version) -> set[str]:
    """OS suffixes of a release whose images are x86_64 only."""
    return {row["os"] for row in _data()["architectures"]["amd64_only_os"]
            if row.get("until") is None or record.key <= _vtuple(str(row["until"]))}


def _legacy_status(ref: ImageRef, arch: str) -> TagStatus:
    """The old nvidia/cuda-arm64 / nvidia/cuda-ppc64le repositories: deprecated; the same
    tag on the multi-arch nvidia/cuda is the successor when it exists for that architecture."""
    row = next(r for r in _data()["architectures"]["legacy_repositories"] if r["arch"] == arch)
    reason = (f"The {ref.repository} repository is deprecated and unsupported: nvidia/cuda tags are "
              f"multi-arch manifests (linux/amd64 and linux/arm64) since 2021.")
    current = tag_status(ImageRef(ref.raw, ref.registry, "nvidia/cuda", ref.tag, ref.digest), arch)
    assert current is not None
    if current.status in ("never-existed", "removed"):
        return TagStatus(current.status, f"{reason} {current.reason}", current.suggestion,
                         _source_url(row["source"]), repository="nvidia/cuda")
    later = f" {current.reason}" if current.status == "eol" else ""
    return TagStatus("eol", reason + later, current.suggestion or ref.tag, _source_url(row["source"]),
                     repository="nvidia/cuda")


def _vet(verdict: TagStatus) -> TagStatus:
    """Keep only a suggestion the catalog calls supported: an end-of-life one is replaced
    by its own supported successor; anything else (removed, never built, unknown) is
    dropped rather than sent to the user."""
    suggestion = verdict.suggestion
    for _ in range(3):
        parsed = parse_cuda_tag(suggestion) if suggestion else None
        follow = _judge(parsed) if parsed else None
        if follow is None or follow.status not in ("supported", "eol"):
            suggestion = None
            break
        if follow.status == "supported":
            break
        suggestion = follow.suggestion
    else:
        suggestion = None
    return verdict if suggestion == verdict.suggestion else replace(verdict, suggestion=suggestion)


def _default_suggestion() -> str | None:
    """A current devel tag (what `latest` used to be), on the newest Ubuntu it is built for."""
    supported = [v for v in _versions().values() if v.status == "supported" and v.os]
    if not supported:
        return None
    newest = max(supported, key=lambda v: v.key)
    return _build_tag(newest, "devel", "ubuntu24.04")


def _judge(t: CudaTag) -> TagStatus:
    """Decide the status of a parsed tag: version first, then OS, flavor, lifecycle."""
    record = _versions().get(t.version)
    if record is None:
        return _unknown_version(t)
    if record.status == "no-images":
        return _never(t, record.reason or f"NVIDIA published no {t.version} images.", _successor_tag(record, t), record.source)
    if record.status == "unknown":
        return TagStatus("unknown", record.reason or f"gpulint has no reliable record of {t.version} images.", None, _source_url(record.source))
    if t.rc:
        return TagStatus(
            "removed",
            "Release-candidate (-rc) tags were removed when the final release was published.",
            _build_tag(_supported_successor(record), t.generic_flavor or "runtime", t.os),
            _source_url("S5"),
        )
    generic = t.generic_flavor
    if generic is None:
        return _never(
            t,
            f"`{t.flavor or '(none)'}` is not an nvidia/cuda flavor (base, runtime, devel, cudnn-runtime, cudnn-devel, tensorrt-runtime, tensorrt-devel).",
            _build_tag(record, _closest_flavor(t.flavor), t.os),
            "S5",
        )
    if t.os is None:
        return _osless(t, record, generic)
    if t.os not in _os_table():
        return _bad_os_name(t, record, generic)
    flavor_problem = _flavor_problem(t, record, generic)
    if flavor_problem is not None:
        return flavor_problem
    os_problem = _os_problem(t, record, generic)
    if os_problem is not None:
        return os_problem
    return _lifecycle(t, record, generic)


def _never(t: CudaTag, reason: str, suggestion: str | None, source: str) -> TagStatus:
    return TagStatus("never-existed", reason, suggestion, _source_url(source))


def _unknown_version(t: CudaTag) -> TagStatus:
    """A version token the catalog has no row for."""
    key = _vtuple(t.version)
    mm = (key[0], key[1])
    latest = _latest_version()
    lines = _lines(mm)
    flavor = t.generic_flavor or "runtime"
    if mm == (12, 7):
        target = _latest_patch(_lines((12, 8)))
        return _never(t, "There is no CUDA 12.7 toolkit; the 12.x line goes from 12.6 to 12.8.", _build_tag(target, flavor, t.os), "S5")
    if not lines:
        if mm > latest.major_minor:
            return TagStatus(
                "unknown",
                f"CUDA {t.version} is newer than gpulint's image catalog (as of {images_as_of()}).",
                None,
                _source_url("S5"),
            )
        if key < (8, 0):
            return TagStatus("removed", f"CUDA {t.version} images were deleted long ago (even 7.0 and 8.0 were on the 2023 deletion list).", None, _source_url("S7-311"))
        return _never(t, f"NVIDIA never released CUDA {mm[0]}.{mm[1]} images.", None, "S5")
    target = _latest_patch(lines)
    if len(key) == 2:
        return _never(
            t,
            f"From CUDA 11.2 on every nvidia/cuda tag carries the full X.Y.Z version; `{t.version}` was never a tag prefix.",
            _build_tag(target, flavor, t.os),
            "S5",
        )
    if not lines[-1].complete and key > lines[-1].key:
        return TagStatus(
            "unknown",
            f"CUDA {t.version} is newer than gpulint's image catalog (as of {images_as_of()}).",
            _build_tag(target, flavor, t.os),
            _source_url(lines[-1].source),
        )
    return _never(t, f"NVIDIA published no CUDA {t.version} images; the {mm[0]}.{mm[1]} releases with images are {', '.join(v.version for v in lines)}.", _build_tag(target, flavor, t.os), "S5")


def _latest_patch(lines: list[_Version]) -> _Version:
    """The newest release of an X.Y that has images, preferring supported ones."""
    usable = [v for v in lines if v.os]
    for wanted in ("supported", "eol", "unknown", "removed"):
        picks = [v for v in usable if v.status == wanted]
        if picks:
            return max(picks, key=lambda v: v.key)
    return lines[-1]


def _osless(t: CudaTag, record: _Version, generic: str) -> TagStatus:
    """Tags without an OS suffix: only the old X.Y aliases (<= 11.1) ever existed."""
    suggestion = _build_tag(_supported_successor(record), generic, None)
    if len(record.key) == 2 and record.key <= (11, 1):
        return TagStatus(
            "removed",
            f"OS-less alias tags such as `{t.version}-{t.flavor}` were removed (10.2-base, 11.0-base and 11.0-devel were gone by 2022-2023); every current tag names its OS.",
            suggestion,
            _source_url("S7-181"),
        )
    return _never(t, f"nvidia/cuda tags for CUDA {t.version} always end in an OS suffix such as -ubuntu22.04; `{t.version}-{t.flavor}` never existed.", suggestion, "S5")


def _bad_os_name(t: CudaTag, record: _Version, generic: str) -> TagStatus:
    """OS suffixes NVIDIA never used, e.g. `ubuntu2204` (the repository's directory name)."""
    assert t.os is not None
    fixed = None
    m = re.match(r"^ubuntu(\d{2})(\d{2})$", t.os)
    if m:
        fixed = f"ubuntu{m.group(1)}.{m.group(2)}"
    target = _build_tag(record, generic, fixed or t.os)
    hint = f" Tags write the Ubuntu release with a dot ({fixed})." if fixed else ""
    return _never(t, f"`{t.os}` is not an OS suffix NVIDIA publishes.{hint}", target, "S5")


def _flavor_problem(t: CudaTag, record: _Version, generic: str) -> TagStatus | None:
    """cuDNN spelling and TensorRT availability for this version."""
    assert t.os is not None
    if generic.startswith("cudnn"):
        spelling = t.cudnn_spelling
        if not record.cudnn:
            donor = _latest_with_cudnn(record)
            suggestion = _build_tag(donor, generic, t.os) if donor else _build_tag(record, generic.split("-", 1)[1], t.os)
            if not record.complete:
                return None
            return _never(t, f"NVIDIA built no cuDNN images for CUDA {t.version}.", suggestion, record.source)
        if spelling not in record.cudnn:
            right = record.cudnn[-1]
            return _never(
                t,
                f"For CUDA {t.version} the cuDNN flavor is spelled `{right}-{generic.split('-', 1)[1]}`: {_spelling_rule()}.",
                _build_tag(record, generic, t.os),
                "S5",
            )
    if generic.startswith("tensorrt") and not record.tensorrt_os:
        return _never(
            t,
            "TensorRT flavors exist only from CUDA 13.0.0 (ubuntu24.04).",
            _build_tag(record, "cudnn-" + generic.split("-", 1)[1], t.os),
            "S5",
        )
    return None


def _spelling_rule() -> str:
    return "cudnn7 up to 10.2, cudnn8 from 10.1 to 12.2.2, cudnn9 only for 12.3.2, plain cudnn from 12.4.1"


def _latest_with_cudnn(record: _Version) -> _Version | None:
    """Newest release of the same X.Y that has cuDNN images (for suggestions)."""
    picks = [v for v in _lines(record.major_minor) if v.cudnn and v.status != "removed"]
    return max(picks, key=lambda v: v.key) if picks else None


def _os_problem(t: CudaTag, record: _Version, generic: str) -> TagStatus | None:
    """The OS suffix was never built for this version and flavor."""
    assert t.os is not None
    built = record.os_for(generic)
    if t.os in built:
        return None
    os_row = _os_table()[t.os]
    in_range = _os_in_range(os_row, record) or bool(os_row.get("secondary"))
    if not record.complete and in_range:
        return TagStatus(
            "unknown",
            f"gpulint's catalog has no record of `{generic}` images on {t.os} for CUDA {t.version}; its coverage of this release is partial.",
            None,
            _source_url(record.source),
        )
    suggestion = _build_tag(record, generic, t.os)
    if in_range and generic != "base" and generic not in ("runtime", "devel") and t.os in record.os:
        why = f"NVIDIA did not build `{generic}` images on {t.os} for CUDA {t.version}."
    else:
        why = f"NVIDIA did not build CUDA {t.version} images on {t.os}{_os_range_text(os_row)}."
    return _never(t, why, suggestion, record.source)


def _os_in_range(os_row: dict[str, Any], record: _Version) -> bool:
    first = _vtuple(str(os_row["first"]))
    last = os_row.get("last")
    return record.key >= first and (last is None or record.key <= _vtuple(str(last)))


def _os_range_text(os_row: dict[str, Any]) -> str:
    last = os_row.get("last")
    if last:
        return f" ({os_row['name']} images exist for CUDA {os_row['first']} to {last})"
    return f" ({os_row['name']} images exist from CUDA {os_row['first']})"


def _lifecycle(t: CudaTag, record: _Version, generic: str) -> TagStatus:
    """The tag was built: report NVIDIA's lifecycle state for it."""
    assert t.os is not None
    source = _source_url(record.source)
    if record.status == "removed":
        successor = _supported_successor(record)
        suggestion = _build_tag(successor, generic, t.os) if successor.status == "supported" else None
        return TagStatus("removed", record.reason or f"CUDA {t.version} images were removed.", suggestion, source)
    if record.status == "eol":
        patch, successor = _resolve_successor(record), _supported_successor(record)
        suggestion = _build_tag(successor, generic, t.os) if successor is not record else None
        reason = record.reason or "It is end of life."
        if record.superseded_by:
            reason = f"CUDA {t.version} is superseded by {patch.version}. {reason}"
            if patch.status != "supported" and patch.reason:
                reason = f"{reason} {patch.version} is end of life too: {patch.reason}"
        else:
            reason = f"CUDA {t.version} images are end of life. {reason}"
        return TagStatus("eol", reason, suggestion, source)
    os_row = _os_table()[t.os]
    if os_row.get("eol"):
        return TagStatus(
            "eol",
            f"{t.os} reached end of life in {os_row['eol_date']} and NVIDIA no longer builds it (last: CUDA {os_row['last']}).",
            _build_tag(record, generic, _nearest_os(t.os, [o for o in record.os_for(generic) if not _os_table()[o].get("eol")])),
            _source_url(os_row["source"]),
        )
    if record.status == "supported":
        when = "" if record.complete else " (known from registry crawls and public Dockerfiles newer than NVIDIA's last tag list gpulint read)"
        return TagStatus(
            "supported",
            f"CUDA {t.version} is the current patch release of {record.major_minor[0]}.{record.major_minor[1]}{when}.",
            None,
            source,
        )
    return TagStatus("unknown", record.reason or "No lifecycle data.", None, source)


def _resolve_successor(record: _Version) -> _Version:
    """Follow `superseded_by` links to the release NVIDIA wants used instead."""
    seen = {record.version}
    current = record
    while current.superseded_by and current.superseded_by not in seen:
        nxt = _versions().get(current.superseded_by)
        if nxt is None:
            break
        seen.add(nxt.version)
        current = nxt
    return current


def _supported_successor(record: _Version) -> _Version:
    """The supported release to move an end-of-life one to: the newest patch of the same
    minor, or, when that is end of life too (a whole major retired with its driver
    branch), the newest supported release of the next major NVIDIA still supports."""
    current = _resolve_successor(record)
    if current.status == "supported":
        return current
    later = [v for v in _versions().values() if v.status == "supported" and v.os and v.key[0] > current.key[0]]
    if not later:
        return current
    major = min(v.key[0] for v in later)
    return max((v for v in later if v.key[0] == major), key=lambda v: v.key)


def _successor_tag(record: _Version, t: CudaTag) -> str | None:
    successor = _resolve_successor(record)
    if successor is record:
        return None
    return _build_tag(successor, t.generic_flavor or "runtime", t.os)


def _closest_flavor(flavor: str) -> str:
    """Map an unknown flavor to the generic one it most likely meant."""
    flavor = flavor.lower()
    kind = "devel" if "devel" in flavor else "runtime" if "runtime" in flavor else "base"
    if "tensorrt" in flavor:
        return f"tensorrt-{kind if kind != 'base' else 'runtime'}"
    if "cudnn" in flavor:
        return f"cudnn-{kind if kind != 'base' else 'runtime'}"
    return kind


def _build_tag(record: _Version | None, generic: str, os_name: str | None) -> str | None:
    """A real tag for `record` with the flavor spelled as that version spells it.

    Falls back to the nearest OS that version/flavor was built for; None when the
    version has no such flavor at all.
    """
    if record is None or not record.os:
        return None
    if generic.startswith("cudnn"):
        if not record.cudnn:
            generic = generic.split("-", 1)[1]
    if generic.startswith("tensorrt") and not record.tensorrt_os:
        generic = "cudnn-" + generic.split("-", 1)[1]
        if not record.cudnn:
            generic = generic.split("-", 1)[1]
    built = record.os_for(generic)
    if not built:
        return None
    chosen = os_name if os_name in built else _nearest_os(os_name, list(built))
    spelled = generic
    if generic.startswith("cudnn"):
        spelled = f"{record.cudnn[-1]}-{generic.split('-', 1)[1]}"
    return f"{record.version}-{spelled}-{chosen}"


_OS_GROUP = {
    "ubuntu": "debian",
    "centos": "rhel",
    "rockylinux": "rhel",
    "ubi": "rhel",
    "oraclelinux": "rhel",
    "amzn": "amazon",
    "cm": "mariner",
    "azl": "mariner",
    "opensuse": "suse",
}
_RHEL_PREFERENCE = {"rockylinux": 0, "ubi": 1, "oraclelinux": 2, "centos": 3}


def _split_os(os_name: str) -> tuple[str, float]:
    m = re.match(r"^([a-z]+)([\d.]+)$", os_name)
    if not m:
        return os_name, 0.0
    return m.group(1), float(m.group(2))


def _nearest_os(wanted: str | None, candidates: list[str]) -> str:
    """Pick the closest OS: same distribution, then same family, then Ubuntu 22.04/24.04.

    Ties go to the newer release, since older ones are the first to be dropped.
    """
    if not candidates:
        raise ValueError("no candidate OS")
    if wanted is None:
        for preferred in ("ubuntu22.04", "ubuntu24.04"):
            if preferred in candidates:
                return preferred
        ubuntus = [c for c in candidates if c.startswith("ubuntu")]
        return max(ubuntus, key=lambda c: _split_os(c)[1]) if ubuntus else candidates[0]
    fam, num = _split_os(wanted)
    group = _OS_GROUP.get(fam)

    def score(candidate: str) -> tuple[int, int, float, float]:
        cfam, cnum = _split_os(candidate)
        if cfam == fam:
            return (0, 0, abs(cnum - num), -cnum)
        if group is not None and _OS_GROUP.get(cfam) == group:
            return (1, _RHEL_PREFERENCE.get(cfam, 9), abs(cnum - num), -cnum)
        default_rank = {"ubuntu22.04": 0, "ubuntu24.04": 1}.get(candidate, 2)
        return (2, default_rank, 0.0, -cnum)

    return min(candidates, key=score)
