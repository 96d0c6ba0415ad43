"""A rule's documentation as text (for `gpulint rule`), JSON and Markdown (for docs)."""

from __future__ import annotations


def rule_json(rule) -> dict:
    return {
        "code": rule.code, "slug": rule.slug, "title": rule.title, "severity": rule.severity,
        "stability": rule.stability, "kinds": list(rule.kinds), "fixable": rule.fixable,
        "summary": rule.summary, "why": rule.why, "fix": rule.fix,
        "example": {side: [{"path": p, "content": c} for p, c in ex.files]
                    for side, ex in (("bad", rule.bad), ("good", rule.good))},
        "references": list(rule.references),
        "verified": [{"daemon": d, "version": v, "how": how, "ref": ref} for d, v, how, ref in rule.verified],
    }


def verified_words(rule) -> list[str]:
    """`verified with containerd 1.6.20`, `read from the dockerd 24.0 source`: one line per
    daemon version a rule's claims were checked against, with where to look."""
    words = []
    for daemon, version, how, ref in rule.verified:
        said = f"verified with {daemon} {version}" if how == "oracle" else \
            f"read from the {daemon} {version} source"
        words.append(f"{said} ({ref})")
    return words


def _example_lines(example) -> list[str]:
    lines = []
    for path, content in example.files:
        lines.append(f"  # {path}")
        lines.extend("  " + line for line in content.rstrip("\n").split("\n"))
    if example.args:
        lines.append(f"  # run with: gpulint {' '.join(example.args)}")
    return lines


def rule_text(rule) -> str:
    head = f"{rule.code} {rule.slug} ({rule.severity}{', preview' if rule.preview else ''}" \
           f"{', fixable' if rule.fixable != 'never' else ''})"
    lines = [head, "", rule.title, "", rule.summary, "", "Why is this bad?", rule.why, "",
             "Example", *_example_lines(rule.bad), "", "Use instead", *_example_lines(rule.good),
             "", "Fix", rule.fix]
    if rule.references:
        lines += ["", "References", *(f"  {url}" for url in rule.references)]
    if rule.verified:
        lines += ["", "Verified", *(f"  {words}" for words in verified_words(rule))]
    return "\n".join(lines)


_LANGUAGES = {".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json", ".sh": "sh",
              ".md": "markdown"}


def _fence_language(path: str) -> str:
    """The code block's language: highlighting, and what Markdown readers (gpulint's own
    command-line reader among them) take the block to be."""
    name = path.rsplit("/", 1)[-1]
    if "dockerfile" in name.lower() or name.lower().startswith("containerfile"):
        return "dockerfile"
    suffix = name[name.rfind("."):] if "." in name else ""
    return _LANGUAGES.get(suffix.lower(), "text")


def rule_markdown(rule) -> str:
    lines = [f"## {rule.code} `{rule.slug}`", "",
             f"**{rule.title}** · default severity `{rule.severity}` · {rule.stability}"
             f"{' · fixable' if rule.fixable != 'never' else ''}", "", rule.summary, "",
             "### Why is this bad?", "", rule.why, ""]
    for title, example in (("Example", rule.bad), ("Use instead", rule.good)):
        lines += [f"### {title}", ""]
        for path, content in example.files:
            lines += [f"`{path}`:", "", "```" + _fence_language(path), content.rstrip("\n"), "```", ""]
        if example.args:
            lines += [f"Run with `gpulint {' '.join(example.args)}`.", ""]
    lines += ["### Fix", "", rule.fix, ""]
    if rule.references:
        lines += ["### References", ""] + [f"- <{url}>" for url in rule.references] + [""]
    if rule.verified:
        lines += ["### Verified", ""] + [f"- {words}" for words in verified_words(rule)] + [""]
    return "\n".join(lines)
