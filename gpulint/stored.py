"""A parsed file of the project around the linted ones, as the project's index keeps it: its
kind and path at hand, its document pickled. The document is unpickled the first time a check
asks for its kind (`Context.of_kind`), so a pre-commit call on one Dockerfile, whose checks
consult no containerd config, pays for none of them."""

from __future__ import annotations

import os

from gpulint.model import Document
from gpulint.paths import display_path


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
