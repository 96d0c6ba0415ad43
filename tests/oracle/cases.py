"""The case set the real daemons judge: the mutant recipes (tools/make-mutants) and the
single-file examples in gpulint's own rule docs (each rule's bad and good example)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parent / "tools"
# the file kinds each verdict tool runs, and the name a rule-doc example must end with
KINDS = {"containerd": (".toml",), "daemon-json": (".json",), "kubernetes": (".yaml", ".yml")}


def write_mutants(folder: Path) -> None:
    subprocess.run([sys.executable, str(TOOLS / "make-mutants"), str(folder)], check=True,
                   capture_output=True)
    for index in folder.rglob("index.json"):
        index.unlink()


def write_doc_examples(folder: Path) -> list[Path]:
    """One file per single-file rule-doc example, named `<code>-<bad|good>-<file name>`;
    examples that need other files beside them (drop-ins, RuntimeClasses) are left to the
    unit tests, since the daemons read one file here."""
    from gpulint.catalog import load_catalog

    written = []
    for rule in load_catalog().values():
        kind = next((k for k in rule.kinds if k in KINDS), None)
        if kind is None:
            continue
        for side, example in (("bad", rule.bad), ("good", rule.good)):
            if len(example.files) != 1 or example.args:
                continue
            (path, content), = example.files
            if not path.endswith(KINDS[kind]) or "{{" in content:
                continue
            target = folder / kind / f"{rule.code}-{side}-{Path(path).name}"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            written.append(target)
    return written
