"""Turning fix edits (file offsets) into line/column positions for reports."""

from __future__ import annotations

from gpulint.model import LineIndex


class EditLocator:
    def __init__(self, documents) -> None:
        self.docs = {d.abspath: d for d in documents}
        self._index: dict[str, LineIndex] = {}

    def document(self, abspath: str):
        return self.docs.get(abspath)

    def index(self, abspath: str) -> LineIndex:
        if abspath not in self._index:
            doc = self.docs.get(abspath)
            self._index[abspath] = doc.index if doc else LineIndex("")
        return self._index[abspath]

    def region(self, edit) -> tuple[str, int, int, int, int]:
        """(display path, line, column, end line, exclusive end column) of an edit."""
        doc = self.docs.get(edit.path)
        index = self.index(edit.path)
        line, column = index.position(edit.start)
        end_line, end_column = index.position(edit.end)
        return (doc.path if doc else edit.path), line, column, end_line, end_column

    def json_edits(self, fix) -> list[dict]:
        out = []
        for edit in fix.edits:
            path, line, column, end_line, end_column = self.region(edit)
            out.append({"path": path, "location": {"line": line, "column": column},
                        "end_location": {"line": end_line, "column": end_column},
                        "content": edit.content})
        return out
