"""What a live node has: facts gathered from its filesystem, read-only.

`probe(root)` reads, under `root` (`/` for this machine, a folder for a captured
node): the running kernel, the loaded modules, the kernel driver's version, the
nvidia.ko files for the running kernel, the driver's user-space libraries, the
programs on the default PATH, and every absolute path the node's runtime
configurations name. `nvidia-smi` runs only when `root` is `/` and it is
on the PATH, with a timeout. The result is plain data; the rules in
gpulint/kinds/node/checks.py judge it.

`config_files(root)` lists the runtime and Kubernetes configuration files of the
node, each with the kind gpulint reads it as.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import subprocess
from pathlib import Path

from gpulint.formats.errors import ParseError
from gpulint.model import Span
from gpulint.paths import display_path
from gpulint.record import Frozen, Record, freeze
from gpulint.regex import lazy

# The PATH a systemd service (containerd, dockerd) runs with, and where the GPU
# Operator installs the toolkit.
SERVICE_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
OPERATOR_TOOLKIT = "/usr/local/nvidia/toolkit"
LIBRARY_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
                "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/lib64", "/usr/local/nvidia/lib64",
                # the GPU Operator's driver container mounts its root here
                "/run/nvidia/driver/usr/lib/x86_64-linux-gnu", "/run/nvidia/driver/usr/lib64")
# The libraries whose version must equal the kernel module's (NVML checks it).
DRIVER_LIBRARY = lazy(r"^(libcuda|libnvidia-ml)\.so\.(\d{3,}\.\d+(?:\.\d+)?)$")
_SONAMES = ("libcuda.so.1", "libnvidia-ml.so.1")
_DRIVER_LINE = lazy(r"Kernel Module(?: for \S+)?\s+(\d{3,}\.\d+(?:\.\d+)?)")
_MODULE_FILE = lazy(r"^nvidia\.ko(\.(xz|zst|gz))?$")
_ABSOLUTE = lazy(r"""(?<![\w.$}-])@?(/(?:[\w.+-]+/)*[\w.+-]+)""")
SMI_TIMEOUT = 10
NVIDIA_PCI_VENDOR = "10de"

CONTAINERD_FILES = (
    ("/etc/containerd/config.toml", "containerd"),
    ("/etc/containerd/conf.d/*.toml", "containerd"),
    ("/etc/containerd/config.d/*.toml", "containerd"),
    ("/var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl", "containerd"),
    ("/var/lib/rancher/k3s/agent/etc/containerd/config-v3.toml.tmpl", "containerd"),
    ("/var/lib/rancher/k3s/agent/etc/containerd/config.toml", "containerd"),
    ("/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl", "containerd"),
    ("/var/lib/rancher/rke2/agent/etc/containerd/config-v3.toml.tmpl", "containerd"),
    ("/var/lib/rancher/rke2/agent/etc/containerd/config.toml", "containerd"),
    ("/var/snap/microk8s/current/args/containerd-template.toml", "containerd"),
    ("/etc/k0s/containerd.toml", "containerd"),
    ("/etc/k0s/containerd.d/*.toml", "containerd"),
    ("/etc/docker/daemon.json", "daemon-json"),
    # the units that start the daemons, with their drop-ins, where systemd reads them
    *((f"{folder}/{unit}{tail}", "systemd") for unit in ("docker.service", "containerd.service")
      for folder in ("/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system")
      for tail in ("", ".d/*.conf")),
    ("/etc/nvidia-container-runtime/config.toml", "nvidia-toolkit"),
    # the GPU Operator's toolkit installer writes its own beside its binaries
    (f"{OPERATOR_TOOLKIT}/.config/nvidia-container-runtime/config.toml", "nvidia-toolkit"),
)
CDI_DIRS = ("/etc/cdi", "/var/run/cdi")
KUBELET_FILES = (("/var/lib/kubelet/config.yaml", "kubernetes"),)


class Located(Frozen):
    """A value read from a file on the node, and where it is written."""

    __slots__ = ("value", "path", "span")

    value: str
    path: str  # display path
    span: Span

    def __init__(self, value: str, path: str, span: Span) -> None:
        freeze(self, value, path, span)


class NodeFacts(Record):
    __slots__ = ("root", "live", "kernel", "driver", "loaded", "modules_known", "modules_dir",
                 "module_files", "dkms_kernels", "libraries", "nvidia_pci", "smi", "smi_error", "programs",
                 "paths")

    root: str  # display path of the node's `/`
    live: bool  # this machine (root is `/`)
    kernel: str | None
    driver: Located | None  # the loaded kernel module's version
    loaded: dict[str, Located]  # module -> its /proc/modules line
    modules_known: bool  # /proc/modules could be read
    modules_dir: str  # display path of /lib/modules/<kernel>
    module_files: tuple[str, ...]  # nvidia.ko for the running kernel (display paths)
    dkms_kernels: tuple[str, ...]  # kernels DKMS built an nvidia module for
    libraries: dict[str, str]  # display path -> driver version
    nvidia_pci: tuple[str, ...] | None  # vendor:device of NVIDIA PCI functions; None unknown
    smi: dict[str, str] | None  # nvidia-smi: driver_version, name, compute_cap
    smi_error: str | None
    programs: frozenset[str]  # executables on the service PATH and the operator's
    paths: dict[str, str]  # node path -> "executable" | "file" | "dir"

    def __init__(self, root: str, live: bool, kernel: str | None = None, driver: Located | None = None,
                 loaded: dict[str, Located] | None = None, modules_known: bool = False, modules_dir: str = "",
                 module_files: tuple[str, ...] = (), dkms_kernels: tuple[str, ...] = (),
                 libraries: dict[str, str] | None = None, nvidia_pci: tuple[str, ...] | None = None,
                 smi: dict[str, str] | None = None, smi_error: str | None = None,
                 programs: frozenset[str] = frozenset(), paths: dict[str, str] | None = None) -> None:
        self.root = root
        self.live = live
        self.kernel = kernel
        self.driver = driver
        self.loaded = {} if loaded is None else loaded
        self.modules_known = modules_known
        self.modules_dir = modules_dir
        self.module_files = module_files
        self.dkms_kernels = dkms_kernels
        self.libraries = {} if libraries is None else libraries
        self.nvidia_pci = nvidia_pci
        self.smi = smi
        self.smi_error = smi_error
        self.programs = programs
        self.paths = {} if paths is None else paths

    @property
    def driver_version(self) -> str | None:
        if self.driver is not None:
            return self.driver.value
        return self.smi.get("driver_version") if self.smi else None

    @property
    def user_space_versions(self) -> set[str]:
        return set(self.libraries.values())

    def display(self, node_path: str) -> str:
        """How a path on the node is shown: under the root, as the user can open it."""
        return node_path if self.live else display_path(Path(self.root, node_path.lstrip("/")))


# ------------------------------------------------------------------ paths under the root


def under(root: Path, node_path: str, hops: int = 40) -> Path | None:
    """The file a node path names, following symbolic links inside `root` (an
    absolute link target restarts at `root`, as in a chroot); None when absent or
    when a folder on the way cannot be read (without root privileges)."""
    try:
        return _under(root, node_path, hops)
    except OSError:
        return None


def _under(root: Path, node_path: str, hops: int) -> Path | None:
    parts = [p for p in node_path.split("/") if p not in ("", ".")]
    current = root
    while parts:
        part = parts.pop(0)
        if part == "..":
            current = current.parent if current != root else root
            continue
        candidate = current / part
        if candidate.is_symlink():
            hops -= 1
            if hops < 0:
                return None
            target = os.readlink(candidate)
            parts = [p for p in target.split("/") if p not in ("", ".")] + parts
            current = root if target.startswith("/") else current
            continue
        if not candidate.exists():
            return None
        current = candidate
    return current


def _kind_of(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        if path.is_dir():
            return "dir"
    except OSError:
        return None
    return "executable" if os.access(path, os.X_OK) else "file"


def _glob(root: Path, pattern: str) -> list[Path]:
    folder, _, name = pattern.rpartition("/")
    base = under(root, folder)
    try:
        return sorted(p for p in base.glob(name) if p.is_file()) if base is not None else []
    except OSError:
        return []


def config_files(root: Path) -> tuple[list[tuple[Path, str]], list[Path]]:
    """The node's runtime configuration files, CDI specs and kubelet config, with kinds;
    and those that exist but cannot be read (without root privileges)."""
    found: list[tuple[Path, str]] = []
    unreadable: list[Path] = []
    seen: set[str] = set()
    pending = list(CONTAINERD_FILES) + [(f"{d}/*.{ext}", "cdi") for d in CDI_DIRS
                                        for ext in ("yaml", "json")] + list(KUBELET_FILES)
    while pending:
        pattern, kind = pending.pop(0)
        matches = _glob(root, pattern) if "*" in pattern else [under(root, pattern)]
        for path in matches:
            if path is None or _kind_of(path) not in ("file", "executable") or str(path.resolve()) in seen:
                continue
            seen.add(str(path.resolve()))
            if os.access(path, os.R_OK):
                found.append((path, kind))
                if kind == "containerd":
                    pending += [(p, kind) for p in _imports(root, path)]
            else:
                unreadable.append(path)
    return [f for f in found if not _rendered(f[0])], unreadable


def _imports(root: Path, path: Path) -> list[str]:
    """The node paths a containerd file's `imports` name (relative ones against its
    folder), so drop-ins outside the usual folders are read too."""
    # the TOML reader (tomlkit): only when a fix or a file is read again as TOML
    from gpulint.formats.tomlpos import load_toml

    try:
        entries = load_toml(path.read_text(encoding="utf-8")).get("imports")
    except (OSError, UnicodeDecodeError, ParseError):
        return []
    folder = "/" + path.parent.relative_to(root).as_posix()
    return [posixpath.normpath(posixpath.join(folder, e)) for e in entries
            if isinstance(e, str)] if isinstance(entries, list) else []


def _rendered(path: Path) -> bool:
    """A k3s/RKE2 config.toml that the template beside it renders at every start: the
    template is what to check (and what to edit)."""
    return path.name == "config.toml" and "rancher" in path.parts and any(
        (path.parent / name).is_file() for name in ("config.toml.tmpl", "config-v3.toml.tmpl"))


# ------------------------------------------------------------------ the probe


def _read(root: Path, node_path: str) -> str | None:
    path = under(root, node_path)
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path is not None else None
    except OSError:
        return None


def _driver(root: Path, facts: NodeFacts) -> Located | None:
    text = _read(root, "/proc/driver/nvidia/version")
    for number, line in enumerate((text or "").splitlines(), 1):
        match = _DRIVER_LINE.search(line)
        if match:
            start = match.start(1) + 1
            return Located(match[1], facts.display("/proc/driver/nvidia/version"),
                           Span(number, start, number, start + len(match[1]) - 1))
    return None


def _modules(root: Path, facts: NodeFacts) -> None:
    text = _read(root, "/proc/modules")
    if text is None:
        return
    facts.modules_known = True
    shown = facts.display("/proc/modules")
    for number, line in enumerate(text.splitlines(), 1):
        name = line.split(" ", 1)[0]
        if name:
            facts.loaded[name] = Located(name, shown, Span(number, 1, number, len(name)))


def _module_files(root: Path, kernel: str) -> list[Path]:
    base = under(root, f"/lib/modules/{kernel}")
    if _kind_of(base) != "dir":
        return []
    out = []
    for dirpath, _, filenames in os.walk(base):
        out.extend(Path(dirpath, f) for f in filenames if _MODULE_FILE.match(f))
    return sorted(out)


def _dkms_kernels(root: Path) -> list[str]:
    """/var/lib/dkms/nvidia/<version>/<kernel>/: the kernels DKMS built the module for."""
    base = under(root, "/var/lib/dkms/nvidia")
    try:
        kernels = {k.name for version in base.iterdir() if version.is_dir() and not version.is_symlink()
                   for k in version.iterdir() if k.is_dir() and k.name[:1].isdigit()} if base else set()
    except OSError:
        return []
    return sorted(kernels)


def _libraries(root: Path, facts: NodeFacts) -> None:
    """The driver library versions the loader picks: those `libcuda.so.1` and
    `libnvidia-ml.so.1` link to; without such links, every versioned file (a leftover
    copy elsewhere is then counted too)."""
    linked: dict[str, str] = {}
    versioned: dict[str, str] = {}
    for folder in LIBRARY_DIRS:
        base = under(root, folder)
        if _kind_of(base) != "dir":
            continue
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        for name in names:
            match = DRIVER_LIBRARY.match(name)
            if match:
                versioned.setdefault(facts.display(f"{folder}/{name}"), match[2])
            elif name in _SONAMES:
                target = under(root, f"{folder}/{name}")
                match = DRIVER_LIBRARY.match(target.name) if target is not None else None
                if match:
                    linked.setdefault(facts.display(f"{folder}/{name}"), match[2])
    facts.libraries = linked or versioned


def _nvidia_pci(root: Path) -> tuple[str, ...] | None:
    text = _read(root, "/proc/bus/pci/devices")
    if text is None:
        return None
    found = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) > 1 and fields[1].lower().startswith(NVIDIA_PCI_VENDOR):
            found.append(f"{fields[1][:4]}:{fields[1][4:8]}")
    return tuple(found)


def _programs(root: Path) -> frozenset[str]:
    names = set()
    scanned: set[Path] = set()
    for folder in SERVICE_PATH + (OPERATOR_TOOLKIT,):
        base = under(root, folder)
        if _kind_of(base) != "dir" or base in scanned:  # /bin is /usr/bin on merged-/usr systems
            continue
        scanned.add(base)
        try:
            with os.scandir(base) as entries:
                for entry in entries:
                    # a link resolves inside the root (/usr/bin/runc -> /etc/alternatives/runc ...)
                    path = under(root, f"{folder}/{entry.name}") if entry.is_symlink() else Path(entry.path)
                    if _kind_of(path) == "executable":
                        names.add(entry.name)
        except OSError:
            continue
    return frozenset(names)


def _named_paths(root: Path, texts: list[str]) -> dict[str, str]:
    """Every absolute path the configuration texts name, and what is there. A toolkit
    `ldconfig = "@/sbin/ldconfig.real"` names `/sbin/ldconfig.real` and
    `/sbin/ldconfig` (the toolkit falls back to the latter)."""
    wanted: set[str] = set()
    for text in texts:
        for match in _ABSOLUTE.finditer(text):
            path = match[1]
            wanted.add(path)
            if path.endswith(".real"):
                wanted.add(path.removesuffix(".real"))
            else:
                wanted.add(path + ".real")
    out = {}
    for path in sorted(wanted):
        kind = _kind_of(under(root, path))
        if kind is not None:
            out[path] = kind
    return out


def _smi() -> tuple[dict[str, str] | None, str | None]:
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version,name,compute_cap", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=SMI_TIMEOUT, check=False)
    except FileNotFoundError:
        return None, None
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"nvidia-smi did not answer: {exc}"
    if done.returncode != 0:
        message = (done.stdout + done.stderr).strip().splitlines()
        return None, message[0] if message else f"nvidia-smi exited with {done.returncode}"
    first = next((line for line in done.stdout.splitlines() if line.strip()), "")
    parts = [p.strip() for p in first.split(",")]
    if len(parts) < 3:
        return None, f"nvidia-smi printed {first!r}"
    return {"driver_version": parts[0], "name": parts[1], "compute_cap": parts[2]}, None


def probe(root: Path, config_texts: list[str]) -> NodeFacts:
    live = root.resolve() == Path("/")
    facts = NodeFacts(root=display_path(root) if not live else "/", live=live)
    kernel = (_read(root, "/proc/sys/kernel/osrelease") or "").strip()
    facts.kernel = kernel or (os.uname().release if live else None)
    facts.driver = _driver(root, facts)
    _modules(root, facts)
    if facts.kernel:
        facts.modules_dir = facts.display(f"/lib/modules/{facts.kernel}")
        facts.module_files = tuple(display_path(p) if not live else str(p)
                                   for p in _module_files(root, facts.kernel))
    facts.dkms_kernels = tuple(_dkms_kernels(root))
    _libraries(root, facts)
    facts.nvidia_pci = _nvidia_pci(root)
    facts.programs = _programs(root)
    facts.paths = _named_paths(root, config_texts)
    if live and shutil.which("nvidia-smi"):
        facts.smi, facts.smi_error = _smi()
    return facts
