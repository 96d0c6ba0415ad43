"""What changed in git's index (the staging area) since an earlier call, read from the index
file itself where only entries changed in place: `git diff-index --cached` loads the whole
index for any answer (16-19 ms of CPU for 50,000 entries), where reading the file and
checksumming it takes about 2 ms.

A snapshot (`snapshot`) describes the file's entries block by block (BLOCK bytes each): a
CRC-32 of the block, the offset and ordinal of the entry that holds its first byte, and a
CRC-32 of the paths of the entries that start in it; and each entry by a CRC-32 of its object
name and mode. A later call (`changes`) checksums the blocks again and parses the entries of
the blocks that differ only: an entry whose object name or mode changed is reported with its
blob. Anything else is left to git (None): another number of entries, an entry that moved or
was renamed, an unmerged entry, a split index (its entries in another file) or a sparse one,
a hash other than SHA-1.

The index format: gitformat-index(5). Entries follow a 12-byte header ("DIRC", version,
count); each is 62 bytes (64 with extended flags, from version 3) of stat data, object name
and flags, then its path: in versions 2 and 3 whole, with 1 to 8 NUL bytes to a multiple of 8;
in version 4 (`feature.manyFiles`) as the number of bytes to drop from the end of the previous
entry's path (a varint) and what follows them, ended by one NUL, so a snapshot keeps for each
block the path before the entry that holds its first byte. Then the extensions (a 4-byte
signature and a 4-byte size each) and the file's checksum.
"""

from __future__ import annotations

from array import array
from zlib import crc32

BLOCK = 16384
HASH = 20  # SHA-1: a SHA-256 repository's file does not parse as such, and is left to git
_SIGNATURE = b"DIRC"
# the extensions whose entries are not all in this file (a split index's shared index, a
# sparse index's folders)
_ELSEWHERE = (b"link", b"sdir")
# the modes of a regular file git records (as `tracked.REGULAR`)
_REGULAR = (0o100644, 0o100755)

# (version, entries, end of the entries, block CRCs, block starts, block ordinals, block path
# CRCs, entry CRCs, each block's previous path in version 4): plain values, as the project
# index's listing is marshalled
Snapshot = tuple


def read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _header(data: bytes) -> tuple[int, int] | None:
    if len(data) < 12 + HASH or data[:4] != _SIGNATURE:
        return None
    version, count = int.from_bytes(data[4:8], "big"), int.from_bytes(data[8:12], "big")
    return (version, count) if version in (2, 3, 4) else None


def _entry(data: bytes, at: int, version: int, previous: bytes) -> tuple[int, bytes] | None:
    """Where the entry at `at` ends and its path (`previous`: the path before it, which a
    version 4 path is written against); None for one git reads some other way (unmerged, or
    not of this format)."""
    flags = int.from_bytes(data[at + 60:at + 62], "big")
    start = at + 62
    if flags & 0x7000:
        if flags & 0x3000 or version < 3:  # a conflict's stage; extended flags in version 2
            return None
        start += 2
    if version == 4:
        byte = data[start]
        drop = byte & 127
        while byte & 128:  # git's varint: each further byte adds one before the shift
            start += 1
            byte = data[start]
            drop = ((drop + 1) << 7) | (byte & 127)
        end = data.find(b"\0", start + 1)
        if end < 0 or drop > len(previous):
            return None
        return end + 1, previous[:len(previous) - drop] + data[start + 1:end]
    size = flags & 0xFFF
    end = data.find(b"\0", start) if size == 0xFFF else start + size
    if end < 0 or data[end]:
        return None
    return at + ((end - at + 8) & ~7), data[start:end]


def _extensions_here(data: bytes, end: int) -> bool:
    """Whether the extensions after the entries (ending at `end`) end where the file's checksum
    starts, none of them naming entries kept elsewhere."""
    at, stop = end, len(data) - HASH
    while at + 8 <= stop:
        if data[at:at + 4] in _ELSEWHERE:
            return False
        at += 8 + int.from_bytes(data[at + 4:at + 8], "big")
    return at == stop


def _blocks(data: bytes, end: int) -> array:
    view = memoryview(data)
    return array("I", [crc32(view[at:min(at + BLOCK, end)]) for at in range(0, end, BLOCK)])


def snapshot(data: bytes) -> Snapshot | None:
    """The snapshot of an index file's content (every entry parsed: 50,000 entries in some
    40 ms); None for one left to git."""
    header = _header(data)
    if header is None:
        return None
    version, count = header
    # block 0 starts with the header: its first entry stands for the one holding its first byte
    starts, ordinals, paths, entries = array("I", [12]), array("I", [0]), array("I", [0]), array("I")
    priors = [b""]
    number, fingerprint = int.from_bytes, entries.append
    limit = len(data) - HASH
    at, blocks_end, previous = 12, BLOCK, b""  # blocks_end: where the last block listed ends
    find = data.find
    try:
        for ordinal in range(count):
            flags = number(data[at + 60:at + 62], "big")
            if version == 4 or flags & 0x7000:
                entry = _entry(data, at, version, previous)
                if entry is None:
                    return None
                stop, path = entry
            else:  # most entries: a plain entry of version 2 or 3, as `_entry` reads it, written out
                size = flags & 0xFFF
                end = find(b"\0", at + 62) if size == 0xFFF else at + 62 + size
                if end < 0 or data[end]:
                    return None
                stop, path = at + ((end - at + 8) & ~7), data[at + 62:end]
            if stop > limit:
                return None
            fingerprint(crc32(data[at + 40:at + 60], number(data[at + 24:at + 28], "big")))
            if stop > blocks_end:  # the entry reaches into the next block (or more)
                while blocks_end < stop:  # a block whose first byte is in this entry
                    starts.append(at)
                    ordinals.append(ordinal)
                    paths.append(0)
                    priors.append(previous)
                    blocks_end += BLOCK
                for block in range(at // BLOCK, len(paths)):  # each block's paths: of the entries in it
                    paths[block] = crc32(path, paths[block])
            else:
                paths[-1] = crc32(path, paths[-1])
            at, previous = stop, path
    except IndexError:  # cut short
        return None
    if not _extensions_here(data, at):
        return None
    return (version, count, at, _blocks(data, at).tobytes(), starts.tobytes(), ordinals.tobytes(),
            paths.tobytes(), entries.tobytes(), priors if version == 4 else [])


def changes(data: bytes, snap: Snapshot) -> tuple[list[tuple[str, str]], Snapshot] | None:
    """The entries whose object name or mode changed since `snap` was taken, each as (its
    path, its blob, or "" for what is no regular file), and the snapshot of `data`; None where
    git must answer (see the module's doc)."""
    version, count, end, blocks, starts, ordinals, paths, entries, priors = snap
    if _header(data) != (version, count) or len(data) < end + HASH or not _extensions_here(data, end):
        return None
    old, new = array("I"), _blocks(data, end)
    old.frombytes(blocks)
    if len(old) != len(new):
        return None
    differing = [k for k in range(len(new)) if new[k] != old[k]]
    if not differing:
        return [], snap
    first_at, first_ordinal, path_crcs, fingerprints = array("I"), array("I"), array("I"), array("I")
    first_at.frombytes(starts)
    first_ordinal.frombytes(ordinals)
    path_crcs.frombytes(paths)
    fingerprints.frombytes(entries)
    found = []
    for k in differing:
        at, ordinal, path_crc, last = first_at[k], first_ordinal[k], 0, first_at[k]
        previous = priors[k] if version == 4 else b""
        stop = min((k + 1) * BLOCK, end)
        while at < stop:  # the entries in this block, whole or in part
            try:
                entry = _entry(data, at, version, previous)
            except IndexError:
                return None
            if entry is None or ordinal >= count:
                return None
            following, path = entry
            name, mode = data[at + 40:at + 60], int.from_bytes(data[at + 24:at + 28], "big")
            path_crc = crc32(path, path_crc)
            fingerprint = crc32(name, mode)
            if fingerprint != fingerprints[ordinal]:
                fingerprints[ordinal] = fingerprint
                found.append((path.decode("utf-8", "surrogateescape"), name.hex() if mode in _REGULAR else ""))
            last, at, previous = at, following, path
            ordinal += 1
        # every entry kept its path and its place: the next block starts in the entry it did
        following = (at, ordinal) if at == stop else (last, ordinal - 1)
        if path_crc != path_crcs[k] or (following != (first_at[k + 1], first_ordinal[k + 1]) if k + 1 < len(new)
                                        else at != end):
            return None
    return found, (version, count, end, new.tobytes(), starts, ordinals, paths, fingerprints.tobytes(), priors)
