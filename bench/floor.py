"""The parse floor: what any linter of these files must do, in one process and nothing else.
Walk the tree (os.walk, leaving out the folders gpulint excludes by default), read every
file, and parse it with the fastest parser there is for its format: json, tomllib, PyYAML's
C composer (libyaml), dockerfile-parse for Dockerfiles; any other file is read only.
gpulint's budget is a multiple of this.

    python bench/floor.py TREE [--exclude NAME ...]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys

import yaml
from dockerfile_parse import DockerfileParser

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def parser_of(name: str) -> str:
    lower = name.lower()
    if lower.endswith(".json"):
        return "json"
    if lower.endswith((".toml", ".toml.tmpl")):
        return "toml"
    if lower.endswith((".yaml", ".yml")):
        return "yaml"
    if "dockerfile" in lower or "containerfile" in lower:
        return "dockerfile"
    return "text"


def parse(text: str, parser: str) -> None:
    try:
        if parser == "json":
            json.loads(text)
        elif parser == "toml":
            tomllib.loads(text)
        elif parser == "yaml":
            for _ in yaml.compose_all(text, Loader=yaml.CSafeLoader):
                pass
        elif parser == "dockerfile":
            DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8"))).structure
    except Exception:  # a file that does not parse still costs its read and the attempt
        pass


def main() -> int:
    args = argparse.ArgumentParser()
    args.add_argument("tree")
    args.add_argument("--exclude", action="append", default=[])
    options = args.parse_args()
    excluded = set(options.exclude)
    for folder, dirs, files in os.walk(options.tree):
        dirs[:] = sorted(d for d in dirs if d not in excluded)
        for name in sorted(files):
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                parse(handle.read(), parser_of(name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
