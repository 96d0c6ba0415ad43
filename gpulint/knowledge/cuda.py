"""CUDA toolkit / driver knowledge: minimum drivers, branches, forward compatibility, GPUs.

gpulint compares the CUDA version an image needs with the driver a node runs. The
rules need three different thresholds, because NVIDIA has three:
  * the Table 3 driver of a toolkit release (`toolkit(v).min_driver`): every feature,
    including PTX JIT;
  * the minor-version-compatibility floor of a major (`minor_version_floor`): the
    lowest driver that runs any binary of that major at all;
  * forward compatibility (`forward_compat_ok`): an older driver branch running a newer
    CUDA through the cuda-compat package, on data-center GPUs only; nvidia/cuda images
    state the branches they admit in their own `NVIDIA_REQUIRE_CUDA` (`image_admits`).
The facts live in `rules/cuda-driver.yaml`; nothing is loaded until first use.
"""

from __future__ import annotations

import functools
import re

from gpulint.knowledge import lookup_source
from gpulint.numbers import whole
from gpulint.record import Frozen, freeze
from gpulint.resources import load_yaml

# `typing` costs a one-file run about 2 ms to import: its names are for type checkers only
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gpulint.knowledge.images import CudaImage

__all__ = [
    "Release",
    "Branch",
    "GpuInfo",
    "toolkit",
    "latest_release",
    "branch",
    "branch_numbers",
    "supported_branches",
    "driver_max_cuda",
    "minor_version_floor",
    "forward_compat_ok",
    "image_admits",
    "images_admitting",
    "compute_capability",
    "gpu_info",
    "required_compute_capability",
    "compare_versions",
    "cuda_as_of",
    "latest_known_cuda",
    "source_url",
]


@functools.lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    """The parsed cuda-driver.yaml, loaded once on first use."""
    return load_yaml("cuda-driver.yaml")


def cuda_as_of() -> str:
    """Date (YYYY-MM-DD) of the driver knowledge, so findings can say how fresh it is."""
    return str(_data()["as_of"])


def source_url(source_id: str) -> str:
    """Resolve a source ID from cuda-driver.yaml to its URL (unknown IDs pass through)."""
    return lookup_source(_data()["sources"], source_id)


# --------------------------------------------------------------------------- versions


def _parts(version: str) -> tuple[int, ...]:
    """Dotted numeric version -> tuple of ints; raises ValueError on anything else."""
    text = str(version).strip()
    if not re.fullmatch(r"\d+(?:\.\d+)*", text):
        raise ValueError(f"not a dotted numeric version: {version!r}")
    return tuple(whole(p) for p in text.split("."))


def _xy(version: str) -> tuple[int, int]:
    """The (major, minor) of a dotted version such as "12.4" or "12.4.1"."""
    parts = _parts(version)
    return parts[0], parts[1]


def compare_versions(a: str, b: str) -> int:
    """Compare dotted driver/toolkit versions numerically: -1, 0 or 1.

    Numeric, not lexical: 570.26 < 570.124.06, and missing parts count as zero
    (580 == 580.0.0), which is how NVIDIA's ">= 580" floors read.
    """
    pa, pb = _parts(a), _parts(b)
    width = max(len(pa), len(pb))
    pa += (0,) * (width - len(pa))
    pb += (0,) * (width - len(pb))
    return (pa > pb) - (pa < pb)


# --------------------------------------------------------------------------- releases


class Release(Frozen):
    """One CUDA toolkit release and the drivers it needs.

    min_driver is the Linux Table 3 driver (None where NVIDIA's value is not known);
    unconfirmed marks rows whose value or label is not established by an official
    source, so rules can soften their findings.
    """

    __slots__ = ("version", "label", "min_driver", "minor_version_floor", "source", "windows_driver", "ga",
                 "unconfirmed", "note")

    version: str
    label: str
    min_driver: str | None
    minor_version_floor: str | None
    source: str
    windows_driver: str | None
    ga: bool
    unconfirmed: bool
    note: str | None

    def __init__(self, version: str, label: str, min_driver: str | None, minor_version_floor: str | None,
                 source: str, windows_driver: str | None = None, ga: bool = False, unconfirmed: bool = False,
                 note: str | None = None) -> None:
        freeze(self, version, label, min_driver, minor_version_floor,
               source, windows_driver, ga, unconfirmed, note)

    @property
    def major_minor(self) -> tuple[int, int]:
        return _xy(self.version)


@functools.lru_cache(maxsize=1)
def _releases() -> tuple[Release, ...]:
    """All releases, oldest first, with the per-major floor attached."""
    out = []
    for row in _data()["releases"]:
        major = _parts(row["version"])[0]
        out.append(
            Release(
                version=row["version"],
                label=row["label"],
                min_driver=row.get("linux"),
                minor_version_floor=minor_version_floor(major),
                source=row["source"],
                windows_driver=row.get("windows"),
                ga=bool(row.get("ga", False)),
                unconfirmed=bool(row.get("unconfirmed", False)),
                note=row.get("note"),
            )
        )
    return tuple(sorted(out, key=lambda r: _parts(r.version)))


def toolkit(version: str) -> Release | None:
    """Look up a toolkit release: "12.4.1"; "12.4" or "12.4.0" mean the 12.4 GA release.

    Pre-11 releases carry build numbers (10.0.130); "10.0" finds them too. NGC-style
    build suffixes ("12.8.0.038") are ignored beyond the third part.
    """
    try:
        parts = _parts(version)
    except ValueError:
        return None
    if len(parts) < 2:
        return None
    parts = parts[:3]
    for rel in _releases():
        if _parts(rel.version) == parts:
            return rel
    if len(parts) == 2 or (len(parts) == 3 and parts[2] == 0):
        for rel in _releases():
            if rel.ga and rel.major_minor == parts[:2]:
                return rel
    return None


def latest_release(major_minor: tuple[int, int]) -> Release | None:
    """Newest known release of an X.Y (None when gpulint knows no such line)."""
    picks = [r for r in _releases() if r.major_minor == tuple(major_minor)]
    return picks[-1] if picks else None


def newest_minor(major: int) -> tuple[int, int] | None:
    """Highest CUDA X.Y of `major` in the bundled data (None when it knows none)."""
    lines = [r.major_minor for r in _releases() if r.major_minor[0] == major]
    return max(lines) if lines else None


def latest_known_cuda() -> tuple[int, int]:
    """Highest CUDA X.Y in the bundled data; anything newer is beyond gpulint's knowledge."""
    return max(r.major_minor for r in _releases())


@functools.lru_cache(maxsize=None)
def minor_version_floor(major: int) -> str | None:
    """Lowest Linux driver that runs CUDA `major`.x binaries (minor-version compatibility).

    None for 10.x and older (no minor-version compatibility) and for unknown majors.
    """
    for row in _data()["minor_version_compat"]:
        if int(row["major"]) == int(major):
            value = row.get("linux")
            return str(value) if value is not None else None
    return None


# --------------------------------------------------------------------------- branches


class Branch(Frozen):
    """A driver branch (R535 ...) and what it runs.

    max_cuda: highest CUDA X.Y it runs natively. type: "LTSB", "production",
    "new feature" or None where no source states it. eol: "YYYY-MM" or None.
    forward_compat: CUDA X.Y versions it runs through cuda-compat (data-center GPUs only).
    is_eol: not among the supported data-center branches at the knowledge date.
    """

    __slots__ = ("number", "max_cuda", "type", "eol", "forward_compat", "source", "is_eol", "unconfirmed",
                 "note")

    number: int
    max_cuda: str
    type: str | None
    eol: str | None
    forward_compat: tuple[str, ...]
    source: str
    is_eol: bool
    unconfirmed: bool
    note: str | None

    def __init__(self, number: int, max_cuda: str, type: str | None, eol: str | None,
                 forward_compat: tuple[str, ...], source: str, is_eol: bool = True, unconfirmed: bool = False,
                 note: str | None = None) -> None:
        freeze(self, number, max_cuda, type, eol, forward_compat, source, is_eol, unconfirmed, note)

    @property
    def max_cuda_tuple(self) -> tuple[int, int]:
        return _xy(self.max_cuda)


@functools.lru_cache(maxsize=1)
def _image_requirements() -> dict[tuple[int, int], tuple[int, ...]]:
    """CUDA X.Y -> the branches its nvidia/cuda images admit (a bare `driver>=N`
    clause admits every listed branch from N on)."""
    out = {}
    for row in _data()["image_requirements"]:
        cuda = _xy(str(row["cuda"]))
        admitted = {int(b) for b in row["branches"]}
        if row.get("admits_from") is not None:
            admitted |= {int(b["number"]) for b in _data()["branches"]
                         if int(b["number"]) >= int(row["admits_from"]) and _xy(str(b["max_cuda"])) < cuda}
        out[cuda] = tuple(sorted(admitted))
    return out


def image_admits(cuda: tuple[int, int]) -> tuple[int, ...] | None:
    """Branches an nvidia/cuda image of CUDA X.Y starts on through forward compatibility
    (its `NVIDIA_REQUIRE_CUDA` brand clauses); None where gpulint has not read them."""
    return _image_requirements().get((whole(str(cuda[0])), whole(str(cuda[1]))))


def images_admitting(driver_branch: int) -> tuple[str, ...]:
    """CUDA X.Y versions whose nvidia/cuda images start on `driver_branch` through
    forward compatibility, oldest first."""
    return tuple(f"{xy[0]}.{xy[1]}" for xy, numbers in sorted(_image_requirements().items())
                 if whole(str(driver_branch)) in numbers)


@functools.lru_cache(maxsize=1)
def _forward_compat_index() -> dict[int, tuple[str, ...]]:
    """Branch -> CUDA versions it runs through forward compatibility: the cuda-compat
    tables and every branch an nvidia/cuda image admits (its cuda-compat libraries
    work there, or NVIDIA would not start it)."""
    index: dict[int, set[str]] = {}
    for row in _data()["forward_compat"]:
        for number in row.get("branches") or ():
            index.setdefault(int(number), set()).add(str(row["cuda"]))
    for (major, minor), numbers in _image_requirements().items():
        for number in numbers:
            index.setdefault(number, set()).add(f"{major}.{minor}")
    _fill_gaps(index)
    return {n: tuple(sorted(v, key=_parts)) for n, v in index.items()}


def _fill_gaps(index: dict[int, set[str]]) -> None:
    """A CUDA X.Y whose neighbours both run on a branch runs there too, unless a source
    says it does not (`refuses` in image_requirements): the lists are snapshots of
    different months, and a missing entry is no evidence of a refusal."""
    native = {int(row["number"]): _xy(str(row["max_cuda"])) for row in _data()["branches"]}
    refused = {(_xy(str(row["cuda"])), int(number)) for row in _data()["image_requirements"]
               for number in row.get("refuses") or ()}
    known = sorted({r.major_minor for r in _releases()})
    for number, max_cuda in native.items():
        listed = {_xy(v) for v in index.get(number, ())}

        def runs(xy: tuple[int, int]) -> bool:
            return xy <= max_cuda or xy in listed

        for before, xy, after in zip(known, known[1:], known[2:]):
            if not runs(xy) and runs(before) and runs(after) and (xy, number) not in refused:
                index.setdefault(number, set()).add(f"{xy[0]}.{xy[1]}")


@functools.lru_cache(maxsize=1)
def _branches() -> dict[int, Branch]:
    """Branch number -> Branch, in ascending order."""
    supported = set(_data()["supported_branches"]["branches"])
    fc = _forward_compat_index()
    out = {}
    for row in sorted(_data()["branches"], key=lambda r: int(r["number"])):
        number = int(row["number"])
        out[number] = Branch(
            number=number,
            max_cuda=str(row["max_cuda"]),
            type=row.get("type"),
            eol=row.get("eol"),
            forward_compat=fc.get(number, ()),
            source=row["source"],
            is_eol=number not in supported,
            unconfirmed=bool(row.get("unconfirmed", False)),
            note=row.get("note"),
        )
    return out


def _branch_number(driver: str | int) -> int | None:
    """"535.104.05", "535", 535, "R535" -> 535."""
    if isinstance(driver, int):
        return driver
    m = re.fullmatch(r"[rR]?(\d+)(?:\.\d+)*", str(driver).strip())
    return whole(m.group(1)) if m else None


def branch(driver: str | int) -> Branch | None:
    """The branch a driver version belongs to; None if gpulint does not list it."""
    number = _branch_number(driver)
    return _branches().get(number) if number is not None else None


def branch_numbers() -> tuple[int, ...]:
    """Every driver branch gpulint knows, ascending."""
    return tuple(_branches())


def supported_branches() -> tuple[Branch, ...]:
    """The branches NVIDIA supports on data-center GPUs at the knowledge date, oldest first."""
    return tuple(b for b in _branches().values() if not b.is_eol)


def driver_max_cuda(driver: str | int) -> tuple[int, int] | None:
    """Highest CUDA X.Y the driver runs natively (what nvidia-smi prints as "CUDA Version").

    Unlisted branches between listed ones inherit the next lower listed branch (a driver
    runs everything its predecessors ran); branches newer than the data give None.
    """
    number = _branch_number(driver)
    if number is None:
        return None
    known = _branches()
    if number in known:
        return known[number].max_cuda_tuple
    lower = [n for n in known if n < number]
    if not lower or number > max(known):
        return None
    return known[max(lower)].max_cuda_tuple


def forward_compat_ok(image_cuda: tuple[int, int], driver_branch: int) -> bool:
    """Can a data-center GPU on `driver_branch` run CUDA `image_cuda`?

    True when the branch runs it natively or a cuda-compat package is documented to
    work on that branch. Consumer GPUs never get forward compatibility; callers must
    check the GPU class separately (see gpu_info).
    """
    info = branch(driver_branch)
    wanted = (whole(str(image_cuda[0])), whole(str(image_cuda[1])))
    if info is None:
        return False
    if wanted <= info.max_cuda_tuple:
        return True
    return f"{wanted[0]}.{wanted[1]}" in info.forward_compat


# --------------------------------------------------------------------------- GPUs


# The GPU classes users can state (`--gpu-class`, `gpu-class` in [tool.gpulint.fleet]):
# forward compatibility works on data-center and Jetson (embedded) GPUs, on select
# NGC-ready workstation cards, and never on consumer (GeForce) cards.
GPU_CLASSES = ("datacenter", "workstation", "embedded", "consumer")


class GpuInfo(Frozen):
    """A GPU product family: name matched, compute capability, architecture, class.

    gpu_class: "datacenter", "workstation", "consumer" or "embedded"; forward
    compatibility needs a data-center (or NGC-ready RTX / Jetson) part.
    """

    __slots__ = ("name", "compute_capability", "arch", "gpu_class", "source")

    name: str
    compute_capability: tuple[int, int]
    arch: str
    gpu_class: str
    source: str

    def __init__(self, name: str, compute_capability: tuple[int, int], arch: str, gpu_class: str, source: str) -> None:
        freeze(self, name, compute_capability, arch, gpu_class, source)


def _normalise_product(text: str) -> str:
    return re.sub(r"[\s_\-]+", "-", text.strip().lower())


@functools.lru_cache(maxsize=1)
def _gpu_patterns() -> tuple[tuple[re.Pattern[str], int, GpuInfo], ...]:
    """Whole-token patterns for every product name, longest first."""
    out = []
    for row in _data()["gpus"]:
        major, minor = _parts(str(row["cc"]))[:2]
        for name in row["names"]:
            norm = _normalise_product(name)
            pattern = re.compile(r"(?<![a-z0-9])" + re.escape(norm) + r"(?![a-z0-9])")
            info = GpuInfo(name=name, compute_capability=(major, minor), arch=row["arch"], gpu_class=row["class"], source=row["source"])
            out.append((pattern, len(norm), info))
    out.sort(key=lambda item: -item[1])
    return tuple(out)


def gpu_info(gpu_product: str) -> GpuInfo | None:
    """Match a product string such as "NVIDIA-A100-SXM4-80GB" or "Tesla-T4".

    Case-insensitive whole-token match; the longest known name wins, so "A10G" is not
    read as "A10" and "GH200" is not read as "H200".
    """
    text = _normalise_product(gpu_product)
    for pattern, _length, info in _gpu_patterns():
        if pattern.search(text):
            return info
    return None


def compute_capability(gpu_product: str) -> tuple[int, int] | None:
    """Compute capability of a GPU product name, or None if gpulint does not know it."""
    info = gpu_info(gpu_product)
    return info.compute_capability if info else None


def required_compute_capability(image: CudaImage) -> tuple[int, int] | None:
    """Lowest compute capability an image's CUDA code can run on.

    The strictest of: the toolkit floor of the CUDA major (13.x -> 7.5), NGC's floor by
    release (25.01+ -> 7.5), PyTorch's own drops (2.8+ with CUDA 12.8+ -> 7.5).
    """
    floors = _data()["architecture_floors"]
    found: list[tuple[int, int]] = []
    major = image.cuda_major_minor[0]
    for row in floors["toolkit"]:
        if int(row["major"]) == major:
            found.append(_cc(row["min_cc"]))
    if image.family == "ngc" and image.release:
        for row in sorted(floors["ngc"], key=lambda r: r["from"], reverse=True):
            if image.release >= str(row["from"]):
                found.append(_cc(row["min_cc"]))
                break
    if image.family == "pytorch" and image.release:
        for row in floors["pytorch"]:
            if (
                _parts(image.release)[:2] >= _parts(str(row["min_torch"]))[:2]
                and image.cuda_major_minor >= _parts(str(row["min_cuda"]))[:2]
            ):
                found.append(_cc(row["min_cc"]))
    return max(found) if found else None


def _cc(text: Any) -> tuple[int, int]:
    return _xy(str(text))


def branch_problem(version: str) -> tuple[str, str] | None:
    """(severity, sentence) when a driver's branch is end of life (warning) or a new
    feature branch without an end-of-life date (info: NVIDIA does not date them, they
    are simply not maintained); None for supported branches."""
    info = branch(version)
    if info is None or not info.is_eol or (info.unconfirmed and info.type is None):
        return None
    if info.type == "new feature" and info.eol is None:
        return ("info", f"R{info.number} is a new feature branch: short-lived, not updated after its release "
                        f"and not a supported forward-compatibility target; run GPU nodes on a "
                        f"long-term-support or production branch ({_supported_text()})")
    kind = {"LTSB": "a long-term-support branch", "new feature": "a new feature branch",
            "production": "a production branch (not a long-term-support branch)"}.get(info.type or "", "a branch")
    when = f"reached end of life in {info.eol}" if info.eol else "is no longer supported"
    return ("warning", f"R{info.number} is {kind} that {when}: it gets no security or bug fixes; move to a "
                       f"supported branch ({_supported_text()})")


def _supported_text() -> str:
    return ", ".join(f"R{b.number}{' ' + b.type if b.type else ''} until {b.eol}" for b in supported_branches())
