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
            if kind == "kubernetes" and not _built_in_objects(content):
                continue
            target = folder / kind / f"{rule.code}-{side}-{Path(path).name}"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            written.append(target)
    return written


def _built_in_objects(text: str) -> bool:
    """Whether every document is an object of Kubernetes' own API (the schema check knows
    none other): not a custom resource (`nvidia.com/v1` ClusterPolicy), not YAML that is no
    manifest at all (a MIG or device plugin config, chart values)."""
    import yaml

    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError:
        return True  # the schema check reports it as it does any broken manifest
    for doc in docs:
        version = doc.get("apiVersion") if isinstance(doc, dict) else None
        if not isinstance(version, str):
            return False
        group = version.split("/")[0] if "/" in version else ""
        if "." in group and not group.endswith(".k8s.io"):
            return False
    return bool(docs)
