"""rules/prebuilt/: the bundled YAML (the rule catalog and the knowledge data) parsed once,
as marshal files that an installed gpulint loads instead of parsing YAML on its first run
(`resources.bundled`). `python -m gpulint.docgen`, run after changing a rule file, writes them
too; tests/test_prebuilt.py fails while they are stale.

    python -m gpulint.prebuild [--check]
"""

from __future__ import annotations

import marshal
import sys
from pathlib import Path

from gpulint.catalog import index_rows, rule_files
from gpulint.resources import PREBUILT, read_yaml, rules_dir

# marshal's format 4 (Python 3.4 and later) for the types YAML gives here
VERSION = 4


def prebuilt() -> dict[str, object]:
    """Each prebuilt file's name and data, parsed from rules/ as it is now."""
    rules = [read_yaml(path.name) for path in rule_files()]
    out: dict[str, object] = {"catalog.marshal": rules, "catalog-index.marshal": index_rows(rules)}
    for path in sorted(rules_dir().glob("*.yaml")):
        if not path.name.startswith("GL"):
            out[f"{path.stem}.marshal"] = read_yaml(path.name)
    return out


def stale(folder: Path, wanted: dict[str, object]) -> list[str]:
    """The prebuilt files that do not hold what rules/ says (compared as data: marshal's bytes
    depend on how the interpreter shares strings), or that rules/ no longer has."""
    out = []
    for name, data in wanted.items():
        try:
            if marshal.loads((folder / name).read_bytes()) == data:
                continue
        except (OSError, EOFError, ValueError, TypeError):
            pass
        out.append(name)
    return sorted(out + [p.name for p in folder.glob("*.marshal") if p.name not in wanted])


def write() -> int:
    """Write rules/prebuilt from rules/*.yaml; how many files."""
    folder = rules_dir() / PREBUILT
    wanted = prebuilt()
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.marshal"):
        if old.name not in wanted:
            old.unlink()
    for name, data in wanted.items():
        (folder / name).write_bytes(marshal.dumps(data, VERSION))
    return len(wanted)


def main() -> int:
    if "--check" in sys.argv:
        found = stale(rules_dir() / PREBUILT, prebuilt())
        for name in found:
            print(f"rules/{PREBUILT}/{name} is out of date: run python -m gpulint.prebuild", file=sys.stderr)
        return 1 if found else 0
    print(f"{write()} files in rules/{PREBUILT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
