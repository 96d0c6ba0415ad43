"""The rule catalog: one YAML file per rule in rules/, read once per run.

A rule's words live only here; the CLI, SARIF descriptors and generated docs all
read them from this catalog.
"""

from __future__ import annotations

import functools
from pathlib import Path

from gpulint.record import Frozen, freeze
from gpulint.regex import lazy
from gpulint.resources import bundled, read_yaml, rules_dir

CODE = lazy(r"GL\d{3}")


class Example(Frozen):
    __slots__ = ("files", "args")

    files: tuple[tuple[str, str], ...]  # (relative path, content)
    args: tuple[str, ...]

    def __init__(self, files: tuple[tuple[str, str], ...], args: tuple[str, ...] = ()) -> None:
        freeze(self, files, args)


class Rule(Frozen):
    __slots__ = ("code", "slug", "title", "severity", "stability", "summary", "why", "fix", "bad", "good",
                 "kinds", "fixable", "references", "sources", "security_severity", "verified")

    code: str
    slug: str
    title: str
    severity: str
    stability: str
    summary: str
    why: str
    fix: str
    bad: Example
    good: Example
    kinds: tuple[str, ...]
    fixable: str  # never | sometimes | always
    references: tuple[str, ...]
    sources: tuple[str, ...]
    # GitHub code scanning's 0.0-10.0 score, for rules whose finding exposes GPUs or the host
    security_severity: str | None
    # (daemon, version, how, ref): what each claim was run against (oracle) or read from (source)
    verified: tuple[tuple[str, str, str, str], ...]

    def __init__(self, code: str, slug: str, title: str, severity: str, stability: str, summary: str, why: str,
                 fix: str, bad: Example, good: Example, kinds: tuple[str, ...] = (), fixable: str = "never",
                 references: tuple[str, ...] = (), sources: tuple[str, ...] = (),
                 security_severity: str | None = None, verified: tuple[tuple[str, str, str, str], ...] = ()) -> None:
        freeze(self, code, slug, title, severity, stability, summary, why, fix,
               bad, good, kinds, fixable, references, sources, security_severity, verified)

    @property
    def preview(self) -> bool:
        return self.stability == "preview"


class Entry(Frozen):
    """What a lint run needs of a rule: the full texts are read only to explain one."""

    __slots__ = ("code", "slug", "severity", "stability", "kinds")

    code: str
    slug: str
    severity: str
    stability: str
    kinds: tuple[str, ...]

    def __init__(self, code: str, slug: str, severity: str, stability: str, kinds: tuple[str, ...]) -> None:
        freeze(self, code, slug, severity, stability, kinds)

    @property
    def preview(self) -> bool:
        return self.stability == "preview"


def _example(data: dict) -> Example:
    files = tuple((f["path"], f["content"]) for f in data.get("files", ()))
    return Example(files, tuple(data.get("args", ())))


def _rule(data: dict) -> Rule:
    return Rule(
        code=data["code"], slug=data["slug"], title=data["title"], severity=data["severity"],
        stability=data.get("stability", "stable"), summary=data["summary"].strip(),
        why=data["why"].strip(), fix=data["fix"].strip(),
        bad=_example(data["example"]["bad"]), good=_example(data["example"]["good"]),
        kinds=tuple(data.get("kinds", ())), fixable=data.get("fixable", "never"),
        references=tuple(data.get("references", ())), sources=tuple(data.get("sources", ())),
        security_severity=data.get("security-severity"),
        verified=tuple((v["daemon"], v["version"], v["how"], v["ref"]) for v in data.get("verified", ())),
    )


@functools.lru_cache(maxsize=None)
def load_catalog() -> dict[str, Rule]:
    return {data["code"]: _rule(data) for data in raw_rules()}


def index_rows(rules: list[dict]) -> list[tuple]:
    """The rule index as plain data (a prebuilt file of its own, a few kilobytes beside the
    catalog's few hundred): code, slug, severity, stability and kinds of every rule."""
    return [(data["code"], data["slug"], data["severity"], data.get("stability", "stable"),
             tuple(data.get("kinds", ()))) for data in rules]


@functools.lru_cache(maxsize=None)
def rule_index() -> dict[str, Entry]:
    """Every rule's code, slug, severity, stability and kinds, by code."""
    rows = bundled("catalog-index", rule_files, lambda: index_rows(raw_rules()))
    return {row[0]: Entry(row[0], row[1], row[2], row[3], tuple(row[4])) for row in rows}


def rule_files() -> list[Path]:
    return sorted(rules_dir().glob("GL[0-9][0-9][0-9].yaml"))


def raw_rules() -> list[dict]:
    """Every rule file's data (a hundred and more YAML files: prebuilt in a wheel, else read
    through the cache)."""
    return bundled("catalog", rule_files, lambda: [read_yaml(path.name) for path in rule_files()])


def by_slug() -> dict[str, str]:
    return {rule.slug: code for code, rule in rule_index().items()}


def resolve_selector(selector: str) -> list[str]:
    """Codes a selector names: an exact code, a code prefix (`GL1`, `GL10`), a slug or `ALL`."""
    catalog = rule_index()
    selector = selector.strip()
    if selector.upper() == "ALL":
        return list(catalog)
    upper = selector.upper()
    if upper.startswith("GL"):
        return [code for code in catalog if code.startswith(upper)]
    code = by_slug().get(selector)
    return [code] if code else []


def closest(selector: str) -> str | None:
    """The code or slug a mistyped selector most likely meant."""
    import difflib

    catalog = rule_index()
    upper = selector.strip().upper()
    if upper.startswith("GL"):
        # Letters typed for the digits they look like (GL1O5, GL3l2) are the likeliest slip.
        digits = "GL" + upper[2:].translate(str.maketrans("OIL", "011"))
        if digits in catalog:
            return digits
        match = difflib.get_close_matches(upper, list(catalog), n=1, cutoff=0.6)
    else:
        match = difflib.get_close_matches(selector.strip(), list(by_slug()), n=1, cutoff=0.6)
    return match[0] if match else None


def unknown_selector_message(selector: str) -> str:
    """`X` names no gpulint rule, with the closest code or slug when one is near."""
    guess = closest(selector)
    hint = f"; did you mean `{guess}`?" if guess else "; `gpulint rules` lists them"
    return f"`{selector}` names no gpulint rule{hint}"


def severity_by_code(table: dict[str, str]) -> dict[str, str]:
    """`[severity]` keys are selectors; a more specific one (a code over its prefix,
    a longer prefix over a shorter one, anything over ALL) wins."""
    def specificity(selector: str) -> int:
        upper = selector.strip().upper()
        if upper == "ALL":
            return 0
        return len(upper) if upper.startswith("GL") else 99

    out: dict[str, str] = {}
    for selector in sorted(table, key=specificity):
        for code in resolve_selector(selector):
            out[code] = table[selector]
    return out
