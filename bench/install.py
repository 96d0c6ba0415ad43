"""gpulint as its users run it: the wheel built from this checkout, installed into a virtual
environment of its own with its bytecode compiled, and called through the `gpulint` console
script. A run from the source tree (`python -m gpulint`) pays for runpy and, where bytecode is
not written (PYTHONDONTWRITEBYTECODE), for compiling every module on every start.

The environment is made once per harness run and kept for all its rows. Its dependencies
(PyYAML, tomlkit, jsonschema) are the ones the harness itself runs with: a `.pth` line puts the
harness's site-packages after the environment's own, so nothing is downloaded and gpulint is
the installed wheel, never the checkout.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _quiet(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")


def installed(work: Path) -> list[str]:
    """The command that runs the installed gpulint (its console script) in `work`/venv."""
    wheels, venv = work / "wheel", work / "venv"
    script = venv / ("Scripts/gpulint.exe" if sys.platform == "win32" else "bin/gpulint")
    if script.exists():
        return [str(script)]
    # hatchling is a test dependency: built here without fetching a build environment
    _quiet([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
            "--wheel-dir", str(wheels), str(ROOT)])
    _quiet([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    _quiet([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
            "--no-index", "--compile", *map(str, wheels.glob("gpulint-*.whl"))])
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib, "gpulint-bench-deps.pth").write_text("\n".join(sorted(deps)) + "\n", encoding="utf-8")
    # the dependencies' bytecode too, as a pip install leaves it (compileall writes it whatever
    # PYTHONDONTWRITEBYTECODE says)
    _quiet([str(python), "-m", "compileall", "-q", *sorted(deps)])
    check = subprocess.run([str(python), "-c", "import gpulint, sys; print(gpulint.__file__)"],
                           capture_output=True, text=True, check=True, cwd=venv).stdout.strip()
    if not check.startswith(purelib):
        raise SystemExit(f"the benchmark environment imports gpulint from {check}, not from its wheel")
    return [str(script)]
