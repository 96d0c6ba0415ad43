"""What users of other linters expect: selectors that cannot silently switch rules
off, suppressed findings left out, output files, fixes, and the TOML parser."""

from __future__ import annotations

import pytest

from conftest import run_gpulint, write_files

BAD_DOCKERFILE = "FROM x\nRUNN y\n"


# -- selectors ------------------------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (("--select", "GL999"), "--select: `GL999` names no gpulint rule; did you mean `GL509`?"),
    (("--extend-select", "GL1O5"), "--extend-select: `GL1O5` names no gpulint rule; did you mean `GL105`?"),
    (("--ignore", "GL001,privilegd-gpu"),
     "--ignore: `privilegd-gpu` names no gpulint rule; did you mean `privileged-gpu`?"),
])
def test_unknown_selector_on_the_command_line_is_a_usage_error(tmp_path, args, words):
    write_files(tmp_path, {"Dockerfile": BAD_DOCKERFILE})
    run = run_gpulint(*args, ".", cwd=tmp_path)
    assert run.rc == 2 and run.out == ""
    assert words in run.err


@pytest.mark.parametrize("config, where", [
    ('select = ["GL1", "GL9"]\n', ".gpulint.toml:1:18: select: `GL9`"),
    ('extend-select = ["privileged-gpus"]\n', ".gpulint.toml:1:18: extend-select: `privileged-gpus`"),
    ('[per-file-ignores]\n"k8s/*.yaml" = ["GL5O5"]\n', '.gpulint.toml:2:17: per-file-ignores."k8s/*.yaml": `GL5O5`'),
    ('[severity]\nGL1O5 = "error"\n', ".gpulint.toml:2:1: severity: `GL1O5`"),
])
def test_unknown_selector_in_the_config_is_a_config_error(tmp_path, config, where):
    write_files(tmp_path, {".gpulint.toml": config, "Dockerfile": BAD_DOCKERFILE})
    run = run_gpulint(".", cwd=tmp_path)
    assert run.rc == 2 and run.out == ""
    assert where in run.err and "did you mean" in run.err


def test_severity_keys_are_selectors_and_the_most_specific_wins(tmp_path):
    write_files(tmp_path, {".gpulint.toml": '[severity]\nGL0 = "info"\n', "Dockerfile": BAD_DOCKERFILE})
    run = run_gpulint("--format", "json", ".", cwd=tmp_path)
    assert [(f["code"], f["severity"]) for f in run.findings] == [("GL001", "info")] and run.rc == 0
    write_files(tmp_path, {".gpulint.toml": '[severity]\nGL001 = "warning"\nALL = "info"\n'})
    run = run_gpulint("--format", "json", ".", cwd=tmp_path)
    assert [(f["code"], f["severity"]) for f in run.findings] == [("GL001", "warning")]
