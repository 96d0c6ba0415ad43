"""Explain commands: what gpulint knows about a CUDA release, a driver, an image.

    gpulint cuda 12.4.1                     minimum drivers of a toolkit release
    gpulint driver 535.104.05               a driver's branch, CUDA level, lifecycle
    gpulint image nvidia/cuda:12.4.1-...    an image's CUDA and what it needs
                  [--driver V] [--gpu-class C]   ... and GL601's verdict on it

Each takes `--format json` for scripts. Exit codes: 0 answered, 1 gpulint does not
know the version or image (or, for `image --driver`, the verdict is an error),
2 usage errors.

Imports inside functions: each of `cuda`, `driver` and `image` loads only the knowledge
it prints.
"""

from __future__ import annotations

import argparse
import json
import sys

EXIT_OK, EXIT_UNKNOWN, EXIT_USAGE = 0, 1, 2


def _parser(prog: str, description: str, what: str, metavar: str) -> argparse.ArgumentParser:
    from gpulint.face.arguments import Parser

    p = Parser(prog=f"gpulint {prog}", description=description)
    p.add_argument("value", metavar=metavar, help=what)
    p.add_argument("--format", choices=("text", "json"), default="text")
    return p


def _print(data: dict, fmt: str, lines: list[str]) -> None:
    print(json.dumps(data, indent=2) if fmt == "json" else "\n".join(lines))


def _unknown(message: str, as_of=None) -> int:
    """Say what gpulint does not know, and the date of the data it looked in."""
    if as_of is None:
        from gpulint.knowledge.cuda import cuda_as_of as as_of

    print(f"gpulint: {message} (data as of {as_of()})", file=sys.stderr)
    return EXIT_UNKNOWN


def _bad_driver(command: str, value: str, option: str = "") -> bool:
    """Say so (a usage error) when `value` is not a driver version or branch."""
    from gpulint.crossfile.fleet import driver_version

    if driver_version(value) is not None:
        return False
    print(f"gpulint {command}: {option}{value}: expected a driver version such as 535.104.05 "
          f"or a branch such as 535", file=sys.stderr)
    return True


# ------------------------------------------------------------------ gpulint cuda


def cuda_facts(version: str) -> dict | None:
    """The JSON answer of `gpulint cuda VERSION`; None for a release gpulint does not know."""
    from gpulint.knowledge.cuda import image_admits, source_url, toolkit

    rel = toolkit(version)
    if rel is None:
        return None
    admits = image_admits(rel.major_minor)
    return {
        "version": rel.version,
        "label": rel.label.removeprefix("CUDA "),
        "min_driver": rel.min_driver,
        "minor_version_floor": rel.minor_version_floor,
        "windows_driver": rel.windows_driver,
        "unconfirmed": rel.unconfirmed,
        "image_forward_compat": list(admits) if admits is not None else None,
        "source": source_url(rel.source),
        "note": rel.note,
    }


def cuda_command(argv: list[str]) -> int:
    args = _parser("cuda", "The drivers a CUDA toolkit release needs.",
                   "a release: 12.4.1, or 12.4 for its GA release", "VERSION").parse_args(argv)
    data = cuda_facts(args.value)
    if data is None:
        return _unknown(f"no CUDA release {args.value} is known")
    floor = data["minor_version_floor"]
    major = data["version"].split(".")[0]
    title = data["label"] if data["version"] in data["label"] else f"{data['label']} ({data['version']})"
    lines = [f"CUDA {title}",
             f"  minimum driver (every feature): {data['min_driver'] or 'not known'}"
             + (" (UNCONFIRMED)" if data["unconfirmed"] else ""),
             f"  minor-version compatibility:    "
             + (f">= {floor} runs any CUDA {major}.x binary, without PTX JIT or newer APIs" if floor
                else f"none: CUDA {major}.x needs the driver above")]
    if data["image_forward_compat"] is not None:
        xy = ".".join(data["version"].split(".")[:2])
        lines.append(f"  forward compatibility:          nvidia/cuda {xy} images start on "
                     + (", ".join(f"R{b}" for b in data["image_forward_compat"]) or "no older branch")
                     + " (`NVIDIA_REQUIRE_CUDA`; data-center GPUs)")
    if data["note"]:
        lines.append(f"  note: {data['note']}")
    lines.append(f"  source: {data['source']}")
    _print(data, args.format, lines)
    return EXIT_OK


# ------------------------------------------------------------------ gpulint driver


def driver_facts(version: str) -> dict | None:
    """The JSON answer of `gpulint driver VERSION`; None for a branch newer than the data."""
    from gpulint.crossfile.fleet import driver_version
    from gpulint.knowledge.cuda import (
        branch,
        driver_max_cuda,
        images_admitting,
        minor_version_floor,
        source_url,
    )
    from gpulint.numbers import whole

    driver = driver_version(version)
    level = driver_max_cuda(driver) if driver else None
    if level is None:
        return None
    info = branch(driver)
    number = whole(driver.split(".")[0])
    majors = [f"{m}.x" for m in range(11, level[0] + 1) if _reaches(driver, minor_version_floor(m))]
    return {
        "driver": driver,
        "branch": number,
        "max_cuda": f"{level[0]}.{level[1]}",
        "type": info.type if info else None,
        "eol": info.eol if info else None,
        "forward_compat": list(info.forward_compat) if info else [],
        "nvidia_cuda_images": list(images_admitting(number)),
        "end_of_life": info.is_eol if info else None,
        "minor_version_compat": majors,
        "unconfirmed": info.unconfirmed if info else True,
        "source": source_url(info.source) if info else None,
        "note": info.note if info else f"R{number} is not in gpulint's data; its CUDA level is that of the "
                                       f"next lower branch it knows",
    }


def _reaches(driver: str, floor: str | None) -> bool:
    """The driver is at or above a floor; a bare branch counts by its branch number."""
    from gpulint.knowledge.cuda import compare_versions
    from gpulint.numbers import whole

    if floor is None:
        return False
    if "." not in driver:
        return whole(driver) >= whole(floor.split(".")[0])
    return compare_versions(driver, floor) >= 0


def driver_command(argv: list[str]) -> int:
    args = _parser("driver", "What a driver version runs, and its branch's lifecycle.",
                   "a driver: 535.104.05, or a branch: 535", "VERSION").parse_args(argv)
    if _bad_driver("driver", args.value):
        return EXIT_USAGE
    data = driver_facts(args.value)
    if data is None:
        return _unknown(f"driver {args.value} is not a driver branch gpulint knows")
    from gpulint.knowledge.cuda import branch_problem

    problem = branch_problem(data["driver"])
    lifecycle = problem[1] if problem else (f"supported until {data['eol']}" if data["eol"] else "supported")
    lines = [f"driver {data['driver']} (R{data['branch']}, {data['type'] or 'branch type not known'})",
             f"  highest CUDA natively:        {data['max_cuda']}",
             f"  minor-version compatibility:  {', '.join(data['minor_version_compat']) or 'none'}",
             f"  forward compatibility:        "
             + (f"CUDA {', '.join(data['forward_compat'])} on data-center GPUs (cuda-compat)"
                if data["forward_compat"] else "none listed"),
             f"  nvidia/cuda images start:     "
             + (f"CUDA {', '.join(data['nvidia_cuda_images'])} (their `NVIDIA_REQUIRE_CUDA` names R{data['branch']})"
                if data["nvidia_cuda_images"] else f"none newer than CUDA {data['max_cuda']}"),
             f"  lifecycle:                    {lifecycle}"]
    if data["note"]:
        lines.append(f"  note: {data['note']}")
    _print(data, args.format, lines)
    return EXIT_OK


# ------------------------------------------------------------------ gpulint image


def image_facts(ref: str, driver: str | None = None, gpu_class: str | None = None) -> dict | None:
    """The JSON answer of `gpulint image REF`; None for an image gpulint does not recognise."""
    from gpulint.crossfile.compat import (
        image_cuda,
        is_beyond_data,
        judge,
        native_driver,
        release_of,
    )
    from gpulint.knowledge.cuda import minor_version_floor, required_compute_capability
    from gpulint.knowledge.images import tag_status

    img = image_cuda(ref)
    if img is None:
        return _jetson_facts(ref, driver)
    cuda = img.image
    status = tag_status(ref)
    needed = required_compute_capability(cuda)
    data = {
        "image": ref,
        "cuda": img.version,
        "cuda_exact": cuda.cuda_exact,
        "family": img.family,
        "flavor": cuda.flavor,
        "os": cuda.os,
        "start_check": img.start_check,
        "min_driver": native_driver(img),
        # Table 3 has no value for this release; the one gpulint carries is second-hand
        "min_driver_unconfirmed": (release_of(img).min_driver if native_driver(img) is None
                                   and release_of(img) is not None else None),
        "min_driver_minor_version": minor_version_floor(img.major),
        "forward_compat_branches": list(img.brand_branches) if img.brand_branches is not None else None,
        "min_compute_capability": f"{needed[0]}.{needed[1]}" if needed else None,
        "tag_status": status.status if status else None,
        "tag_reason": status.reason if status else None,
        "tag_suggestion": status.suggestion if status else None,
    }
    if driver is not None:
        data["verdict"] = _verdict(img, driver, gpu_class, is_beyond_data(img), judge)
    return data


def _jetson_facts(ref: str, driver: str | None) -> dict | None:
    """A Jetson (L4T) image: named, with the CUDA its tag states, and never judged against a
    discrete-GPU driver, since the device's Jetson Linux BSP carries its CUDA driver."""
    from gpulint.knowledge.images import jetson_image

    img = jetson_image(ref)
    if img is None:
        return None
    data = {"image": ref, "family": "jetson", "cuda": img.cuda, "start_check": None,
            "driver": "the Jetson Linux BSP on the device", "source": img.source}
    if driver is not None:
        data["verdict"] = {"code": None, "severity": None,
                           "message": f"not judged against driver {driver}: a Jetson image runs on the CUDA "
                                      f"driver of the Jetson Linux BSP flashed on the device, not on a "
                                      f"data-center or desktop driver"}
    return data


def _verdict(img, driver: str, gpu_class: str | None, beyond: bool, judge) -> dict:
    from gpulint.crossfile.fleet import Driver, Fleet, Gpu, Origin

    if beyond:
        return {"code": "GL603", "severity": "info",
                "message": f"CUDA {img.xy} is newer than gpulint's data; update gpulint"}
    klass = Gpu(None, gpu_class, None, Origin(f"`--gpu-class {gpu_class}`")) if gpu_class else None
    verdict = judge(img, Fleet(Driver(driver, Origin(f"`--driver {driver}`")), klass))
    if verdict is None:
        return {"code": None, "severity": None, "message": f"runs on driver {driver}"}
    return {"code": "GL601", "severity": verdict.severity, "message": verdict.message}


def image_command(argv: list[str]) -> int:
    from gpulint.knowledge.cuda import GPU_CLASSES

    p = _parser("image", "What CUDA an image runs and which driver it needs.",
                "an image reference: nvidia/cuda:12.4.1-runtime-ubuntu22.04, "
                "nvcr.io/nvidia/pytorch:24.05-py3, pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", "REF")
    p.add_argument("--driver", metavar="VERSION", help="judge the image against this driver (as GL601 would)")
    p.add_argument("--gpu-class", choices=GPU_CLASSES, help="GPU class of the nodes")
    args = p.parse_args(argv)
    from gpulint.crossfile.fleet import driver_version
    from gpulint.knowledge.images import images_as_of

    if args.driver and _bad_driver("image", args.driver, "--driver "):
        return EXIT_USAGE
    data = image_facts(args.value, driver_version(args.driver) if args.driver else None, args.gpu_class)
    if data is None:
        return _unknown(f"`{args.value}` is not an image whose CUDA gpulint knows (nvidia/cuda, NGC, "
                        f"pytorch/pytorch, the serving images of its release tables, Jetson L4T)", images_as_of)
    _print(data, args.format, image_lines(data))
    verdict = data.get("verdict")
    return EXIT_UNKNOWN if verdict and verdict["severity"] == "error" else EXIT_OK


def _start_check_text(data: dict, xy: str) -> str:
    if not data["start_check"]:
        return "no: it starts on any driver, and CUDA fails later if the driver is too old"
    if data["family"] == "ngc":
        return (f"yes (entrypoint): on a driver without CUDA {xy} it needs forward compatibility "
                f"(data-center GPUs), else it prints `compatibility mode is UNAVAILABLE` and CUDA cannot be used")
    return f"yes: the container starts only on drivers that support CUDA {xy} (`cuda>={xy}`)"


def _min_driver_text(data: dict) -> str:
    if data["min_driver"]:
        return data["min_driver"]
    if data["min_driver_unconfirmed"]:
        return f"{data['min_driver_unconfirmed']} (UNCONFIRMED)"
    return "not known"


def image_lines(data: dict) -> list[str]:
    if data["family"] == "jetson":
        return _jetson_lines(data)
    xy = ".".join(data["cuda"].split(".")[:2])
    where = ", ".join(p for p in (data["family"], data["flavor"] and f"flavor {data['flavor']}", data["os"]) if p)
    floor = data["min_driver_minor_version"]
    lines = [data["image"],
             f"  CUDA:            {data['cuda']}{'' if data['cuda_exact'] else ' or newer'} ({where})",
             f"  start check:     {_start_check_text(data, xy)}",
             f"  minimum driver:  {_min_driver_text(data)} natively"
             + (f"; {floor} through minor-version compatibility" if floor else "")]
    if data["forward_compat_branches"]:
        lines.append(f"  forward compat:  on {', '.join(f'R{b}' for b in data['forward_compat_branches'])} "
                     f"(data-center GPUs)")
    if data["min_compute_capability"]:
        lines.append(f"  GPUs:            compute capability >= {data['min_compute_capability']}")
    if data["tag_status"]:
        hint = f" (use {data['tag_suggestion']})" if data["tag_suggestion"] else ""
        lines.append(f"  tag:             {data['tag_status']}: {data['tag_reason']}{hint}")
    verdict = data.get("verdict")
    if verdict:
        head = f"{verdict['code']} {verdict['severity']}" if verdict["code"] else "ok"
        lines.append(f"  verdict:         {head}: {verdict['message']}")
    return lines


def _jetson_lines(data: dict) -> list[str]:
    lines = [data["image"],
             f"  platform:        Jetson (L4T): the CUDA driver is {data['driver']}",
             f"  CUDA:            {data['cuda'] + ' (from the tag)' if data['cuda'] else 'not stated by the tag'}"]
    if data.get("verdict"):
        lines.append(f"  verdict:         {data['verdict']['message']}")
    return lines
