#!/usr/bin/env python3
"""compare-gpulint: put the daemons' verdicts next to gpulint's findings and flag likely disagreements.

usage: compare-gpulint [--json] [--all] VERDICTS.jsonl...     (`-` reads stdin)

Reads the JSON lines written by ctd-verdict, dockerd-verdict and k8s-verdict (run them with the
linter enabled, so each record carries a "gpulint" field) and prints one line per file:

  CLASS  ORACLE-PROBLEMS  |  GPULINT-FINDINGS  |  FILE

CLASS is a heuristic, meant to pick the files a human should read, not a judgement:
  possible-miss         the daemon shows a problem (refuses, CRI plugin fails or is not loaded, a
                        pod/container fails before the runtime runs, keys in a CRI plugin table that
                        containerd never decoded, a non-builtin runtime that ends up executing plain
                        runc, a strict schema error) and gpulint reports nothing at error severity
  possible-false-alarm  the daemon shows no problem at all and gpulint reports an error
  both                  the daemon shows a problem and gpulint reports an error (check they are the same)
  agree-clean           neither side sees a problem (gpulint may still report warnings/info)
  not-testable          template, version >= 3 file, or no verdict
Ignored keys that only newer containerd releases know (enable_cdi, sandbox_mode, ...), ignored
tables of non-CRI plugins and probe failures caused by the test machine (journald) are kept as
notes ("oracle_notes" with --json), not problems.
By default agree-clean and not-testable lines are left out; --all prints them.  --json prints one
JSON object per file instead.  Exit status 0 always.
"""
import argparse, json, os, sys

BUILTIN = {"runc", "io.containerd.runc.v2", "io.containerd.runtime.v1.linux", "(default)", "default"}
# keys containerd 1.6 does not decode because they arrived in 1.7/2.0: reported as notes, not problems
NEWER_KEYS = {"enable_cdi", "cdi_spec_dirs", "drain_exec_sync_io_timeout", "image_pull_progress_timeout",
              "setup_serially", "ignore_blockio_not_enabled_errors", "privileged_without_host_devices_all_devices_allowed",
              "sandbox_mode", "snapshotter", "blockio_config_file", "sync_fs", "sync_remove", "mount_options", "slow_chown"}
# probe failures that come from the test machine, not from the file
ENVIRONMENT = ("journald is not enabled on this host",)


def one_line(s, n):
    return " ".join((s or "?").split())[-n:]


def ignored_is_problem(k):
    """an ignored key matters when it sits in a CRI plugin table (runtimes, defaults) and is not a
    newer key; a whole plugin table that no plugin reads matters unless it names a plugin that
    exists (a table of another containerd release is judged by what is in it)"""
    if "(whole table" in k:
        return "cri" in k.split("(whole table")[0].lower() or "no plugin with this URI" in k
    return "cri" in k.lower() and k.rsplit(".", 1)[-1] not in NEWER_KEYS


def asked_for_systemd(path):
    """handler -> the value of the key in its runc options that a reader would take for
    SystemdCgroup (any case, `_` ignored); containerd 1.x decodes only some spellings"""
    import tomllib
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except (OSError, ValueError):
        return {}
    asked = {}
    for plugin, table in (doc.get("plugins") or {}).items():
        runtimes = ((table or {}).get("containerd") or {}).get("runtimes") if isinstance(table, dict) else None
        for name, runtime in (runtimes or {}).items():
            options = runtime.get("options") if isinstance(runtime, dict) else None
            for key, value in (options or {}).items() if isinstance(options, dict) else ():
                if key.lower().replace("_", "") == "systemdcgroup" and value is True:
                    asked[name] = key
    return asked


def problems(r, notes):
    tool = r.get("tool")
    if r.get("error"):
        return None
    if tool == "k8s-verdict":
        out = []
        if r.get("parse_error"):
            out.append("YAML parse error")
        for d in r.get("documents", []):
            if (d.get("strict") or {}).get("valid") is False:
                out.append("strict schema: " + d["strict"]["error"][:100])
            elif (d.get("lenient") or {}).get("valid") is False:
                out.append("schema: " + d["lenient"]["error"][:100])
        return out
    if not r.get("testable") or r.get("starts") is None:
        return None
    if not r["starts"]:
        return ["daemon refuses: " + (r.get("refusal") or "?")[:100]]
    out = []
    asked = asked_for_systemd(r["file"]) if tool == "ctd-verdict" else {}
    if tool == "ctd-verdict":
        if r.get("cri_status") == "error":
            return ["CRI fails: " + (r.get("cri_error") or "?")[:100]]
        if r.get("cri_status") != "ok":
            return ["CRI not loaded (%s)" % r.get("cri_status")]
        for k in r.get("ignored_keys") or []:
            (out if ignored_is_problem(k) else notes).append("ignored: " + k[:80])
    for p in r.get("runtimes") or []:
        name = p.get("handler") or p.get("runtime")
        if not p.get("reached"):
            if any(e in (p.get("error") or "") for e in ENVIRONMENT):
                notes.append("%s: environment: %s" % (name, one_line(p.get("error"), 60)))
                continue
            out.append("%s: %s" % (name, ("binary missing " + p["executed"]) if p.get("binary_missing")
                                   else one_line(p.get("error"), 80)))
        elif name not in BUILTIN and os.path.basename(p.get("executed") or "") == "runc":
            out.append("%s: runs plain runc" % name)
        elif tool == "ctd-verdict" and name in asked and not p.get("systemd_cgroup"):
            out.append("%s: `%s = true` ignored (no --systemd-cgroup)" % (name, asked[name]))
    return out


def classify(r):
    notes = []
    pr = problems(r, notes)
    g = r.get("gpulint") or {}
    f = g.get("findings") or []
    errors = [x for x in f if x.get("severity") == "error"]
    if pr is None:
        cls = "not-testable"
    elif pr and not errors:
        cls = "possible-miss"
    elif not pr and errors:
        cls = "possible-false-alarm"
    elif pr:
        cls = "both"
    else:
        cls = "agree-clean"
    return {"class": cls, "file": r.get("file"), "oracle": r.get("summary") or ("; ".join(pr or []) or "ok"),
            "oracle_problems": pr, "oracle_notes": notes, "gpulint": ["%s/%s@%s" % (x.get("code"), x.get("severity"), x.get("line")) for x in f],
            "gpulint_missing": g == {} or bool(g.get("error"))}


def main():
    ap = argparse.ArgumentParser(prog="compare-gpulint", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--all", action="store_true")
    a = ap.parse_args()
    for path in a.inputs:
        fh = sys.stdin if path == "-" else open(path)
        for line in fh:
            line = line.strip()
            if not line:
                continue
            c = classify(json.loads(line))
            if not a.all and c["class"] in ("agree-clean", "not-testable"):
                continue
            if a.json:
                print(json.dumps(c))
            else:
                pr = "; ".join(c["oracle_problems"] or []) or ("-" if c["class"] != "not-testable" else "not run")
                if c["oracle_notes"]:
                    pr += " (notes: %d)" % len(c["oracle_notes"])
                print("%-20s %s  |  %s  |  %s" % (c["class"], pr[:160], ", ".join(c["gpulint"]) or "-"
                                                  + (" (linter not run)" if c["gpulint_missing"] else ""), c["file"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
