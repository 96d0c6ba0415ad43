"""Dockerfile checks of what an image installs beside its base's CUDA (GL305, GL306): the
NVIDIA driver, whether from packages, NVIDIA's installers or install scripts that add it,
and a second CUDA toolkit (a meta-package that pulls in the driver, another version than
the base image's, the distribution's own CUDA, a CUDA runfile, CUDA packages on a Jetson
base whose CUDA is the device's).

Packages and installer runs come from gpulint.kinds.dockerfile.facts.
"""

from __future__ import annotations

import re

from gpulint.kinds.dockerfile.facts import (
    CudaVersion,
    Package,
    Runfile,
    driver_container,
    facts,
    l4t_release,
    locate,
    package_span,
    run_mentions,
    runfiles,
    stage_cuda,
    word_offsets,
)
from gpulint.knowledge.cuda import latest_known_cuda, newest_minor
from gpulint.model import Document, Edit, Fix, Span
from gpulint.numbers import whole
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding

KINDS = ("dockerfile",)
_SYSTEM_MANAGERS = ("apt", "yum", "zypper")

# ---------------------------------------------------------------- GL305 driver in image

# The driver's user-space parts by package name: NVIDIA's and Ubuntu's (`nvidia-driver-570`,
# `libnvidia-compute-570`, `nvidia-compute-utils-570`, `nvidia-open`), Debian's (`libcuda1`,
# `libnvidia-ml1`, `nvidia-smi`), RHEL's and RPM Fusion's (`nvidia-driver-cuda`,
# `xorg-x11-drv-nvidia-cuda`, `kmod-nvidia`).
_DRIVER_PACKAGE = lazy(
    r"(nvidia-driver(-[\w.-]+)?|nvidia-utils-\d[\w.-]*|nvidia-headless-[\w.-]+|"
    r"nvidia-compute-utils-\d[\w.-]*|nvidia-open(-\d+)?|"
    r"libnvidia-(compute|gl|encode|decode|extra|fbc1|cfg1|common)-\d[\w.-]*|"
    r"libcuda1|libnvidia-ml1|xorg-x11-drv-nvidia[\w.-]*|"
    r"cuda-drivers(-\d+)?|xserver-xorg-video-nvidia[\w.-]*|nvidia-dkms-[\w.-]+|"
    r"kmod-nvidia[\w.-]*)([:=].*)?$")
_DEBIAN_DRIVER_TOOL = lazy(r"nvidia-smi([:=].*)?$")  # Debian's package of it: apt only


@check("GL305", kinds=KINDS)
def driver_in_image(doc: Document, ctx: Context):
    if driver_container(doc) is not None:
        return  # driver containers deliver the driver to the host on purpose
    for sf in facts(doc).stages:
        for package in sf.packages:
            if package.manager != "pip" and _DRIVER_PACKAGE.match(package.name) or \
                    package.manager == "apt" and _DEBIAN_DRIVER_TOOL.match(package.name):
                yield finding(doc, "GL305", package_span(doc, package), _driver_message(
                    f"`{package.name}` installs NVIDIA driver components"))
        for runfile in runfiles(sf):
            if runfile.installs_driver():
                yield finding(doc, "GL305", _runfile_span(doc, runfile), _runfile_message(runfile))
        yield from _distribution_cuda_driver(doc, sf)
        yield from _driver_install_scripts(doc, sf)


# Install scripts that install the NVIDIA driver themselves. ollama's (scripts/install.sh)
# installs `cuda-drivers` from NVIDIA's repository when lspci or lshw shows an NVIDIA GPU
# and `nvidia-smi` does not work, which is what a build on a GPU machine sees
# (E4S-Project/e4s#172).
_DRIVER_SCRIPTS = lazy(r"ollama\.com/install\.sh")


def _driver_install_scripts(doc: Document, sf):
    for ins, match in run_mentions(sf.stage, _DRIVER_SCRIPTS):
        yield finding(doc, "GL305", locate(doc, ins, match[0]),
                      f"`{match[0]}` installs the NVIDIA driver (`cuda-drivers` from NVIDIA's "
                      f"repository) when it finds an NVIDIA GPU (lspci, lshw) and no working "
                      f"`nvidia-smi`, as a build on a GPU machine does: the image then carries "
                      f"a driver that fails with `Failed to initialize NVML: Driver/library "
                      f"version mismatch` on hosts with another one. Install ollama from its "
                      f"release archive (`ollama-linux-amd64.tgz`) instead", severity="warning")


def _distribution_cuda_driver(doc: Document, sf):
    """The distribution's CUDA on a base without CUDA of its own (on a CUDA base, GL306
    reports it as a second CUDA): its `libcuda1` dependency is the driver's library."""
    cuda = stage_cuda(doc, sf.stage)
    if cuda is not None and cuda.source == "image":
        return
    for package in sf.packages:
        name = package.name.split("=")[0]
        if package.manager == "apt" and _DISTRIBUTION_TOOLKIT.match(name):
            yield finding(doc, "GL305", package_span(doc, package),
                          f"`{package.name}` is the distribution's own CUDA, and it depends on the "
                          f"driver library `libcuda1` (`libnvidia-compute-*` on Ubuntu), so the "
                          f"image carries a user-space driver: run with GPUs it fails with `Failed "
                          f"to initialize NVML: Driver/library version mismatch` unless the host runs "
                          f"exactly that driver. Install NVIDIA's `cuda-toolkit-X-Y` (no driver), "
                          f"or build on an nvidia/cuda `devel` image", severity="warning")


def _runfile_span(doc: Document, runfile: Runfile) -> Span:
    """The installer's file name where it is run: the word that runs it, followed by the
    command's next word (not where it is downloaded, made executable or removed)."""
    ins, raw = runfile.command.instruction, runfile.command.raw
    word = raw[runfile.word] if 0 <= runfile.word < len(raw) else runfile.written
    following = re.escape(raw[runfile.word + 1]) if runfile.word + 1 < len(raw) else r"(?=[\s;&|)]|$)"
    run = re.compile(r"(?<![\w./${-])" + re.escape(word) + r"(?:[ \t]|\\\n)*" + following)
    match = run.search(doc.text, ins.start, ins.end)
    if match is not None and word.endswith(runfile.written):
        end = match.start() + len(word)
        return doc.index.span(end - len(runfile.written), end)
    at = word_offsets(doc, ins, runfile.written)
    return doc.index.span(*at) if at else locate(doc, ins, runfile.written)


def _runfile_message(runfile: Runfile) -> str:
    if runfile.product == "driver":
        what = "the NVIDIA driver installer runs in the image"
        if runfile.has("--no-kernel-module"):
            what += " (`--no-kernel-module` leaves out the kernel module, not the user-space libraries)"
        return _driver_message(what)
    driver = f"driver {runfile.bundled}" if runfile.bundled else "driver"
    how = "`--driver` asks for it" if "--driver" in runfile.chosen else \
        "its default selection, without `--toolkit`, includes it"
    return (f"the CUDA runfile {_shown(runfile)} installs its bundled {driver} into the image ({how}): "
            f"its installer builds a kernel module, which fails in an image build, or leaves a "
            f"user-space driver that must match the host's kernel module exactly (`Failed to "
            f"initialize NVML: Driver/library version mismatch`); run it with `--silent --toolkit`")


def _shown(runfile: Runfile) -> str:
    if runfile.written == runfile.name:
        return f"`{runfile.name}`"
    return f"`{runfile.written}` (`{runfile.name}`)"


def _driver_message(what: str) -> str:
    return (f"{what}; the driver belongs to the host, and the NVIDIA container runtime mounts the "
            f"host's driver libraries at start. A second copy in the image fails with `Failed to "
            f"initialize NVML: Driver/library version mismatch` or ties the image to hosts with "
            f"exactly this driver: remove it")


# ---------------------------------------------------------------- GL306 a second CUDA

_META = lazy(r"cuda(-runtime)?(-(\d+)-(\d+))?$")
_TOOLKIT_PART = lazy(r"cuda-(toolkit|nvcc|compiler|libraries|libraries-dev|minimal-build|"
                     r"cudart|cudart-dev)-(\d+)-(\d+)$")
# NVIDIA's toolkit meta-packages without a minor: the newest toolkit (of a major) the
# repository has, which nvidia/cuda images have configured.
_NEWEST_TOOLKIT = lazy(r"cuda-toolkit(?:-(\d+))?$")
# Debian's and Ubuntu's own build of CUDA: the distribution's release of it (Ubuntu 22.04
# ships 11.5, 24.04 ships 12.0), whose `nvidia-cuda-dev` depends on the driver's `libcuda1`.
_PINNED = lazy(r"(\d+)\.(\d+)")
_DISTRIBUTION_TOOLKIT = lazy(r"nvidia-cuda-(toolkit|dev)$")


@check("GL306", kinds=KINDS)
def cuda_meta_package(doc: Document, ctx: Context):
    for sf in facts(doc).stages:
        cuda = stage_cuda(doc, sf.stage)
        base = cuda if cuda is not None and cuda.source == "image" else None
        l4t = l4t_release(sf)
        mounted = l4t is not None and l4t < (34, 0)  # L4T r32: CUDA comes from the device
        for package in sf.packages:
            if package.manager not in _SYSTEM_MANAGERS:
                continue
            name, _, pinned = package.name.partition("=")
            meta = _META.match(name)
            if mounted and _CUDA_PACKAGE.match(name):
                yield _mounted_cuda_finding(doc, package, sf, l4t)
            elif meta:
                yield _meta_finding(doc, package, meta)
            elif base is not None:
                yield from _second_toolkit(doc, package, name, pinned, base, sf.image)
        for runfile in runfiles(sf) if base is not None else ():
            if runfile.installs_toolkit() and runfile.cuda is not None and runfile.cuda != base.major_minor:
                version = f"{runfile.cuda[0]}.{runfile.cuda[1]}"
                yield finding(doc, "GL306", _runfile_span(doc, runfile),
                              _second_message(_shown(runfile), f"CUDA {version}", base, sf.image,
                                              f"a base image of CUDA {version}"), severity="warning")


# NVIDIA's CUDA packages (`cuda-toolkit-10-2`, `cuda-nvrtc-10-2`, `cuda-toolkit-*`), not the
# repository's keyring or setup packages
_CUDA_PACKAGE = lazy(r"cuda(?:-(?!keyring|repo)[\w.*-]+)?$")


def _mounted_cuda_finding(doc: Document, package: Package, sf, l4t: tuple[int, int]):
    """CUDA packages installed on an L4T r32 base, whose CUDA the NVIDIA runtime mounts
    from the device (read-only) through its CSV lists."""
    return finding(doc, "GL306", package_span(doc, package),
                   f"`{package.name}` installs CUDA on the L4T r{l4t[0]}.{l4t[1]} base `{sf.image}`, "
                   f"whose CUDA the NVIDIA runtime mounts read-only from the device (JetPack 4): "
                   f"built with Docker's default runtime `nvidia` the install fails with `Read-only "
                   f"file system` under `/usr/local/cuda-*`, and without it the image gets a second "
                   f"CUDA beside the device's. Use the device's CUDA, or an L4T r34+ base that "
                   f"carries CUDA in the image (`l4t-jetpack`, `l4t-cuda`)", severity="warning")


def _second_toolkit(doc: Document, package: Package, name: str, pinned: str, base: CudaVersion,
                    image: str | None):
    """A toolkit of another CUDA than the base image's, installed on top of it."""
    part = _TOOLKIT_PART.match(name)
    newest = _NEWEST_TOOLKIT.match(name)
    version = _PINNED.match(pinned)  # `=12.1.1-1`; an epoch (`1:4.1`) is no CUDA version
    pinned_to = (whole(version[1]), whole(version[2])) if version else None
    shown = f"`{package.name}`"
    if part and (whole(part[2]), whole(part[3])) != base.major_minor:
        version = f"{part[2]}.{part[3]}"
        message = _second_message(shown, f"CUDA {version}", base, image, f"a base image of CUDA {version}")
    elif newest and not pinned and _newer_than(base, newest[1]):
        which = f"the newest CUDA {newest[1]}.x" if newest[1] else "the newest CUDA"
        message = _second_message(shown, f"{which} toolkit of NVIDIA's repository", base, image,
                                  f"`cuda-toolkit-{base.major}-{base.major_minor[1]}` for this base's "
                                  f"CUDA, or a base image of the CUDA you need")
    elif newest and pinned_to is not None and pinned_to != base.major_minor:
        version = f"{pinned_to[0]}.{pinned_to[1]}"
        message = _second_message(shown, f"CUDA {version}", base, image, f"a base image of CUDA {version}")
    elif _DISTRIBUTION_TOOLKIT.match(name) and package.manager == "apt":
        message = (f"{shown} is the distribution's own build of CUDA, of the distribution's "
                   f"release (11.5 on Ubuntu 22.04, 12.0 on 24.04), not the CUDA {base.version} of "
                   f"the base `{image}`; it also depends on the driver library `libcuda1` "
                   f"(`libnvidia-compute-*` on Ubuntu), so the image gets a second toolkit and a "
                   f"user-space driver (`Failed to initialize NVML: Driver/library version "
                   f"mismatch`). {_own_toolkit(base)}")
    else:
        return
    yield finding(doc, "GL306", package_span(doc, package), message, severity="warning")


def _own_toolkit(base: CudaVersion) -> str:
    """Where the toolkit of the base's own CUDA comes from."""
    if base.image is not None and base.image.is_devel:
        return "The base is a `devel` image and already has `nvcc`: remove the package"
    return (f"Install NVIDIA's `cuda-toolkit-{base.major}-{base.major_minor[1]}` (the base's CUDA) "
            f"instead, or build on the base's `devel` tag")


def _newer_than(base: CudaVersion, major: str | None) -> bool:
    """Whether the newest toolkit NVIDIA publishes (of `major`, when given) is another CUDA
    than the base's, as far as gpulint's CUDA data tells."""
    newest = newest_minor(whole(major)) if major else latest_known_cuda()
    return newest is not None and newest != base.major_minor if major else \
        base.major_minor < newest


def _second_message(shown: str, what: str, base: CudaVersion, image: str | None, instead: str) -> str:
    return (f"{shown} installs {what} on a CUDA {base.version} base (`{image}`): two toolkits end up "
            f"in the image and which `nvcc` and `libcudart` win depends on PATH and the linker cache; "
            f"use {instead} instead")


def _meta_finding(doc: Document, package: Package, meta):
    runtime = bool(meta[1])
    replacement = ("cuda-libraries" if runtime else "cuda-toolkit") + (meta[2] or "")
    new_raw = package.raw.replace("cuda-runtime", "cuda-libraries", 1) if runtime else \
        package.raw.replace("cuda", "cuda-toolkit", 1)
    at = word_offsets(doc, package.command.instruction, package.raw)
    fix = None  # only where the name is written out (not behind a variable)
    if at and new_raw != package.raw:
        fix = Fix(f"install {replacement} instead of {package.name}",
                  (Edit(doc.abspath, at[0], at[1], new_raw),))
    span = doc.index.span(*at) if at else package_span(doc, package)
    return finding(doc, "GL306", span,
                   f"`{package.name}` is a meta-package that depends on `cuda-drivers`, so it "
                   f"installs the NVIDIA driver into the image (see GL305); install "
                   f"`{replacement}` for the {'libraries' if runtime else 'toolkit'} alone",
                   fix=fix)
