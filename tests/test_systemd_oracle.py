"""gpulint judges docker.service and containerd.service with their drop-ins as systemd does:
`systemd-analyze verify --root=TREE UNIT` is the oracle. Each case is a node's tree with the
packaged unit (`Type=notify`, one `ExecStart=`) and stand-in daemon binaries, plus the
case's files; systemd refuses the unit exactly when gpulint reports an error about how the
unit is put together (GL001, GL209, GL211). Skipped where systemd-analyze is not installed."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import run_gpulint, write_files

ANALYZE = shutil.which("systemd-analyze")
pytestmark = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")

PACKAGED = {
    "docker.service": "[Unit]\nDescription=Docker\n[Service]\nType=notify\nExecStart=/usr/bin/dockerd -H fd://\n",
    "containerd.service": "[Unit]\nDescription=containerd\n[Service]\nType=notify\nExecStart=/usr/bin/containerd\n",
}
DOCKER = "etc/systemd/system/docker.service.d/"
RUN = "ExecStart=/usr/bin/dockerd -H fd:// --add-runtime nvidia=/usr/bin/nvidia-container-runtime\n"
UNIT_CODES = ("GL001", "GL209", "GL211")

# case -> the files of the node besides the packaged units
CASES = {
    "added-without-reset": {DOCKER + "nvidia.conf": "[Service]\n" + RUN},
    "reset-then-command": {DOCKER + "nvidia.conf": "[Service]\nExecStart=\n" + RUN},
    "two-commands-after-reset": {DOCKER + "nvidia.conf": "[Service]\nExecStart=\n" + RUN + RUN},
    "oneshot-may-have-two": {DOCKER + "nvidia.conf": "[Service]\nType=oneshot\n" + RUN},
    "later-drop-in-only-clears": {DOCKER + "10-nvidia.conf": "[Service]\nExecStart=\n" + RUN,
                                  DOCKER + "50-proxy.conf": "[Service]\nExecStart=\n"},
    "earlier-drop-in-only-clears": {DOCKER + "10-reset.conf": "[Service]\nExecStart=\n",
                                    DOCKER + "50-nvidia.conf": "[Service]\n" + RUN},
    "etc-hides-lib-of-the-same-name": {"lib/systemd/system/docker.service.d/nvidia.conf": "[Service]\nExecStart=\n",
                                       DOCKER + "nvidia.conf": "[Service]\nExecStart=\n" + RUN},
    "lib-drop-in-without-reset": {"lib/systemd/system/docker.service.d/nvidia.conf": "[Service]\n" + RUN},
    "continued-with-comment-lines": {DOCKER + "nvidia.conf": "[Service]\nExecStart=\nExecStart=/usr/bin/dockerd \\\n"
                                     "# the NVIDIA runtime\n  --add-runtime nvidia=/usr/bin/nvidia-container-runtime\n"},
    "drop-in-bad-header-after-clear": {DOCKER + "a.conf": "[Service]\nExecStart=\n[Service\n" + RUN},
    "drop-in-bad-header-first": {DOCKER + "a.conf": "[Service\nExecStart=\n"},
    "unit-bad-header": {"etc/systemd/system/docker.service": "[Unit]\nDescription=x\n[Service\n" + RUN},
    "unit-replaced-in-etc": {"etc/systemd/system/docker.service": "[Service]\nType=notify\n" + RUN},
    "containerd-added-without-reset": {"etc/systemd/system/containerd.service.d/gpu.conf":
                                       "[Service]\nExecStart=/usr/bin/containerd --config /etc/containerd/gpu.toml\n"},
}


# case -> why gpulint rightly reports an error where systemd still loads the unit
CLAIMS_BEYOND_THE_REFUSAL = {
    "drop-in-bad-header-first": "systemd loads the unit without what the drop-in holds past the header "
                                "(`Invalid section header`): GL001 says the settings are lost",
}


def _systemd_refuses(root, unit: str) -> bool:
    proc = subprocess.run([ANALYZE, "verify", f"--root={root}", unit], capture_output=True, text=True, timeout=60)
    said = proc.stdout + proc.stderr
    return "Refusing" in said or "failed to load properly" in said


@pytest.mark.parametrize("case", sorted(CASES))
def test_gpulint_refuses_a_unit_when_systemd_does(tmp_path, case):
    files = {f"lib/systemd/system/{name}": text for name, text in PACKAGED.items()}
    files.update(CASES[case])
    write_files(tmp_path, files)
    for program in ("dockerd", "containerd"):
        binary = tmp_path / "usr" / "bin" / program
        binary.parent.mkdir(parents=True, exist_ok=True)
        binary.write_text("#!/bin/sh\n")
        binary.chmod(0o755)
    refused = {unit for unit in PACKAGED if _systemd_refuses(tmp_path, unit)}
    run = run_gpulint("--isolated", "--format", "json", "--select", ",".join(UNIT_CODES), ".", cwd=tmp_path)
    errors = [f for f in run.findings if f["severity"] == "error"]
    flagged = {unit for unit in PACKAGED for f in errors if f"/{unit}" in "/" + f["path"]}
    if case in CLAIMS_BEYOND_THE_REFUSAL:
        assert refused == set() and [f["code"] for f in errors] == ["GL001"], (errors, refused)
    else:
        assert flagged == refused, (errors, refused)
