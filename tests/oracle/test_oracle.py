"""Differential tests: the real containerd and dockerd (and a Kubernetes schema check) judge
every case, and gpulint must agree with what they do.

A case agrees when the daemon shows a problem (refuses to start, the CRI plugin fails or
ignores a table, a runtime ends up running plain runc or a missing binary, a strict schema
error) and gpulint reports an error, or when neither sees one. The few cases where gpulint
states more than a daemon start can show are listed in CLAIMS_BEYOND_THE_DAEMON with the
reason; a listed case that starts to agree, or to disagree differently, fails too.

The daemons run only as root with the tools installed (tools/setup.sh) and when CI or
GPULINT_ORACLE is set: see README.md. Without them the daemon tests are skipped, with the
reason; the case set itself is always checked.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from cases import TOOLS, write_doc_examples, write_mutants

sys.path.insert(0, str(TOOLS))
from compare_gpulint import classify  # noqa: E402

HOME = Path(os.environ.get("GPULINT_ORACLE_HOME")
            or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpulint-oracle")
# gpulint judges each case for the releases the oracle runs (tools/setup.sh installs Debian 12's)
FLEET = '[fleet]\ncontainerd-version = "1.6"\ndocker-version = "20.10"\n'


# case file -> (class, why gpulint rightly says more than the daemon shows)
CLAIMS_BEYOND_THE_DAEMON = {
    "m52-import-missing-file.toml": (
        "possible-miss", "the imported folder is not in the linted tree, so gpulint cannot know "
        "whether the node has the file (GL116 reports it when the folder is there)"),
    "GL107-bad-config.toml": (
        "possible-false-alarm", "the cgroup-driver mismatch shows in kubelet, not in containerd (GL107)"),
    "GL474-bad-claim.yaml": (
        "possible-false-alarm", "a CEL selector is a string to the schema; the scheduler finds the "
        "attribute missing when it evaluates it (GL474)"),
    "GL475-bad-pod.yaml": (
        "possible-false-alarm", "the API server checks that a container's claim is one of the pod's "
        "resourceClaims; the schema does not (GL475)"),
    "GL478-bad-claim.yaml": (
        "possible-false-alarm", "opaque parameters are free-form to the API server; the NVIDIA driver "
        "decodes them strictly when it prepares the claim (GL478)"),
    "GL459-bad-device-plugin.yaml": (
        "possible-false-alarm", "the device plugin checks its MPS root when it starts on the node; "
        "the schema does not (GL459)"),
    "GL521-bad-nvidia-device-plugin.yml": (
        "possible-false-alarm", "the schema accepts the DaemonSet; without NVIDIA_MIG_MONITOR_DEVICES and "
        "CAP_SYS_ADMIN the plugin fails on the node, where the MIG devices are (GL521)"),
    "GL501-bad-train.yaml": (
        "possible-false-alarm", "the API server rejects a GPU request without a limit; the schema "
        "does not (GL501)"),
    "GL502-bad-pod.yaml": (
        "possible-false-alarm", "the API server requires requests equal to limits for extended "
        "resources; the schema does not (GL502)"),
    "GL503-bad-notebook.yaml": (
        "possible-false-alarm", "the API server rejects fractional extended resources (GL503)"),
    "GL504-bad-cronjob.yaml": (
        "possible-false-alarm", "a misspelt resource name is a valid schema key; the pod gets no "
        "GPU (GL504)"),
    "GL505-bad-sidecar.yaml": (
        "possible-false-alarm", "NVIDIA_VISIBLE_DEVICES is read by the NVIDIA runtime on the node, "
        "not by the API server (GL505)"),
    "GL510-bad-runtimeclass.yaml": (
        "possible-false-alarm", "the API server rejects a handler that is not a DNS label (GL510)"),
    "x05-runtimeclass-bad-handler.yaml": (
        "possible-false-alarm", "the schema accepts any handler string; the API server rejects a "
        "handler that is not a DNS label (GL510)"),
    "x06-fractional-limit.yaml": (
        "possible-false-alarm", "the API server rejects fractional extended resources; the schema "
        "does not (GL503)"),
    "x07-request-gt-limit.yaml": (
        "possible-false-alarm", "the API server requires requests equal to limits for extended "
        "resources; the schema does not (GL502)"),
    "x09-resource-typo.yaml": (
        "possible-false-alarm", "a misspelt resource name is a valid schema key; the pod gets no "
        "GPU (GL504)"),
}


def _daemons_wanted() -> str | None:
    """Why the daemon tests are skipped, or None to run them."""
    if not (os.environ.get("CI") or os.environ.get("GPULINT_ORACLE")):
        return "set GPULINT_ORACLE=1 (or CI) to run the real daemons"
    if os.geteuid() != 0:
        return "the daemons run in a private mount namespace: root is needed"
    if not (HOME / "setup.json").is_file():
        return f"the oracle tools are not installed in {HOME}: run tests/oracle/tools/setup.sh --home {HOME}"
    return None


def _verdicts(tool: str, files: list[Path], config: Path) -> list[dict]:
    if not files:
        return []
    lint = f"{shlex.quote(sys.executable)} -m gpulint --config {shlex.quote(str(config))}"
    proc = subprocess.run([sys.executable, str(TOOLS / tool), "--home", str(HOME), "--lint", lint,
                           *map(str, files)], capture_output=True, text=True, timeout=900)
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(records) == len(files), proc.stderr[-3000:]
    return records


@pytest.fixture(scope="module")
def case_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cases")
    write_mutants(folder / "mutants")
    write_doc_examples(folder / "docs")
    return folder


def test_the_case_set_covers_every_daemon_facing_rule(case_dir):
    files = {p.name for p in case_dir.rglob("*") if p.is_file()}
    assert sum(1 for f in files if f.startswith("m")) >= 50  # containerd mutants
    assert sum(1 for f in files if f.startswith("k")) >= 25  # daemon.json mutants
    codes = {f.split("-")[0] for f in files if f.startswith("GL")}
    assert {"GL101", "GL103", "GL108", "GL110", "GL115", "GL201", "GL202", "GL206", "GL207"} <= codes
    for name in CLAIMS_BEYOND_THE_DAEMON:
        assert name in files, f"{name} is no longer a case: drop it from CLAIMS_BEYOND_THE_DAEMON"


@pytest.fixture(scope="module")
def records(case_dir) -> list[dict]:
    reason = _daemons_wanted()
    if reason:
        pytest.skip(reason)
    ctd = sorted(case_dir.glob("**/containerd/*.toml"))
    dkr = sorted(case_dir.glob("**/daemon-json/*.json"))
    k8s = sorted(p for p in case_dir.glob("**/k8s/*.y*ml")) + sorted(case_dir.glob("docs/kubernetes/*.y*ml"))
    config = case_dir / "oracle-fleet.toml"
    config.write_text(FLEET)
    return (_verdicts("ctd-verdict", ctd, config) + _verdicts("dockerd-verdict", dkr, config)
            + _verdicts("k8s-verdict", k8s, config))


def test_gpulint_agrees_with_the_daemons_on_every_case(records):
    disagreements = []
    for record in records:
        assert not record.get("error"), record
        verdict = classify(record)
        name = Path(record["file"]).name
        expected = CLAIMS_BEYOND_THE_DAEMON.get(name, (("both", "agree-clean", "not-testable"), ""))[0]
        if verdict["class"] not in (expected if isinstance(expected, tuple) else (expected,)):
            disagreements.append(f"{verdict['class']} (expected {expected}): {name}: daemon: "
                                 f"{verdict['oracle']} | gpulint: {', '.join(verdict['gpulint']) or '-'}")
    assert not disagreements, "\n".join(disagreements)


def test_rule_doc_good_examples_are_configs_the_daemons_accept(records):
    bad = []
    for record in records:
        name = Path(record["file"]).name
        if "-good-" not in name:
            continue
        verdict = classify(record)
        if verdict["oracle_problems"]:
            bad.append(f"{name}: {verdict['oracle']}")
    assert not bad, "\n".join(bad)
