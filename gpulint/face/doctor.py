"""`gpulint doctor [--root DIR] [PATHS...]`: check a live node layer by layer.

Reads, never writes: the host (driver, kernel module, libraries), the container
runtime (containerd with drop-ins, k3s/RKE2/MicroK8s/k0s, dockerd, the NVIDIA
Container Toolkit, CDI specs) and Kubernetes (kubelet's config). The runtime files
go through the same rules as a static run; the node's driver becomes the fleet
driver that PATHS (manifests, Dockerfiles) are judged against.

Imports inside functions: `gpulint doctor` is loaded only when asked for; the probe and
the engine are imported when it runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
LAYERS = (("host", "Host"), ("runtime", "Container runtime"), ("kubernetes", "Kubernetes"),
          ("workloads", "Checked against this node"))
_RUNTIME_KINDS = ("containerd", "daemon-json", "nvidia-toolkit", "cdi", "systemd")


def doctor_parser():
    from gpulint.face.arguments import Parser
    from gpulint.knowledge.cuda import GPU_CLASSES
    from gpulint.report import FORMATS

    p = Parser(prog="gpulint doctor", description="Check this node's GPU stack, read-only: the host's "
                "driver and kernel module, the container runtime's configuration, kubelet's.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="manifests or Dockerfiles to judge against this node's driver")
    p.add_argument("--root", default="/", metavar="DIR",
                   help="read the node's files under DIR, as if DIR were / (default: /)")
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE")
    p.add_argument("--no-show-source", action="store_true", help="text: omit the source lines")
    p.add_argument("--failure-threshold", choices=("error", "warning", "info", "none"),
                   help="lowest severity that makes the exit code 1 (default: warning)")
    p.add_argument("--select", help="comma-separated codes, prefixes or slugs; replaces the config")
    p.add_argument("--extend-select", help="codes to add to the selection")
    p.add_argument("--ignore", help="codes to leave out")
    p.add_argument("--preview", action="store_true", default=None, help="also run preview rules")
    p.add_argument("--exclude", help="patterns to exclude from PATHS")
    p.add_argument("--config", metavar="PATH", help="use this config file")
    p.add_argument("--isolated", action="store_true", help="ignore every config file")
    p.add_argument("--gpu-class", choices=GPU_CLASSES,
                   help="GPU class of the node, when nvidia-smi cannot tell")
    return p


def doctor_command(argv: list[str]) -> int:

    from gpulint.face.arguments import UsageError, emit, lint_parser, settings_from
    from gpulint.kinds.node.probe import config_files, probe
    from gpulint.run.config import ConfigError
    from gpulint.run.engine import (
        Options,
        Source,
        collect_sources,
        exit_code,
        load_checks,
        print_internal_errors,
        run,
    )

    args = doctor_parser().parse_args(argv)
    root = Path(args.root)
    try:
        if not root.is_dir():
            raise UsageError(f"--root {args.root}: not a directory")
        # the lint options doctor does not take keep their defaults
        settings = settings_from(argparse.Namespace(**{**vars(lint_parser().parse_args([])), **vars(args)}))
        workloads = collect_sources(args.paths, settings) if args.paths else []
    except (ConfigError, UsageError) as exc:
        print(f"gpulint: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except FileNotFoundError as exc:
        print(f"gpulint: {exc.args[0]}: no such file or directory", file=sys.stderr)
        return EXIT_ERROR
    files, unreadable = config_files(root)
    texts = [_text(path) for path, kind in files if kind in _RUNTIME_KINDS]
    facts = probe(root, texts)
    load_checks({"node"})
    shown = {path: _shown(facts, root, path) for path, _ in files}
    sources = [Source(path, kind=kind, display=shown[path]) for path, kind in files] + workloads
    try:
        result = run(sources, settings, Options(facts=_fleet_facts(facts, args.gpu_class)))
    except OSError as exc:
        print(f"gpulint: {exc}", file=sys.stderr)
        return EXIT_ERROR
    layer_of = _layer_of(result, {shown[path]: "kubernetes" if kind == "kubernetes" else "runtime"
                                  for path, kind in files})
    layers = _layers(result, layer_of)
    unreadable = [_shown(facts, root, path) for path in unreadable]
    if args.format == "text":
        color = not args.output and sys.stdout.isatty() and "NO_COLOR" not in os.environ
        emit(_text_report(result, facts, layers, layer_of, bool(args.paths),
                           not args.no_show_source, color, unreadable),
              args.output)
    elif args.format == "json":
        from gpulint.report import render

        payload = json.loads(render("json", result))
        payload["node"] = _node_json(facts, layers)
        payload["node"]["unreadable"] = unreadable
        emit(json.dumps(payload, indent=2) + "\n", args.output)
    else:
        from gpulint.report import render

        emit(render(args.format, result), args.output)
    print_internal_errors(result)
    return exit_code(result, settings.failure_threshold)


def _shown(facts, root: Path, path: Path) -> str:
    """A node file as the report shows it: its path on the node when checking this
    machine, else under the root."""
    return facts.display("/" + path.relative_to(root).as_posix())


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _fleet_facts(facts, gpu_class: str | None) -> dict:
    """The node's driver and GPU class as the fleet facts the compatibility rules read."""
    from gpulint.crossfile.fleet import Origin, driver_version

    out: dict = {"node": facts}
    version = driver_version(facts.driver_version)
    if version:
        where = facts.driver
        out["driver"] = version
        out["driver_origin"] = Origin("the driver loaded on this node", where.path if where else None,
                                      where.span if where else None)
    if facts.smi:
        out["gpu_product"] = facts.smi["name"]
    if gpu_class:
        out["gpu_class"] = gpu_class
    return out


def _layer_of(result, shown: dict[str, str]) -> dict[str, str]:
    """The layer of each checked file: the node's runtime and kubelet files, then PATHS."""
    return {d.path: shown.get(d.path, "workloads") for d in result.documents}


def _layers(result, layer_of: dict[str, str]) -> dict[str, list]:
    """Each active finding under its layer; findings outside any file are host facts."""
    out: dict[str, list] = {key: [] for key, _ in LAYERS}
    for f in result.active:
        out[layer_of.get(f.path, "host")].append(f)
    return out


def _state(found: list) -> str:
    severities = {f.severity for f in found}
    for severity, state in (("error", "fail"), ("warning", "warn"), ("info", "info")):
        if severity in severities:
            return state
    return "pass"


def _compat(version: str | None) -> dict | None:
    from gpulint.face.explain import driver_facts

    return driver_facts(version) if version else None


def _host_lines(facts) -> list[str]:
    lines = [f"kernel {facts.kernel or 'unknown'}"]
    if facts.driver_version:
        source = "kernel module" if facts.driver is not None else "nvidia-smi"
        lines.append(f"driver {facts.driver_version} ({source})")
    if facts.smi:
        lines.append(f"GPU {facts.smi['name']}, compute capability {facts.smi['compute_cap']}")
    elif facts.smi_error:
        lines.append(f"nvidia-smi: {facts.smi_error}")
    data = _compat(facts.driver_version)
    if data:
        runs = [f"CUDA <= {data['max_cuda']} natively"]
        major = data["max_cuda"].split(".")[0] + ".x"
        if major in data["minor_version_compat"]:  # older majors run natively anyway
            runs.append(f"any CUDA {major} application by minor-version compatibility (no PTX JIT, "
                        f"no newer APIs)")
        if data["forward_compat"]:
            runs.append(f"CUDA {', '.join(data['forward_compat'])} by forward compatibility "
                        f"(data-center GPUs, cuda-compat package)")
        lines.append("runs " + "; ".join(runs))
    return lines


def _text_report(result, facts, layers, layer_of, with_workloads: bool, show_source: bool,
                 color: bool, unreadable: list[str]) -> str:
    from gpulint.report.text import finding_lines, summary_line

    out = [f"gpulint doctor: node {facts.root}", ""]
    for key, title in LAYERS:
        if key == "workloads" and not with_workloads:
            continue
        found = layers[key]
        out.append(f"{title}: {_state(found).upper()}")
        checked = [path for path, layer in layer_of.items() if layer == key]
        notes = _host_lines(facts) if key == "host" else \
            ["checked " + ", ".join(checked) if checked else "no configuration found"]
        if key == "runtime" and unreadable:
            notes.append("could not read (run as root): " + ", ".join(unreadable))
        out.extend(f"  {line}" for line in notes)
        if found:
            out.append("")
            located = [f for f in found if not os.path.isdir(f.path)]
            out.extend(f"  {f.code} [{f.severity}] {f.message}" for f in found if f not in located)
            out.extend("  " + line if line else "" for line in
                       finding_lines(located, result.documents, show_source=show_source, color=color))
        if out[-1]:
            out.append("")
    out.append(summary_line(result))
    return "\n".join(out) + "\n"


def _node_json(facts, layers) -> dict:
    data = _compat(facts.driver_version)
    return {
        "root": facts.root,
        "kernel": facts.kernel,
        "driver": facts.driver_version,
        "gpu": facts.smi,
        "cuda": None if data is None else {
            "native_max": data["max_cuda"],
            "minor_version_compat": data["minor_version_compat"],
            "forward_compat": data["forward_compat"],
        },
        "layers": {key: {"status": _state(layers[key]), "findings": len(layers[key])}
                   for key, _ in LAYERS},
    }
