"""`gpulint completion SHELL` run by the real shells, and folders named like commands."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, run_gpulint, write_files

BAD_DOCKERFILE = "FROM x\nRUNN y\n"


def _script(shell: str, tmp_path) -> str:
    run = run_gpulint("completion", shell)
    assert run.rc == 0 and run.err == ""
    path = tmp_path / f"gpulint.{shell}"
    path.write_text(run.out)
    return str(path)


def _shell(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed")
    return found


def test_bash_completes_options_values_and_commands(tmp_path):
    script = _script("bash", tmp_path)

    def complete(*words: str) -> list[str]:
        cmd = (f"source {script}; COMP_WORDS=(gpulint {' '.join(words)}); "
               f"COMP_CWORD={len(words)}; _gpulint; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
        out = subprocess.run([_shell("bash"), "-c", cmd], capture_output=True, text=True, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        return out.stdout.split()

    assert complete("--format", "j") == ["json", "json-lines", "junit"]
    assert complete("--show-") == ["--show-suppressed", "--show-fixes"]
    assert complete("--select", "GL10") == [f"GL10{i}" for i in range(1, 10)]
    assert "completion" in complete("comp")


def test_fish_completes_from_the_script(tmp_path):
    fish = _shell("fish")
    script = _script("fish", tmp_path)
    out = subprocess.run([fish, "-c", f"source {script}; complete -C 'gpulint --color '"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert [line.split("\t")[0] for line in out.stdout.splitlines()] == ["always", "auto", "never"]


def test_zsh_reads_the_script(tmp_path):
    zsh = _shell("zsh")
    script = _script("zsh", tmp_path)
    out = subprocess.run([zsh, "-n", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert open(script).read().startswith("#compdef gpulint\n")


def test_unknown_shell_is_a_usage_error():
    assert run_gpulint("completion", "powershell").rc == 2


@pytest.mark.parametrize("name", ["cuda", "driver", "image", "rule", "rules", "doctor", "completion"])
def test_folders_named_like_commands_are_linted_with_check(tmp_path, name):
    write_files(tmp_path, {f"{name}/Dockerfile": BAD_DOCKERFILE})
    for args in (["check", name], [f"./{name}"], ["check"]):
        run = run_gpulint("--isolated", "--format", "json", *args, cwd=tmp_path) if args[0] != "check" \
            else run_gpulint(args[0], "--isolated", "--format", "json", *args[1:], cwd=tmp_path)
        assert [f["path"] for f in run.findings] == [f"{name}/Dockerfile"], args
    bare = run_gpulint(name, cwd=tmp_path)
    assert f"to lint the path {name}, run `gpulint check {name}` or `gpulint ./{name}`" in bare.err


def test_the_console_script_runs_check(tmp_path):
    write_files(tmp_path, {"rules/Dockerfile": BAD_DOCKERFILE})
    out = subprocess.run([sys.executable, "-m", "gpulint", "check", "--isolated", "rules"],
                         capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 1 and "rules/Dockerfile:2:1: GL001" in out.stdout
