"""Docker daemon.json rules (GL2xx): runtimes, default-runtime and top-level keys.

dockerd validates these at start-up and refuses to run on any violation; the
messages below quote its errors. Invalid JSON itself is GL001, reported by the
parser at the exact position.
"""

from __future__ import annotations

import json
import posixpath
import re

from gpulint.fix import apply_edits
from gpulint.model import Document, Edit, Fix, Node, str_value
from gpulint.nodeconfig import NOT_RUNTIMES, is_shim_name
from gpulint.registry import check, finding, related
from gpulint.spelling import closest_key
from gpulint.template import is_placeholder

# Keys dockerd accepts in daemon.json (Linux and Windows), from the dockerd reference
# (docker/cli docs/reference/dockerd.md, "Daemon configuration file") and its flags.
DAEMON_KEYS = frozenset("""
allow-direct-routing allow-nondistributable-artifacts api-cors-header authorization-plugins bip bip6
bridge bridge-accept-fwmark builder cdi-spec-dirs cgroup-parent containerd containerd-namespace cri-containerd
containerd-plugin-namespace containerd-plugins-namespace cpu-rt-period cpu-rt-runtime data-root
debug default-address-pools default-cgroupns-mode default-gateway default-gateway-v6 default-ipc-mode
default-network-opts default-runtime default-shm-size default-ulimits dns dns-opts dns-search
exec-opts exec-root experimental features firewall-backend fixed-cidr fixed-cidr-v6 group
host-gateway-ip host-gateway-ips hosts http-proxy https-proxy icc init init-path insecure-registries
ip ip-forward ip-forward-no-drop ip-masq ip6tables iptables ipv6 labels live-restore log-driver
log-format log-level log-opts max-concurrent-downloads max-concurrent-uploads max-download-attempts
metrics-addr min-api-version mtu network-control-plane-mtu no-new-privileges no-proxy
node-generic-resources oom-score-adjust pidfile proxies raw-logs registry-mirrors runtimes
rootless seccomp-profile selinux-enabled shutdown-timeout storage-driver storage-opts
swarm-default-advertise-addr tls tlscacert tlscert tlskey tlsverify userland-proxy
userland-proxy-path userns-remap
""".split())
# Keys dockerd no longer accepts, with what replaced them (None: nothing).
REMOVED_KEYS = {
    "graph": "data-root",
    "cluster-store": None,
    "cluster-store-opts": None,
    "cluster-advertise": None,
}
ENTRY_KEYS = ("path", "runtimeArgs", "runtimeType", "options")
BUILTIN_RUNTIMES = ("runc", "io.containerd.runc.v2")
WRONG_PATHS = dict(NOT_RUNTIMES, **{"docker-runc": None})


def _entries(doc: Document):
    runtimes = doc.tree.get("runtimes")
    if runtimes is None or not runtimes.is_map:
        return
    yield from runtimes.items()


def _json_fix(doc: Document, description: str, edits: list[Edit], safe: bool = True) -> Fix | None:
    try:
        json.loads(apply_edits(doc.text, edits))
    except ValueError:
        return None
    return Fix(description, tuple(edits), safe)


def _rename_key(doc: Document, node: Node, new: str) -> Edit:
    start, end = doc.index.offsets(node.key_span)
    return Edit(doc.abspath, start, end, json.dumps(new))


@check("GL201", kinds=("daemon-json",))
def default_runtime_undefined(doc, ctx):
    value = doc.tree.get("default-runtime")
    name = str_value(value)
    if not name or is_placeholder(name):  # empty: dockerd uses its built-in default
        return
    runtimes = dict(_entries(doc))
    if name in runtimes or name in BUILTIN_RUNTIMES or is_shim_name(name):
        return
    same = [r for r in runtimes if r.lower() == name.lower()]
    hint = f"; did you mean `{same[0]}`? (names are case-sensitive)" if same else (
        f"; add it under `runtimes`" if not runtimes else
        f"; the runtimes defined here are {', '.join(f'`{r}`' for r in runtimes)}")
    yield finding(doc, "GL201", value.span,
                  f"default-runtime `{name}` is not defined in `runtimes`: dockerd refuses to start "
                  f"(\"specified default runtime '{name}' does not exist\"){hint}",
                  related=[related(doc, runtimes[r], "defined here") for r in same])


@check("GL202", kinds=("daemon-json",))
def runtime_entry_malformed(doc, ctx):
    for name, entry in _entries(doc):
        if not entry.is_map:
            yield finding(doc, "GL202", entry.span,
                          f"runtime `{name}` must be an object with `path` or `runtimeType`")
            continue
        # dockerd tests the fields for emptiness, so `"path": ""` counts as no path
        path, runtime_type = _given(entry.get("path")), _given(entry.get("runtimeType"))
        options, args = entry.get("options"), entry.get("runtimeArgs")
        if path is None and runtime_type is None:
            binary = str_value(entry.get("options", "BinaryName"))
            yield finding(doc, "GL202", entry.anchor,
                          f"runtime `{name}` has neither `path` nor `runtimeType`: dockerd refuses to start "
                          f"(\"runtime {name}: either a runtimeType or a path must be configured\")"
                          + (f"; `options.BinaryName` is containerd syntax, dockerd wants "
                             f"{{\"path\": \"{binary}\"}}" if binary else ""),
                          fix=_path_fix(doc, entry, binary))
        elif path is not None and runtime_type is not None:
            yield finding(doc, "GL202", runtime_type.anchor,
                          f"runtime `{name}` sets both `path` and `runtimeType`: dockerd refuses to start "
                          f"(\"cannot configure both path and runtimeType for runtime {name}\")")
        elif path is not None and options is not None:
            yield finding(doc, "GL202", options.anchor,
                          f"runtime `{name}` has `options` next to `path`: dockerd refuses to start "
                          f"(\"options cannot be used with a path runtime\"); runc-style options belong "
                          f"to a `runtimeType` entry, arguments to `runtimeArgs`")
        elif runtime_type is not None and args is not None:
            yield finding(doc, "GL202", args.anchor,
                          f"runtime `{name}` has `runtimeArgs` next to `runtimeType`: dockerd refuses to "
                          f"start (\"args cannot be used with a runtimeType runtime\")")
        yield from _foreign_keys(doc, name, entry)


def _given(node: Node | None) -> Node | None:
    """A runtime field that dockerd sees as set: present and not an empty string."""
    return None if node is None or node.value == "" else node


def _foreign_keys(doc: Document, name: str, entry: Node):
    """Keys dockerd's runtime type does not have (containerd's, pasted in): ignored."""
    for key, child in entry.items():
        if key in ENTRY_KEYS or key == "args":  # `args` is GL205
            continue
        yield finding(doc, "GL202", child.anchor,
                      f"`{key}` is not a field of a dockerd runtime (only path, runtimeArgs, runtimeType "
                      f"and options are), so dockerd ignores it"
                      + ("; this looks like containerd config.toml syntax" if key[0].isupper() or "_" in key
                         else ""),
                      severity="warning")


def _path_fix(doc: Document, entry: Node, binary: str | None) -> Fix | None:
    """`{"options": {"BinaryName": X}}` and nothing else becomes `{"path": X}`."""
    options = entry.get("options")
    if binary is None or list(entry.value) != ["options"] or list(options.value) != ["BinaryName"]:
        return None
    start, end = doc.index.offsets(entry.span)
    if entry.span.line == entry.span.end_line:
        text = "{" + f'"path": {json.dumps(binary)}' + "}"
    else:
        inner, outer = doc.index.indent(options.key_span.line), doc.index.indent(entry.span.end_line)
        text = "{\n" + f'{inner}"path": {json.dumps(binary)}\n{outer}' + "}"
    return _json_fix(doc, f"use {{\"path\": {json.dumps(binary)}}}", [Edit(doc.abspath, start, end, text)])


@check("GL203", kinds=("daemon-json",))
def runtime_name_reserved(doc, ctx):
    for name, entry in _entries(doc):
        if name == "runc":
            yield finding(doc, "GL203", entry.key_span,
                          "a runtime named `runc` cannot be defined: dockerd refuses to start "
                          "(\"runtime name 'runc' is reserved\"); give it another name")


def _binary(entry: Node) -> Node | None:
    """What a runtime entry runs: `path`, or a shim entry's `options.BinaryName`."""
    if not entry.is_map:
        return None
    if entry.get("runtimeType") is not None and entry.get("path") is None:
        return entry.get("options", "BinaryName")
    return entry.get("path")


@check("GL204", kinds=("daemon-json",))
def runtime_path_invalid(doc, ctx):
    for name, entry in _entries(doc):
        path = _binary(entry)
        value = str_value(path)
        if value is None or is_placeholder(value):
            continue
        base = posixpath.basename(value)
        if base not in WRONG_PATHS:
            continue
        new_base = WRONG_PATHS[base]
        fix = None
        if new_base is not None:
            new = value[: len(value) - len(base)] + new_base
            start, end = doc.index.offsets(path.span)
            # unsafe: the renamed binary must exist at that path on the node (as in GL106)
            fix = _json_fix(doc, f"use `{new}`", [Edit(doc.abspath, start, end, json.dumps(new))],
                            safe=False)
        yield finding(doc, "GL204", path.span,
                      f"runtime `{name}` runs `{base}`, which is not an OCI runtime: containers that use "
                      f"it fail (\"OCI runtime create failed\") or start without GPUs; the NVIDIA runtime "
                      f"is `nvidia-container-runtime`"
                      + (" (`docker-runc` is the runc copy old Docker packages bundled; current "
                         "packages do not ship it)" if base == "docker-runc" else ""),
                      fix=fix)


@check("GL205", kinds=("daemon-json",))
def runtime_args_key(doc, ctx):
    for name, entry in _entries(doc):
        args = entry.get("args") if entry.is_map else None
        if args is None:
            continue
        empty = args.is_seq and not args.value
        fix = None
        if entry.get("runtimeArgs") is None and entry.get("runtimeType") is None:
            fix = _json_fix(doc, "rename `args` to `runtimeArgs`", [_rename_key(doc, args, "runtimeArgs")])
        yield finding(doc, "GL205", args.key_span,
                      f"runtime `{name}` has `args`, which dockerd does not read (the field is "
                      f"`runtimeArgs`)" + (": harmless while empty (nvidia-ctk writes it this way)" if empty
                                           else ": these arguments never reach the runtime"),
                      severity="info" if empty else "warning", fix=fix)


_UNKNOWN_DIRECTIVE = "the following directives don't match any configuration option: "


def _normal(key: str) -> str:
    """`default_runtime`, `defaultRuntime` and `Default-Runtime` all become `default-runtime`."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", key).lower().replace("_", "-")


def _suggest(key: str) -> str | None:
    return closest_key(key, sorted(DAEMON_KEYS), normal=_normal)


@check("GL206", kinds=("daemon-json",))
def unknown_daemon_key(doc, ctx):
    for key, node in doc.tree.items():
        if key in DAEMON_KEYS:
            continue
        if key in REMOVED_KEYS:
            new = REMOVED_KEYS[key]
            fix = None
            if new is not None and doc.tree.get(new) is None:
                fix = _json_fix(doc, f"rename `{key}` to `{new}`", [_rename_key(doc, node, new)])
            yield finding(doc, "GL206", node.key_span,
                          f"`{key}` was removed from dockerd (Docker 23.0): dockerd refuses to start "
                          f"(\"{_UNKNOWN_DIRECTIVE}{key}\")" + (f"; use `{new}`" if new else "; delete it"),
                          fix=fix)
            continue
        suggestion = _suggest(key)
        fix = None
        if suggestion is not None and doc.tree.get(suggestion) is None:
            fix = _json_fix(doc, f"rename `{key}` to `{suggestion}`", [_rename_key(doc, node, suggestion)])
        yield finding(doc, "GL206", node.key_span,
                      f"`{key}` is not a daemon.json option: dockerd refuses to start "
                      f"(\"{_UNKNOWN_DIRECTIVE}{key}\")"
                      + (f"; did you mean `{suggestion}`?" if suggestion else ""), fix=fix)
