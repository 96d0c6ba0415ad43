"""GL920: NVIDIA_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES values their readers cannot read,
in every kind that sets a container's environment, through the CLI."""

from __future__ import annotations

from conftest import lint_fixture


def _gl920(run):
    return [(f["path"].rsplit("/", 1)[-1], f["line"], f["column"], f["end_column"], f["severity"])
            for f in run.findings if f["code"] == "GL920"]


def test_each_unreadable_value_is_found_at_the_wrong_entry():
    run = lint_fixture("visible-devices/bad")
    assert sorted(_gl920(run)) == sorted([
        ("devcontainer.json", 4, 57, 59, "warning"),  # runArgs `-e CUDA_VISIBLE_DEVICES=0 1`
        ("devcontainer.json", 5, 47, 50, "error"),    # containerEnv GPU1
        ("Dockerfile", 2, 29, 31, "error"),      # "0 1": spaces, not commas
        ("Dockerfile", 2, 55, 57, "warning"),    # CUDA_VISIBLE_DEVICES=all
        ("compose.yaml", 6, 32, 36, "error"),    # the quotes of the list form stay in the value
        ("compose.yaml", 7, 30, 32, "warning"),  # CUDA_VISIBLE_DEVICES=0-3
        ("compose.yaml", 11, 31, 34, "error"),   # GPU0
        ("compose.yaml", 20, 34, 44, "error"),   # device_ids entry {GPU_ID:-1}, a variable without its $
        ("pod.yaml", 10, 19, 23, "error"),       # '"0,1"'
        ("run.sh", 2, 62, 64, "error"),          # 1-2 after a good 0
        ("run.sh", 2, 91, 95, "warning"),        # gpu:1
        ("run.sh", 3, 35, 38, "error"),          # --gpus '"device=0,GPU1"'
    ])


def test_messages_say_what_the_reader_does():
    messages = {f["line"]: f["message"] for f in lint_fixture("visible-devices/bad/compose.yaml").findings
                if f["code"] == "GL920"}
    assert "quotes are part of the value" in messages[6]
    assert "`0-3` is a range" in messages[7] and "`0,1,2,3`" in messages[7]
    assert "nvidia-container-cli: device error: GPU0: unknown device" in messages[11]
    assert "`device_ids` entry `{GPU_ID:-1}` (Docker hands the IDs to the NVIDIA runtime as " \
        "`NVIDIA_VISIBLE_DEVICES`): `{GPU_ID:-1}` is a variable reference without its `$`" in messages[20]


def test_values_the_readers_take_are_clean():
    # spaces after commas and a trailing comma (trimmed and skipped from toolkit v1.12), UUIDs,
    # MIG devices and indexes, PCI bus IDs, void, CUDA's -1 and NoDevFiles, values from variables
    run = lint_fixture("visible-devices/good")
    assert _gl920(run) == []
    assert not [f for f in run.findings if f["severity"] == "error"]
