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
    # the memory slices an instance may start at, each taking `memory` slices from there;
    # None where the sources give no placements
    starts: tuple[int, ...] | None = None


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
        profiles = {p: Profile(p, v["compute"], v.get("memory"), v["max"],
                               tuple(v["starts"]) if "starts" in v else None)
                    for p, v in spec["profiles"].items()}
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


def _key(name: str) -> tuple | None:
    """What go-nvlib's MigProfileInfo.Matches compares: the compute and GPU slices, the memory
    in GB as numbers, and the attributes in any order (`1g.05gb` is `1g.5gb`). None for a name
    it cannot parse."""
    plus, minus = name.split("+", 1), name.split("-", 1)
    if len(plus) == 2 and len(minus) == 2:
        return None
    split = plus if len(plus) == 2 else minus
    match = re.fullmatch(r"(?:([+-]?\d+)c\.)?([+-]?\d+)g\.([+-]?\d+)gb", split[0])
    if match is None:
        return None
    g = int(match[2])
    c = int(match[1]) if match[1] is not None else g
    attributes = tuple(sorted(split[1].split(","))) if len(split) == 2 else ()
    return c, g, int(match[3]), attributes if split is plus else (), attributes if split is minus else ()


def is_compute_instance(name: str) -> bool:
    """`1c.7g.40gb`: a compute instance of 1 slice in a 7g.40gb GPU instance."""
    key = _key(name)
    return key is not None and key[0] != key[1]


@functools.lru_cache(maxsize=1)
def _by_key() -> dict[tuple, str]:
    names = [p for m in models().values() for p in m.profiles] + list(data()["unattributed"])
    return {_key(p): p for p in names}


def canonical(name: str) -> str | None:
    """The table's name of the GPU instance profile mig-parted matches `name` with (that of the
    GPU instance for a compute instance profile), or None when no GPU gpulint knows has it."""
    key = _key(name)
    if key is None:
        return None
    return _by_key().get((key[1], *key[1:]))


def known_anywhere(name: str) -> bool:
    return canonical(name) is not None


def models_with(name: str) -> list[Model]:
    profile = canonical(name)
    return [m for m in models().values() if profile in m.profiles]


def offers(model: Model, name: str) -> Profile | None:
    """The model's profile that `name` stands for, or None."""
    return model.profiles.get(canonical(name) or "")


def unplaced(profiles: list[tuple[Profile, int]]) -> Profile | None:
    """The profile that finds no free start once the others are placed, when the instances
    cannot all be placed without sharing a memory slice; None when they can or when a
    profile's placements are not known. The larger instances are placed first, so the one
    named is the one a node's MIG manager fails on whichever way the others are laid out."""
    if any(profile.starts is None or profile.memory is None for profile, _ in profiles):
        return None
    items = sorted((profile for profile, count in profiles for _ in range(count)),
                   key=lambda p: (-p.memory, len(p.starts)))
    deepest = [0]

    def place(i: int, used: int) -> bool:
        deepest[0] = max(deepest[0], i)
        if i == len(items):
            return True
        profile = items[i]
        for start in profile.starts:
            taken = ((1 << profile.memory) - 1) << start
            if not used & taken and place(i + 1, used | taken):
                return True
        return False

    return None if place(0, 0) else items[deepest[0]]
