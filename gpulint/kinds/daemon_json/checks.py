"""Docker daemon.json rules (GL2xx): runtimes, default-runtime and top-level keys.

dockerd validates these at start-up and refuses to run on any violation; the
messages below quote its errors. Invalid JSON itself is GL001, reported by the
parser at the exact position.
"""

from __future__ import annotations

import json
import posixpath
import re

from gpulint.common.gojson import json_type
from gpulint.common.runtimes import configs_with_main
from gpulint.formats.template import is_placeholder
from gpulint.kinds.daemon_json.facts import runtime_field
from gpulint.knowledge import dockerd_config
from gpulint.knowledge.runtimes import NOT_RUNTIMES, is_nvidia_handler, is_shim_name
from gpulint.model import Document, Edit, Fix, Node, apply_edits, str_value
from gpulint.registry import check, finding, related
from gpulint.spelling import closest_key

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


def docker_version(ctx) -> tuple[int, int] | None:
    return dockerd_config.fleet_release(ctx.settings)


# Docker 24.0 reads a runtime as a runc-compatible binary (`path`) or a containerd shim
# (`runtimeType` and `options`) and refuses any other shape; 20.10 to 23.x know only
# `path` and `runtimeArgs`: they ignore the other fields and run plain runc for an entry
# without a path (moby daemon/runtime_unix.go; verified with dockerd 20.10.24).
SHIM_RUNTIMES = (24, 0)


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


def _flag_runtimes(doc: Document, ctx) -> set[str]:
    """Runtimes dockerd gets besides the file's: `--add-runtime` in the node's systemd unit."""
    return {name for config in configs_with_main(ctx, doc)
            for name, entry in config.runtimes.items() if entry.doc is not doc}


@check("GL201", kinds=("daemon-json",))
def default_runtime_undefined(doc, ctx):
    value = doc.tree.get("default-runtime")
    name = str_value(value)
    if not name or is_placeholder(name):  # empty: dockerd uses its built-in default
        return
    runtimes = dict(_entries(doc))
    if name in runtimes or name in BUILTIN_RUNTIMES or name in _flag_runtimes(doc, ctx):
        return
    if name == V1_LINUX:
        yield from _v1_default(doc, ctx, value)
        return
    if is_shim_name(name):
        yield from _shim_default(doc, ctx, value, name)
        return
    same = [r for r in runtimes if r.lower() == name.lower()]
    hint = f"; did you mean `{same[0]}`? (names are case-sensitive)" if same else (
        "; add it under `runtimes`" if not runtimes else
        f"; the runtimes defined here are {', '.join(f'`{r}`' for r in runtimes)}")
    yield finding(doc, "GL201", value.span,
                  f"default-runtime `{name}` is not defined in `runtimes`: dockerd refuses to start "
                  f"(\"specified default runtime '{name}' does not exist\"){hint}",
                  related=[related(doc, runtimes[r], "defined here") for r in same])


# containerd's v1 shim: dockerd 20.10 knows it as a built-in runtime (dockerd 20.10.24 starts
# and runs runc with it); later releases take it as a shim name, which containerd 2.0 removed
# (dockerd 28.5.2 on containerd 2.1.9: `failed to resolve runtime path`)
V1_LINUX = "io.containerd.runtime.v1.linux"


def _v1_default(doc: Document, ctx, value: Node):
    version = docker_version(ctx)
    if version is not None and version < SHIM_NAMES:
        return
    yield finding(doc, "GL201", value.span,
                  f"default-runtime `{V1_LINUX}` is containerd's v1 shim, removed in containerd 2.0: "
                  f"where Docker runs on containerd 2.x (the Docker 28 packages), every container fails "
                  f"(`failed to resolve runtime path`); use `runc` or the NVIDIA runtime's name",
                  severity="warning")


# Docker 23.0 accepts a containerd shim name as a runtime (`--runtime io.containerd.runsc.v1`,
# `default-runtime`); 20.10 knows only the runtimes defined in `runtimes` (verified with
# dockerd 20.10.24: "specified default runtime 'io.containerd.kata.v2' does not exist").
SHIM_NAMES = (23, 0)


def _shim_default(doc: Document, ctx, value: Node, name: str):
    version = docker_version(ctx)
    if version is not None and version >= SHIM_NAMES:
        return
    refusal = f"(\"specified default runtime '{name}' does not exist\")"
    if version is not None:
        yield finding(doc, "GL201", value.span,
                      f"default-runtime `{name}` is a containerd shim name, which Docker "
                      f"{version[0]}.{version[1]} does not accept: dockerd refuses to start {refusal}; "
                      f"shim names work from Docker 23.0, or define the runtime under `runtimes`")
        return
    yield finding(doc, "GL201", value.span,
                  f"default-runtime `{name}` is a containerd shim name: Docker 23.0 and later accept "
                  f"it, 20.10 refuses to start {refusal}; `docker-version` in the fleet configuration "
                  f"says which the nodes run", severity="info")


@check("GL202", kinds=("daemon-json",))
def runtime_entry_malformed(doc, ctx):
    version = docker_version(ctx)
    shim_era = version is not None and version >= SHIM_RUNTIMES
    old_era = version is not None and version < SHIM_RUNTIMES
    for name, entry in _entries(doc):
        if not entry.is_map:
            yield finding(doc, "GL202", entry.span,
                          f"runtime `{name}` must be an object with `path` or `runtimeType`")
            continue
        # dockerd tests the fields for emptiness, so `"path": ""` counts as no path
        path, runtime_type = _given(runtime_field(entry, "path")), _given(runtime_field(entry, "runtimeType"))
        options, args = runtime_field(entry, "options"), runtime_field(entry, "runtimeArgs")
        if path is None and runtime_type is None:
            binary = str_value(entry.get("options", "BinaryName"))
            yield finding(doc, "GL202", entry.anchor,
                          f"runtime `{name}` has neither `path` nor `runtimeType`: "
                          + _refused(version, f"runtime {name}: either a runtimeType or a path must "
                                              f"be configured", "run plain runc for it, without GPUs")
                          + (f"; `options.BinaryName` is containerd syntax, dockerd wants "
                             f"{{\"path\": \"{binary}\"}}" if binary else ""),
                          fix=_path_fix(doc, entry, binary))
        elif path is None:  # the containerd-shim form
            if args is not None:
                yield finding(doc, "GL202", args.anchor,
                              f"runtime `{name}` has `runtimeArgs` next to `runtimeType`: "
                              + _refused(version, "args cannot be used with a runtimeType runtime",
                                         "run plain runc for it, without GPUs"))
            elif not shim_era:
                yield finding(doc, "GL202", runtime_type.anchor,
                              f"runtime `{name}` is a containerd shim (`runtimeType`), a form Docker "
                              f"24.0 introduced: Docker 20.10 to 23.x ignore `runtimeType` and "
                              f"`options` and run plain runc for it, without GPUs"
                              + ("" if old_era else "; where the nodes may run those releases, use "
                                 "`path` (`docker-version` in the fleet configuration says which run)"),
                              severity="error" if old_era else "info")
        elif not old_era:  # a `path` runtime: 20.10 to 23.x ignore what they do not know
            extra = runtime_type if runtime_type is not None else options
            if extra is not None:
                what = ("sets both `path` and `runtimeType`",
                        f"cannot configure both path and runtimeType for runtime {name}") \
                    if runtime_type is not None else \
                    ("has `options` next to `path`", "options cannot be used with a path runtime")
                yield finding(doc, "GL202", extra.anchor,
                              f"runtime `{name}` {what[0]}: Docker 24.0 and later refuse to start "
                              f"(\"{what[1]}\")" + ("" if shim_era else
                                                   "; 20.10 to 23.x ignore it and run `path`")
                              + ("; runc-style options belong to a `runtimeType` entry, arguments to "
                                 "`runtimeArgs`" if runtime_type is None else ""))
        yield from _foreign_keys(doc, name, entry)


def _refused(version: tuple[int, int] | None, error: str, before: str) -> str:
    """What the Docker releases the nodes may run do with an entry that 24.0 refuses and
    older releases take as plain runc."""
    if version is None:
        return f"Docker 24.0 and later refuse to start (\"{error}\"); 20.10 to 23.x {before}"
    if version >= SHIM_RUNTIMES:
        return f"dockerd refuses to start (\"{error}\")"
    return f"Docker {version[0]}.{version[1]} starts but does not know this shape and will {before}"


def _given(node: Node | None) -> Node | None:
    """A runtime field that dockerd sees as set: present and not an empty string."""
    return None if node is None or node.value == "" else node


def _foreign_keys(doc: Document, name: str, entry: Node):
    """Keys dockerd's runtime type does not have (containerd's, pasted in): ignored."""
    for key, child in entry.items():
        if key.lower() in {k.lower() for k in ENTRY_KEYS} or key == "args":  # `args` is GL205
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
    if runtime_field(entry, "runtimeType") is not None and runtime_field(entry, "path") is None:
        return entry.get("options", "BinaryName")
    return runtime_field(entry, "path")


@check("GL204", kinds=("daemon-json",))
def runtime_path_invalid(doc, ctx):
    for name, entry in _entries(doc):
        path = _binary(entry)
        value = str_value(path)
        if value is None or is_placeholder(value):
            continue
        if value != value.strip() or any(c.isspace() for c in value.strip()):
            # dockerd execs the whole string as one file name: no such binary exists
            yield finding(doc, "GL204", path.span,
                          f"runtime `{name}` has path {json.dumps(value)}: dockerd runs the whole value as "
                          f"one program name, spaces included, so containers that use it fail (`exec: "
                          f"{json.dumps(value)}: executable file not found` / `no such file or directory`); "
                          f"give the program alone in `path` and its arguments in `runtimeArgs`")
            continue
        base = posixpath.basename(value)
        if base == "runc" and is_nvidia_handler(name, None):
            yield finding(doc, "GL204", path.span,
                          f"runtime `{name}` runs plain `{value}`: its containers start without the NVIDIA "
                          f"hook and get no GPUs; the NVIDIA runtime's path is "
                          f"`/usr/bin/nvidia-container-runtime`")
            continue
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


def _named(key: str, node: Node) -> str:
    """What dockerd names for an unknown key: it flattens an object value one level, so
    `"runtime": {"nvidia": ...}` is reported as `nvidia` (verified with dockerd 20.10.24)."""
    if node.is_map and node.value:
        return ", ".join(node.value)
    return key


def _graph(doc: Document, ctx, node: Node, fix: Fix | None):
    """`graph` became `data-root`: 20.10 still reads it, 23.x refuses it by name, 24.0 and
    later no longer know it (moby daemon/config; verified with dockerd 20.10.24)."""
    version = docker_version(ctx)
    both = doc.tree.get("data-root") is not None
    if version is not None and version < (23, 0):
        if both:
            yield finding(doc, "GL206", node.key_span,
                          f"`graph` and `data-root` are both set: Docker {version[0]}.{version[1]} refuses "
                          f"to start (`cannot specify both \"graph\" and \"data-root\" config file "
                          f"options`); delete `graph`")
        else:
            yield finding(doc, "GL206", node.key_span,
                          f"`graph` is deprecated: Docker {version[0]}.{version[1]} still reads it, but "
                          f"23.0 and later refuse to start with it; use `data-root`",
                          severity="warning", fix=fix)
        return
    said = ('`the "graph" config file option is deprecated; use "data-root" instead`',
            f"`{_UNKNOWN_DIRECTIVE}graph`")
    if version is not None:
        words = f"dockerd {version[0]}.{version[1]} refuses to start ({said[0] if version < (24, 0) else said[1]})"
    else:
        words = (f"Docker 23.x refuses to start ({said[0]}), 24.0 and later too ({said[1]}); "
                 f"20.10 still reads it")
    yield finding(doc, "GL206", node.key_span,
                  f"`graph` was replaced by `data-root`: {words}; use `data-root`", fix=fix)


# What a flag-named key is written as in daemon.json, where it is not the plural of the flag
# (dockerd docs, "Daemon configuration file"; moby daemon/config); None: the flag has no
# daemon.json form.
_FILE_FORM = {
    "add-runtime": '`runtimes` (`"runtimes": {"NAME": {"path": "/usr/bin/..."}}`)',
    "http-proxy": '`proxies` (`"proxies": {"http-proxy": "..."}`)',
    "https-proxy": '`proxies` (`"proxies": {"https-proxy": "..."}`)',
    "no-proxy": '`proxies` (`"proxies": {"no-proxy": "..."}`)',
    "config-file": None, "validate": None, "version": None, "restart": None,
    "containerd-plugins-namespace": None,
}


def _plural(key: str) -> str | None:
    """The daemon.json key a repeatable flag is written as: `label` -> `labels`."""
    for plural in (key + "s", key[:-1] + "ies" if key.endswith("y") else None):
        if plural in DAEMON_KEYS:
            return plural
    return None


def _file_form(key: str) -> str | None:
    if key in _FILE_FORM:
        return _FILE_FORM[key]
    plural = _plural(key)
    if plural is None:
        return None
    return f"`{plural}`, whose value is {'an object' if _is_map_option(plural) else 'a list'}"


def _is_map_option(key: str) -> bool:
    return (option_type(key) or "").startswith("map[")


def _plural_fix(doc: Document, key: str, node: Node) -> Fix | None:
    """Renaming is safe where the value already has the shape the plural key decodes."""
    plural = _plural(key)
    if plural is None or key in _FILE_FORM or doc.tree.get(plural) is not None:
        return None
    if not (node.is_map if _is_map_option(plural) else node.is_seq):
        return None
    return _json_fix(doc, f"rename `{key}` to `{plural}`", [_rename_key(doc, node, plural)])


def _flag_only(doc: Document, ctx, key: str, node: Node):
    """A flag's name used as a key passes dockerd's unknown-directive check and is never
    decoded (verified with dockerd 20.10.24, 26.1.5 and 28.5.2: `add-runtime` in the file starts
    the daemon and registers no runtime)."""
    releases = dockerd_config.applicable(docker_version(ctx))
    said = {r: dockerd_config.status(key, r) for r in releases}
    lost = [r for r in releases if said[r] == "flag-only"]
    refused = [r for r in releases if said[r] == "refused"]
    if not lost:
        if refused and len(refused) == len(releases) and any(
                dockerd_config.status(key, r) == "flag-only" for r, _ in dockerd_config.releases()):
            # a flag of later releases only (`http-proxy` came with 23.0)
            return finding(doc, "GL206", node.key_span,
                           f"`{key}` is not a daemon.json option of dockerd {_release_range(refused)}: it "
                           f"refuses to start (\"{_UNKNOWN_DIRECTIVE}{key}\")"
                           + (f"; write it as {_file_form(key)} (dockerd 23.0 and later)"
                              if key in ("http-proxy", "https-proxy", "no-proxy") else ""))
        return None
    who = "dockerd" if len(lost) == len(releases) else f"dockerd {_release_range(lost)}"
    words = (f"`{key}` is the name of dockerd's `--{key}` flag, not a daemon.json option: {who} "
             f"lets the key through (it checks a file's keys against its flag names) but never "
             f"reads its value, so the setting is lost")
    if refused:
        words += f"; dockerd {_release_range(refused)} refuses to start (\"{_UNKNOWN_DIRECTIVE}{key}\")"
    form = _file_form(key)
    words += f"; write it as {form}" if form else "; it can only be given on dockerd's command line"
    return finding(doc, "GL206", node.key_span, words, severity="warning", fix=_plural_fix(doc, key, node))


def _not_in_release(doc: Document, ctx, key: str, node: Node):
    """A daemon.json option of other releases than the one the fleet names (`cdi-spec-dirs`
    came with 25.0, `host-gateway-ips` with 28): that dockerd refuses it by name (dockerd
    26.1.5 observed refusing `host-gateway-ips`)."""
    version = docker_version(ctx)
    span = dockerd_config.key_span(key)
    if version is None or span is None:
        return
    release = dockerd_config.applicable(version)[0]
    # judged only where the model shows some release reading the key (it cannot tell how
    # `proxies`, read through flattening, gets past the check)
    if dockerd_config.status(key, release) != "refused" or not any(
            dockerd_config.status(key, r) == "decoded" for r, _ in dockerd_config.releases()):
        return
    since, until = span
    when = f"an option dockerd removed in {until}" if until else f"an option of dockerd {since} and later"
    yield finding(doc, "GL206", node.key_span,
                  f"`{key}` is {when}: the fleet's dockerd {version[0]}.{version[1]} refuses to start "
                  f"(\"{_UNKNOWN_DIRECTIVE}{key}\")")


def _release_range(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{names[0]} to {names[-1]}"


@check("GL206", kinds=("daemon-json",))
def unknown_daemon_key(doc, ctx):
    for key, node in doc.tree.items():
        lost = _flag_only(doc, ctx, key, node)
        if lost is not None:
            yield lost
            continue
        if key in DAEMON_KEYS:
            yield from _not_in_release(doc, ctx, key, node)
            continue
        if key in REMOVED_KEYS:
            new = REMOVED_KEYS[key]
            fix = None
            if new is not None and doc.tree.get(new) is None:
                fix = _json_fix(doc, f"rename `{key}` to `{new}`", [_rename_key(doc, node, new)])
            if key == "graph":
                yield from _graph(doc, ctx, node, fix)
                continue
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
                      f"(\"{_UNKNOWN_DIRECTIVE}{_named(key, node)}\")"
                      + (f"; did you mean `{suggestion}`?" if suggestion else ""), fix=fix)


# The Go types dockerd decodes daemon.json keys into (moby daemon/config/config.go and
# config_linux.go, CommonConfig/Config); a value of another JSON type stops dockerd.
_STRINGS, _BOOL, _INT, _STR = "[]string", "bool", "int", "string"
_ULIMITS = "map[string]*units.Ulimit"
# Types the transcribed model does not give a plain Go type for, or gives differently by release.
OPTION_TYPES = {
    "runtimes": "map[string]types.Runtime",
    "log-opts": "map[string]string",
    "features": "map[string]bool",
}
ULIMIT_FIELDS = {"Name": _STR, "Hard": _INT, "Soft": _INT}


def option_type(key: str) -> str | None:
    """The Go type dockerd decodes a top-level key into (rules/dockerd-decode.yaml)."""
    return OPTION_TYPES.get(key) or dockerd_config.option_types().get(key)


RUNTIME_FIELD_TYPES = {"path": _STR, "runtimeType": _STR, "runtimeArgs": _STRINGS}


def _fits(node: Node, go_type: str) -> bool:
    kind = json_type(node)
    if kind == "null":  # Go leaves the field at its zero value
        return True
    if kind == "string" and is_placeholder(node.value):  # a template fills it in
        return True
    if go_type == _STRINGS:
        return kind == "array" and all(json_type(item) in ("string", "null") for item in node.value)
    if go_type.startswith("map["):
        if kind != "object":
            return False
        inner = go_type.rsplit("]", 1)[1]
        return inner not in (_STR, _BOOL) or all(_fits(item, inner) for item in node.value.values())
    if go_type == _INT:
        # Go decodes an int field from a whole number that fits 64 bits, written without `.` or `e`
        return kind == "number" and isinstance(node.value, int) and -2**63 <= node.value < 2**63
    return kind == {"bool": "bool", "string": "string"}[go_type]


_WANTED = {_STRINGS: 'an array of strings', _BOOL: "true or false", _INT: "a whole number",
           _STR: "a string"}


def _type_finding(doc: Document, node: Node, field: str, go_type: str, go_field: str):
    """GL207 at the smallest wrong thing: the item of a list or the value in an object
    when the container itself has the right type. go_field: how dockerd's decoder names
    the field (`Config.exec-opts`, `Runtime.runtimes.runtimeArgs`)."""
    wrong, wanted = node, go_type
    if node.is_seq and go_type == _STRINGS:
        wrong = next(item for item in node.value if json_type(item) not in ("string", "null"))
        wanted, field = _STR, f"{field}[{node.value.index(wrong)}]"
    elif node.is_map and go_type.startswith("map["):
        inner = go_type.rsplit("]", 1)[1]
        key, wrong = next((k, v) for k, v in node.value.items() if not _fits(v, inner))
        wanted, field = inner, f"{field}.{key}"
    return finding(doc, "GL207", wrong.span,
                   f"`{field}` must be {_WANTED.get(wanted, 'an object')}, not {json_type(wrong)}: "
                   f"dockerd refuses to start (`json: cannot unmarshal {json_type(wrong)} into Go "
                   f"struct field {go_field} of type {wanted}`)")


@check("GL207", kinds=("daemon-json",))
def daemon_option_type(doc, ctx):
    if not doc.tree.is_map:
        return
    for key, node in doc.tree.items():
        go_type = option_type(key)
        if go_type == _ULIMITS:
            yield from _ulimit_findings(doc, key, node)
        elif go_type is not None and not _fits(node, go_type):
            yield _type_finding(doc, node, key, go_type, f"Config.{key}")
    for name, entry in _entries(doc):
        if not entry.is_map:
            continue  # GL202
        for key, go_type in RUNTIME_FIELD_TYPES.items():
            value = runtime_field(entry, key)
            if value is not None and not _fits(value, go_type):
                yield _type_finding(doc, value, f"runtimes.{name}.{key}", go_type,
                                    f"Runtime.runtimes.{key}")


def _ulimit_findings(doc: Document, key: str, node: Node):
    """`default-ulimits`: an object of ulimits by name, each {"Name", "Hard", "Soft"}."""
    if json_type(node) == "null" or (node.is_scalar and is_placeholder(node.value)):
        return
    if not node.is_map:
        yield finding(doc, "GL207", node.span,
                      f"`{key}` must be an object of ulimits by name (`{{\"nofile\": {{\"Name\": \"nofile\", "
                      f"\"Hard\": 65536, \"Soft\": 65536}}}}`), not {json_type(node)}: dockerd refuses to start "
                      f"(`json: cannot unmarshal {json_type(node)} into Go struct field Config.{key} of type "
                      f"{_ULIMITS}`)")
        return
    for name, limit in node.items():
        if json_type(limit) == "null":
            continue
        if not limit.is_map:
            yield finding(doc, "GL207", limit.span,
                          f"`{key}.{name}` must be an object (`{{\"Name\": \"{name}\", \"Hard\": ..., "
                          f"\"Soft\": ...}}`), not {json_type(limit)}: dockerd refuses to start (`json: cannot "
                          f"unmarshal {json_type(limit)} into Go struct field Config.{key} of type units.Ulimit`)")
            continue
        for field, go_type in ULIMIT_FIELDS.items():
            # encoding/json matches struct fields in any case
            value = next((v for k, v in limit.items() if k.lower() == field.lower()), None)
            if value is not None and not _fits(value, go_type):
                yield _type_finding(doc, value, f"{key}.{name}.{field}", go_type,
                                    f"Ulimit.{key}.{field}")
