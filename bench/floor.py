"""The parse floor: read and parse every file of a benchmark tree with the fastest standard
parsers, in one process, and nothing else (json, tomllib, PyYAML's C composer; Dockerfiles are
read and split into lines). gpulint's budget is a multiple of this.

    python bench/floor.py TREE
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def parse(text: str, parser: str) -> None:
    try:
        if parser == "json":
            json.loads(text)
        elif parser == "toml":
            tomllib.loads(text)
        elif parser == "yaml":
            for _ in yaml.compose_all(text, Loader=yaml.CSafeLoader):
                pass
        else:
            text.splitlines()
    except Exception:  # a file that does not parse still costs its read and the attempt
        pass


def main() -> int:
    tree = Path(sys.argv[1])
    manifest = json.loads((tree.parent / f"{tree.name}.manifest.json").read_text(encoding="utf-8"))
    for entry in manifest:
        parse((tree / entry["path"]).read_text(encoding="utf-8", errors="replace"), entry["parser"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
