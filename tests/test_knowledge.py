"""Tests of the bundled CUDA knowledge base and its typed access layer."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from gpulint.knowledge import cuda, images
from gpulint.knowledge.images import FLAVOR_LIBRARIES, cuda_image, parse_image_ref, tag_status
from gpulint.resources import load_yaml

REFERENCE_TSV = Path(__file__).resolve().parents[2] / "shared/reference/data/cuda-driver-compat.tsv"
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MONTH_RE = re.compile(r"^\d{4}-\d{2}$")
LIBRARY_NAMES = {
    "cudart", "cuda-compat", "cublas", "cufft", "curand", "cusolver", "cusparse", "npp",
    "nvjpeg", "nvtx", "nccl", "cudnn", "nvcc", "headers", "static", "tensorrt",
}


def vt(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


@pytest.fixture(scope="module")
def driver_data() -> dict:
    return load_yaml("cuda-driver.yaml")


@pytest.fixture(scope="module")
def image_data() -> dict:
    return load_yaml("cuda-images.yaml")


# --------------------------------------------------------------------------- data consistency


@pytest.mark.parametrize("name", ["cuda-driver.yaml", "cuda-images.yaml"])
def test_as_of_and_sources_present(name: str) -> None:
    data = load_yaml(name)
    assert DATE_RE.match(str(data["as_of"]))
    ids = [s["id"] for s in data["sources"]]
    assert len(ids) == len(set(ids))
    assert all(s["url"].startswith("https://") for s in data["sources"])


def _cited_sources(node, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        if isinstance(node.get("source"), str):
            found.add(node["source"])
        for key, value in node.items():
            if key != "sources":
                _cited_sources(value, found)
    elif isinstance(node, list):
        for item in node:
            _cited_sources(item, found)
    return found


@pytest.mark.parametrize("name", ["cuda-driver.yaml", "cuda-images.yaml"])
def test_every_cited_source_is_declared(name: str) -> None:
    data = load_yaml(name)
    declared = {s["id"] for s in data["sources"]}
    assert _cited_sources(data, set()) <= declared


def test_every_release_row_cites_a_source(driver_data: dict) -> None:
    for row in driver_data["releases"]:
        assert row.get("source"), row


def test_releases_ordered_and_unique(driver_data: dict) -> None:
    versions = [vt(r["version"]) for r in driver_data["releases"]]
    assert versions == sorted(versions)
    assert len(versions) == len(set(versions))


def test_min_driver_non_decreasing_within_major(driver_data: dict) -> None:
    previous: dict[int, str] = {}
    for row in driver_data["releases"]:
        if row.get("linux") is None:
            continue
        major = vt(row["version"])[0]
        if major in previous:
            assert cuda.compare_versions(row["linux"], previous[major]) >= 0, row["version"]
        previous[major] = row["linux"]


def test_one_ga_per_minor(driver_data: dict) -> None:
    seen: set[tuple[int, ...]] = set()
    for row in driver_data["releases"]:
        if row.get("ga"):
            mm = vt(row["version"])[:2]
            assert mm not in seen
            seen.add(mm)


def test_no_cuda_12_7(driver_data: dict) -> None:
    assert not [r for r in driver_data["releases"] if r["version"].startswith("12.7")]
    assert cuda.toolkit("12.7") is None


def test_branches_ordered_and_consistent(driver_data: dict) -> None:
    numbers = [b["number"] for b in driver_data["branches"]]
    assert numbers == sorted(numbers) and len(numbers) == len(set(numbers))
    max_cudas = [vt(b["max_cuda"]) for b in driver_data["branches"]]
    assert max_cudas == sorted(max_cudas)
    for row in driver_data["branches"]:
        assert row["type"] in (None, "LTSB", "production", "new feature")
        assert row["eol"] is None or MONTH_RE.match(row["eol"])
        assert row["source"]


def test_every_referenced_branch_is_known(driver_data: dict, image_data: dict) -> None:
    known = {b["number"] for b in driver_data["branches"]}
    for row in driver_data["forward_compat"]:
        assert set(row.get("branches") or []) <= known, row
        assert set(row.get("native") or []) <= known, row
    assert set(driver_data["supported_branches"]["branches"]) <= known
    for row in driver_data["image_requirements"]:
        assert set(row["branches"]) | set(row.get("refuses") or []) <= known, row["cuda"]
        for number in row["branches"]:
            # an image names only branches below its own CUDA level
            assert vt(row["cuda"]) > vt(cuda.branch(number).max_cuda), (row["cuda"], number)


def test_forward_compat_native_matches_branch_max_cuda(driver_data: dict) -> None:
    for row in driver_data["forward_compat"]:
        for number in row.get("native") or []:
            assert cuda.branch(number).max_cuda == row["cuda"]
        for number in row.get("branches") or []:
            # a compat package only makes sense for a CUDA newer than the branch runs natively
            assert vt(row["cuda"]) > vt(cuda.branch(number).max_cuda), (row["cuda"], number)


def test_branch_max_cuda_matches_table3(driver_data: dict) -> None:
    """Each toolkit's Table 3 driver belongs to a branch that runs at least that toolkit."""
    for row in driver_data["releases"]:
        if row.get("linux") is None or row.get("unconfirmed"):
            continue
        got = cuda.driver_max_cuda(row["linux"])
        assert got is not None and got >= vt(row["version"])[:2], row["version"]


def test_minor_version_floors(driver_data: dict) -> None:
    assert cuda.minor_version_floor(11) == "450.80.02"
    assert cuda.minor_version_floor(12) == "525.60.13"
    assert cuda.compare_versions(cuda.minor_version_floor(13), "580") == 0
    assert cuda.minor_version_floor(10) is None
    assert cuda.minor_version_floor(9) is None
    # the floor never exceeds the GA driver, except 11.0 GA, which shipped before the
    # 450.80.02 Tesla Recommended Driver that made 11.x minor-version compatibility work
    for major in (12, 13):
        ga = cuda.toolkit(f"{major}.0")
        assert cuda.compare_versions(ga.min_driver, cuda.minor_version_floor(major)) >= 0
    assert cuda.compare_versions(cuda.toolkit("11.0").min_driver, "450.80.02") < 0


def test_every_flavor_known(image_data: dict) -> None:
    names = [f["name"] for f in image_data["flavors"]]
    for flavor in image_data["flavors"]:
        assert flavor["builds_on"] is None or flavor["builds_on"] in names
        assert set(flavor["adds"]) <= LIBRARY_NAMES
    assert set(FLAVOR_LIBRARIES) == set(names)
    assert image_data["pytorch"]["flavors"]["devel"]["base_flavor"] in names
    for fw in image_data["ngc"]["frameworks"].values():
        assert set(fw["libraries"]) <= LIBRARY_NAMES
    assert set(image_data["pytorch"]["flavors"]["runtime"]["libraries"]) <= LIBRARY_NAMES


def test_image_versions_consistent(image_data: dict) -> None:
    os_names = {o["name"] for o in image_data["operating_systems"]}
    versions = [row["version"] for row in image_data["versions"]]
    assert [vt(v) for v in versions] == sorted(vt(v) for v in versions)
    assert len(versions) == len(set(versions))
    spellings = {s["spelling"] for s in image_data["cudnn_spelling"]}
    for row in image_data["versions"]:
        assert row["status"] in ("supported", "eol", "removed", "no-images", "unknown")
        assert set(row.get("os") or []) <= os_names, row["version"]
        assert set(row.get("cudnn_os") or []) <= set(row.get("os") or []), row["version"]
        assert set(row.get("tensorrt_os") or []) <= set(row.get("os") or []), row["version"]
        assert set(row.get("cudnn") or []) <= spellings
        if row.get("superseded_by"):
            assert row["superseded_by"] in versions
            assert vt(row["superseded_by"]) > vt(row["version"])
        if row["status"] in ("eol", "removed", "no-images", "unknown"):
            assert row.get("reason"), row["version"]
        assert row["source"]


def test_image_os_ranges_cover_catalog(image_data: dict) -> None:
    ranges = {o["name"]: o for o in image_data["operating_systems"]}
    for row in image_data["versions"]:
        for os_name in row.get("os") or []:
            first, last = ranges[os_name]["first"], ranges[os_name]["last"]
            assert vt(row["version"]) >= vt(first), (row["version"], os_name)
            assert last is None or vt(row["version"]) <= vt(last), (row["version"], os_name)


def test_cudnn_spelling_by_version(image_data: dict) -> None:
    for row in image_data["versions"]:
        key = vt(row["version"])
        for spelling in row.get("cudnn") or []:
            if spelling == "cudnn8":
                assert (10, 1) <= key <= (12, 2, 2)
            elif spelling == "cudnn9":
                assert key == (12, 3, 2)
            elif spelling == "cudnn":
                assert key >= (12, 4, 1)
            else:
                assert key <= (10, 2)


def test_ngc_releases_ordered(image_data: dict) -> None:
    rows = image_data["ngc"]["releases"]
    assert [r["release"] for r in rows] == sorted(r["release"] for r in rows)
    cudas = [vt(r["cuda"])[:2] for r in rows]
    assert cudas == sorted(cudas)


def test_as_of_helpers() -> None:
    assert DATE_RE.match(cuda.cuda_as_of())
    assert DATE_RE.match(images.images_as_of())
    assert cuda.latest_known_cuda() >= (13, 4)


# --------------------------------------------------------------------------- reference table


def _reference_rows() -> list[dict[str, str]]:
    if not REFERENCE_TSV.is_file():
        pytest.skip(f"reference table not found at {REFERENCE_TSV}")
    with REFERENCE_TSV.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def test_reference_table_matches_exactly() -> None:
    rows = _reference_rows()
    checked = 0
    for row in rows:
        if "UNCONFIRMED" in row["release_label"] or "UNCONFIRMED" in row["source"]:
            release = cuda.toolkit(row["cuda_version"])
            assert release is None or release.unconfirmed, row["cuda_version"]
            continue
        release = cuda.toolkit(row["cuda_version"])
        assert release is not None, row["cuda_version"]
        assert release.min_driver == row["min_linux_driver"], row["cuda_version"]
        assert (release.windows_driver or "") == row["min_windows_driver"], row["cuda_version"]
        checked += 1
    assert checked >= 60


# --------------------------------------------------------------------------- toolkit / driver API


@pytest.mark.parametrize(
    ("query", "version", "driver"),
    [
        ("12.4.1", "12.4.1", "550.54.15"),
        ("12.4", "12.4.0", "550.54.14"),
        ("12.4.0", "12.4.0", "550.54.14"),
        ("12.8", "12.8.0", "570.26"),
        ("13.0", "13.0.0", "580.65.06"),
        ("11.0", "11.0.2", "450.51.05"),
        ("10.1", "10.1.105", "418.39"),
        ("9.2.148", "9.2.148", "396.37"),
        ("10.0.130", "10.0.130", "410.48"),
        ("12.8.0.038", "12.8.0", "570.26"),
    ],
)
def test_toolkit_lookup(query: str, version: str, driver: str) -> None:
    release = cuda.toolkit(query)
    assert release is not None
    assert (release.version, release.min_driver) == (version, driver)


def test_toolkit_unknown_and_unconfirmed() -> None:
    assert cuda.toolkit("14.0") is None
    assert cuda.toolkit("nonsense") is None
    assert cuda.toolkit("12") is None
    ga = cuda.toolkit("13.4")
    assert ga.version == "13.4.1" and ga.min_driver is None and ga.unconfirmed
    assert ga.minor_version_floor is not None
    assert cuda.toolkit("12.4.1").label == "CUDA 12.4 Update 1"
    assert cuda.toolkit("12.4.1").minor_version_floor == "525.60.13"
    assert cuda.toolkit("10.2").minor_version_floor is None


def test_latest_release() -> None:
    assert cuda.latest_release((12, 4)).version == "12.4.1"
    assert cuda.latest_release((12, 6)).version == "12.6.3"
    assert cuda.latest_release((12, 7)) is None


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("570.26", "570.124.06", -1),
        ("580", "580.0.0", 0),
        ("535.104.05", "535.54.03", 1),
        ("525.60.13", "525.60.13", 0),
        ("450.80.02", "450.80.2", 0),
    ],
)
def test_compare_versions(a: str, b: str, expected: int) -> None:
    assert cuda.compare_versions(a, b) == expected


def test_compare_versions_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        cuda.compare_versions("535.x", "535")


@pytest.mark.parametrize(
    ("driver", "number", "max_cuda", "kind"),
    [
        ("535.104.05", 535, "12.2", "LTSB"),
        ("535", 535, "12.2", "LTSB"),
        (535, 535, "12.2", "LTSB"),
        ("R550", 550, "12.4", "production"),
        ("570.124.06", 570, "12.8", "production"),
        ("580.65.06", 580, "13.0", "LTSB"),
        ("525.85.12", 525, "12.0", "production"),
        ("470.82.01", 470, "11.4", "LTSB"),
        ("590.44.01", 590, "13.1", "new feature"),
        ("595.45.04", 595, "13.2", "production"),
    ],
)
def test_branch_lookup(driver, number: int, max_cuda: str, kind: str) -> None:
    info = cuda.branch(driver)
    assert info is not None
    assert (info.number, info.max_cuda, info.type) == (number, max_cuda, kind)


def test_branch_lifecycle() -> None:
    assert cuda.branch(470).eol == "2024-07"
    assert cuda.branch(535).eol == "2026-06"
    assert cuda.branch(580).eol == "2028-06"
    assert cuda.branch(570).eol == "2026-02"
    assert cuda.branch(620).type == "LTSB"
    assert not cuda.branch(580).is_eol and not cuda.branch(595).is_eol
    assert cuda.branch(535).is_eol and cuda.branch(470).is_eol
    assert cuda.branch(999) is None
    assert cuda.branch("garbage") is None


def test_driver_max_cuda() -> None:
    assert cuda.driver_max_cuda("550.54.15") == (12, 4)
    assert cuda.driver_max_cuda(565) == (12, 7)
    assert cuda.driver_max_cuda("430.64") == (10, 1)  # unlisted branch between R418 and R440
    assert cuda.driver_max_cuda("999.1") is None
    assert cuda.driver_max_cuda("100") is None


def test_forward_compat() -> None:
    assert cuda.forward_compat_ok((12, 8), 535)
    assert cuda.forward_compat_ok((13, 4), 535)
    assert cuda.forward_compat_ok((13, 0), 570)
    assert cuda.forward_compat_ok((12, 9), 570)
    assert cuda.forward_compat_ok((13, 1), 580)
    assert not cuda.forward_compat_ok((13, 0), 470)
    assert cuda.forward_compat_ok((13, 1), 570)  # S3: cuda-compat-13-1 supports R570
    assert cuda.forward_compat_ok((12, 2), 535)  # native
    assert cuda.forward_compat_ok((12, 1), 535)  # native (older)
    assert not cuda.forward_compat_ok((13, 5), 535)
    assert not cuda.forward_compat_ok((12, 8), 999)
    assert "12.8" in cuda.branch(535).forward_compat
    assert "12.8" not in cuda.branch(570).forward_compat


@pytest.mark.parametrize(
    ("product", "cc"),
    [
        ("NVIDIA-A100-SXM4-80GB", (8, 0)),
        ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", (8, 0)),
        ("Tesla-T4", (7, 5)),
        ("Tesla-V100-SXM2-16GB", (7, 0)),
        ("H100", (9, 0)),
        ("NVIDIA-H100-80GB-HBM3", (9, 0)),
        ("NVIDIA-H200", (9, 0)),
        ("NVIDIA-GH200-480GB", (9, 0)),
        ("NVIDIA-A10", (8, 6)),
        ("NVIDIA-A10G", (8, 6)),
        ("NVIDIA-L4", (8, 9)),
        ("NVIDIA-L40S", (8, 9)),
        ("nvidia l40s", (8, 9)),
        ("NVIDIA-B200", (10, 0)),
        ("NVIDIA-GeForce-RTX-4090", (8, 9)),
        ("NVIDIA-RTX-6000-Ada-Generation", (8, 9)),
        ("Quadro-RTX-6000", (7, 5)),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", (12, 0)),
    ],
)
def test_compute_capability(product: str, cc: tuple[int, int]) -> None:
    assert cuda.compute_capability(product) == cc


def test_compute_capability_unknown() -> None:
    assert cuda.compute_capability("Radeon-MI300X") is None
    assert cuda.compute_capability("") is None


def test_gpu_class() -> None:
    assert cuda.gpu_info("Tesla-T4").gpu_class == "datacenter"
    assert cuda.gpu_info("NVIDIA-GeForce-RTX-4090").gpu_class == "consumer"


@pytest.mark.parametrize(
    ("image", "cc"),
    [
        ("nvidia/cuda:13.0.0-runtime-ubuntu24.04", (7, 5)),
        ("nvidia/cuda:12.4.1-runtime-ubuntu22.04", (5, 0)),
        ("nvcr.io/nvidia/pytorch:25.01-py3", (7, 5)),
        ("nvcr.io/nvidia/pytorch:24.10-py3", (6, 0)),
        ("pytorch/pytorch:2.9.0-cuda12.8-cudnn9-runtime", (7, 5)),
        ("pytorch/pytorch:2.7.0-cuda12.6-cudnn9-runtime", (5, 0)),
    ],
)
def test_required_compute_capability(image: str, cc: tuple[int, int]) -> None:
    info = cuda_image(image)
    assert info is not None
    assert cuda.required_compute_capability(info) == cc


# --------------------------------------------------------------------------- image references


@pytest.mark.parametrize(
    ("text", "registry", "repository", "tag", "digest"),
    [
        ("nvidia/cuda:12.4.1-runtime-ubuntu22.04", None, "nvidia/cuda", "12.4.1-runtime-ubuntu22.04", None),
        ("docker.io/nvidia/cuda", "docker.io", "nvidia/cuda", None, None),
        ("index.docker.io/nvidia/cuda:12.8.1-base-ubuntu24.04", "docker.io", "nvidia/cuda", "12.8.1-base-ubuntu24.04", None),
        ("ubuntu:22.04", None, "ubuntu", "22.04", None),
        ("library/ubuntu", None, "ubuntu", None, None),
        ("docker.io/library/ubuntu:22.04", "docker.io", "ubuntu", "22.04", None),
        ("nvcr.io/nvidia/pytorch:24.05-py3", "nvcr.io", "nvidia/pytorch", "24.05-py3", None),
        ("localhost:5000/team/app:1.2@sha256:abc", "localhost:5000", "team/app", "1.2", "sha256:abc"),
        ("registry.local:443/nvidia/cuda@sha256:deadbeef", "registry.local:443", "nvidia/cuda", None, "sha256:deadbeef"),
        ("MyRegistry.Example.COM/Team/App", "myregistry.example.com", "Team/App", None, None),
        ("localhost/app", "localhost", "app", None, None),
        ("  nvidia/cuda:13.0.0-devel-ubuntu24.04  ", None, "nvidia/cuda", "13.0.0-devel-ubuntu24.04", None),
    ],
)
def test_parse_image_ref(text: str, registry, repository: str, tag, digest) -> None:
    ref = parse_image_ref(text)
    assert ref is not None
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == (registry, repository, tag, digest)
    assert ref.raw == text


@pytest.mark.parametrize("text", ["", "   ", "scratch", "SCRATCH", "$BASE", "${BASE_IMAGE}", "nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu22.04", "$REG/nvidia/cuda:12.4.1-base-ubuntu22.04"])
def test_parse_image_ref_unresolvable(text: str) -> None:
    assert parse_image_ref(text) is None


def test_cuda_image_nvidia_cuda() -> None:
    img = cuda_image("nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04")
    assert img.family == "nvidia-cuda"
    assert (img.cuda, img.cuda_major_minor) == ("12.4.1", (12, 4))
    assert (img.flavor, img.os, img.cudnn) == ("cudnn-devel", "ubuntu22.04", 9)
    assert img.has_start_check and img.is_devel
    assert {"nvcc", "cudnn", "cublas", "headers"} <= img.libraries

    img = cuda_image("nvcr.io/nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu20.04")
    assert (img.flavor, img.cudnn, img.is_devel) == ("cudnn8-runtime", 8, False)
    assert "nvcc" not in img.libraries and "cudnn" in img.libraries

    img = cuda_image("nvidia/cuda:12.8.1-base-ubuntu24.04")
    assert img.libraries == frozenset({"cudart", "cuda-compat"})

    img = cuda_image("nvidia/cuda:13.0.0-tensorrt-runtime-ubuntu24.04@sha256:0123")
    assert "tensorrt" in img.libraries and img.flavor == "tensorrt-runtime"

    img = cuda_image("nvidia/cuda:10.2-cudnn7-devel-ubuntu18.04")
    assert (img.cuda, img.cuda_major_minor, img.cudnn) == ("10.2", (10, 2), 7)

    img = cuda_image("nvidia/cuda:12.0-runtime")
    assert (img.cuda, img.os, img.flavor) == ("12.0", None, "runtime")


def test_cuda_image_ngc() -> None:
    img = cuda_image("nvcr.io/nvidia/pytorch:24.05-py3")
    assert (img.family, img.flavor, img.cuda, img.release) == ("ngc", "pytorch", "12.4.1", "24.05")
    assert img.has_start_check and img.cuda_exact and img.is_devel
    img = cuda_image("nvcr.io/nvidia/tritonserver:25.08-py3")
    assert (img.cuda_major_minor, img.flavor, img.is_devel) == ((13, 0), "tritonserver", False)
    img = cuda_image("nvcr.io/nvidia/tensorflow:23.01-tf2-py3")
    assert img.cuda == "12.0.1"
    img = cuda_image("nvcr.io/nvidia/tritonserver:24.09-trtllm-python-py3")
    assert img.cuda == "12.5.1" and img.cuda_exact  # the TensorRT-LLM images lag the month
    assert cuda_image("nvcr.io/nvidia/pytorch:19.10-py3") is None
    assert cuda_image("nvcr.io/nvidia/pytorch:latest") is None


@pytest.mark.parametrize(
    ("image", "cuda", "exact"),
    [
        # the first month with a row, and a month before any row
        ("nvcr.io/nvidia/pytorch:20.01-py3", "10.2.89", True),
        ("nvcr.io/nvidia/tensorflow:20.03-tf1-py3", "10.2.89", True),
        # no 20.04/20.05 notes: at least the 20.03 CUDA
        ("nvcr.io/nvidia/pytorch:20.05-py3", "10.2", False),
        # the CUDA 11.0 jump; the notes give builds (11.0.167, 11.0.194), not X.Y.Z
        ("nvcr.io/nvidia/tensorflow:20.06-tf2-py3", "11.0", True),
        ("nvcr.io/nvidia/tritonserver:20.07-py3", "11.0", True),
        ("nvcr.io/nvidia/pytorch:20.12-py3", "11.1.1", True),
        ("nvcr.io/nvidia/tensorflow:20.12-tf1-py3", "11.1.1", True),
        ("nvcr.io/nvidia/pytorch:21.01-py3", "11.1", False),
        ("nvcr.io/nvidia/tensorflow:21.03-tf2-py3", "11.2.1", True),
        ("nvcr.io/nvidia/pytorch:21.06-py3", "11.3.1", True),
        ("nvcr.io/nvidia/tritonserver:21.10-py3", "11.4.2", True),
        ("nvcr.io/nvidia/pytorch:22.05-py3", "11.7", True),
        ("nvcr.io/nvidia/tensorflow:22.06-tf2-py3", "11.7", True),  # "11.7 Update 1 Preview"
        ("nvcr.io/nvidia/tritonserver:22.08-py3", "11.7.1", True),
        # the last month before the old table, and the first of it
        ("nvcr.io/nvidia/pytorch:22.09-py3", "11.8.0", True),
        ("nvcr.io/nvidia/pytorch:22.10-py3", "11.8.0", True),
        # later months that were missing
        ("nvcr.io/nvidia/pytorch:23.03-py3", "12.1.0", True),
        ("nvcr.io/nvidia/tritonserver:24.06-py3", "12.5.0", True),
        ("nvcr.io/nvidia/tritonserver:24.07-trtllm-python-py3", "12.4.1", True),
        ("nvcr.io/nvidia/pytorch:25.04-py3", "12.9.0", True),
        ("nvcr.io/nvidia/pytorch:26.08-py3", "13.4.1", True),
    ],
)
def test_ngc_release_rows(image: str, cuda: str, exact: bool) -> None:
    img = cuda_image(image)
    assert img is not None and img.family == "ngc"
    assert (img.cuda, img.cuda_exact) == (cuda, exact)


def test_ngc_patch_releases() -> None:
    # Triton's own patch releases have rows ...
    img = cuda_image("nvcr.io/nvidia/tritonserver:21.06.1-py3")
    assert (img.cuda, img.cuda_exact, img.release) == ("11.3.1", True, "21.06.1")
    assert cuda_image("nvcr.io/nvidia/tritonserver:20.03.1-py3").cuda == "10.2.89"
    # ... others are at least their month
    img = cuda_image("nvcr.io/nvidia/pytorch:24.10.2-py3")
    assert (img.cuda, img.cuda_exact, img.release) == ("12.6", False, "24.10.2")
    assert images.ngc_cuda("22.09.1") == ("11.8", False)
    # before the first row nothing is known, patch or not
    assert cuda_image("nvcr.io/nvidia/pytorch:19.12.1-py3") is None
    # NeMo is not an NGC framework image gpulint maps (its YY.MM is not the base image's)
    assert cuda_image("nvcr.io/nvidia/nemo:25.04.01") is None


@pytest.mark.parametrize(
    ("cuda_xy", "branch", "ok"),
    [
        ((10, 2), 418, True),   # NGC 20.01-20.03 notes
        ((11, 1), 450, True),   # NGC 20.10-20.12 notes: 418.xx, 440.30 or 450.xx
        ((11, 3), 460, True),
        ((11, 5), 470, True),
        ((11, 7), 460, False),  # NGC 22.05+ notes: R418, R440 and R460 dropped
        ((11, 7), 510, True),
    ],
)
def test_ngc_era_forward_compat(cuda_xy: tuple[int, int], branch: int, ok: bool) -> None:
    assert cuda.forward_compat_ok(cuda_xy, branch) is ok


def test_ngc_new_rows_cite_a_page(image_data: dict) -> None:
    for row in image_data["ngc"]["releases"]:
        if row["release"] < "22.10" or "url" in row:
            assert str(row.get("url", "")).startswith("https://docs.nvidia.com/deeplearning/"), row


def test_cuda_image_pytorch() -> None:
    img = cuda_image("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime")
    assert (img.family, img.cuda, img.cuda_major_minor, img.cudnn, img.flavor) == ("pytorch", "12.4", (12, 4), 9, "runtime")
    assert not img.has_start_check and not img.is_devel
    assert "cuda-compat" not in img.libraries and "cudnn" in img.libraries
    img = cuda_image("docker.io/pytorch/pytorch:2.1.2-cuda12.1-cudnn8-devel")
    assert img.has_start_check and img.is_devel and "nvcc" in img.libraries
    assert img.release == "2.1.2"
    assert cuda_image("pytorch/pytorch:latest") is None


@pytest.mark.parametrize("text", ["ubuntu:22.04", "python:3.12-slim", "ghcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", "nvidia/cuda", "scratch", "${IMG}"])
def test_cuda_image_other(text: str) -> None:
    assert cuda_image(text) is None


# --------------------------------------------------------------------------- tag status


@pytest.mark.parametrize(
    ("image", "status", "suggestion"),
    [
        ("nvidia/cuda:12.4.1-cudnn8-runtime-ubuntu22.04", "never-existed", "12.4.1-cudnn-runtime-ubuntu22.04"),
        ("nvidia/cuda:12.0.0-runtime-ubuntu22.04", "eol", "12.0.1-runtime-ubuntu22.04"),
        ("nvidia/cuda:12.0-runtime", "never-existed", "12.0.1-runtime-ubuntu22.04"),
        ("nvidia/cuda:11.0-base", "removed", "12.9.2-base-ubuntu22.04"),
        ("nvidia/cuda:10.2-base", "removed", "12.9.2-base-ubuntu22.04"),
        ("nvidia/cuda:11.8-runtime-ubuntu20.04", "never-existed", "12.9.2-runtime-ubuntu20.04"),
        ("nvidia/cuda:12.2.2-cudnn9-devel-ubuntu22.04", "never-existed", "12.2.2-cudnn8-devel-ubuntu22.04"),
        ("nvidia/cuda:12.3.2-cudnn8-devel-ubuntu22.04", "never-existed", "12.3.2-cudnn9-devel-ubuntu22.04"),
        ("nvidia/cuda:12.2.0-cudnn8-runtime-ubuntu22.04", "never-existed", "12.2.2-cudnn8-runtime-ubuntu22.04"),
        ("nvidia/cuda:12.2.1-devel-ubuntu22.04", "never-existed", "12.2.2-devel-ubuntu22.04"),
        ("nvidia/cuda:12.7.0-devel-ubuntu22.04", "never-existed", "12.8.1-devel-ubuntu22.04"),
        ("nvidia/cuda:13.0.0-runtime-ubuntu20.04", "never-existed", "13.0.3-runtime-ubuntu22.04"),
        ("nvidia/cuda:12.6.3-runtime-centos7", "never-existed", "12.6.3-runtime-rockylinux8"),
        ("nvidia/cuda:11.7.1-runtime-ubuntu24.04", "never-existed", "12.9.2-runtime-ubuntu22.04"),
        ("nvidia/cuda:12.4.1-runtime-ubuntu2204", "never-existed", "12.4.1-runtime-ubuntu22.04"),
        ("nvidia/cuda:12.4.1-cuda-ubuntu22.04", "never-existed", "12.4.1-base-ubuntu22.04"),
        ("nvidia/cuda:12.4.1-cudnn-base-ubuntu22.04", "never-existed", "12.4.1-cudnn-runtime-ubuntu22.04"),
        ("nvidia/cuda:12.9.1-tensorrt-runtime-ubuntu24.04", "never-existed", "12.9.2-cudnn-runtime-ubuntu24.04"),
        ("nvidia/cuda:12.5.1-cudnn-runtime-ubuntu24.04", "never-existed", "12.5.1-cudnn-runtime-ubuntu22.04"),
        ("nvidia/cuda:12.6.3-cudnn-devel-amzn2023", "never-existed", "12.6.3-cudnn-devel-ubuntu22.04"),
        ("nvidia/cuda:12.1.0-cudnn8-runtime-ubuntu18.04", "never-existed", "12.1.1-cudnn8-runtime-ubuntu20.04"),
        ("nvidia/cuda:12.6.4-runtime-ubuntu22.04", "never-existed", "12.6.3-runtime-ubuntu22.04"),
        ("nvidia/cuda:12.4.1-runtime-ubuntu22.04", "supported", None),
        ("nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04", "supported", None),
        ("nvcr.io/nvidia/cuda:12.8.1-devel-ubuntu24.04", "supported", None),
        ("nvidia/cuda:12.3.2-cudnn9-runtime-ubuntu22.04", "supported", None),
        ("nvidia/cuda:12.3.2-runtime-centos7", "eol", "12.3.2-runtime-rockylinux8"),
        ("nvidia/cuda:12.1.1-devel-ubi7", "eol", "12.1.1-devel-ubi8"),
        ("nvidia/cuda:12.1.0-runtime-ubuntu22.04", "eol", "12.1.1-runtime-ubuntu22.04"),
        ("nvidia/cuda:12.1.0-runtime-ubuntu18.04", "eol", "12.1.1-runtime-ubuntu20.04"),
        ("nvidia/cuda:12.9.0-runtime-ubuntu22.04", "eol", "12.9.2-runtime-ubuntu22.04"),
        ("nvidia/cuda:13.0.0-tensorrt-runtime-ubuntu24.04", "eol", "13.0.3-tensorrt-runtime-ubuntu24.04"),
        ("nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "eol", "12.9.2-cudnn-devel-ubuntu22.04"),
        ("nvidia/cuda:11.6.1-cudnn8-devel-ubuntu20.04", "eol", "12.9.2-cudnn-devel-ubuntu20.04"),
        ("nvidia/cuda:11.2.1-cudnn8-devel-ubuntu20.04", "removed", "12.9.2-cudnn-devel-ubuntu20.04"),
        ("nvidia/cuda:11.4.0-base-centos7", "removed", "12.9.2-base-rockylinux8"),
        ("nvidia/cuda:10.2-cudnn7-devel-ubuntu18.04", "removed", "12.9.2-cudnn-devel-ubuntu20.04"),
        ("nvidia/cuda:11.0-base-ubuntu20.04-rc", "removed", "12.9.2-base-ubuntu20.04"),
        ("nvidia/cuda:9.0-cudnn7-devel-ubuntu16.04", "removed", "12.9.2-cudnn-devel-ubuntu20.04"),
        ("nvidia/cuda:13.5.0-runtime-ubuntu24.04", "unknown", None),
        ("nvidia/cuda:14.0.0-runtime-ubuntu24.04", "unknown", None),
        ("nvidia/cuda:13.4.0-devel-ubuntu24.04", "unknown", None),
        ("nvidia/cuda:13.0.2-runtime-rockylinux9", "eol", "13.0.3-runtime-rockylinux9"),
        ("nvidia/cuda:13.4.2-runtime-ubuntu24.04", "supported", None),
        ("nvidia/cuda:13.1.2-runtime-ubuntu24.04", "supported", None),
    ],
)
def test_tag_status(image: str, status: str, suggestion) -> None:
    verdict = tag_status(image)
    assert verdict is not None
    assert (verdict.status, verdict.suggestion) == (status, suggestion), verdict.reason
    assert verdict.reason and verdict.reason[-1] in ".)"
    assert verdict.source.startswith("https://")


@pytest.mark.parametrize("image", ["nvidia/cuda", "nvidia/cuda:latest", "docker.io/nvidia/cuda:latest", "nvcr.io/nvidia/cuda"])
def test_tag_status_latest(image: str) -> None:
    verdict = tag_status(image)
    assert verdict.status == "removed"
    assert "latest" in verdict.reason
    assert verdict.suggestion and tag_status(f"nvidia/cuda:{verdict.suggestion}").status == "supported"


@pytest.mark.parametrize(
    "image, platform, status, suggestion",
    [
        ("nvidia/cuda:12.6.3-base-cm2", "linux/arm64", "never-existed", "12.6.3-base-ubuntu22.04"),
        ("nvidia/cuda:12.6.3-base-cm2", "linux/amd64", "supported", None),
        ("nvidia/cuda:12.6.3-base-cm2", "x86_64", "supported", None),
        ("nvidia/cuda:12.8.1-runtime-amzn2023", "linux/arm64/v8", "never-existed", "12.8.1-runtime-ubuntu22.04"),
        ("nvidia/cuda:12.9.2-runtime-amzn2023", "aarch64", "supported", None),
        ("nvidia/cuda:12.6.3-runtime-ubi8", "linux/ppc64le", "never-existed", None),
        ("nvidia/cuda:12.4.1-runtime-ubi8", "linux/ppc64le", "supported", None),
        ("nvidia/cuda:12.6.3-runtime-ubuntu22.04", "linux/s390x", "never-existed", None),
        ("nvidia/cuda:12.0-runtime", "linux/arm64", "never-existed", "12.0.1-runtime-ubuntu22.04"),
    ],
)
def test_tag_status_for_a_platform(image: str, platform: str, status: str, suggestion) -> None:
    verdict = tag_status(image, platform)
    assert verdict is not None
    assert (verdict.status, verdict.suggestion) == (status, suggestion), verdict.reason


def test_legacy_architecture_repositories() -> None:
    assert cuda_image("nvidia/cuda-arm64:12.9.2-base-ubuntu22.04").arch == "arm64"
    assert cuda_image("nvidia/cuda:12.9.2-base-ubuntu22.04").arch is None
    current = tag_status("nvidia/cuda-arm64:12.9.2-base-ubuntu22.04")
    assert (current.status, current.suggestion, current.repository) == ("eol", "12.9.2-base-ubuntu22.04", "nvidia/cuda")
    gone = tag_status("nvidia/cuda-ppc64le:12.6.3-base-ubi8")
    assert gone.status == "never-existed" and "ppc64le" in gone.reason


def test_tag_status_other_images() -> None:
    assert tag_status("ubuntu:22.04") is None
    assert tag_status("nvcr.io/nvidia/pytorch:24.05-py3") is None
    assert tag_status("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime") is None
    assert tag_status("${BASE}") is None


def test_tag_status_digest_only() -> None:
    assert tag_status("nvidia/cuda@sha256:0123abcd").status == "unknown"


def test_suggestions_are_real_tags(image_data: dict) -> None:
    """Every suggestion gpulint makes must itself be a tag that was built."""
    probes = []
    for row in image_data["versions"]:
        for os_name in ["ubuntu18.04", "ubuntu20.04", "ubuntu22.04", "ubuntu24.04", "centos7", "ubi9", "amzn2023"]:
            for flavor in ["base", "runtime", "devel", "cudnn8-runtime", "cudnn-devel", "cudnn9-devel", "tensorrt-devel"]:
                probes.append(f"nvidia/cuda:{row['version']}-{flavor}-{os_name}")
    for probe in probes:
        verdict = tag_status(probe)
        if verdict.suggestion:
            follow = tag_status(f"nvidia/cuda:{verdict.suggestion}")
            assert follow.status not in ("never-existed", "removed"), (probe, verdict, follow)


def test_partial_catalog_does_not_claim_never_existed() -> None:
    # post-snapshot coverage is partial: an in-range OS not in the record is "unknown", not an error
    assert tag_status("nvidia/cuda:13.0.2-cudnn-runtime-amzn2023").status == "unknown"
    # ubuntu26.04 is known only from third-party use, so its start is not a hard boundary
    assert tag_status("nvidia/cuda:13.2.1-runtime-ubuntu26.04").status == "unknown"
    # but OS suffixes NVIDIA had already dropped stay errors
    assert tag_status("nvidia/cuda:13.2.1-runtime-ubuntu20.04").status == "never-existed"


def test_flavor_libraries() -> None:
    assert FLAVOR_LIBRARIES["base"] == frozenset({"cudart", "cuda-compat"})
    runtime = FLAVOR_LIBRARIES["runtime"]
    assert {"cublas", "cufft", "curand", "cusolver", "cusparse", "npp", "nvjpeg", "nvtx", "nccl"} <= runtime
    assert FLAVOR_LIBRARIES["base"] < runtime < FLAVOR_LIBRARIES["devel"]
    assert FLAVOR_LIBRARIES["cudnn-runtime"] == runtime | {"cudnn"}
    assert FLAVOR_LIBRARIES["cudnn-devel"] == FLAVOR_LIBRARIES["devel"] | {"cudnn"}
    assert FLAVOR_LIBRARIES["tensorrt-runtime"] == FLAVOR_LIBRARIES["cudnn-runtime"] | {"tensorrt"}
    assert FLAVOR_LIBRARIES["tensorrt-devel"] == FLAVOR_LIBRARIES["cudnn-devel"] | {"tensorrt"}
    assert set(FLAVOR_LIBRARIES) == {"base", "runtime", "devel", "cudnn-runtime", "cudnn-devel", "tensorrt-runtime", "tensorrt-devel"}


@pytest.mark.parametrize(
    ("library", "flavor"),
    [("cudart", "base"), ("cuda-compat", "base"), ("cublas", "runtime"), ("nccl", "runtime"), ("nvcc", "devel"),
     ("headers", "devel"), ("cudnn", "cudnn-runtime"), ("tensorrt", "tensorrt-runtime")],
)
def test_smallest_flavor_with(library: str, flavor: str) -> None:
    assert images.smallest_flavor_with(library) == flavor


def test_smallest_flavor_with_unknown() -> None:
    with pytest.raises(KeyError):
        images.smallest_flavor_with("libfoo")


def test_image_admits() -> None:
    assert cuda.image_admits((12, 4)) == (470, 525, 535)
    assert cuda.image_admits((12, 5)) == (470, 535, 550)
    assert cuda.image_admits((13, 0)) == (535, 550, 565, 570, 575)
    assert cuda.image_admits((11, 3)) == (418, 440, 450, 455, 460)  # a bare `driver>=450` clause
    assert cuda.image_admits((99, 0)) is None


def test_import_is_lazy() -> None:
    """Importing the modules must not read data files (gpulint starts fast)."""
    import subprocess
    import sys

    code = (
        "import gpulint.resources as r\n"
        "calls = []\n"
        "orig = r.load_yaml\n"
        "r.load_yaml = lambda n: calls.append(n) or orig(n)\n"
        "import gpulint.knowledge.cuda, gpulint.knowledge.images\n"
        "assert calls == [], calls\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[1])


def test_forward_compatibility_has_no_unsourced_gaps(driver_data: dict) -> None:
    """No CUDA X.Y is refused on a branch that the X.Y before and after both run,
    unless a source records that refusal (`refuses`)."""
    sourced = {(vt(row["cuda"])[:2], number) for row in driver_data["image_requirements"]
               for number in row.get("refuses") or ()}
    known = sorted({vt(row["version"])[:2] for row in driver_data["releases"]})
    gaps = {(xy, number) for number in cuda.branch_numbers()
            for before, xy, after in zip(known, known[1:], known[2:])
            if cuda.forward_compat_ok(before, number) and cuda.forward_compat_ok(after, number)
            and not cuda.forward_compat_ok(xy, number)}
    assert gaps == sourced
    # NGC's notes list R525 and R545 for CUDA 12.4 and 12.6; the 12.5 months are not read
    assert cuda.forward_compat_ok((12, 5), 545)
