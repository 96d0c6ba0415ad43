"""Regenerate rules/gpu-operator-<tag>.json: what each GPU Operator release accepts.

For each release tag, from github.com/NVIDIA/gpu-operator at that tag:
- the OpenAPI v3 schemas of the ClusterPolicy and NVIDIADriver CRDs, turned into JSON
  Schema with the API server's structural rules made explicit (an object without
  `x-kubernetes-preserve-unknown-fields` takes no field it does not list: the server
  prunes those), descriptions dropped, the CEL rules (`x-kubernetes-validations`) kept;
- the chart's values.yaml: every key with the shape of its default, and the value paths
  its templates read (`.Values.a.b`), with the ones passed on whole (`toYaml .Values.a`).

Usage: python tools/operator_releases.py GIT_DIR
(GIT_DIR: a clone of NVIDIA/gpu-operator holding the tags in RELEASES.)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

RELEASES = ("v24.3.0", "v24.6.2", "v24.9.2", "v25.3.4", "v25.10.1", "v26.3.3", "v26.7.0")
REPO = "https://github.com/NVIDIA/gpu-operator"
CRDS = {"ClusterPolicy": "nvidia.com_clusterpolicies.yaml", "NVIDIADriver": "nvidia.com_nvidiadrivers.yaml"}
# where the CRDs are at a tag: the chart's copy, else (before v24.9.0) kubebuilder's
CRD_FOLDERS = ("deployments/gpu-operator/crds", "config/crd/bases")
OUT = Path(__file__).resolve().parent.parent / "rules"

# the OpenAPI keywords the API server checks that JSON Schema checks the same way
_KEPT = ("enum", "required", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
         "minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "multipleOf")


def git_show(git_dir: str, tag: str, path: str) -> str | None:
    done = subprocess.run(["git", "--git-dir", git_dir, "show", f"{tag}:{path}"],
                          capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def json_schema(node: dict) -> dict:
    """One OpenAPI v3 (structural) schema node as JSON Schema."""
    out: dict = {}
    kind = node.get("type")
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
    elif kind:
        out["type"] = kind
    for key in _KEPT:
        if key in node:
            out[key] = node[key]
    if node.get("x-kubernetes-validations"):
        # the CEL rules the API server runs on the value (gpulint.common.cel): kept with their
        # message, which the API server quotes when a rule fails
        out["x-kubernetes-validations"] = [{k: rule[k] for k in ("rule", "message", "messageExpression",
                                                                 "fieldPath", "reason") if k in rule}
                                           for rule in node["x-kubernetes-validations"]]
    if "required" in out:  # the API server fills a field that has a default before validating
        props = node.get("properties") or {}
        out["required"] = [name for name in out["required"] if "default" not in props.get(name, {})]
        if not out["required"]:
            del out["required"]
    if "properties" in node:
        out["properties"] = {name: json_schema(sub) for name, sub in node["properties"].items()}
    if "items" in node:
        out["items"] = json_schema(node["items"])
    for key in ("anyOf", "allOf", "oneOf"):
        if key in node:
            out[key] = [json_schema(sub) for sub in node[key]]
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = json_schema(node["additionalProperties"])
    elif kind == "object" and not preserve and node.get("additionalProperties") is not True:
        out["additionalProperties"] = False  # pruned by the API server
    return out


def crd_schema(text: str) -> dict:
    crd = yaml.safe_load(text)
    versions = crd["spec"]["versions"]
    served = next(v for v in versions if v.get("storage")) if len(versions) > 1 else versions[0]
    schema = json_schema(served["schema"]["openAPIV3Schema"])
    # apiVersion, kind and metadata are the API server's own (ObjectMeta), not the CRD's
    for name in ("apiVersion", "kind", "metadata"):
        schema.setdefault("properties", {})[name] = {}
    schema["x-version"] = served["name"]
    return schema


def shape(value):
    """The shape of a default value: a map of its keys' shapes, or a type name."""
    if isinstance(value, dict):
        return {str(key): shape(sub) for key, sub in value.items()}
    if isinstance(value, list):
        return ["list", shape(value[0]) if value else None]
    if value is None:
        return "null"
    return {bool: "bool", int: "int", float: "float", str: "str"}.get(type(value), "str")


_VALUES_PATH = re.compile(r"\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
_WHOLE = re.compile(r"(?:toYaml|toJson|with|range\s+(?:\$\w+\s*(?:,\s*\$\w+\s*)?:=\s*)?)\s*\(?\s*\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*\)?\s*(?:\}\}|\|)")


def template_reads(git_dir: str, tag: str) -> tuple[list[str], list[str], list[str]]:
    """The value paths the chart's templates read, those they pass on whole, and those the
    ClusterPolicy template passes on whole (into the spec field of the same path)."""
    listing = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", tag,
                              "deployments/gpu-operator/templates/"], capture_output=True, text=True)
    reads: set[str] = set()
    whole: set[str] = set()
    policy: set[str] = set()
    for path in listing.stdout.split():
        text = git_show(git_dir, tag, path) or ""
        reads.update(m[1][1:] for m in _VALUES_PATH.finditer(text))
        whole.update(m[1][1:] for m in _WHOLE.finditer(text))
        if path.endswith("/clusterpolicy.yaml"):
            policy.update(m[1][1:] for m in _WHOLE.finditer(text))
    return sorted(reads), sorted(whole), sorted(policy)


def release(git_dir: str, tag: str) -> dict:
    data: dict = {"release": tag, "source": f"{REPO}/tree/{tag}"}
    for kind, name in CRDS.items():
        for folder in CRD_FOLDERS:
            text = git_show(git_dir, tag, f"{folder}/{name}")
            if text is not None:
                data[kind] = crd_schema(text)
                data[kind]["x-source"] = f"{REPO}/blob/{tag}/{folder}/{name}"
                break
    values = yaml.safe_load(git_show(git_dir, tag, "deployments/gpu-operator/values.yaml"))
    reads, whole, policy = template_reads(git_dir, tag)
    chart = yaml.safe_load(git_show(git_dir, tag, "deployments/gpu-operator/Chart.yaml") or "{}") or {}
    # a subchart's values are its own chart's business
    subcharts = sorted(d.get("alias") or d["name"] for d in chart.get("dependencies") or ())
    data["values"] = {"source": f"{REPO}/blob/{tag}/deployments/gpu-operator/values.yaml",
                      "defaults": shape(values), "reads": reads, "whole": whole, "policy": policy,
                      "subcharts": subcharts,
                      # the container toolkit image the chart deploys unless told otherwise
                      "toolkit_version": str((values.get("toolkit") or {}).get("version") or "")}
    return data


def main(git_dir: str) -> None:
    for tag in RELEASES:
        text = json.dumps(release(git_dir, tag), sort_keys=True, separators=(",", ":"))
        (OUT / f"gpu-operator-{tag}.json").write_text(text + "\n", encoding="utf-8")
        print(f"{tag}: {len(text)} bytes")


if __name__ == "__main__":
    main(sys.argv[1])
