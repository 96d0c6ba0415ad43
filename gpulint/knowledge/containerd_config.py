"""What each containerd release decodes from its config file, read from
rules/containerd-decode.yaml (transcribed from containerd's source at release tags).

`struct(release, name)` gives a struct's fields as that release has them (a release may be
recorded as changes to a base release). `matches(key, tag, major)` is the key matching of
the TOML library each major version uses: go-toml v1 in 1.x tries the tag as written, all
lower, all upper and with a lower first letter; go-toml v2 in 2.x folds case.
"""

from __future__ import annotations

import functools

from gpulint.resources import load_yaml

DATA = "containerd-decode.yaml"
RELEASES = ("1.6", "1.7", "2.0", "2.1")

# The struct each CRI plugin table is decoded into, by the plugin ID the table is written
# under (rules/containerd-decode.yaml, plugins_by_config_version.cri_config_types). A
# version 2 file on containerd 2.x is migrated first: its io.containerd.grpc.v1.cri keys are
# spread over the three structs of 2.x.
CRI_STRUCTS = {
    1: {"cri": ("cri.PluginConfig",), "io.containerd.grpc.v1.cri": ("cri.PluginConfig",)},
    2: {"io.containerd.cri.v1.runtime": ("cri.RuntimeConfig",),
        "io.containerd.cri.v1.images": ("cri.ImageConfig",),
        "io.containerd.grpc.v1.cri": ("cri.RuntimeConfig", "cri.ImageConfig", "cri.ServerConfig")},
}
# Releases that drop the CRI settings of a version 0/1 main file (rules/containerd-decode.yaml,
# versions.'2.0'.version_1_cri): its LoadConfig converts the file to version 3 without the
# plugins' migrations, and the server then skips them because the version is already 3.
V1_CRI_NOT_MIGRATED = ("2.0", "2.1", "2.2")


def stated_release(settings) -> str | None:
    """The containerd release line (`2.1`) the fleet configuration names, if any."""
    stated = str(((getattr(settings, "fleet", None) or {}).get("containerd-version")) or "")
    parts = stated.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 and all(p.isdigit() for p in parts[:2]) else None


# The Go package each struct is declared in, as go-toml v2 names it in its errors.
GO_PACKAGES = {"server": "config", "cri": "config", "runc": "options"}


def releases_of(major: int) -> tuple[str, ...]:
    return tuple(r for r in RELEASES if r.startswith(f"{major}."))


@functools.lru_cache(maxsize=None)
def _structs(release: str) -> dict[str, dict]:
    data = load_yaml(DATA)["releases"][release]
    if "structs" in data:
        return data["structs"]
    out = {name: {**s, "fields": dict(s["fields"])} for name, s in _structs(data["base"]).items()}
    changes = data.get("changes") or {}
    for name, struct in (changes.get("structs_added") or {}).items():
        out[name] = struct
    for name in changes.get("structs_removed") or ():
        out.pop(name, None)
    for name, change in (changes.get("structs_changed") or {}).items():
        fields = out.setdefault(name, {"fields": {}})["fields"]
        for key in change.get("removed") or ():
            fields.pop(key, None)
        fields.update(change.get("added") or {})
        fields.update(change.get("changed") or {})
    return out


def struct(release: str, name: str) -> dict | None:
    return _structs(release).get(name)


def fields(release: str, name: str) -> dict[str, dict]:
    """key -> field of a struct, with the keys of its untagged embedded structs promoted."""
    found = struct(release, name)
    if found is None:
        return {}
    out = dict(found["fields"])
    package = name.split(".")[0]
    for inline in found.get("inline") or ():
        out.update(fields(release, f"{package}.{inline}"))
    return out


@functools.lru_cache(maxsize=4096)  # asked for every value of every config, of a few hundred types
def resolve_type(release: str, container: str, type_name: str) -> str | None:
    """The struct a field's Go type names (`Registry` in package cri -> `cri.Registry`)."""
    name = type_name.lstrip("*")
    package = container.split(".")[0]
    for candidate in (f"{package}.{name}", name):
        if struct(release, candidate) is not None:
            return candidate
    return None


def matches(key: str, tag: str, major: int) -> bool:
    if major == 1:
        return key in (tag, tag.lower(), tag.upper(), tag[:1].lower() + tag[1:])
    return key.lower() == tag.lower()


def field_for(key: str, table_fields: dict[str, dict], major: int) -> tuple[str, dict] | None:
    """The field containerd `major`.x decodes `key` into: the exact key first, else the
    first field whose tag the library matches."""
    if key in table_fields:
        return key, table_fields[key]
    for tag, field in table_fields.items():
        if matches(key, tag, major):
            return tag, field
    return None


@functools.lru_cache(maxsize=None)
def plugin_uris(release: str) -> frozenset[str]:
    """The `type.id` of every plugin the release registers (rules/containerd-decode.yaml)."""
    return frozenset(p["uri"] for p in load_yaml(DATA)["releases"][release].get("plugins") or ())


@functools.lru_cache(maxsize=None)
def plugin_short_ids(release: str) -> dict[str, str]:
    """A version 1 file's plugin keys (the plugin's ID alone) -> the plugin's `type.id` (1.x)."""
    return {p["v1_key"]: p["uri"] for p in load_yaml(DATA)["releases"][release].get("plugins") or ()
            if p.get("v1_key")}


def plugin_key_refused(release: str, key: str) -> bool:
    """Whether the release refuses a version 2 file whose `plugins` table has this key (1.6:
    fewer than four dot-separated parts; 1.7 also wants the `io.containerd.` prefix; 2.x does
    not check the keys)."""
    if release.startswith("2."):
        return False
    return len(key.split(".")) < 4 or (release != "1.6" and not key.startswith("io.containerd."))


def plugin_entry_refused(release: str, entry: str) -> bool:
    """Whether the release refuses a `disabled_plugins`/`required_plugins` entry of a version 2+
    file (1.x: the plugin key rule; 2.x: an entry without a dot)."""
    if release.startswith("2."):
        return "." not in entry
    return plugin_key_refused(release, entry)
