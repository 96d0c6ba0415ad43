"""The GPU Operator chart's values judged by release: keys no template reads (Helm ignores
them), and the values the chart copies into the ClusterPolicy that the API server refuses
or prunes there."""

from __future__ import annotations

import re

from gpulint.common.crd_validation import Problem, validate
from gpulint.formats.template import is_placeholder
from gpulint.knowledge import gpu_operator
from gpulint.knowledge.gpu_operator import Judged, schema_at
from gpulint.model import Node, Span
from gpulint.record import Frozen, freeze
from gpulint.spelling import closest_key

# Helm's own: every chart may read it, and subcharts share it
_HELM_KEYS = ("global",)
_INDEX = re.compile(r"\[(\d+)\]")
_DOT = re.compile(r"(?<!\\)\.")  # Helm's `--set` path separator; `\.` is a dot in a key
_INTEGER = re.compile(r"[-+]?(0|[1-9]\d*)")
# how a chart reference names the gpu-operator chart (`nvidia/gpu-operator`, an OCI path, a
# packaged `gpu-operator-v25.3.4.tgz`)
OPERATOR_CHART = re.compile(r"(^|/)gpu-operator(-v?[\d.]+\.tgz)?$")


class UnknownKey(Frozen):
    __slots__ = ("node", "path", "suggestion")

    node: Node
    path: str
    suggestion: str | None

    def __init__(self, node: Node, path: str, suggestion: str | None) -> None:
        freeze(self, node, path, suggestion)


def known_keys(chart: dict, path: tuple) -> set[str] | None:
    """The keys the chart knows under `path`: its defaults' and those its templates read;
    None where it takes any key (a map passed on whole, a user's map, a subchart's values)."""
    dotted = ".".join(path)
    whole = chart["whole"]
    if any(dotted == w or dotted.startswith(w + ".") for w in whole) or (path and path[0] in chart["subcharts"]):
        return None
    default = chart["defaults"]
    for part in path:
        default = default.get(part) if isinstance(default, dict) else None
    keys = set(default) if isinstance(default, dict) else set()
    prefix = dotted + "." if dotted else ""
    keys.update(r[len(prefix):].split(".")[0] for r in chart["reads"] if r.startswith(prefix))
    if not keys:
        return None  # an empty default map is the user's to fill (`nodeSelector: {}`)
    return keys


def first_unread(chart: dict, path: tuple) -> int | None:
    """How deep into `path` the first key the chart (one release's `values` data) does not
    take is; None when it takes them all (or a map on the way it takes whole)."""
    for depth, key in enumerate(path):
        known = known_keys(chart, path[:depth])
        if known is None:
            return None
        if key not in known:
            return depth
    return None


def chart_reads(chart: dict, path: tuple) -> bool:
    return first_unread(chart, path) is None


def unknown_keys(root: Node, judged: Judged, path: tuple = ()) -> list[UnknownKey]:
    """The keys of `root` (chart values) that the chart of the judged release never reads."""
    chart = judged.data["values"]
    out: list[UnknownKey] = []
    known = known_keys(chart, path)
    if known is None or not root.is_map:
        return out
    for key, sub in root.items():
        if key in _HELM_KEYS or is_placeholder(key):
            continue
        if key not in known:
            out.append(UnknownKey(sub, ".".join(path + (key,)), closest_key(key, known)))
        elif sub.is_map:
            out.extend(unknown_keys(sub, judged, path + (key,)))
    return out


def policy_problems(root: Node, judged: Judged) -> list[Problem]:
    """What the API server says of the values the chart copies whole into the ClusterPolicy's
    spec (`toolkit.env`, `driver.resources` ...), judged by the CRD of the same release."""
    data = judged.data
    schema = data.get("ClusterPolicy")
    out: list[Problem] = []
    for dotted in data["values"]["policy"]:
        path = tuple(dotted.split("."))
        node = root.get(*path)
        sub = schema_at(schema, ("spec",) + path)
        if node is None or sub is None:
            continue
        out.extend(validate(node, sub, ("spec",) + path))
    return out



def _other_releases(path: tuple, judged: Judged) -> str:
    having = [tag for tag in gpu_operator.releases()
              if chart_reads(gpu_operator.release_data(tag)["values"], path)]
    return gpu_operator.other_releases(having, judged, "the chart", ("reads", "read"))


def unknown_key_message(dotted: str, judged: Judged, suggestion: str | None) -> str:
    near = f" (did you mean `{suggestion}`?)" if suggestion else ""
    return (f"`{dotted}` is no value of the gpu-operator chart of {judged.words()}{near}"
            f"{_other_releases(tuple(dotted.split('.')), judged)}: no template reads it and Helm ignores "
            f"keys it does not know, so the setting is silently lost")


def judge_values(root: Node, judged: Judged) -> list[tuple[str, Span, str]]:
    """(code, where, message) of what GL483 and GL484 say of chart values."""
    out = [("GL483", u.node.anchor, unknown_key_message(u.path, judged, u.suggestion))
           for u in unknown_keys(root, judged)]
    for problem in policy_problems(root, judged):
        if problem.unknown:
            out.append(("GL483", problem.span,
                        f"the chart copies this into the ClusterPolicy, whose CRD in {judged.words()} has "
                        f"no `{problem.path}`{problem.suggestion()}: the API server prunes it "
                        f"(`{problem.message}`), so the setting is silently lost"))
        else:
            out.append(("GL484", problem.span,
                        f"the chart copies this into the ClusterPolicy and the API server refuses it "
                        f"(`{problem.message}`), so the install or upgrade fails; judged by {judged.words()}"))
    return out


def judge_setting(key: str, value: str | None, typed: bool, judged: Judged, typing: str = "`--set` makes",
                  keeping: str = "`--set-string`") -> tuple[str, str, str] | None:
    """What GL483 or GL484 say of one `--set key=value` (`typed`) or `--set-string` setting:
    (code, "key" or "value" for where it points, message), or None. `typing` and `keeping`
    name how the setting was written and what would keep its value a string.

    Helm's `--set` types its values (strvals): `true`/`false` become booleans and integers
    numbers; `--set-string` keeps every value a string."""
    data = gpu_operator.release_data(judged.tag)
    steps = tuple(_DOT.split(key))
    path = tuple(_INDEX.sub("", step) for step in steps)
    if not all(path) or path[0] in _HELM_KEYS:
        return None  # no key Helm can set, or Helm's own
    depth = first_unread(data["values"], path)
    if depth is not None:
        near = closest_key(path[depth], known_keys(data["values"], path[:depth]) or ())
        return "GL483", "key", unknown_key_message(".".join(path[:depth + 1]), judged, near)
    got = set_type(value) if typed and value is not None else None
    message = _refused(data, steps, got) if got else None
    if message:
        return ("GL484", "value", f"{typing} `{value}` a {got} and the chart copies it into the "
                f"ClusterPolicy, where the API server refuses it (`{message}`); {keeping} keeps it a "
                f"string; judged by {judged.words()}")
    return None


def set_type(value: str) -> str | None:
    """The JSON type Helm's `--set` gives a value other than a string, if any."""
    if value in ("true", "false"):
        return "boolean"
    return "integer" if _INTEGER.fullmatch(value) else None


def _refused(data: dict, steps: tuple, got: str) -> str | None:
    """The API server's words for a typed `--set` value in a value the chart copies into
    the ClusterPolicy whose field there takes a string."""
    path: list = []
    for step in steps:
        name, *indexes = _INDEX.split(step)
        path.append(name)
        path.extend(int(i) for i in indexes if i)
    names = [p for p in path if isinstance(p, str)]
    if not any(".".join(names[:n]) in data["values"]["policy"] for n in range(1, len(names) + 1)):
        return None
    field = schema_at(data.get("ClusterPolicy"), ("spec", *path))
    if not field or field.get("type") != "string":
        return None
    shown = "spec" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return f'{shown}: Invalid value: "{got}": {shown} in body must be of type string: "{got}"'


def gpu_cluster_refusals(written, judged: Judged) -> list[tuple[str, list[str]]]:
    """(the chart's `fail` message, the keys written that lead to it) for each GPUCluster check of
    the chart's validations the values fail; `written(key)` is the boolean a key is given, or
    None where it is not written (the chart's default then holds). Judged only where
    `gpuCluster.deployCR` is written true and the judged release's chart reads it (every chart
    that does has the checks; GL483 speaks of the others)."""
    if written("gpuCluster.deployCR") is not True or not chart_reads(judged.data["values"], ("gpuCluster", "deployCR")):
        return []
    out = []
    for condition, message in gpu_operator.GPU_CLUSTER_REFUSALS:
        values = {key: written(key) for key in condition}
        if all((gpu_operator.CHART_DEFAULTS[key] if got is None else got) == want
               for (key, want), got in zip(condition.items(), values.values())):
            out.append((message, [key for key, got in values.items() if got is not None]))
    return out


def refusal_words(message: str, keys: list[str], setting: str = "`gpuCluster.deployCR: true`") -> str:
    """Words for a refusal: the values written beside the switch and those left to the defaults."""
    condition = next(c for c, m in gpu_operator.GPU_CLUSTER_REFUSALS if m == message)
    parts = [f"`{k}` as written" for k in condition if k in keys and k != "gpuCluster.deployCR"]
    parts += [f"the chart's default `{k}: {str(gpu_operator.CHART_DEFAULTS[k]).lower()}`"
              for k in condition if k not in keys]
    return (f"{setting} with {' and '.join(parts)}: the gpu-operator chart's validations stop `helm install` "
            f"(`{message}`); a cluster runs either the GPUCluster (DRA) or the ClusterPolicy, and the "
            f"GPUCluster's driver comes from NVIDIADriver objects")

