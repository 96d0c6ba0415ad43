"""The Compose model: services, their GPU requests, and interpolation.

Compose replaces `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?err}`,
`${VAR:+alt}` and `$VAR` (`$$` is a literal `$`) from the environment and the `.env`
file beside the Compose file. gpulint reads that `.env` only: the machine it runs on
is not the one that deploys, so a variable the `.env` does not set is unknown, and a
value that depends on one is never judged (`substitute` tells which variables, and what
Compose reads where they are unset too).

YAML merge keys (`<<: *anchor`, how `x-` extension fields are reused) are applied by
the YAML reader (gpulint.formats.yamlpos), the explicit keys winning as in compose-go;
the merged nodes keep their own positions, so a finding about an anchored block points
at the anchor.
"""

from __future__ import annotations

import os
import re

from gpulint.model import Document, Node, Span, sequence
from gpulint.record import Frozen, freeze, memo
from gpulint.regex import lazy

# The device drivers Docker Engine registers for GPUs: `nvidia` (when the NVIDIA hook is
# installed), `cdi` (Engine 28+), and `amd` in recent releases (moby daemon/nvidia_linux.go).
GPU_DRIVERS = ("nvidia", "cdi", "amd")
_VARIABLE = lazy(
    r"\$(?:(?P<escaped>\$)|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<arg>[^}]*))?\}"
    r"|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))")
_ENV_LINE = lazy(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*?)\s*$")


class Service(Frozen):
    __slots__ = ("name", "node", "key", "name_span", "known")

    name: str
    node: Node  # the service mapping, merge keys applied
    key: Node  # the service's own mapping as written (for its name's position)
    name_span: object
    # what a dozen rules ask of each service (its device requests by block, its image),
    # worked out once
    known: dict
    _memo = ("known",)

    def __init__(self, name: str, node: Node, key: Node, name_span: object) -> None:
        freeze(self, name, node, key, name_span)
        memo(self, "known", {})

    def get(self, *path: str) -> Node | None:
        return self.node.get(*path)


def extended(doc: Document, service: Service, seen: frozenset = frozenset()) -> tuple[Node | None, bool]:
    """The service as Compose resolves `extends` (the base service from this file or from
    `file:`, with the service's own keys merged over it), and whether every link of the
    chain could be read; inherited nodes keep their own positions. (None, False) for a base
    gpulint cannot read (another file missing, a variable in the name)."""
    spec = service.get("extends")
    if spec is None:
        return service.node, True
    if spec.is_scalar:
        base_name, base_file = value_of(doc, spec), None
    elif spec.is_map:
        base_name = value_of(doc, spec.get("service"))
        base_file = value_of(doc, spec.get("file")) if spec.get("file") is not None else None
    else:
        return None, False
    source = doc
    if base_file:
        # reading another file: only for `extends: file:`
        from gpulint.formats import documents
        from gpulint.kinds.compose.parse import parse

        path = os.path.normpath(os.path.join(os.path.dirname(doc.abspath), base_file))
        source = doc.cache.setdefault(f"compose.file:{path}", documents.read(path, "compose", parse))
    if not base_name or source is None or (source.abspath, base_name) in seen:
        return None, False
    base = next((s for s in services(source) if s.name == base_name), None)
    if base is None:
        return None, False
    inherited, complete = extended(source, base, seen | {(doc.abspath, service.name)})
    if inherited is None:
        return None, False
    return _deep_merge(inherited, service.node), complete


def _deep_merge(base: Node, own: Node) -> Node:
    """Compose's merge for `extends`: mappings merge key by key, anything else is replaced."""
    if not (base.is_map and own.is_map):
        return own
    out = dict(base.value)
    for key, value in own.value.items():
        if key == "extends":
            continue
        out[key] = _deep_merge(out[key], value) if key in out else value
    return Node(out, own.span, own.key_span, own.tag)


def env_file(doc: Document) -> dict[str, str]:
    """The variables of the `.env` beside the Compose file (none when it has none)."""
    if "compose.env" not in doc.cache:
        doc.cache["compose.env"] = _read_env(os.path.join(os.path.dirname(doc.abspath), ".env"))
    return doc.cache["compose.env"]


def _read_env(path: str) -> dict[str, str]:
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    out = {}
    for line in lines:
        match = _ENV_LINE.match(line)
        if match is None or line.lstrip().startswith("#"):
            continue
        value = match[2]
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        out[match[1]] = value
    return out


def interpolate(text: str, env: dict[str, str]) -> str | None:
    """The value after Compose's interpolation; None when it depends on an unknown variable."""
    value, unknown = substitute(text, env)
    return None if unknown else value


def substitute(text: str, env: dict[str, str]) -> tuple[str, list[tuple[str, str]]]:
    """(the value as Compose reads it where every variable the `.env` does not set is
    unset too, which Compose replaces with an empty string; (name, operator) of each such
    variable, the operator `:?` or `?` when Compose then refuses the file instead, and
    `nested` for a default that names another variable, where the value is not known)."""
    if "$" not in text:
        return text, []
    unknown: list[tuple[str, str]] = []

    def nested(arg: str) -> str:
        value, missing = substitute(arg, env)
        unknown.extend(missing)
        return value

    def replace(match: re.Match) -> str:
        if match["escaped"]:
            return "$"
        name = match["braced"] or match["plain"]
        op, arg = match["op"] or "", match["arg"] or ""
        value = env.get(name)
        if "${" in arg:  # a nested default, whose braces the pattern cannot pair
            unknown.append((name, "nested"))
            return ""
        if op in (":-", "-"):
            use_default = value is None or (op == ":-" and value == "")
            return nested(arg) if use_default else value
        if value is None:
            unknown.append((name, op))
            return ""
        if op in (":+", "+"):
            return nested(arg) if value or op == "+" else ""
        return value

    return _VARIABLE.sub(replace, text), unknown


def value_of(doc: Document, node: Node | None) -> str | None:
    """A scalar as Compose sees it after interpolation (None: absent, not a scalar, unknown)."""
    if node is None or not node.is_scalar or node.value is None:
        return None
    return interpolate(node.str(), env_file(doc))


def services(doc: Document) -> list[Service]:
    if "compose.services" not in doc.cache:
        root = doc.tree
        found = []
        table = root.get("services") if root is not None and root.is_map else None
        for name, node in table.items() if table is not None else ():
            if node.is_map:
                found.append(Service(name, node, node, node.key_span or node.span))
        doc.cache["compose.services"] = found
    return doc.cache["compose.services"]


def resources(service: Service, where: str | None = None) -> Node | None:
    """`deploy.resources` (or its `limits`/`reservations` block) as a mapping; None when
    absent or not a mapping."""
    node = service.get("deploy")
    for key in ("resources", where) if where else ("resources",):
        node = node.get(key) if node is not None and node.is_map else None
    return node if node is not None and node.is_map else None


def device_requests(service: Service, where: str = "reservations") -> list[Node]:
    """The items of `deploy.resources.<where>.devices`."""
    found = service.known.get(where)
    if found is None:
        block = resources(service, where)
        found = service.known[where] = sequence(block.get("devices") if block is not None else None)
    return found


def is_gpu_device(item: Node) -> bool:
    """A device request for GPUs: a GPU driver, or `gpu` among its capabilities."""
    if not item.is_map:
        return False
    driver = item.get("driver")
    if driver is not None and str(driver.value).strip().lower() in GPU_DRIVERS:
        return True
    caps = item.get("capabilities")
    values = [caps] if caps is not None and caps.is_scalar else sequence(caps)
    return any(str(c.value).strip().lower() == "gpu" for c in values)


def environment(doc: Document, service: Service) -> list[tuple[str, Node, str | None]]:
    """(name, where it is written, value after interpolation or None) of `environment`,
    in its list (`- NAME=value`) or mapping form."""
    env = service.get("environment")
    out = []
    if env is not None and env.is_map:
        for name, value in env.items():
            out.append((name, Node(name, value.key_span or value.span), value_of(doc, value)))
    for item in sequence(env):
        text = item.str() or ""
        name, eq, raw = text.partition("=")
        value = interpolate(raw, env_file(doc)) if eq else None
        out.append((name.strip(), item, value))
    return out


def runtime(doc: Document, service: Service) -> tuple[Node, str | None] | None:
    node = service.get("runtime")
    return (node, value_of(doc, node)) if node is not None else None


def requests_gpus(doc: Document, service: Service) -> bool:
    """Whether the service asks for GPUs in any of Compose's ways (a wrong one included),
    itself or through the service it extends."""
    if service.get("extends") is not None:
        resolved, _ = extended(doc, service)
        if resolved is not None and resolved is not service.node:
            service = Service(service.name, resolved, service.key, service.name_span)
    if any(is_gpu_device(item) for where in ("reservations", "limits")
           for item in device_requests(service, where)):
        return True
    if service.get("gpus") is not None:
        return True
    found = runtime(doc, service)
    return found is not None and (found[1] or "").startswith("nvidia")


def image(doc: Document, service: Service) -> tuple[Node, str] | None:
    """The service's `image` node and its value after interpolation (None: none, or unknown)."""
    if "image" not in service.known:
        node = service.get("image")
        value = value_of(doc, node)
        service.known["image"] = (node, value.strip()) if value and value.strip() else None
    return service.known["image"]


def gpu_service_images(doc: Document) -> list[tuple[str, Span]]:
    """(image, where) of the services that ask for GPUs and pull their image (a service
    with `build` names the image it builds)."""
    out = []
    for service in services(doc):
        found = image(doc, service)
        if found is not None and service.get("build") is None and requests_gpus(doc, service):
            out.append((found[1], found[0].span))
    return out


def build_dockerfile(doc: Document, service: Service) -> str | None:
    """The path of the Dockerfile a service builds from; None for remote contexts, inline
    Dockerfiles and values that depend on a variable the `.env` does not set."""
    build = service.get("build")
    if build is None or not (build.is_scalar or build.is_map):
        return None
    if build.is_scalar:
        context, dockerfile = value_of(doc, build), "Dockerfile"
    else:
        if build.get("dockerfile_inline") is not None:
            return None
        context = value_of(doc, build.get("context")) if build.get("context") is not None else "."
        dockerfile = value_of(doc, build.get("dockerfile")) if build.get("dockerfile") is not None \
            else "Dockerfile"
    if not context or not dockerfile or re.match(r"^[a-z][a-z0-9+.-]*://|^git@", context):
        return None
    return os.path.normpath(os.path.join(os.path.dirname(doc.abspath), context, dockerfile))


def build_args(service: Service) -> set[str]:
    """The names a service's `build.args` gives values (a mapping, or a list of `NAME=value`),
    which replace the Dockerfile's ARG defaults."""
    build = service.get("build")
    args = build.get("args") if build is not None and build.is_map else None
    if args is None:
        return set()
    if args.is_map:
        return {str(name) for name, _ in args.items()}
    return {str(item.value).split("=", 1)[0] for item in args.value if item.is_scalar} if args.is_seq else set()


def gpu_service_builds(doc: Document) -> list[tuple[str, Node, str, set[str]]]:
    """(Dockerfile path, the `build` node, service name, build arg names) of the services that
    ask for GPUs and build their image."""
    out = []
    for service in services(doc):
        path = build_dockerfile(doc, service) if requests_gpus(doc, service) else None
        if path is not None:
            out.append((path, service.get("build"), service.name, build_args(service)))
    return out
