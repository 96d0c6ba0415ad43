"""The MIG profiles of each MIG-capable GPU (rules/mig-profiles.yaml, with its sources): their
compute and memory slices, how many instances of each fit, and the PCI device IDs that
`device-filter` names the GPUs by."""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from gpulint.resources import load_yaml


class Profile(NamedTuple):
    name: str
    compute: int
    memory: int | None  # None: the sources give no memory fraction
    max: int


class Model(NamedTuple):
    name: str
    names: tuple[str, ...]  # the products it stands for
    device_ids: tuple[str, ...]
    compute_slices: int
    memory_slices: int | None
    profiles: dict[str, Profile]
    source: str


@functools.lru_cache(maxsize=1)
def data() -> dict:
    return load_yaml("mig-profiles.yaml")


@functools.lru_cache(maxsize=1)
def models() -> dict[str, Model]:
    out = {}
    for name, spec in data()["models"].items():
        profiles = {p: Profile(p, v["compute"], v.get("memory"), v["max"]) for p, v in spec["profiles"].items()}
        out[name] = Model(name, tuple(spec["names"]), tuple(spec["device_ids"]), spec["compute_slices"],
                          spec.get("memory_slices"), profiles, spec["source"])
    return out


def model(name: str) -> Model | None:
    """A model by its name or a product's, in any case (`h100-80gb`, `H200 NVL`)."""
    wanted = _folded(name)
    return next((m for m in models().values()
                 if wanted in {_folded(n) for n in (m.name, *m.names)}), None)


def _folded(name: str) -> str:
    return re.sub(r"[\s_-]+", "-", name.strip().lower())


def device_id(text: str) -> int | None:
    """The packed device and vendor ID a `device-filter` entry names, read as mig-parted reads
    it (strconv.ParseUint with base 0: `0x20B010DE`, decimal or octal), or None when it cannot
    be read. A `:<subsystem>` part is set aside: the model is the primary ID's."""
    primary = text.split(":")[0]
    if primary != primary.strip():
        return None
    try:
        value = int(primary, 0) if not re.fullmatch(r"0[0-7]+", primary) else int(primary, 8)
    except ValueError:
        return None
    return value if 0 <= value < 1 << 32 else None


# the vendor half of every NVIDIA GPU's packed ID (`0x20B010DE`)
NVIDIA_VENDOR = 0x10DE


def models_with_id(packed: int) -> list[Model]:
    return [m for m in models().values() if any(int(i, 16) == packed for i in m.device_ids)]


def gi_profile(name: str) -> str:
    """The GPU instance profile a name stands for: `1c.7g.40gb` (a compute instance of one
    slice in a 7g.40gb GPU instance) is `7g.40gb`."""
    return re.sub(r"^\d+c\.", "", name)


def known_anywhere(name: str) -> bool:
    profile = gi_profile(name)
    return profile in data()["unattributed"] or any(profile in m.profiles for m in models().values())


def models_with(name: str) -> list[Model]:
    profile = gi_profile(name)
    return [m for m in models().values() if profile in m.profiles]
