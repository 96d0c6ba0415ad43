"""What dockerd decodes from daemon.json, read from rules/dockerd-decode.yaml (transcribed
from moby's source at the 20.10 to 28.x release tags): each key's Go type."""

from __future__ import annotations

import functools

from gpulint.numbers import whole
from gpulint.resources import load_yaml

DATA = "dockerd-decode.yaml"
# Go types as daemon.json's decoder sees them: pointers decode like their element type
_PLAIN = {"string": "string", "bool": "bool", "*bool": "bool", "int": "int", "*int": "int",
          "int64": "int", "uint32": "int", "[]string": "[]string", "map[string]string": "map[string]string",
          "map[string]bool": "map[string]bool", "map[string]*units.Ulimit": "map[string]*units.Ulimit"}


@functools.lru_cache(maxsize=None)
def _model() -> dict:
    """The transcribed model, read once: `key_span` is asked for every key of every daemon.json."""
    return load_yaml(DATA)


@functools.lru_cache(maxsize=None)
def option_types() -> dict[str, str]:
    """daemon.json key -> the Go type its value decodes into, for the types gpulint judges."""
    out = {}
    for key, spec in _model()["keys"].items():
        plain = _PLAIN.get(spec.get("type") or "")
        if plain is not None:
            out[key] = plain
    return out


def fleet_release(settings) -> tuple[int, int] | None:
    """The Docker Engine release the nodes run, from `docker-version` in the fleet
    configuration ("20.10", "24.0.7"); None when it is not stated."""
    stated = str(((getattr(settings, "fleet", None) or {}).get("docker-version")) or "")
    parts = stated.split(".")
    if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
        return (whole(parts[0]), 0) if parts[0].isdigit() else None
    return whole(parts[0]), whole(parts[1])


def _release_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in str(name).split()[0].split("."))


@functools.lru_cache(maxsize=None)
def releases() -> tuple[tuple[str, dict], ...]:
    """The transcribed releases, oldest first: (name, its section of the model)."""
    data = _model()["releases"]
    return tuple(sorted(((str(name), spec) for name, spec in data.items()), key=lambda r: _release_key(r[0])))


def applicable(version: tuple[int, int] | None) -> list[str]:
    """The transcribed releases a claim about `version` rests on: the newest at or below it (the
    oldest for an older one), or every release when the nodes' release is not known."""
    names = [name for name, _ in releases()]
    if version is None:
        return names
    below = [name for name in names if _release_key(name) <= tuple(version)]
    return [below[-1] if below else names[0]]


@functools.lru_cache(maxsize=None)
def _decoded(release: str) -> frozenset[str]:
    """Top-level keys `release` both lets through its unknown-directive check and decodes."""
    at = _release_key(release)
    out = set()
    for key, spec in _model()["keys"].items():
        until = spec.get("until")
        if spec.get("accepted_as") and _release_key(spec["since"]) <= at \
                and (until is None or at < _release_key(until)):
            out.add(key)
    return frozenset(out)


def status(key: str, release: str) -> str:
    """How `release` treats a top-level key: "decoded"; "flag-only" (dockerd checks a file's
    keys against its command-line flag names before it decodes the file, so a flag's name that
    is no json tag, `add-runtime`, `label`, `exec-opt`, passes the check and is never decoded:
    its value is lost without a word); or "refused" (the unknown-directive error)."""
    spec = dict(releases())[release]
    if key in _decoded(release) or key in (spec.get("skip_validate_options") or ()):
        return "decoded"
    if key in (spec.get("flag_names_without_json_tag") or ()):
        return "flag-only"
    return "refused"


@functools.lru_cache(maxsize=None)
def flags(releases_named: tuple[str, ...]) -> tuple[dict[str, str], dict[str, str], frozenset[str]]:
    """How dockerd of the releases named reads its command line, joined over them:
    (flag -> the daemon.json key its value is compared with where that is not the flag's
    own name, shorthand letter -> flag, flags that take no value)."""
    spec = dict(releases())
    named: dict[str, str] = {}
    short: dict[str, str] = {}
    bools: set[str] = set()
    for release in releases_named:
        named.update(spec[release].get("flag_named_options") or {})
        short.update({letter: flag for flag, letter in (spec[release].get("flag_shorthands") or {}).items()})
        bools.update(spec[release].get("bool_flags") or ())
    return named, short, frozenset(bools)


def migrated_keys(release: str) -> dict[str, str]:
    """Old daemon.json keys `release` still reads that a flag's NamedOption replaced
    (`host-gateway-ip` -> `host-gateway-ips`): the flag conflicts with either."""
    return dict(dict(releases())[release].get("migrated_named_config") or {})


def skip_duplicates(release: str) -> frozenset[str]:
    """daemon.json keys dockerd lets a flag set as well (`runtimes`: `--add-runtime` adds to them)."""
    return frozenset(dict(releases())[release].get("skip_duplicates") or ())


def duplicates_refused_by(version: tuple[int, int] | None) -> frozenset[str]:
    """The keys of `skip_duplicates` that a release older than the transcribed ones still
    refused beside their flag (`runtimes` before 18.09); none when the release is not stated."""
    since = (_model().get("before_coverage") or {}).get("skip_duplicates_since") or {}
    if version is None:
        return frozenset()
    return frozenset(key for key, first in since.items() if tuple(version) < _release_key(str(first)))


def flat_options(release: str) -> frozenset[str]:
    """daemon.json keys whose object value is kept whole; any other object is read as its members."""
    return frozenset(dict(releases())[release].get("flat_options") or ())


@functools.lru_cache(maxsize=None)
def flag_names(release: str) -> frozenset[str]:
    """Every long flag dockerd of `release` accepts on its command line, hidden and
    deprecated ones included: the json tags accepted as flags, the flags without one, the
    value-less flags, and `help`."""
    spec = dict(releases())[release]
    at = _release_key(release)
    out = {"help"}
    for part in ("flag_names_without_json_tag", "bool_flags", "hidden_flags", "flag_named_options",
                 "deprecated_flags"):
        out.update(spec.get(part) or ())
    for key, found in _model()["keys"].items():
        accepted = found.get("accepted_as")
        accepted = accepted.get(release) if isinstance(accepted, dict) else accepted
        until = found.get("until")
        if accepted == "flag" and _release_key(found["since"]) <= at and (until is None or at < _release_key(until)):
            out.add(key)
    return frozenset(out)


def key_span(key: str) -> tuple[str | None, str | None] | None:
    """(since, until) of a daemon.json key the model records, as written there; None for a key
    it does not record."""
    spec = _model()["keys"].get(key)
    if spec is None:
        return None
    return (str(spec["since"]) if spec.get("since") else None, str(spec["until"]) if spec.get("until") else None)
