"""The rule catalog: one YAML file per rule in rules/, read once per run.

A rule's words live only here; the CLI, SARIF descriptors and generated docs all
read them from this catalog.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from gpulint.resources import rules_dir

CODE = re.compile(r"GL\d{3}")


@dataclass(frozen=True)
class Example:
    files: tuple[tuple[str, str], ...]  # (relative path, content)
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
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
    kinds: tuple[str, ...] = ()
    fixable: str = "never"  # never | sometimes | always
    references: tuple[str, ...] = ()
    sources: tuple[str, ...] = field(default=())

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
    )


@functools.lru_cache(maxsize=None)
def load_catalog() -> dict[str, Rule]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    rules = {}
    for path in sorted(rules_dir().glob("GL[0-9][0-9][0-9].yaml")):
        with open(path, encoding="utf-8") as handle:
            rule = _rule(yaml.load(handle, Loader=loader))
        rules[rule.code] = rule
    return rules


def by_slug() -> dict[str, str]:
    return {rule.slug: code for code, rule in load_catalog().items()}


def resolve_selector(selector: str) -> list[str]:
    """Codes a selector names: an exact code, a code prefix (`GL1`, `GL10`), a slug or `ALL`."""
    catalog = load_catalog()
    selector = selector.strip()
    if selector.upper() == "ALL":
        return list(catalog)
    upper = selector.upper()
    if upper.startswith("GL"):
        return [code for code in catalog if code.startswith(upper)]
    code = by_slug().get(selector)
    return [code] if code else []
