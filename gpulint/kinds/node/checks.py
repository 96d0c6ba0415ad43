"""GL8xx on a live node (`gpulint doctor`): the host's driver and kernel module, the
programs the runtime configurations name, and the CDI specs the runtimes need.

Every check reads the facts gpulint/node.py gathered (`ctx.options["node"]`, plain
data) and the configuration files parsed like any other; none touches the node.
Without node facts (a static run) they say nothing.
"""

from __future__ import annotations

import posixpath

from gpulint.formats.template import is_placeholder
from gpulint.kinds.node.probe import (
    DRIVER_LIBRARY,
    OPERATOR_TOOLKIT,
    SERVICE_PATH,
    Located,
    NodeFacts,
)
from gpulint.knowledge.cuda import branch_problem
from gpulint.knowledge.runtimes import NVIDIA_BINARIES
from gpulint.model import Document, Finding, Node, Related, Span, str_value
from gpulint.registry import Context, check, finding

CDI_GPU_KIND = "nvidia.com/gpu"


def _facts(ctx: Context) -> NodeFacts | None:
    return ctx.options.get("node")


def _at(code: str, where: Located | None, path: str, message: str, severity: str = "",
        related_: tuple[Related, ...] = ()) -> Finding:
    """A finding about the node: at the line of the file that shows it, else at the
    file or folder the fact is about."""
    if where is not None:
        return Finding(code, "", severity, where.path, where.span, message, related=related_)
    return Finding(code, "", severity, path, Span.point(1, 1), message, related=related_)


def _has_user_space(facts: NodeFacts) -> bool:
    return bool(facts.libraries) or "nvidia-smi" in facts.programs or facts.smi is not None \
        or facts.smi_error is not None


# ------------------------------------------------------------------ host


def _no_gpu(facts: NodeFacts) -> bool:
    """/proc/bus/pci lists the node's devices and none is NVIDIA's."""
    return facts.nvidia_pci == ()


def _driver_traces(facts: NodeFacts) -> bool:
    return _has_user_space(facts) or bool(facts.module_files) or bool(facts.dkms_kernels)


@check("GL801", project=True)
def no_nvidia_driver(ctx: Context):
    facts = _facts(ctx)
    if facts is None or facts.driver_version or "nvidia" in facts.loaded or facts.nvidia_pci:
        return
    if not _driver_traces(facts):
        pci = " and no NVIDIA PCI device" if _no_gpu(facts) else ""
        yield _at("GL801", None, facts.root,
                  f"no NVIDIA GPU driver on this node{pci}: no `nvidia` module is loaded and no "
                  f"driver libraries or nvidia-smi are installed; the container runtime and "
                  f"Kubernetes layers are checked without a driver")
    elif _no_gpu(facts):  # driver files without a GPU: nothing for the module to drive
        yield _at("GL801", None, facts.root,
                  "no NVIDIA GPU on this node: /proc/bus/pci lists no NVIDIA device and no `nvidia` "
                  "module is loaded, although NVIDIA driver files are installed; the container "
                  "runtime and Kubernetes layers are checked without a driver")


@check("GL802", project=True)
def nvidia_module_missing(ctx: Context):
    facts = _facts(ctx)
    if facts is None or not facts.kernel or "nvidia" in facts.loaded or facts.module_files:
        return
    if _no_gpu(facts) or not (_has_user_space(facts) or facts.nvidia_pci or facts.dkms_kernels):
        return  # no GPU, or no driver at all: GL801
    installed = sorted(facts.user_space_versions)
    what = f"the NVIDIA driver {', '.join(installed)} is installed" if installed else \
        "an NVIDIA GPU is present" if facts.nvidia_pci else "the NVIDIA driver is installed"
    built = [k for k in facts.dkms_kernels if k != facts.kernel]
    others = f"; DKMS built it for {', '.join(built)} only" if built else ""
    yield _at("GL802", None, facts.modules_dir,
              f"{what} but no nvidia kernel module exists for the running kernel {facts.kernel}"
              f"{others}: the module was not built for this kernel (a kernel update without the "
              f"headers or DKMS), so no GPU is usable; install the kernel headers and rebuild it "
              f"(`dkms autoinstall`, or reinstall the driver for this kernel)")


@check("GL803", project=True)
def nvidia_module_not_loaded(ctx: Context):
    facts = _facts(ctx)
    if facts is None or not facts.modules_known or "nvidia" in facts.loaded or not facts.module_files \
            or _no_gpu(facts):
        return
    if "nouveau" in facts.loaded:
        return  # GL804 names the cause
    yield _at("GL803", None, facts.module_files[0],
              f"the nvidia kernel module exists for kernel {facts.kernel} but is not loaded: "
              f"nvidia-smi fails with `NVIDIA-SMI has failed because it couldn't communicate with "
              f"the NVIDIA driver` and containers get no GPU; load it (`modprobe nvidia`) and read "
              f"`dmesg` for why it did not load at boot (an unsigned module under Secure Boot is a "
              f"common cause)")


@check("GL804", project=True)
def nouveau_loaded(ctx: Context):
    facts = _facts(ctx)
    if facts is None or "nouveau" not in facts.loaded:
        return
    also = " beside the nvidia module" if "nvidia" in facts.loaded else ""
    yield _at("GL804", facts.loaded["nouveau"], "",
              f"the open-source nouveau module is loaded{also}: it claims NVIDIA GPUs, and the nvidia "
              f"module cannot drive a GPU that nouveau holds; blacklist it (`blacklist nouveau` and "
              f"`options nouveau modeset=0` in /etc/modprobe.d), rebuild the initramfs and reboot")


@check("GL805", project=True)
def driver_library_mismatch(ctx: Context):
    facts = _facts(ctx)
    if facts is None or facts.driver is None:
        return
    kernel = facts.driver.value
    others = {path: version for path, version in facts.libraries.items() if version != kernel}
    if not others:
        return
    path, version = sorted(others.items())[0]
    yield _at("GL805", facts.driver, "",
              f"the loaded nvidia kernel module is {kernel} but the installed user-space driver is "
              f"{version} ({posixpath.basename(path)}): NVML fails with `Failed to initialize NVML: "
              f"Driver/library version mismatch` and CUDA cannot start; reboot (or unload and reload "
              f"the nvidia modules) so the module matches the installed driver",
              related_=(Related(path, 1, 1, f"driver library {version}"),))


@check("GL602", project=True)
def node_driver_branch_eol(ctx: Context):
    facts = _facts(ctx)
    version = facts.driver_version if facts is not None else None
    problem = branch_problem(version) if version else None
    if problem is not None:  # where no file shows the version (nvidia-smi's), at the node
        yield _at("GL602", facts.driver, facts.root, f"the node runs driver {version}; {problem[1]}",
                  severity=problem[0])


# ------------------------------------------------------------------ programs the configurations name


def _program_problem(facts: NodeFacts, program: str) -> str | None:
    """Why `program` (absolute, or a bare name looked up on the service PATH) cannot run."""
    if program.startswith("@/"):  # the toolkit's ldconfig: `X.real` when present, else `X`
        plain = program[1:].removesuffix(".real")
        kinds = {facts.paths.get(plain + ".real"), facts.paths.get(plain)}
        if "executable" in kinds:
            return None
        return f"but neither {plain}.real nor {plain} is an executable file on this node"
    if program.startswith("/"):
        kind = facts.paths.get(posixpath.normpath(program))
        if kind is None:
            return "which does not exist on this node"
        return None if kind == "executable" else "which is not an executable file on this node"
    if "/" in program:
        return None  # a relative path: GL106 reports it
    if program in facts.programs:
        return None
    return f"which this node has neither on the service PATH ({':'.join(SERVICE_PATH)}) nor in " \
           f"{OPERATOR_TOOLKIT}"


_INSTALL = "install the NVIDIA Container Toolkit or correct the path"


def _runtime_programs(ctx: Context):
    """(document, value node, owner words, program, advice) for each runtime's binary."""
    for config in ctx.fact("node-configs"):
        for entry in config.runtimes.values():
            if entry.binary is None or is_placeholder(entry.binary):
                continue
            if config.kind == "containerd":
                value = entry.node.get("options", "BinaryName") or entry.node.get("options", "Runtime")
                what = f"BinaryName of runtime `{entry.name}`"
            else:  # daemon.json's `path`, or dockerd's `--add-runtime NAME=PATH` in its unit
                value = entry.node.get("path") if entry.node.is_map else entry.node
                what = f"path of runtime `{entry.name}`"
            if value is not None:
                yield entry.doc, value, what, entry.binary, _INSTALL


TOOLKIT_PROGRAMS = (("nvidia-container-cli", "path"), ("nvidia-ctk", "path"),
                    ("nvidia-container-runtime-hook", "path"))


def _toolkit_programs(ctx: Context):
    for doc in ctx.of_kind("nvidia-toolkit"):
        for table, key in TOOLKIT_PROGRAMS:
            value = doc.tree.get(table, key)
            program = str_value(value)
            if program:
                yield doc, value, f"`{table}.{key}`", program, _INSTALL
        ldconfig = doc.tree.get("nvidia-container-cli", "ldconfig")
        program = str_value(ldconfig)
        if program and program.startswith("@/"):  # a path inside the container is GL810's
            yield doc, ldconfig, "`nvidia-container-cli.ldconfig`", program, \
                "point it at the host's ldconfig (`@/sbin/ldconfig` on most distributions)"


@check("GL806", project=True)
def configured_program_missing(ctx: Context):
    facts = _facts(ctx)
    if facts is None:
        return
    for doc, value, what, program, advice in list(_runtime_programs(ctx)) + list(_toolkit_programs(ctx)):
        problem = _program_problem(facts, program)
        if problem is not None:
            yield finding(doc, "GL806", value.span,
                          f"{what} is `{program}`, {problem}: containers that use it fail to start; {advice}")
    yield from _low_level_runtimes(ctx, facts)


def _low_level_runtimes(ctx: Context, facts: NodeFacts):
    """The NVIDIA runtime runs the first of its `runtimes` candidates it finds."""
    for doc in ctx.of_kind("nvidia-toolkit"):
        node = doc.tree.get("nvidia-container-runtime", "runtimes")
        names = [v.value for v in node.value if isinstance(v.value, str)] if node is not None and \
            node.is_seq else []
        if names and all(_program_problem(facts, name) for name in names):
            shown = ", ".join(f"`{n}`" for n in names)
            yield finding(doc, "GL806", node.span,
                          f"none of the runtimes the NVIDIA runtime may run ({shown}) is on this node: "
                          f"every container fails with `no runtime binary found from candidate list`; "
                          f"install runc (or crun) or list the one the node has")


# ------------------------------------------------------------------ CDI


def _cdi_users(ctx: Context):
    """(document, node, words) for each setting that makes NVIDIA containers need a CDI spec."""
    for doc in ctx.of_kind("nvidia-toolkit"):
        mode = doc.tree.get("nvidia-container-runtime", "mode")
        if str_value(mode) == "cdi":
            yield doc, mode, "the NVIDIA Container Toolkit runs in `mode = \"cdi\"`"
    for doc, value, what, program, _ in _runtime_programs(ctx):
        if posixpath.basename(program) == NVIDIA_BINARIES[1]:
            yield doc, value, f"the {what} is {NVIDIA_BINARIES[1]}"


def _gpu_specs(ctx: Context) -> list[Document]:
    return [d for d in ctx.of_kind("cdi") if d.tree is not None
            and str_value(d.tree.get("kind")) == CDI_GPU_KIND]


@check("GL807", project=True)
def cdi_spec_missing(ctx: Context):
    facts = _facts(ctx)
    if facts is None or _gpu_specs(ctx):
        return
    for doc, node, words in _cdi_users(ctx):
        yield finding(doc, "GL807", node.span,
                      f"{words}, but no CDI spec for `{CDI_GPU_KIND}` is in /etc/cdi or /var/run/cdi: "
                      f"GPU containers fail with `unresolvable CDI devices`; generate one "
                      f"(`nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`) or enable the "
                      f"nvidia-cdi-refresh service that regenerates it")


def _spec_driver(doc: Document) -> tuple[str, Node] | None:
    """The driver version a spec was generated for: the first versioned libcuda or
    libnvidia-ml it mounts, and where."""
    edits = [doc.tree.get("containerEdits")] + [d.get("containerEdits") for d in
                                                _items(doc.tree.get("devices"))]
    for edit in edits:
        for mount in _items(edit.get("mounts") if edit is not None else None):
            host = mount.get("hostPath")
            match = DRIVER_LIBRARY.match(posixpath.basename(str_value(host) or ""))
            if match:
                return match[2], host
    return None


def _items(node: Node | None) -> list[Node]:
    return [n for n in node.value if n.is_map] if node is not None and node.is_seq else []


@check("GL808", project=True)
def cdi_spec_stale(ctx: Context):
    facts = _facts(ctx)
    if facts is None:
        return
    # the spec mounts the driver's files: compare with the libraries on disk, which are
    # already the new driver's when the module is still the old one (GL805)
    installed = facts.user_space_versions or {facts.driver_version} - {None}
    for doc in _gpu_specs(ctx) if installed else ():
        found = _spec_driver(doc)
        if found is None or found[0] in installed:
            continue
        version, node = found
        yield finding(doc, "GL808", node.span,
                      f"this CDI spec was generated for driver {version}, but the node has driver "
                      f"{', '.join(sorted(installed))}: its mounts name files the driver update removed, "
                      f"so GPU containers fail to start; generate it again (`nvidia-ctk cdi generate`) "
                      f"after every driver update")
