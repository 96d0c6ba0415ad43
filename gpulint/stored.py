"""A parsed file of the project around the linted ones, as the project's index keeps it: its
kind and path at hand, its document pickled. The document is unpickled the first time a check
asks for its kind (`Context.of_kind`), so a pre-commit call on one Dockerfile, whose checks
consult no containerd config, pays for none of them.

An index file is a marshalled header (the listing: plain tuples, lists, strings and numbers,
quicker to read than a pickle, and read by every run) and, past it, the pickled documents,
read only where a check asks for their kind."""

from __future__ import annotations

import marshal
import os

from gpulint.model import Document
from gpulint.paths import display_path

# what an index file starts with, then the header's length (8 bytes, little-endian)
MAGIC = b"gpulint-index\x01"


def read_index(path) -> tuple[object, tuple | None]:
    """(the header, (open file, where the documents start)) of the index file at `path`;
    (None, None) where there is none that reads whole: torn, cut short, or not an index."""
    try:
        handle = open(path, "rb")
    except OSError:
        return None, None
    try:
        start = handle.read(len(MAGIC) + 8)
        if len(start) != len(MAGIC) + 8 or not start.startswith(MAGIC):
            raise ValueError
        length = int.from_bytes(start[len(MAGIC):], "little")
        size = os.fstat(handle.fileno()).st_size
        if len(start) + length > size:
            raise ValueError
        header = marshal.loads(handle.read(length))
        if not isinstance(header, tuple) or len(header) < 2 or not isinstance(header[-1], int):
            raise ValueError
        base = len(start) + length
        # the documents' bytes must all be there (their total is the header's last field)
        if size != base + header[-1]:
            raise ValueError
    except (OSError, ValueError, EOFError, TypeError):
        handle.close()
        return None, None
    return header, (handle, base)


def write_index(path, header: tuple, blobs: list[bytes]) -> None:
    """The index file at `path` (its folder made): `header`, whose last field is the documents'
    total length, then `blobs`; written to a temporary file and renamed into place, so
    concurrent runs never leave a torn one. Raises OSError, ValueError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    data = marshal.dumps(header)
    try:
        with open(tmp, "wb") as handle:
            handle.write(MAGIC + len(data).to_bytes(8, "little"))
            handle.write(data)
            handle.writelines(blobs)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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
        handle, offset, length = self._at
        if not hasattr(os, "pread"):  # Windows, where no worker is forked
            handle.seek(offset)
            return handle.read(length)
        # at its offset, not from the handle's position: forked workers share that position
        return os.pread(handle.fileno(), length, offset)

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
