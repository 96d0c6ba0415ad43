"""What each GPU Operator release accepts, read from rules/gpu-operator-<tag>.json
(made by tools/operator_releases.py from github.com/NVIDIA/gpu-operator at that tag): the
ClusterPolicy and NVIDIADriver CRDs' schemas as JSON Schema, and the chart's values (the
shape of each default, the value paths its templates read)."""

from __future__ import annotations

import functools
import json

from gpulint.numbers import whole
from gpulint.record import Frozen, freeze
from gpulint.resources import rules_dir

PREFIX = "gpu-operator-"
FLEET_KEY = "gpu-operator-version"


def _key(tag: str) -> tuple[int, ...]:
    return tuple(whole(part) if part.isdigit() else 0 for part in tag.lstrip("v").split("."))


@functools.lru_cache(maxsize=None)
def releases() -> tuple[str, ...]:
    """The bundled releases ("v24.3.0" ...), oldest first."""
    return tuple(sorted((p.stem[len(PREFIX):] for p in rules_dir().glob(PREFIX + "v*.json")), key=_key))


@functools.lru_cache(maxsize=None)
def release_data(tag: str) -> dict:
    with open(rules_dir() / f"{PREFIX}{tag}.json", encoding="utf-8") as handle:
        return json.load(handle)


class Judged(Frozen):
    """The release a file is judged against, and the words that say why that one."""

    __slots__ = ("tag", "why")

    tag: str
    why: str

    def __init__(self, tag: str, why: str) -> None:
        freeze(self, tag, why)

    @property
    def data(self) -> dict:
        return release_data(self.tag)

    def words(self) -> str:
        return f"GPU Operator {self.tag} ({self.why})"

    def at_least(self, major: int, minor: int) -> bool:
        return _key(self.tag)[:2] >= (major, minor)


def judged_release(settings, stated: str | None = None, where: str = "") -> Judged:
    """The release a file is judged against: `stated` (a chart version a HelmChart names,
    said to be `where`), else `gpu-operator-version` of the fleet configuration ("25.3",
    "v25.3.1"), else the newest bundled. A stated release is matched by major.minor, else
    the newest older one."""
    if not stated:
        stated = str(((getattr(settings, "fleet", None) or {}).get(FLEET_KEY)) or "").strip()
        where = f"`{FLEET_KEY} = \"{stated}\"` in the fleet configuration"
    known = releases()
    if not stated or not stated.lstrip("v")[:1].isdigit():
        return Judged(known[-1], f"the newest gpulint knows; set `{FLEET_KEY}` in the fleet configuration "
                                 f"for the release you run")
    wanted = _key(stated)[:2]
    same = [tag for tag in known if _key(tag)[:2] == wanted]
    older = [tag for tag in known if _key(tag)[:2] < wanted]
    if same or older:
        return Judged((same or older)[-1], where)
    return Judged(known[0], f"the oldest gpulint knows; {where} is older")


def crd_schema(tag: str, kind: str) -> dict | None:
    """The JSON Schema of `kind` ("ClusterPolicy", "NVIDIADriver") at release `tag`."""
    return release_data(tag).get(kind)


def schema_at(schema: dict | None, path: tuple) -> dict | None:
    """The sub-schema at a path of keys (a str) and list items (an int)."""
    for part in path:
        if schema is None:
            return None
        if isinstance(part, int):
            schema = schema.get("items")
        else:
            props = schema.get("properties") or {}
            extra = schema.get("additionalProperties")
            schema = props.get(part) if part in props else (extra if isinstance(extra, dict) else None)
    return schema


def releases_with_field(kind: str, path: tuple) -> list[str]:
    """The bundled releases whose `kind` schema has a field at `path`."""
    return [tag for tag in releases() if schema_at(crd_schema(tag, kind), path) is not None]


def other_releases(having: list[str], judged: Judged, what: str, verb: tuple[str, str]) -> str:
    """Words on the bundled releases that do have what the judged one lacks ("; the CRD of
    v25.3.4 has it"), or "" when none has it. verb: (present, past)."""
    order = releases()
    newer = [tag for tag in having if order.index(tag) > order.index(judged.tag)]
    if newer:
        return f"; {what} of {newer[0]} {verb[0]} it"
    return f"; {what} of {having[-1]} still {verb[1]} it" if having else ""


# The chart's own `templates/validations.yaml` checks on its GPUCluster switch (DRA managed by
# the operator, from v26.7.0): the values that make `helm install` fail with the chart's words.
# A value the user leaves out takes the chart's default (`values.yaml`).
CHART_DEFAULTS = {"gpuCluster.deployCR": False, "clusterPolicy.deployCR": True, "driver.enabled": True,
                  "driver.nvidiaDriverCRD.enabled": False}
GPU_CLUSTER_REFUSALS: tuple[tuple[dict[str, bool], str], ...] = (
    ({"gpuCluster.deployCR": True, "clusterPolicy.deployCR": True},
     "clusterPolicy.deployCR and gpuCluster.deployCR cannot both be true; only one CR can exist"),
    ({"gpuCluster.deployCR": True, "driver.enabled": True, "driver.nvidiaDriverCRD.enabled": False},
     "the NVIDIADriver CRD must be enabled when deploying a GPUCluster CR, set driver.nvidiaDriverCRD.enabled=true"),
)
