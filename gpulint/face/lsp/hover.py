"""Hover text: on a finding, or on a code in a `# gpulint: disable=` comment, the rule's
summary and why (from rules/GLxxx.yaml); on a CUDA image reference, what `gpulint image`
says of it (CUDA, flavor, minimum driver, tag status)."""

from __future__ import annotations

from gpulint import catalog
from gpulint.model import Document, Finding
from gpulint.report.sarif import help_uri

# what an image reference is made of (a registry host with its port, a path, a tag, a digest)
_REFERENCE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/:@")


def rule_markdown(code: str) -> str | None:
    rule = catalog.load_catalog().get(code)
    if rule is None:
        return None
    return (f"**{rule.code}** `{rule.slug}` ({rule.severity}): {rule.title}\n\n{rule.summary}\n\n"
            f"**Why?** {rule.why}\n\n[{rule.code} documentation]({help_uri(rule.code)})")


def finding_codes(findings: list[Finding], line: int, column: int) -> list[str]:
    """The codes of the findings whose span holds (line, column), once each."""
    found = []
    for f in findings:
        s = f.span
        after_start = (line, column) >= (s.line, s.column)
        before_end = (line, column) <= (s.end_line, s.end_column)
        if after_start and before_end and f.code not in found:
            found.append(f.code)
    return found


def suppression_code(doc: Document, offset: int) -> str | None:
    """The rule named in a suppression comment at `offset`."""
    for sup in doc.suppressions:
        for name, (start, end) in sup.code_spans.items():
            if start <= offset <= end:  # the cursor on the code or just past it
                return name.upper() if name.upper() in catalog.load_catalog() else catalog.by_slug().get(name)
    return None


def reference_at(line: str, column: int) -> str | None:
    """The image-reference-like word around the 0-based `column` of `line`."""
    if not line:
        return None
    at = min(column, len(line) - 1)
    if line[at] not in _REFERENCE_CHARS and at > 0 and line[at - 1] in _REFERENCE_CHARS:
        at -= 1  # the cursor just past the word
    if line[at] not in _REFERENCE_CHARS:
        return None
    start, end = at, at
    while start > 0 and line[start - 1] in _REFERENCE_CHARS:
        start -= 1
    while end < len(line) and line[end] in _REFERENCE_CHARS:
        end += 1
    word = line[start:end].strip(":")
    return word if "/" in word or ":" in word else None


def image_markdown(reference: str, facts: dict) -> str | None:
    from gpulint.crossfile.fleet import driver_version
    from gpulint.face.explain import image_facts, image_lines

    driver = facts.get("driver")
    data = image_facts(reference, driver_version(driver) if driver else None, facts.get("gpu_class"))
    if data is None:
        return None
    return "```text\n" + "\n".join(image_lines(data)) + "\n```"
