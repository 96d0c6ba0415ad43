"""`gpulint cuda`, `gpulint driver` and `gpulint image`: text and JSON answers."""

from __future__ import annotations

import csv
import json

import pytest

from conftest import SHARED, run_gpulint

REFERENCE_TSV = SHARED / "reference" / "data" / "cuda-driver-compat.tsv"


def _json(*args: str) -> dict:
    run = run_gpulint(*args, "--format", "json")
    assert run.rc == 0, run.err
    return json.loads(run.out)


def _reference_rows() -> list[dict]:
    with REFERENCE_TSV.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def _official(row: dict) -> bool:
    """Rows NVIDIA's Table 3 prints (or covers: "10.1 ... and updates")."""
    return row["source"].startswith(("Table 3", "Covered by Table 3"))


@pytest.mark.skipif(not REFERENCE_TSV.is_file(), reason="the shared reference is not checked out")
def test_every_official_reference_row_matches_gpulint_cuda():
    rows = [r for r in _reference_rows() if _official(r)]
    assert len(rows) >= 60
    for row in rows:
        data = _json("cuda", row["cuda_version"])
        assert (data["version"], data["min_driver"], data["windows_driver"] or "", data["unconfirmed"]) == \
            (row["cuda_version"], row["min_linux_driver"], row["min_windows_driver"], False), row


@pytest.mark.skipif(not REFERENCE_TSV.is_file(), reason="the shared reference is not checked out")
def test_unconfirmed_reference_rows_are_flagged_or_left_out():
    for row in _reference_rows():
        if "UNCONFIRMED" not in row["release_label"] + row["source"]:
            continue
        run = run_gpulint("cuda", row["cuda_version"], "--format", "json")
        assert run.rc == 0 and json.loads(run.out)["unconfirmed"] is True or run.rc == 1, row


def test_cuda_json_shape():
    assert {k: v for k, v in _json("cuda", "12.4.1").items()
            if k in ("version", "label", "min_driver", "minor_version_floor")} == {
        "version": "12.4.1", "label": "12.4 Update 1", "min_driver": "550.54.15", "minor_version_floor": "525.60.13"}


@pytest.mark.parametrize("query, version, driver, floor", [
    ("12.4", "12.4.0", "550.54.14", "525.60.13"),
    ("12.8", "12.8.0", "570.26", "525.60.13"),
    ("13.0", "13.0.0", "580.65.06", "580"),
    ("11.8.0", "11.8.0", "520.61.05", "450.80.02"),
    ("10.2", "10.2.89", "440.33", None),
])
def test_cuda_ga_and_floors(query, version, driver, floor):
    data = _json("cuda", query)
    assert (data["version"], data["min_driver"], data["minor_version_floor"]) == (version, driver, floor)


def test_cuda_text_and_unknown_versions():
    text = run_gpulint("cuda", "12.4.1")
    assert text.rc == 0 and text.out.startswith("CUDA 12.4 Update 1 (12.4.1)\n")
    assert "550.54.15" in text.out and ">= 525.60.13" in text.out
    unknown = run_gpulint("cuda", "12.7")
    assert unknown.rc == 1 and "no CUDA release 12.7" in unknown.err
    assert run_gpulint("cuda").rc == 2


def test_driver_json_shape():
    data = _json("driver", "535.104.05")
    assert {k: data[k] for k in ("driver", "branch", "max_cuda", "type", "eol")} == {
        "driver": "535.104.05", "branch": 535, "max_cuda": "12.2", "type": "LTSB", "eol": "2026-06"}
    assert data["forward_compat"][:3] == ["12.3", "12.4", "12.5"] and "13.0" in data["forward_compat"]
    assert data["minor_version_compat"] == ["11.x", "12.x"]
    assert data["end_of_life"] is True


@pytest.mark.parametrize("driver, max_cuda, kind, eol", [
    ("470", "11.4", "LTSB", "2024-07"),
    ("525.147.05", "12.0", "production", "2023-12"),
    ("550", "12.4", "production", "2025-02"),
    ("580.126.20", "13.0", "LTSB", "2028-06"),
    ("590", "13.1", "new feature", None),
])
def test_driver_branches(driver, max_cuda, kind, eol):
    data = _json("driver", driver)
    assert (data["max_cuda"], data["type"], data["eol"]) == (max_cuda, kind, eol)


def test_driver_text_tells_the_lifecycle():
    r470 = run_gpulint("driver", "470").out
    assert "R470 is a long-term-support branch that reached end of life in 2024-07" in r470
    r525 = run_gpulint("driver", "525").out
    assert "R525 is a production branch (not a long-term-support branch)" in r525
    assert "11.x, 12.x" in r525  # a bare branch reaches the 12.x floor of its own branch
    assert "supported until 2028-06" in run_gpulint("driver", "580").out
    unknown = run_gpulint("driver", "999")
    assert unknown.rc == 1 and "999" in unknown.err
    assert "R610 is a new feature branch that reached end of life in 2026-08" in run_gpulint("driver", "610").out


def test_driver_that_is_not_a_version_is_a_usage_error():
    bad = run_gpulint("driver", "abc")
    assert bad.rc == 2 and "expected a driver version such as 535.104.05" in bad.err


def test_image_json_shape():
    data = _json("image", "nvidia/cuda:12.4.1-runtime-ubuntu22.04")
    assert {k: data[k] for k in ("cuda", "flavor", "os", "start_check", "min_driver", "min_driver_minor_version",
                                 "tag_status")} == {
        "cuda": "12.4.1", "flavor": "runtime", "os": "ubuntu22.04", "start_check": True,
        "min_driver": "550.54.15", "min_driver_minor_version": "525.60.13", "tag_status": "supported"}
    assert "verdict" not in data
    assert data["min_driver_unconfirmed"] is None


def test_image_shows_a_second_hand_minimum_as_unconfirmed():
    data = _json("image", "nvidia/cuda:12.9.2-runtime-ubuntu22.04")
    assert (data["min_driver"], data["min_driver_unconfirmed"]) == (None, "575.57.08")
    text = run_gpulint("image", "nvidia/cuda:12.9.2-runtime-ubuntu22.04").out
    assert "minimum driver:  575.57.08 (UNCONFIRMED) natively" in text


@pytest.mark.parametrize("ref, start_check, status", [
    ("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", False, None),
    ("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-devel", True, None),
    ("nvcr.io/nvidia/pytorch:24.05-py3", True, None),
    ("nvidia/cuda:11.0-base", True, "removed"),
    ("nvidia/cuda:12.4-runtime-ubuntu22.04", True, "never-existed"),
    ("nvidia/cuda:11.4.3-base-ubuntu20.04", True, "eol"),
])
def test_image_start_check_and_tag_status(ref, start_check, status):
    data = _json("image", ref)
    assert (data["start_check"], data["tag_status"]) == (start_check, status)


@pytest.mark.parametrize("args, code, severity, rc", [
    (("--driver", "535.104.05"), "GL601", "warning", 0),
    (("--driver", "535.104.05", "--gpu-class", "datacenter"), "GL601", "info", 0),
    (("--driver", "535.104.05", "--gpu-class", "consumer"), "GL601", "error", 1),
    (("--driver", "520"), "GL601", "error", 1),
    (("--driver", "550.54.15"), None, None, 0),
])
def test_image_verdict_matches_gl601(args, code, severity, rc):
    run = run_gpulint("image", "nvidia/cuda:12.4.1-runtime-ubuntu22.04", *args, "--format", "json")
    assert run.rc == rc, run.err
    verdict = json.loads(run.out)["verdict"]
    assert (verdict["code"], verdict["severity"]) == (code, severity)


def test_image_text_for_ngc_names_the_entrypoint_check():
    text = run_gpulint("image", "nvcr.io/nvidia/pytorch:26.07-py3").out
    assert "CUDA:            13.3 or newer" in text  # no 26.07 row: at least 26.06's 13.3
    assert "start check:     yes (entrypoint)" in text


def test_image_text_and_errors():
    text = run_gpulint("image", "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", "--driver", "535.104.05").out
    assert "start check:     no" in text
    assert "minimum driver:  550.54.14 natively; 525.60.13 through minor-version compatibility" in text
    assert "verdict:         GL601 warning" in text
    unknown = run_gpulint("image", "ubuntu:22.04")
    assert unknown.rc == 1 and "ubuntu:22.04" in unknown.err
    # the date given is the image catalog's, the data the answer was looked up in
    from gpulint.knowledge.images import images_as_of
    assert f"data as of {images_as_of()}" in unknown.err
    bad = run_gpulint("image", "nvidia/cuda:12.4.1-base-ubuntu22.04", "--driver", "five")
    assert bad.rc == 2 and "--driver five" in bad.err


def test_help_lists_the_explain_commands():
    assert "gpulint driver VERSION" in run_gpulint("--help").out


@pytest.mark.parametrize("xy, branch, admitted", [("12.5", 550, True), ("13.1", 550, True),
                                                  ("13.2", 550, False), ("12.9", 470, False)])
def test_cuda_driver_and_image_agree_on_forward_compatibility(xy, branch, admitted):
    """`gpulint cuda`, `gpulint driver` and `gpulint image` give one answer from one fact."""
    from gpulint.knowledge.cuda import latest_release

    cuda = json.loads(run_gpulint("cuda", xy, "--format", "json").out)
    driver = json.loads(run_gpulint("driver", str(branch), "--format", "json").out)
    ref = f"nvidia/cuda:{latest_release(tuple(map(int, xy.split('.')))).version}-runtime-ubuntu22.04"
    image = json.loads(run_gpulint("image", ref, "--driver", str(branch), "--gpu-class", "datacenter",
                                   "--format", "json").out)
    assert (branch in cuda["image_forward_compat"]) is admitted
    assert (xy in driver["forward_compat"]) is admitted
    assert (xy in driver["nvidia_cuda_images"]) is admitted
    assert (branch in image["forward_compat_branches"]) is admitted
    assert (image["verdict"]["severity"] == "info") is admitted


def test_driver_tells_cuda_compat_lists_from_what_nvidia_cuda_images_admit():
    """NGC's notes list R545 for CUDA 12.4; the nvidia/cuda 12.4 images do not name it and refuse it."""
    driver = json.loads(run_gpulint("driver", "545", "--format", "json").out)
    assert "12.4" in driver["forward_compat"] and driver["nvidia_cuda_images"] == []
    image = json.loads(run_gpulint("image", "nvidia/cuda:12.4.1-runtime-ubuntu22.04", "--driver", "545",
                                   "--gpu-class", "datacenter", "--format", "json").out)
    assert image["verdict"]["severity"] == "error"
