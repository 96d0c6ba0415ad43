"""The error every parser raises: a message and the parser's own position."""

from __future__ import annotations


class ParseError(Exception):
    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = max(1, line)
        self.column = max(1, column)
