"""Fingerprints that follow a finding when lines move and survive new wording or
newer bundled data: the rule, the file and the trimmed text of the line, plus an
occurrence index for identical findings on identical lines. SARIF, GitLab Code
Quality and the baseline share them."""

from __future__ import annotations

from collections import Counter

OWN = "gpulint/v2"


def fingerprints(findings, line_text, path_of=lambda f: f.path) -> list[dict]:
    """GitHub's `primaryLocationLineHash` and gpulint's own key, for each finding.
    `path_of` names the file as the key should see it (a baseline uses paths relative
    to its own folder)."""
    import hashlib  # here: loading OpenSSL costs a lint run that writes no fingerprint 2 ms

    seen: Counter = Counter()
    out = []
    for f in findings:
        text = " ".join(line_text(f).split())
        line_hash = hashlib.sha256(f"{path_of(f)}\0{text}".encode("utf-8")).hexdigest()[:16]
        seen[(f.code, line_hash)] += 1
        own = hashlib.sha256(f"{f.code}\0{path_of(f)}\0{text}\0{seen[(f.code, line_hash)]}"
                             .encode("utf-8")).hexdigest()[:32]
        seen[line_hash] += 1
        out.append({"primaryLocationLineHash": f"{line_hash}:{seen[line_hash]}", OWN: own})
    return out


def line_text_of(result):
    from gpulint.report.text import lines_of

    docs = {d.path: d for d in result.documents}
    others: dict = {}

    def line_text(f) -> str:
        index = lines_of(f.path, docs, others)  # the configuration file is no document
        return index.line_text(f.span.line) if index is not None else ""

    return line_text
