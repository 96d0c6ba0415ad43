"""Whole numbers read from what gpulint lints: Python's int() refuses text of more than
4300 digits (a ValueError), and reading or printing such a number takes time growing with
the square of its length. A version, branch, count or index that long is absurd; it is
read as HUGE, larger than any real one, so it compares as "newer than anything known"."""

from __future__ import annotations

MAX_DIGITS = 1000
HUGE = 10 ** MAX_DIGITS


def whole(text: str) -> int:
    """int(text), with a number of more than MAX_DIGITS digits (leading zeros aside) read
    as HUGE (or -HUGE); text that is not a number raises ValueError as int() does."""
    if len(text) <= MAX_DIGITS:
        return int(text)
    body = text.strip()
    sign = -1 if body[:1] == "-" else 1
    body = body[1:] if body[:1] in "+-" else body
    if not body.replace("_", "").isdigit() or "__" in body or body[:1] == "_" or body[-1:] == "_":
        raise ValueError(f"invalid literal for int() with base 10: {text[:40]!r}...")
    body = body.replace("_", "").lstrip("0")
    return sign * HUGE if len(body) > MAX_DIGITS else sign * int(body or "0")
