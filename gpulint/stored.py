"""A parsed file of the project around the linted ones, as the project's index keeps it: its
kind and path at hand, its document pickled. The document is unpickled the first time a check
asks for its kind (`Context.of_kind`), so a pre-commit call on one Dockerfile, whose checks
consult no containerd config, pays for none of them.

An index file is the pickled documents, then the listing (plain tuples, lists, strings and
numbers, marshalled: quicker to read than a pickle, and read by every run) and a trailer that
gives the listing's length and checksum. The documents are read only where a check asks for
their kind. A run that changes a few documents appends them and a new listing to the file
instead of writing it again whole (a pre-commit call in a big repository would otherwise copy
every document to change one); the listing last appended is the one read, and the file is
written again whole, without the documents no listing names any more, once those are more
than half of it.
"""

from __future__ import annotations

import marshal
import os

from gpulint.model import Document
from gpulint.paths import display_path

# what an index file starts with, and what its trailer ends with
MAGIC = b"gpulint-index\x02"
END = b"gpulint-end\x02"
# the trailer: the listing's length (8 bytes, little-endian), its CRC-32 (4 bytes), END
TRAILER = 12 + len(END)
# the dead bytes (documents and listings no listing names) an index may hold beyond its live ones
SLACK = 1 << 20


def read_index(path) -> tuple[object, object]:
    """(the header, the open file its documents are read from) of the index file at `path`;
    (None, None) where there is none that reads whole: torn, cut short, or not an index."""
    try:
        handle = open(path, "rb")
    except OSError:
        return None, None
    try:
        size = os.fstat(handle.fileno()).st_size
        if size < len(MAGIC) + TRAILER or handle.read(len(MAGIC)) != MAGIC:
            raise ValueError
        handle.seek(size - TRAILER)
        trailer = handle.read(TRAILER)
        length = int.from_bytes(trailer[:8], "little")
        if trailer[12:] != END or length > size - len(MAGIC) - TRAILER:
            raise ValueError
        handle.seek(size - TRAILER - length)
        data = handle.read(length)
        import binascii

        if binascii.crc32(data) != int.from_bytes(trailer[8:12], "little"):
            raise ValueError
        header = marshal.loads(data)
        if not isinstance(header, tuple) or len(header) < 2:
            raise ValueError
    except (OSError, ValueError, EOFError, TypeError):
        handle.close()
        return None, None
    return header, handle


def _listing(header: tuple) -> bytes:
    import binascii

    data = marshal.dumps(header)
    return data + len(data).to_bytes(8, "little") + binascii.crc32(data).to_bytes(4, "little") + END


def _pread(handle, offset: int, length: int) -> bytes:
    if not hasattr(os, "pread"):  # Windows, where no worker is forked
        handle.seek(offset)
        return handle.read(length)
    # at its offset, not from the handle's position: forked workers share that position
    return os.pread(handle.fileno(), length, offset)


def write_index(path, header_of, records: list, previous=None) -> None:
    """The index file at `path` (its folder made): the documents of `records`, then the
    listing `header_of(places)` gives, `places` being each record's offset and length in the
    file, one after another. A record is a `Stored`, or the (offset, length) of a document in
    `previous`, the index file read before (`read_index`). Where `previous` is still the file
    at `path`, the documents not in it are appended with the listing (`append_index`); else
    the file is written whole to a temporary file and renamed into place, so concurrent runs
    never leave a torn one. Raises OSError, ValueError and what pickling a document raises."""
    placed = [_place(record, previous) for record in records]
    blobs = None  # the documents not in `previous`, pickled once for either way of writing
    if previous is not None:
        blobs = [record.blob for record, at in zip(records, placed) if at is None]

        def header(offsets: list[int]) -> tuple:
            fresh, places = iter(zip(offsets, blobs)), []
            for at in placed:
                if at is None:
                    offset, blob = next(fresh)
                    at = (offset, len(blob))
                places += at
            return header_of(places)

        live = sum(at[1] for at in placed if at is not None) + sum(map(len, blobs))
        if append_index(path, previous, blobs, live, header):
            return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as out:
            out.write(MAGIC)
            places: list[int] = []
            offset = len(MAGIC)
            run: list[int] = []  # documents next to each other in `previous`: copied in one read

            def flush() -> None:
                if run:
                    out.write(_pread(previous, run[0], run[1] - run[0]))
                    run.clear()

            fresh = iter(blobs) if blobs is not None else None
            for record, at in zip(records, placed):
                if at is None:
                    flush()
                    blob = next(fresh) if fresh is not None else record.blob
                    out.write(blob)
                    length = len(blob)
                else:
                    start, length = at
                    if run and run[1] == start:
                        run[1] = start + length
                    else:
                        flush()
                        run[:] = [start, start + length]
                places += (offset, length)
                offset += length
            flush()
            out.write(_listing(header_of(places)))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _place(record, previous) -> tuple[int, int] | None:
    """Where `record`'s document lies in the index file `previous`, or None."""
    if isinstance(record, tuple):
        return record
    at = record._at
    if at is not None and previous is not None and at[0] is previous:
        return at[1], at[2]
    return None


def append_index(path, previous, blobs: list[bytes], live: int, header_of) -> bool:
    """Whether `blobs`, then the listing `header_of(offsets)` gives (`offsets`: where each
    blob is put), were appended to the index file at `path`, which must still be the file
    `previous` (`read_index`) was read from, its documents where they were. Not where that
    file would then hold more dead bytes (documents and listings no listing names) than
    `live` ones (the documents the new listing names) and `SLACK`: it is then written whole
    (`write_index`). Raises OSError."""
    try:
        import fcntl
    except ImportError:  # Windows: written whole
        return False
    try:
        handle = os.open(path, os.O_WRONLY | os.O_APPEND)
    except OSError:
        return False
    try:
        # one writer at a time: each appends where the file ends when it holds the lock
        fcntl.flock(handle, fcntl.LOCK_EX)
        now, then = os.fstat(handle), os.fstat(previous.fileno())
        if (now.st_dev, now.st_ino) != (then.st_dev, then.st_ino):
            return False  # written whole since `previous` was read: its documents are not there
        offsets, offset = [], now.st_size
        for blob in blobs:
            offsets.append(offset)
            offset += len(blob)
        listing = _listing(header_of(offsets))
        if offset + len(listing) > 2 * (len(MAGIC) + live + len(listing)) + SLACK:
            return False
        data = b"".join(blobs) + listing
        if os.write(handle, data) != len(data):
            raise OSError("short write")  # the torn end is no trailer: the index is made again
        return True
    finally:
        os.close(handle)  # the lock goes with it


class Stored:
    __slots__ = ("abspath", "kind", "_at", "_doc", "_path")

    def __init__(self, abspath: str, kind: str, *, at: tuple | None = None, doc: Document | None = None) -> None:
        self.abspath = abspath
        self.kind = kind
        self._at = at  # (open file, offset, length) of the pickled document
        self._doc = doc
        self._path: str | None = None

    @property
    def blob(self) -> bytes:
        """The document pickled, as an index keeps it."""
        import pickle  # only where an index is kept: a plain run never imports it

        if self._at is None:
            return pickle.dumps(self._doc, protocol=pickle.HIGHEST_PROTOCOL)
        return _pread(*self._at)

    @property
    def path(self) -> str:
        """The path as findings show it, from where gpulint runs (the index may have been
        made from another folder)."""
        if self._path is None:
            self._path = display_path(self.abspath)
        return self._path

    @property
    def loaded(self) -> bool:
        return self._doc is not None

    def document(self) -> Document:
        if self._doc is None:
            import pickle

            self._doc = pickle.loads(self.blob)
        self._doc.path = self.path
        return self._doc


class StoredKind:
    """The files of one kind an index keeps, as one entry of the files read around the linted
    ones: their `Stored` records are made the first time a check asks for the kind, so a
    call whose checks consult a few kinds pays nothing for the files of the others."""

    __slots__ = ("kind", "key", "_make", "_members")

    def __init__(self, kind: str, key: str, make) -> None:
        self.kind = kind
        self.key = key  # what tells this group from another project's
        self._make = make  # () -> list[Stored]
        self._members: list[Stored] | None = None

    def members(self) -> list[Stored]:
        if self._members is None:
            self._members, self._make = self._make(), None
        return self._members

    def made(self) -> list[Stored]:
        """The members made so far (none where no check asked for the kind)."""
        return self._members or []


def seen_paths(around) -> set[str]:
    """The paths of the files read around the linted ones that a check has read: a file of
    the index no check asked for was never unpickled, and nothing is on it."""
    out = set()
    for doc in around:
        if isinstance(doc, StoredKind):
            out.update(member.path for member in doc.made() if member.loaded)
        elif not isinstance(doc, Stored) or doc.loaded:
            out.add(doc.path)
    return out
