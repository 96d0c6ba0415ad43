"""containerd plugin IDs (GL115): the keys of the `plugins` table and the entries of
`disabled_plugins` and `required_plugins`, judged as each release reads them
(rules/containerd-decode.yaml: the plugins each release registers, and the checks its loader
makes on a version 2 file).
"""

from __future__ import annotations

from functools import lru_cache

from gpulint.kinds.containerd.facts import (
    ALL_CRI_IDS,
    containerd_file,
    is_drop_in,
    target_releases,
)
from gpulint.kinds.containerd.support import cri_items, is_unknown_value
from gpulint.knowledge import containerd_config as model
from gpulint.model import Document, Node, str_value
from gpulint.registry import check, finding

# plugin IDs a CRI table is meant to have
CRI_LIKE_IDS = ("io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images")
# keys that only a CRI plugin table (or one of its runtimes) holds: settings written under
# another ID were meant for it
CRI_KEYS = ("containerd", "cni", "registry", "sandbox_image", "runtimes", "runtime_type", "options",
            "default_runtime_name", "enable_cdi", "cdi_spec_dirs", "pinned_images")


def _releases_text(releases) -> str:
    return "/".join(sorted(releases, key=lambda r: tuple(int(x) for x in r.split("."))))


def _file_version(doc: Document) -> int | None:
    """The config version the file's plugin keys are read with: its own, or for a drop-in
    without one, a version 2 main file's (the form its keys show)."""
    version = containerd_file(doc).version
    return 2 if version is None and is_drop_in(doc) else version


@check("GL115", kinds=("containerd",))
def plugin_id_invalid(doc, ctx):
    if doc.templated:
        return
    version = _file_version(doc)
    targets = [r for rs in target_releases(doc, ctx.settings).values() for r in rs]
    if version == 1:
        yield from _short_entries(doc, [r for r in targets if r.startswith("1.")])
        yield from _short_keys(doc)
    if version is None or version < 2:
        return  # a version 1 file addresses plugins by short name (GL102, GL103)
    releases = [r for r in targets if version == 2 or r.startswith("2.")]
    if not releases:
        return
    plugins = containerd_file(doc).plugins
    for key, table in plugins.items() if plugins is not None else ():
        if key not in ALL_CRI_IDS + CRI_LIKE_IDS:
            yield from _plugin_key(doc, key, table, releases)
    for name, item, entry in _entries(doc):
        yield from _plugin_entry(doc, name, item, entry, releases)


def _plugin_key(doc: Document, key: str, table: Node, releases: list[str]):
    refused = [r for r in releases if model.plugin_key_refused(r, key)]
    known = any(key in model.plugin_uris(r) for r in releases)
    if known and not refused:
        return  # a plugin's ID: what it was meant to be is not worked out
    holds = _holds_cri(table)
    meant, rest = _meant(key, table, releases)
    hint = f"; write `plugins.\"{meant}\"`" if "." not in key and meant else _hint(key, meant, rest)
    if refused:
        others = [r for r in releases if r not in refused]
        unquoted = f" (an unquoted `plugins.{meant}` splits at every dot)" if "." not in key and meant else ""
        yield finding(doc, "GL115", table.anchor,
                      f"plugin key `{key}`{unquoted} is no plugin ID: containerd {_releases_text(refused)} "
                      f"{'refuse' if len(refused) > 1 else 'refuses'} to start (`invalid plugin key URI "
                      f"\"{key}\" expect io.containerd.x.vx`)"
                      + (f" and {_releases_text(others)} {'ignore' if len(others) > 1 else 'ignores'} the table"
                         if others else "") + hint,
                      severity="error")
    elif not known and (holds or meant or len(key.split(".")) < 4):
        # fewer than four parts can be no plugin's `type.id`: 2.x ignores such a table
        short = next((model.plugin_short_ids(r).get(key) for r in model.RELEASES if r.startswith("1.")), None)
        if short and not meant:
            hint = (f"; `{key}` is the version 1 name of `{short}`"
                    + ("" if any(short in model.plugin_uris(r) for r in releases) else
                       f", which containerd {_releases_text(releases)} no longer has"))
        yield finding(doc, "GL115", table.anchor,
                      f"no plugin of containerd {_releases_text(releases)} has the ID `{key}`, so the whole "
                      f"table is ignored" + (" and the settings in it do not exist" if holds else "") + hint,
                      severity="error" if holds else "warning")


def _plugin_entry(doc: Document, name: str, item: Node, entry: str, releases: list[str]):
    which = name.split("_")[0]
    refused = [r for r in releases if model.plugin_entry_refused(r, entry)]
    uri = next((model.plugin_short_ids(r).get(entry) for r in releases if r.startswith("1.")), None) \
        or ("io.containerd.grpc.v1.cri" if entry == "cri" else None)
    hint = f"; write `{uri}`" if uri else ""
    if refused:
        yield finding(doc, "GL115", item.span,
                      f"`{entry}` in {name} is no plugin URI: containerd {_releases_text(refused)} "
                      f"{'refuse' if len(refused) > 1 else 'refuses'} to start (`invalid {which} plugin URI "
                      f"\"{entry}\" expect io.containerd.x.vx`){hint}", severity="error")
    elif not any(entry in model.plugin_uris(r) for r in releases):
        meant = _one_part_off(entry, _known(releases))
        yield _matches_nothing(doc, name, item, entry,
                               f"no plugin of containerd {_releases_text(releases)} has the URI `{entry}`",
                               f"; did you mean `{meant}`?" if meant else "")


def _matches_nothing(doc: Document, name: str, item: Node, entry: str, said: str, hint: str):
    """An entry no plugin matches: a required one stops containerd, a disabled one does nothing."""
    if name == "required_plugins":
        return finding(doc, "GL115", item.span,
                       f"{said}, so containerd refuses to start (`required plugin [{entry}] not included`){hint}",
                       severity="error")
    return finding(doc, "GL115", item.span, f"{said}, so this disables nothing{hint}", severity="warning")


def _short_entries(doc: Document, releases: list[str]):
    """A version 1 file names plugins by their ID alone: containerd 1.x compares
    `required_plugins` with those, so a URI there is never loaded and containerd refuses to
    start, and a URI in `disabled_plugins` disables nothing."""
    if not releases:
        return
    short = {uri: key for r in releases for key, uri in model.plugin_short_ids(r).items()}
    for name, item, entry in _entries(doc):
        if any(entry in model.plugin_short_ids(r) for r in releases):
            continue
        yield _matches_nothing(doc, name, item, entry,
                               f"`{entry}` in {name}: in a version 1 file containerd {_releases_text(releases)} "
                               f"names plugins by their short ID, and none is `{entry}`",
                               f"; write `{short[entry]}`" if entry in short else "")


def _short_keys(doc: Document):
    """A version 1 file's plugin tables go by short ID (`cri`); containerd 2.x renames an unknown
    one to `io.containerd.grpc.v1.<key>`, which no plugin has either. Judged only where the table
    holds CRI settings (the fully qualified CRI IDs are GL102's and GL103's)."""
    short = {key for r in model.RELEASES if r.startswith("1.") for key in model.plugin_short_ids(r)}
    plugins = containerd_file(doc).plugins
    for key, table in plugins.items() if plugins is not None else ():
        if key in short or key in ALL_CRI_IDS + CRI_LIKE_IDS or not _holds_cri(table):
            continue
        yield finding(doc, "GL115", table.anchor,
                      f"a version 1 file names plugins by their short ID and no containerd plugin is "
                      f"`{key}`, so the whole table is ignored and the settings in it do not exist; "
                      f"the CRI plugin's table is `plugins.cri` here (`plugins.\"io.containerd.grpc.v1.cri\"` "
                      f"with `version = 2`)", severity="error")


def _entries(doc: Document):
    """(list name, item, text) of each `disabled_plugins` and `required_plugins` entry."""
    for name in ("disabled_plugins", "required_plugins"):
        node = doc.tree.get(name)
        for item in node.value if node is not None and node.is_seq else ():
            entry = str_value(item)
            if entry and not is_unknown_value(entry):
                yield name, item, entry


def _holds_cri(table: Node) -> bool:
    return table.is_map and (bool(cri_items(table)) or any(k in CRI_KEYS for k in table.value))


def _known(releases: list[str]) -> set[str]:
    return set().union(*(model.plugin_uris(r) for r in releases))


def _meant(key: str, table: Node, releases: list[str]) -> tuple[str | None, str]:
    """The plugin ID `key` was meant to be, and the table path written into the key after it:
    an unquoted header spread over nested tables (`plugins.io.containerd.grpc.v1.cri`), a whole
    table path in one pair of quotes (`"io.containerd.grpc.v1.cri.containerd.runtimes.nvidia"`),
    a CRI ID with a part missing, merged or misspelt (`containerd.grpc.v1.cri`,
    `io.containerd.grpcv1.cri`), or any plugin ID one part off."""
    if "." not in key and table.is_map:
        parts, node = [key], table
        while node.is_map and len(node.value) == 1 and len(parts) < 5:
            child_key, node = next(iter(node.items()))
            parts.append(child_key)
        joined = ".".join(parts)
        return next((pid for pid in CRI_LIKE_IDS if joined == pid), None), ""
    for pid in CRI_LIKE_IDS:
        if key.startswith(pid + "."):
            return pid, key[len(pid) + 1:]
    squeezed = key.lower().replace(".", "")
    for pid in CRI_LIKE_IDS:
        if squeezed == pid.replace(".", "") or pid.endswith("." + key):
            return pid, ""
    return _one_part_off(key, set(CRI_LIKE_IDS) | _known(releases)), ""


def _hint(key: str, meant: str | None, rest: str) -> str:
    if not meant or meant == key:
        return ""
    if rest:
        return (f"; the whole table path is inside one pair of quotes: write "
                f"`plugins.\"{meant}\".{rest}`")
    return f"; did you mean `{meant}`? (plugin IDs are case-sensitive)"


def _one_part_off(key: str, known) -> str | None:
    """The one known ID that `key` is in another case, or with one dot-separated part
    misspelt (swapped, missing, extra or wrong letter): `io.containerd.grpc.v1.cir`."""
    return _one_of(key, frozenset(known))


@lru_cache(maxsize=4096)  # the same IDs are written in config after config
def _one_of(key: str, known: frozenset) -> str | None:
    found = {pid for pid in known if pid != key and _part_off(key, pid)}
    return found.pop() if len(found) == 1 else None


def _part_off(key: str, plugin_id: str) -> bool:
    if key.lower() == plugin_id.lower():
        return True
    mine, theirs = key.lower().split("."), plugin_id.split(".")
    if len(mine) != len(theirs):
        return False
    differ = [(a, b) for a, b in zip(mine, theirs) if a != b]
    return len(differ) == 1 and _near(*differ[0])


def _near(a: str, b: str) -> bool:
    """One edit apart, or the same letters in another order."""
    if sorted(a) == sorted(b):
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) == 1
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))
