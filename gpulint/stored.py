"""A parsed file of the project around the linted ones, as the project's index keeps it: its
kind and path at hand, its document pickled. The document is unpickled the first time a check
asks for its kind (`Context.of_kind`), so a pre-commit call on one Dockerfile, whose checks
consult no containerd config, pays for none of them."""

from __future__ import annotations

from gpulint.model import Document
from gpulint.paths import display_path


class Stored:
    __slots__ = ("abspath", "kind", "blob", "_doc", "_path")

    def __init__(self, abspath: str, kind: str, blob: bytes | None, doc: Document | None = None) -> None:
        self.abspath = abspath
        self.kind = kind
        self.blob = blob
        self._doc = doc
        self._path: str | None = None

    @classmethod
    def of(cls, doc: Document) -> Stored:
        """A document read just now, with the bytes an index keeps of it."""
        import pickle  # only where an index is kept: a plain run never imports it

        return cls(doc.abspath, doc.kind, pickle.dumps(doc, protocol=pickle.HIGHEST_PROTOCOL), doc)

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
