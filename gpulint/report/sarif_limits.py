"""What GitHub code scanning accepts in one SARIF upload (docs.github.com, "SARIF support for
code scanning", upload limits): 25,000 results per run, of which the 5,000 most severe are
shown; 1,000 locations per result; 10 MB per file, gzipped. A file past them is rejected
whole, so a report that would pass them keeps the most severe results that fit and says, in
the file (a tool execution notification) and on stderr, how many were left out and how to
see them all."""

from __future__ import annotations

import gzip

from gpulint.model import SEVERITY_RANK

MAX_RESULTS = 25_000
SHOWN_RESULTS = 5_000
MAX_LOCATIONS = 1_000
MAX_GZIPPED_BYTES = 10 * 1000 * 1000  # GitHub's "10 MB", read as the smaller of its two meanings


def most_severe(findings: list, limit: int) -> list:
    """At most `limit` findings, the most severe first chosen, in their report order."""
    if len(findings) <= limit:
        return list(findings)
    ranked = sorted(range(len(findings)), key=lambda i: -SEVERITY_RANK[findings[i].severity])
    return [findings[i] for i in sorted(ranked[:limit])]


def gzipped_size(text: str) -> int:
    return len(gzip.compress(text.encode("utf-8"), compresslevel=6))


def fewer(count: int, size: int) -> int:
    """How many results to try next when `count` of them make `size` bytes gzipped: in
    proportion, with a margin, and always fewer."""
    return min(count - 1, int(count * MAX_GZIPPED_BYTES / size * 0.95))


def left_out_text(left: int, total: int, why: str) -> str:
    return (f"{left:,} of {total:,} results were left out of this SARIF file ({why}); it holds the "
            f"most severe. Run `gpulint --format json` on the same paths to see them all, or lint "
            f"fewer paths per upload (one category each).")


def shown_note(count: int) -> str:
    return (f"sarif: {count:,} results; GitHub code scanning shows the {SHOWN_RESULTS:,} most severe of a "
            f"run (`gpulint --format json` lists them all)")
