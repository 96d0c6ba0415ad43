"""gpulint's positions (1-based lines, columns counted in characters of the decoded text)
to the client's (0-based, columns in the code units client and server agreed on, UTF-16 unless
the client offered another), and back."""

from __future__ import annotations

from lsprotocol import types

from gpulint.model import Span


class Place:
    """The positions of one text, as the editor holds it."""

    def __init__(self, text: str, codec) -> None:
        # split at "\n" only, as gpulint's LineIndex does (str.splitlines also splits at
        # form feeds and U+2028, which would shift every later line)
        self.lines = text.split("\n")
        self.codec = codec
        # gpulint reads a file without its byte order mark; an editor may keep it in the text
        self.bom = 1 if text.startswith("\ufeff") else 0

    def position(self, line: int, column: int) -> types.Position:
        """The client's position before the character at 1-based (line, column)."""
        shift = self.bom if line == 1 else 0
        if line - 1 >= len(self.lines):
            return types.Position(line=len(self.lines) - 1, character=self.codec.client_num_units(self.lines[-1]))
        return self.codec.position_to_client_units(
            self.lines, types.Position(line=line - 1, character=max(0, column - 1 + shift)))

    def range(self, span: Span) -> types.Range:
        # a Span's end column is its last character: the client's end is the one after it
        return types.Range(start=self.position(span.line, span.column),
                           end=self.position(span.end_line, span.end_column + 1))

    def at(self, position: types.Position) -> tuple[int, int]:
        """The 1-based (line, column) gpulint would give the client's `position`."""
        server = self.codec.position_from_client_units(self.lines, position)
        shift = self.bom if server.line == 0 else 0
        return server.line + 1, server.character + 1 - shift


def offset_position(place: Place, index, offset: int) -> types.Position:
    """The client's position of a 0-based offset into gpulint's text of the file."""
    line, column = index.position(offset)
    return place.position(line, column)
