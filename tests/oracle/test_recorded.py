"""gpulint against recorded verdicts of every containerd and dockerd release (no daemon needed).

`data/verdicts/<release>.jsonl` holds what each release did with each file under `data/mutants/`
(recorded by `tools/record-releases`; see README.md).  gpulint judges every file once per release,
told which release the nodes run (`containerd-version`/`docker-version` in the fleet config), and a
file agrees when

- the daemon shows a problem (it refuses to start, the CRI plugin is not loaded, the default
  runtime is not the one the file means, a setting is lost: a key never decoded, a runtime that
  fails before its binary runs or runs plain runc, `SystemdCgroup = true` without
  `--systemd-cgroup`, a runtime of the file or its drop-ins missing from the CRI config, a
  runtime missing or changed in `docker info`) and gpulint reports an error or a warning, or
- the daemon shows none and gpulint reports no error.

Each release's table (agree / miss / false alarm) is printed.  `data/baseline.json` lists the files
that agreed when it was written: every one of them must still agree.  After gpulint improves,
raise the bar with GPULINT_ORACLE_UPDATE_BASELINE=1 (it only ever adds files unless
GPULINT_ORACLE_UPDATE_BASELINE=replace).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from itertools import zip_longest
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("GPULINT_ORACLE_DATA") or HERE / "data")  # another recording, for trying one out
MUTANTS = DATA / "mutants"
BASELINE = DATA / "baseline.json"
sys.path.insert(0, str(HERE / "tools"))
from compare_gpulint import BUILTIN, ENVIRONMENT, asked_for_systemd, ignored_is_problem  # noqa: E402


def _releases() -> dict[str, list[dict]]:
    out = {}
    for path in sorted((DATA / "verdicts").glob("*.jsonl")):
        out[path.stem] = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return out


def _version_key(name: str):
    return [int(x) for x in re.findall(r"\d+", name)]


def _recipes() -> dict[str, dict]:
    recipes = {}
    manifest = MUTANTS / "random" / "manifest.jsonl"
    if manifest.is_file():
        for line in manifest.read_text().splitlines():
            r = json.loads(line)
            recipes["random/" + r["file"]] = r
    return recipes


def _json_pairs(path: Path):
    try:
        return json.loads(path.read_text(), object_pairs_hook=lambda pairs: pairs)
    except ValueError:
        return None


def _daemon_json_intent(path: Path) -> tuple[str | None, dict[str, str]]:
    """The default runtime a daemon.json states (last one wins) and the path of every runtime in
    any of its `runtimes` objects (a key matching `path` in any case)."""
    doc = _json_pairs(path)
    if not isinstance(doc, list):
        return None, {}
    default, runtimes = None, {}
    for key, value in doc:
        if key == "default-runtime" and isinstance(value, str):
            default = value
        if key == "runtimes" and isinstance(value, list):
            for name, body in value:
                if isinstance(body, list):
                    paths = [v for k, v in body if k.lower() == "path" and isinstance(v, str)]
                    runtimes[name] = paths[-1] if paths else ""
    return default, runtimes


CRI_IDS = ("cri", "io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime")


def _containerd_default_written(path: Path) -> str | None:
    """The runtime a containerd file names as default: the last `default_runtime_name` written
    anywhere in it (where containerd reads it or not), when the file parses."""
    import tomllib

    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = []

    def walk(table):
        for key, value in table.items():
            if key == "default_runtime_name" and isinstance(value, str):
                found.append(value)
            elif isinstance(value, dict):
                walk(value)
    walk(doc)
    return found[-1] if found else None


def _containerd_runtimes(path: Path) -> set[str]:
    """The runtime names a containerd file and its conf.d/ drop-ins write (`containerd.runtimes`
    under any plugin ID, or a whole CRI table path inside one pair of quotes)."""
    import tomllib

    names = set()
    for f in [path] + (sorted((path.parent / "conf.d").glob("*.toml")) if path.name == "config.toml" else []):
        try:
            doc = tomllib.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        # under any plugin ID: a runtime the file writes under a misspelt one is still meant
        for pid in doc.get("plugins") or {}:
            table = (doc.get("plugins") or {}).get(pid)
            runtimes = ((table or {}).get("containerd") or {}).get("runtimes") if isinstance(table, dict) else None
            if isinstance(runtimes, dict):
                names |= {n for n, v in runtimes.items() if isinstance(v, dict)}
        for pid in CRI_IDS:  # the whole table path inside one pair of quotes
            prefix = pid + ".containerd.runtimes."
            names |= {k[len(prefix):] for k, v in (doc.get("plugins") or {}).items()
                      if k.startswith(prefix) and "." not in k[len(prefix):] and isinstance(v, dict)}
    return names


def problems(kind: str, rec: dict, recipe: dict | None) -> list[str] | None:
    """What the daemon shows wrong with the file, or None when the record cannot judge it."""
    if rec.get("error") or not rec.get("testable") or rec.get("starts") is None:
        return None
    if not rec["starts"]:
        return ["refused: " + (rec.get("refusal") or "?")]
    path = MUTANTS / rec["f"]
    out = []
    intended = (recipe or {}).get("intended_default")
    if kind == "containerd":
        intended = intended or _containerd_default_written(path)
        if rec.get("cri") != "ok":
            return ["CRI %s: %s" % (rec.get("cri"), rec.get("cri_error") or "not loaded")]
        if intended and rec.get("default") != intended:
            out.append("default runtime %s, the file means %s" % (rec.get("default"), intended))
        out += ["ignored: " + k for k in rec.get("ignored") or [] if ignored_is_problem(k)]
        effective = set(rec.get("runtimes") or [])
        if effective:  # a runtime of the file (or its drop-ins) the CRI plugin does not have
            out += ["runtime %s missing from the CRI config" % n for n in sorted(_containerd_runtimes(path) - effective)]
        asked = asked_for_systemd(str(path))
    else:
        stated, runtimes = _daemon_json_intent(path)
        intended = intended or stated or "runc"
        if rec.get("default") != intended:
            out.append("default runtime %s, the file means %s" % (rec.get("default"), intended))
        for name, want in runtimes.items():
            got = (rec.get("runtimes") or {}).get(name)
            if got is None:
                out.append("runtime %s missing from docker info" % name)
            elif got != want and not got.startswith(want + " "):  # `path runtimeArgs...` as recorded
                out.append("runtime %s path %r, the file says %r" % (name, got, want))
        asked = {}
    # the runtimes of one node must share the cgroup driver kubelet uses: the probes show
    # which ones containerd started with runc's systemd driver and which with cgroupfs (the
    # runtimes the file writes and the default; a built-in runc runs only pods that ask for it)
    written = _containerd_runtimes(path) | {"(default)"} if kind == "containerd" else set()
    drivers = {h: "--systemd-cgroup" in r.split(" ")[1:] for h, r in (rec.get("probes") or {}).items()
               if h in written and r.startswith("exec:")}
    if len(set(drivers.values())) > 1:
        out.append("cgroup drivers differ: systemd for %s, cgroupfs for %s" % (
            ", ".join(sorted(h for h, d in drivers.items() if d)), ", ".join(sorted(h for h, d in drivers.items() if not d))))
    for handler, result in (rec.get("probes") or {}).items():
        if result.startswith("exec:"):
            binary, *flags = result[5:].split(" ")
            if handler not in BUILTIN and binary == "runc":
                out.append("%s runs plain runc" % handler)
            elif handler in asked and "--systemd-cgroup" not in flags:
                out.append("%s: %s = true ignored" % (handler, asked[handler]))
        elif not any(e in result for e in ENVIRONMENT):
            out.append("%s: %s" % (handler, result))
    return out


def _fleet_runs(releases: list[str]) -> list[tuple[dict[str, str], list[str]]]:
    """Pairs of (fleet settings, releases judged with them): one gpulint run per pair."""
    ctd = sorted((r for r in releases if r.startswith("containerd-")), key=_version_key)
    dkr = sorted((r for r in releases if r.startswith("dockerd-")), key=_version_key)
    runs = []
    for c, d in zip_longest(ctd, dkr):
        fleet, names = {}, []
        if c:
            fleet["containerd-version"] = ".".join(c.split("-", 1)[1].split(".")[:2])
            names.append(c)
        if d:
            fleet["docker-version"] = ".".join(d.split("-", 1)[1].split(".")[:2])
            names.append(d)
        runs.append((fleet, names))
    return runs


def _lint_target(f: str) -> str:
    return str(Path(f).parent) if Path(f).name == "config.toml" and (MUTANTS / Path(f).parent / "conf.d").is_dir() \
        else f


def _gpulint(fleet: dict[str, str], files: list[str], tmp: Path) -> dict[str, list[dict]]:
    config = tmp / ("fleet-%s.toml" % "-".join(fleet.values()))
    config.write_text("[fleet]\n" + "".join('%s = "%s"\n' % kv for kv in fleet.items()))
    targets = sorted({_lint_target(f) for f in files})
    # a copy outside the repository: gpulint reads the project around the linted files, and
    # the repository's own fixtures (a KubeletConfiguration ...) are not the node's
    work = tmp / "mutants"
    if not work.is_dir():
        shutil.copytree(MUTANTS, work)
    proc = subprocess.run([sys.executable, "-m", "gpulint", "--format", "json", "--failure-threshold", "none",
                           "--config", str(config), *targets], cwd=work, capture_output=True, text=True,
                          timeout=300)
    report = json.loads(proc.stdout)
    by_file = defaultdict(list)
    for finding in report["findings"]:
        by_file[finding["path"]].append(finding)
    out = {}
    for f in files:
        target = _lint_target(f)
        out[f] = [x for p, xs in by_file.items() if p == target or p.startswith(target + "/") for x in xs] \
            if target != f else by_file.get(f, [])
    return out


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    releases = _releases()
    if not releases:
        pytest.skip("no recorded verdicts in tests/oracle/data/verdicts")
    recipes = _recipes()
    tmp = tmp_path_factory.mktemp("fleet")
    results = {}
    for fleet, names in _fleet_runs(list(releases)):
        files = sorted({rec["f"] for n in names for rec in releases[n]})
        findings = _gpulint(fleet, files, tmp)
        for name in names:
            kind = "containerd" if name.startswith("containerd-") else "daemon-json"
            rows = {}
            for rec in releases[name]:
                probs = problems(kind, rec, recipes.get(rec["f"]))
                if probs is None:
                    continue
                found = findings[rec["f"]]
                errors = sorted({x["code"] for x in found if x["severity"] == "error"})
                flagged = sorted({x["code"] for x in found if x["severity"] in ("error", "warning")})
                if probs:
                    verdict = "agree" if flagged else "miss"
                else:
                    verdict = "false alarm" if errors else "agree"
                rows[rec["f"]] = {"verdict": verdict, "daemon": probs, "gpulint": flagged, "errors": errors}
            results[name] = rows
    return results


def _classes(f: str, recipes: dict) -> list[str]:
    r = recipes.get(f)
    if r is None:
        return ["hand-made:" + Path(f).name.split("-")[0]]
    return [m["class"] for m in r["mutations"]]


def test_agreement_per_release_does_not_regress(judged):
    recipes = _recipes()
    lines = ["", "%-20s %6s %6s %6s %12s" % ("release", "files", "agree", "miss", "false alarm")]
    for name in sorted(judged, key=lambda n: (n.split("-")[0], _version_key(n))):
        c = Counter(row["verdict"] for row in judged[name].values())
        lines.append("%-20s %6d %6d %6d %12d" % (name, len(judged[name]), c["agree"], c["miss"], c["false alarm"]))
    for name in sorted(judged, key=lambda n: (n.split("-")[0], _version_key(n))):
        by_class = Counter()
        for f, row in judged[name].items():
            if row["verdict"] != "agree":
                for cls in _classes(f, recipes):
                    by_class[(row["verdict"], cls)] += 1
        if by_class:
            lines.append("%s: %s" % (name, ", ".join("%s %s x%d" % (v, c, n) for (v, c), n in by_class.most_common(8))))
    print("\n".join(lines))

    current = {name: sorted(f for f, row in rows.items() if row["verdict"] == "agree") for name, rows in judged.items()}
    baseline = json.loads(BASELINE.read_text()) if BASELINE.is_file() else {}
    update = os.environ.get("GPULINT_ORACLE_UPDATE_BASELINE")
    if update:
        new = current if update == "replace" else {
            n: sorted(set(current.get(n, [])) | set(baseline.get(n, []))) for n in set(current) | set(baseline)}
        BASELINE.write_text(json.dumps(new, indent=0, sort_keys=True) + "\n")
        baseline = new
    regressions = []
    for name, files in baseline.items():
        if name not in judged:
            regressions.append("%s: no recorded verdicts any more" % name)
            continue
        for f in files:
            row = judged[name].get(f)
            if row is None or row["verdict"] != "agree":
                regressions.append("%s %s: %s; daemon: %s; gpulint: %s" % (
                    name, f, row["verdict"] if row else "no longer judged",
                    "; ".join(row["daemon"]) if row else "-", ", ".join(row["gpulint"]) if row else "-"))
    assert not regressions, "files that agreed no longer do:\n" + "\n".join(regressions)


def test_the_recorded_mutants_are_what_the_manifest_says():
    """The random mutants are the generator's output for the recorded seed: byte for byte."""
    meta_path = DATA / "recorded.json"
    if not meta_path.is_file():
        pytest.skip("no recorded data")
    meta = json.loads(meta_path.read_text())
    sys.path.insert(0, str(HERE / "tools" / "lib"))
    import mutations

    for kind, count in (("containerd", meta["count"]), ("daemon-json", meta["json_count"])):
        for _main, files, _recipe in mutations.generate(meta["seed"], count, kind):
            for rel, text in files.items():
                assert (MUTANTS / "random" / kind / rel).read_text(encoding="utf-8") == text, rel
