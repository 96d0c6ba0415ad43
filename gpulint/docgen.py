"""Generated documentation: the rule table in README.md, docs/rules.md, and one page
per rule in docs/rules/GLxxx.md (the `helpUri` of SARIF rule descriptors); and the parsed
rules an installed gpulint reads (rules/prebuilt, `gpulint.prebuild`).

Run `python -m gpulint.docgen` after changing a rule file; a test fails while the
generated parts are stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from gpulint.catalog import load_catalog
from gpulint.ruledoc import rule_markdown

ROOT = Path(__file__).resolve().parent.parent
START, END = "<!-- rules:start -->", "<!-- rules:end -->"
FAMILIES = (
    ("GL0", "General"), ("GL1", "containerd `config.toml`"), ("GL2", "Docker `daemon.json`"),
    ("GL3", "Dockerfile: CUDA images"), ("GL45", "NVIDIA device plugin config"),
    ("GL46", "MIG partition config (mig-parted)"), ("GL47", "Kubernetes: Dynamic Resource Allocation"),
    ("GL4", "Dockerfile: multi-stage builds"),
    ("GL5", "Kubernetes"), ("GL6", "CUDA / driver compatibility"), ("GL7", "Cross-file"),
    ("GL8", "Node: `gpulint doctor`, toolkit config, CDI specs"),
    ("GL9", "Docker Compose and container command lines"),
)


def rule_table() -> str:
    rules = load_catalog().values()
    lines, placed = [], set()
    for prefix, title in FAMILIES:
        # a rule belongs to the first family whose prefix it has (GL45x and GL46x before GL4)
        family = [r for r in rules if r.code.startswith(prefix) and r.code not in placed]
        placed.update(r.code for r in family)
        if not family:
            continue
        lines += [f"#### {title}", "", "| Code | Name | Severity | Fix | Summary |",
                  "|---|---|---|---|---|"]
        for r in family:
            fix = {"never": "", "sometimes": "some", "always": "yes"}[r.fixable]
            name = f"`{r.slug}`" + (" (preview)" if r.preview else "")
            summary = r.summary.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| [{r.code}](docs/rules.md#{r.code.lower()}-{r.slug}) | {name} | "
                         f"{r.severity} | {fix} | {summary} |")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def readme_text(current: str) -> str:
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.DOTALL)
    return pattern.sub(lambda _: f"{START}\n{rule_table()}{END}", current)


def rules_markdown() -> str:
    parts = ["# gpulint rules", "",
             "Generated from `rules/GLxxx.yaml` by `python -m gpulint.docgen`; "
             "`gpulint rule CODE` prints the same text.", ""]
    parts += [rule_markdown(rule) for rule in load_catalog().values()]
    return "\n".join(parts).rstrip("\n") + "\n"


def rule_pages() -> dict[str, str]:
    """{file name: Markdown} for docs/rules/: one page per rule."""
    pages = {}
    for rule in load_catalog().values():
        pages[f"{rule.code}.md"] = "\n".join([
            rule_markdown(rule).replace(f"## {rule.code}", f"# {rule.code}", 1).replace("\n### ", "\n## "),
            "---", "",
            f"Generated from `rules/{rule.code}.yaml`; every rule: [rules.md](../rules.md).", ""])
    return pages


def main() -> int:
    readme = ROOT / "README.md"
    readme.write_text(readme_text(readme.read_text(encoding="utf-8")), encoding="utf-8")
    docs = ROOT / "docs" / "rules.md"
    docs.parent.mkdir(exist_ok=True)
    docs.write_text(rules_markdown(), encoding="utf-8")
    pages = ROOT / "docs" / "rules"
    pages.mkdir(exist_ok=True)
    for stale in set(p.name for p in pages.glob("GL*.md")) - set(rule_pages()):
        (pages / stale).unlink()
    for name, text in rule_pages().items():
        (pages / name).write_text(text, encoding="utf-8")
    from gpulint import prebuild

    prebuild.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
