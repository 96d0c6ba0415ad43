"""dockerd's command line against daemon.json, judged by the real dockerd: each case is a
unit's dockerd command and the node's daemon.json; `dockerd --validate --config-file FILE
FLAGS...` (23.0 and later: it reads both and exits without starting) refuses the pair
exactly when gpulint reports an error for it (GL201, GL208, GL210). Runs with the releases
tools/setup.sh --releases installs (dockerd 26.1 and 28.x) when GPULINT_ORACLE or CI is
set; skipped otherwise."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

HOME = Path(os.environ.get("GPULINT_ORACLE_HOME")
            or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpulint-oracle")
RELEASES = {"26.1": "dockerd-26.1.5", "28.5": "dockerd-28.5.2"}
NVIDIA = '{"path": "/usr/bin/nvidia-container-runtime"}'

# case -> (the flags after /usr/bin/dockerd, daemon.json)
CASES = {
    "h-fd-beside-hosts": ("-H fd://", '{"hosts": ["unix:///var/run/docker.sock"]}'),
    "h-fd-alone": ("-H fd://", '{"debug": true}'),
    "debug-shorthand-beside-debug": ("-D", '{"debug": false}'),
    "add-runtime-beside-runtimes": ("--add-runtime nvidia=/usr/bin/nvidia-container-runtime",
                                    '{"runtimes": {"nvidia": ' + NVIDIA + "}}"),
    "default-runtime-beside-default-runtime": ("--default-runtime nvidia",
                                               '{"default-runtime": "nvidia", "runtimes": {"nvidia": ' + NVIDIA + "}}"),
    "default-runtime-from-the-file": ("--default-runtime nvidia", '{"runtimes": {"nvidia": ' + NVIDIA + "}}"),
    "default-runtime-from-a-flag": ("--default-runtime=nvidia --add-runtime=NVIDIA=/usr/bin/nvidia-container-runtime",
                                    '{"debug": true}'),
    "default-runtime-undefined": ("--default-runtime nvidia --add-runtime kata=/usr/bin/kata-runtime",
                                  '{"runtimes": {"crun": {"path": "/usr/bin/crun"}}}'),
    "exec-opt-beside-exec-opts": ("--exec-opt native.cgroupdriver=systemd", '{"exec-opts": ["native.cgroupdriver=systemd"]}'),
    "log-opt-beside-log-driver": ("--log-opt max-size=10m", '{"log-driver": "json-file"}'),
    "http-proxy-beside-proxies": ("--http-proxy http://p:3128", '{"proxies": {"http-proxy": "http://p:3128"}}'),
    "containerd-beside-containerd": ("--containerd=/run/containerd/containerd.sock",
                                     '{"containerd": "/run/containerd/containerd.sock"}'),
    "host-gateway-ip-beside-its-old-key": ("--host-gateway-ip 10.0.0.2", '{"host-gateway-ip": "10.0.0.1"}'),
    "unknown-flag": ("--add-runtimes nvidia=/usr/bin/nvidia-container-runtime", "{}"),
    "add-runtime-twice": ("--add-runtime nvidia=/a --add-runtime NVIDIA=/b", "{}"),
    "add-runtime-runc": ("--add-runtime runc=/usr/bin/runc", "{}"),
    "add-runtime-without-path": ("--add-runtime nvidia", "{}"),
    "value-missing": ("--debug --default-runtime", "{}"),
    "shorthands-in-one-word": ("-Dl debug", "{}"),
}


# case -> why gpulint's error is one `--validate` cannot show (the daemon's start does)
BEYOND_VALIDATE = {
    "default-runtime-undefined": "dockerd checks the default runtime when the daemon starts (daemon/runtime_unix.go "
                                 "setupRuntimes: `specified default runtime 'nvidia' does not exist`), after "
                                 "--validate has exited; a daemon.json naming an undefined default passes "
                                 "--validate the same way",
}


def _skip_reason() -> str | None:
    if not (os.environ.get("CI") or os.environ.get("GPULINT_ORACLE")):
        return "set GPULINT_ORACLE=1 (or CI) to run the real daemons"
    if not any((HOME / "releases" / d / "usr/sbin/dockerd").is_file() for d in RELEASES.values()):
        return f"no dockerd with --validate in {HOME}/releases: run tests/oracle/tools/setup.sh --releases trixie,sid"
    return None


def _dockerd_refuses(binary: Path, flags: str, config: Path) -> bool:
    proc = subprocess.run([str(binary), "--validate", "--config-file", str(config), *shlex.split(flags)],
                          capture_output=True, text=True, timeout=60)
    return proc.returncode != 0


@pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))
@pytest.mark.parametrize("release", sorted(RELEASES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_gpulint_refuses_dockerds_command_line_when_dockerd_does(tmp_path, case, release):
    binary = HOME / "releases" / RELEASES[release] / "usr/sbin/dockerd"
    if not binary.is_file():
        pytest.skip(f"{binary} is not installed")
    flags, daemon_json = CASES[case]
    config = tmp_path / "etc/docker/daemon.json"
    config.parent.mkdir(parents=True)
    config.write_text(daemon_json + "\n")
    unit = tmp_path / "lib/systemd/system/docker.service"
    unit.parent.mkdir(parents=True)
    unit.write_text(f"[Service]\nType=notify\nExecStart=/usr/bin/dockerd {flags}\n")
    (tmp_path / ".gpulint.toml").write_text(f'[fleet]\ndocker-version = "{release}"\n')
    proc = subprocess.run([sys.executable, "-m", "gpulint", "--format", "json", "--select", "GL201,GL208,GL210", "."],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    errors = [f for f in json.loads(proc.stdout)["findings"] if f["severity"] == "error"]
    refused = _dockerd_refuses(binary, flags, config)
    if case in BEYOND_VALIDATE:
        assert [f["code"] for f in errors] == ["GL201"] and not refused, errors
    else:
        assert bool(errors) == refused, errors
