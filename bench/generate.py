"""Build benchmark trees with the shapes and sizes of real repositories.

    python bench/generate.py OUT N [--kinds dockerfile,k8s] [--source DIR]

Copies files from the source corpus (default: $GPULINT_CORPUS, else ../shared/corpus beside the
checkout, else tests/fixtures) round-robin per kind, in the corpus' own proportions, each into a
folder of its own so that no two copies see each other as drop-ins or neighbours. Writes OUT.manifest.json
beside the tree: every file with its kind and parser, for the parse floor.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# GPULINT_CORPUS points at another copy of the corpus (a worktree that is not beside ../shared)
SHARED_CORPUS = Path(os.environ.get("GPULINT_CORPUS") or ROOT.parent / "shared" / "corpus")
FIXTURES = ROOT / "tests" / "fixtures"

# How the parse floor reads each corpus folder (see floor.py).
PARSERS = {
    "dockerfile": "text",
    "k8s": "yaml",
    "compose": "yaml",
    "kubelet": "yaml",
    "containerd": "toml",
    "toolkit": "toml",
    "daemon-json": "json",
    "cdi": "yaml",
}


def parser_for(path: Path, kind: str) -> str:
    if path.suffix == ".json":
        return "json"
    if path.suffix == ".toml" or path.name.endswith(".toml.tmpl"):
        return "toml"
    if path.suffix in (".yaml", ".yml"):
        return "yaml"
    return PARSERS.get(kind, "text")


# The test fixtures name their Kubernetes family in full.
ALIASES = {"kubernetes": "k8s"}


def source_files(source: Path, kinds: list[str] | None) -> dict[str, list[Path]]:
    """Files per kind: the corpus' top-level folders, or the fixture families."""
    by_kind: dict[str, list[Path]] = {}
    for folder in sorted(p for p in source.iterdir() if p.is_dir()):
        kind = ALIASES.get(folder.name, folder.name)
        if kinds and kind not in kinds:
            continue
        files = sorted(p for p in folder.rglob("*") if p.is_file() and p.stat().st_size < 1_000_000)
        if files:
            by_kind.setdefault(kind, []).extend(files)
    if not by_kind:
        raise SystemExit(f"no files of the kinds {kinds} under {source}")
    return by_kind


def plan(by_kind: dict[str, list[Path]], n: int) -> list[tuple[str, Path]]:
    """n (kind, file) pairs in the corpus' proportions, every kind at least once when n allows."""
    total = sum(len(files) for files in by_kind.values())
    quota = {kind: max(1, round(n * len(files) / total)) for kind, files in by_kind.items()}
    while sum(quota.values()) > n:
        biggest = max(quota, key=quota.get)
        quota[biggest] -= 1
    while sum(quota.values()) < n:
        quota[max(by_kind, key=lambda k: len(by_kind[k]))] += 1
    chosen = []
    for kind, count in quota.items():
        files = by_kind[kind]
        chosen += [(kind, files[i % len(files)]) for i in range(count)]
    return chosen


def manifest_path(tree: Path) -> Path:
    return tree.parent / f"{tree.name}.manifest.json"


def generate(out: Path, n: int, kinds: list[str] | None = None, source: Path | None = None) -> Path:
    source = source or (SHARED_CORPUS if SHARED_CORPUS.is_dir() else FIXTURES)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    manifest = []
    for index, (kind, src) in enumerate(plan(source_files(source, kinds), n)):
        dest = out / kind / f"{index:05d}" / src.name
        dest.parent.mkdir(parents=True)
        shutil.copyfile(src, dest)
        manifest.append({"path": str(dest.relative_to(out)), "kind": kind, "parser": parser_for(src, kind)})
    manifest_path(out).write_text(json.dumps(manifest), encoding="utf-8")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("n", type=int)
    parser.add_argument("--kinds", help="comma-separated corpus folders (default: all)")
    parser.add_argument("--source", type=Path)
    args = parser.parse_args()
    kinds = args.kinds.split(",") if args.kinds else None
    generate(args.out, args.n, kinds, args.source)
    print(f"{args.n} files in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
