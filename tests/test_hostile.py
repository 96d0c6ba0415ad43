"""Hostile input through the CLI: each case is a file (or folder) built to hurt a parser or a
check, linted in one run with a good Dockerfile beside it, in a process of its own under a
time limit and an address-space limit. Whatever the input, gpulint exits 0 or 1, prints no
traceback, and still checks the good file."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

TIMEOUT = 10  # seconds for a run
MEMORY = 1024 ** 3  # bytes of address space
GOOD = "good/Dockerfile"
GOOD_TEXT = "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nRUN nvidia-smi\n"  # GL310
BIG = "9" * 5000  # past int()'s 4,300 digits

_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n"
_CRI = '[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "nvidia"\n'
_BAD_UTF8 = b"\xff\xfe\xfa invalid \xc3\x28 \xed\xa0\x80\n"


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _lint(folder: Path, *paths: str, extra: tuple[str, ...] = ()):
    proc = subprocess.run([sys.executable, "-m", "gpulint", "--isolated", "--format", "json", *extra,
                           *paths, GOOD], cwd=folder, capture_output=True, text=True, timeout=TIMEOUT,
                          preexec_fn=_limit_memory, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return proc


def _checked(folder: Path, *paths: str, extra: tuple[str, ...] = ()) -> list[dict]:
    """Lint, assert the run held up, and return the findings on the hostile paths."""
    proc = _lint(folder, *paths, extra=extra)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "internal error" not in proc.stderr, proc.stderr[-2000:]
    findings = json.loads(proc.stdout)["findings"]
    assert "GL310" in [f["code"] for f in findings if f["path"] == GOOD], "the good file was not checked"
    assert not [f for f in findings if f["code"] == "GL000"], findings
    return [f for f in findings if f["path"] != GOOD]


def _write(folder: Path, files: dict[str, bytes | str]) -> list[str]:
    (folder / "good").mkdir(exist_ok=True)
    (folder / GOOD).write_text(GOOD_TEXT)
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
    return list(files)


def _alias_bomb() -> str:
    lines = ['  a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        lines.append(f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n" + "\n".join(lines) + "\n"


def _arg_doubling() -> str:
    lines = ["ARG A0=x"] + [f"ARG A{i}=${{A{i - 1}}}${{A{i - 1}}}" for i in range(1, 10_000)]
    return "\n".join(lines) + "\nFROM nvidia/cuda:12.4.1-base-ubuntu22.04\nARG A9999\nENV LD_LIBRARY_PATH=$A9999\n"


def _big_toml() -> str:
    row = "k{} = \"" + "x" * 1000 + "\"\n"
    return "version = 2\n" + _CRI + "".join(row.format(i) for i in range(10_000))


DEPTH = 100_000
# case -> {file: content}; each is linted together with the good Dockerfile
CASES: dict[str, dict[str, bytes | str]] = {
    "yaml-alias-bomb": {"cm.yaml": _alias_bomb()},
    "compose-alias-bomb": {"compose.yaml": "x-a: &a [1,1,1,1,1,1,1,1,1,1]\n" + "".join(
        f"x-{i}: &x{i} [" + ",".join([f"*{'a' if i == 0 else f'x{i - 1}'}"] * 10) + "]\n" for i in range(9))
        + "services: {a: {image: nvidia/cuda:12.4.1-base, gpus: all}}\n"},
    "run-4mb-line": {"Dockerfile": "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nRUN " + "a1b2c3d4" * 500_000 + "\n"},
    "arg-doubling-10k": {"Dockerfile": _arg_doubling()},
    "yaml-blank-lines": {"pod.yaml": "\n" * 400_000 + _POD + "  containers: []\n"},
    "yaml-flow-nesting": {"pod.yaml": _POD + "  x: " + "[" * DEPTH + "]" * DEPTH + "\n"},
    "yaml-block-nesting": {"pod.yaml": _POD + "".join("  " * (i + 1) + "- \n" for i in range(2_000))},
    "json-nesting": {"daemon.json": "[" * DEPTH + "]" * DEPTH},
    "json-object-nesting": {"daemon.json": '{"a":' * DEPTH + "1" + "}" * DEPTH},
    "k8s-json-nesting": {"pod.json": '{"apiVersion": "v1", "kind": "Pod", "spec": ' + "[" * DEPTH + "]" * DEPTH + "}"},
    "toml-inline-array-nesting": {"config.toml": "version = 2\n" + _CRI + "a = " + "[" * DEPTH + "]" * DEPTH + "\n"},
    "toml-inline-table-nesting": {"config.toml": "version = 2\n" + _CRI + "a = " + "{b = " * DEPTH + "1" + "}" * DEPTH + "\n"},
    "toml-10mb": {"config.toml": _big_toml()},
    "dockerfile-unterminated-heredoc": {"Dockerfile": "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nRUN <<EOF\n"
                                        + "echo a\n" * 10_000},
    "dockerfile-unbalanced-quotes": {"Dockerfile": "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nRUN echo \"a 'b "
                                     + "x " * 100_000 + "\nENV A=\"b\n"},
    "template-unbalanced": {"templates/pod.yaml": _POD + "  containers:\n  - name: {{ .x\n    image: "
                            + "{{ a " * 20_000 + "\n"},
    "template-unclosed-if": {"templates/pod.yaml": "{{ if .x }}\n" * 5_000 + _POD + "  containers: []\n"},
    "containerd-template": {"config.toml.tmpl": "version = 2\n" + "{{ range .x }}" * 10_000 + "\n"},
    "shell-unbalanced": {"run.sh": "docker run --gpus all \"" + "a 'b " * 50_000 + "\n"},
    "markdown-unclosed-fence": {"README.md": "```bash\ndocker run --gpus all nvidia/cuda:12.0-base \\\n" * 5_000},
}

# a 5,000-digit number in each place a number is read
NUMBERS: dict[str, dict[str, str]] = {
    "cuda-tag-major": {"Dockerfile": f"FROM nvidia/cuda:{BIG}.0-base-ubuntu22.04\n"},
    "cuda-tag-minor": {"Dockerfile": f"FROM nvidia/cuda:12.{BIG}-base-ubuntu22.04\n"},
    "cudnn-tag": {"Dockerfile": f"FROM nvidia/cuda:12.4.1-cudnn{BIG}-devel-ubuntu22.04\n"},
    "os-version": {"Dockerfile": f"FROM ubuntu:{BIG}.04\nRUN apt-key adv --fetch-keys "
                   "https://developer.download.nvidia.com/compute/cuda/repos/x/3bf863cc.pub\n"},
    "pytorch-tag": {"Dockerfile": f"FROM pytorch/pytorch:2.1.0-cuda{BIG}.1-cudnn{BIG}-runtime\n"},
    "ngc-tag": {"Dockerfile": f"FROM nvcr.io/nvidia/pytorch:{BIG}.01-py3\n"},
    "cuda-env": {"Dockerfile": f"FROM ubuntu:22.04\nENV CUDA_VERSION={BIG}.0\nRUN nvcc x\n"},
    "require-cuda": {"Dockerfile": "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n"
                     f"ENV NVIDIA_REQUIRE_CUDA=\"cuda>={BIG}.0 brand=tesla,driver>={BIG},driver<{BIG}\"\n"},
    "apt-packages": {"Dockerfile": "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n"
                     f"RUN apt-get install -y cuda-{BIG}-4 cuda-toolkit-12-{BIG} nvidia-driver-{BIG} libcudnn{BIG}\n"},
    "pip-wheels": {"Dockerfile": "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nRUN pip install "
                   f"torch==2.1+cu{BIG} nvidia-cudnn-cu{BIG} cupy-cuda{BIG}x\n"},
    "stage-index": {"Dockerfile": f"FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nCOPY --from={BIG} /a /b\nFROM {BIG}\n"},
    "arch-list": {"Dockerfile": "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n"
                  f"ENV TORCH_CUDA_ARCH_LIST=\"{BIG}.0\"\nRUN nvcc -arch=sm_{BIG} x.cu\n"},
    "daemon-json": {"daemon.json": '{"mtu": ' + BIG + ', "shutdown-timeout": ' + BIG + '.5e' + BIG + "}"},
    "containerd-toml": {"config.toml": f"version = {BIG}\nx = {BIG}\ny = 1e{BIG}\n"},
    "toolkit-toml": {"config.toml": f"[nvidia-container-runtime]\nlog-level = {BIG}\nmode = \"cdi\"\n"},
    "k8s-quantities": {"pod.yaml": _POD + f"  containers:\n  - name: a\n    image: nvidia/cuda:{BIG}.0-base\n"
                       f"    resources:\n      limits: {{nvidia.com/gpu: {BIG}, memory: {BIG}Gi, cpu: {BIG}m}}\n"
                       f"      requests: {{nvidia.com/gpu: \"{BIG}k\"}}\n"},
    "k8s-float-quantity": {"pod.yaml": _POD + "  containers:\n  - name: a\n    image: nvidia/cuda:12.4.1-base\n"
                           f"    resources: {{limits: {{nvidia.com/gpu: {BIG}.5}}}}\n"},
    "k8s-node-labels": {"pod.yaml": _POD + f"  nodeSelector: {{nvidia.com/cuda.driver.major: \"{BIG}\", "
                        f"nvidia.com/cuda.runtime.major: \"{BIG}\", nvidia.com/cuda.runtime.minor: \"{BIG}\"}}\n"
                        "  containers:\n  - name: a\n    image: nvidia/cuda:12.4.1-base\n"
                        f"    env: [{{name: NVIDIA_VISIBLE_DEVICES, value: \"{BIG}\"}}]\n"
                        "    resources: {limits: {nvidia.com/gpu: 1}}\n"},
    "clusterpolicy": {"cp.yaml": f"apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {{name: x}}\n"
                      f"spec:\n  driver: {{enabled: true, version: \"{BIG}.{BIG}\"}}\n"
                      f"  toolkit: {{version: v{BIG}.0}}\n  operator: {{defaultRuntime: containerd}}\n"},
    "compose": {"compose.yaml": f"services:\n  a:\n    image: nvidia/cuda:{BIG}.0-base\n    gpus: {BIG}\n"
                f"  b:\n    image: x\n    deploy: {{resources: {{reservations: {{devices: [{{driver: nvidia, "
                f"count: {BIG}, device_ids: [\"{BIG}\"], capabilities: [gpu]}}]}}}}}}\n"},
    "shell": {"run.sh": f"docker run --gpus {BIG} nvidia/cuda:{BIG}.0-base nvidia-smi\n"
              f"docker run --gpus device={BIG} -e NVIDIA_VISIBLE_DEVICES={BIG} nvidia/cuda:12.{BIG}-base x\n"
              f"docker run --gpus count={BIG} nvidia/cuda:12.4.1-base-ubuntu{BIG}.04\n"},
    "markdown": {"README.md": f"```bash\ndocker run --gpus {BIG} nvidia/cuda:{BIG}.0-base-ubuntu22.04\n```\n"},
    "unit-continued-100k": {"docker.service": "[Service]\nExecStart=/usr/bin/dockerd \\\n"
                            + "  -D --add-runtime=x=/y --host \\\n" * 100_000 + "  -H fd://\n"},
    "unit-execstart-100k": {"docker.service.d/x.conf": "[Service]\n" + "ExecStart=/usr/bin/dockerd -D\n" * 100_000},
    "gitlab-ci": {".gitlab-ci.yml": f"job:\n  image: nvidia/cuda:{BIG}.0-base\n  script:\n"
                  f"    - docker run --gpus {BIG} nvidia/cuda:12.{BIG}-base\n"},
}

# every format, for bytes that are not UTF-8 text
FORMATS = {"Dockerfile": "FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nRUN nvidia-smi\n",
           "daemon.json": '{"default-runtime": "nvidia"}\n', "config.toml": "version = 2\n" + _CRI,
           "pod.yaml": _POD + "  containers: [{name: a, image: nvidia/cuda:12.4.1-base}]\n",
           "compose.yaml": "services: {a: {image: nvidia/cuda:12.4.1-base, gpus: all}}\n",
           "run.sh": "docker run --gpus all nvidia/cuda:12.4.1-base nvidia-smi\n",
           "README.md": "```bash\ndocker run --gpus all nvidia/cuda:12.4.1-base\n```\n",
           ".gitlab-ci.yml": "job:\n  script:\n    - docker run --gpus all x\n",
           "docker.service": "[Service]\nType=notify\nExecStart=/usr/bin/dockerd -H fd://\n"}
for _name, _text in FORMATS.items():
    _key = _name.lstrip(".").replace(".", "-")
    CASES[f"invalid-utf8-{_key}"] = {_name: _text.encode() + _BAD_UTF8}
    CASES[f"utf16-bom-{_key}"] = {_name: _text.encode("utf-16")}
    CASES[f"nul-bytes-{_key}"] = {_name: _text.encode().replace(b"\n", b"\x00\n", 1) + b"\x00" * 1000}


# What gpulint reports on each hostile file (each is named on the command line). No file of a
# kind gpulint reads passes silently: bytes that are not text are GL001 when the name, or the
# content read past its bad bytes, shows the kind (a pod.yaml, config.toml, run.sh, README.md,
# CI file alike); UTF-16 with a BOM is read, as kubectl and dockerd read it, and checked, with a
# GL001 where the kind's own reader refuses it (a Dockerfile, a TOML file). An empty list is a
# file checked without a finding.
RECORDED: dict[str, list[str]] = {
    'arg-doubling-10k': ['GL311'],
    'compose-alias-bomb': ['GL001'],
    'containerd-template': [],
    'dockerfile-unbalanced-quotes': [],
    'dockerfile-unterminated-heredoc': ['GL001'],
    'invalid-utf8-Dockerfile': ['GL001'],
    'invalid-utf8-README-md': ['GL001'],
    'invalid-utf8-compose-yaml': ['GL001'],
    'invalid-utf8-config-toml': ['GL001'],
    'invalid-utf8-daemon-json': ['GL001'],
    'invalid-utf8-gitlab-ci-yml': ['GL001'],
    'invalid-utf8-pod-yaml': ['GL001'],
    'invalid-utf8-run-sh': ['GL001'],
    'json-nesting': ['GL001'],
    'json-object-nesting': ['GL001'],
    'k8s-json-nesting': ['GL001'],
    'markdown-unclosed-fence': ['GL301'],
    'nul-bytes-Dockerfile': ['GL001'],  # its last line, NUL bytes, is an unknown instruction
    'nul-bytes-README-md': ['GL301'],
    'nul-bytes-compose-yaml': ['GL001'],
    'nul-bytes-config-toml': ['GL001'],
    'nul-bytes-daemon-json': ['GL001'],
    'nul-bytes-gitlab-ci-yml': ['GL001'],
    'nul-bytes-pod-yaml': ['GL001'],
    'nul-bytes-run-sh': ['GL301'],
    'run-4mb-line': [],
    'shell-unbalanced': [],
    'template-unbalanced': ['GL004'],
    'template-unclosed-if': [],
    'toml-10mb': ['GL101', 'GL120'],
    'toml-inline-array-nesting': ['GL001'],
    'toml-inline-table-nesting': ['GL001'],
    'utf16-bom-Dockerfile': ['GL001', 'GL310'],
    'utf16-bom-README-md': ['GL301'],
    'utf16-bom-compose-yaml': ['GL301', 'GL906'],
    'utf16-bom-config-toml': ['GL001', 'GL101'],
    'utf16-bom-daemon-json': ['GL201'],
    'utf16-bom-docker-service': ['GL001'],
    'invalid-utf8-docker-service': ['GL001'],
    'nul-bytes-docker-service': ['GL001'],
    'unit-continued-100k': [],
    'unit-execstart-100k': ['GL209'],
    'utf16-bom-gitlab-ci-yml': [],
    'utf16-bom-pod-yaml': [],
    'utf16-bom-run-sh': ['GL301'],
    'yaml-alias-bomb': ['GL001'],
    'yaml-blank-lines': [],
    'yaml-block-nesting': ['GL001'],
    'yaml-flow-nesting': ['GL001'],
}

@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_file(tmp_path, case):
    names = _write(tmp_path, CASES[case])
    found = _checked(tmp_path, *names, extra=("--max-file-size", str(64 * 1024 * 1024)))
    assert sorted({f["code"] for f in found}) == RECORDED[case]


@pytest.mark.parametrize("case", sorted(NUMBERS))
def test_five_thousand_digit_numbers(tmp_path, case):
    names = _write(tmp_path, NUMBERS[case])
    _checked(tmp_path, *names, extra=("--preview", "--driver", "535"))


def test_utf16_is_read_and_invalid_utf8_is_reported_as_not_utf8(tmp_path):
    names = _write(tmp_path, {"Dockerfile": FORMATS["Dockerfile"].encode("utf-16"),
                              "daemon.json": FORMATS["daemon.json"].encode() + _BAD_UTF8})
    found = _checked(tmp_path, *names)
    assert sorted((f["path"], f["code"]) for f in found) == [
        ("Dockerfile", "GL001"), ("Dockerfile", "GL310"), ("daemon.json", "GL001")]
    messages = {f["path"]: f["message"] for f in found if f["code"] == "GL001"}
    assert messages["Dockerfile"].startswith("the file is UTF-16 (with a byte order mark): `docker build`")
    assert messages["daemon.json"] == "the file is not UTF-8 text (byte 30), so it was not checked"


def test_a_50_mb_line_is_reported_as_not_checked(tmp_path):
    names = _write(tmp_path, {"Dockerfile": b"FROM ubuntu\nRUN " + b"a" * (50 * 1024 * 1024) + b"\n"})
    found = _checked(tmp_path, *names)
    assert [f["code"] for f in found] == ["GL006"]


def test_a_fifo_and_a_symlink_loop_in_a_folder(tmp_path):
    _write(tmp_path, {})
    (tmp_path / "walk").mkdir()
    os.mkfifo(tmp_path / "walk" / "Dockerfile")
    (tmp_path / "walk" / "loop").symlink_to("loop")
    (tmp_path / "walk" / "a").symlink_to("b")
    (tmp_path / "walk" / "b").symlink_to("a")
    found = _checked(tmp_path, "walk")
    assert [(f["path"], f["code"]) for f in found] == [("walk/Dockerfile", "GL006")]


def test_a_fifo_named_on_the_command_line(tmp_path):
    _write(tmp_path, {})
    os.mkfifo(tmp_path / "Dockerfile")
    found = _checked(tmp_path, "Dockerfile")
    assert [f["code"] for f in found] == ["GL006"]


def test_a_symlink_loop_named_on_the_command_line(tmp_path):
    _write(tmp_path, {})
    (tmp_path / "loop").symlink_to("loop")
    found = _checked(tmp_path, "loop")
    assert [(f["code"], f["severity"], f["message"]) for f in found] == [
        ("GL006", "error", "file not checked: it is a symbolic link that loops")]


@pytest.mark.parametrize("args", [
    ["image", f"nvidia/cuda:{BIG}.0-base-ubuntu22.04"], ["image", f"nvidia/cuda:12.{BIG}-base-ubuntu22.04"],
    ["image", f"pytorch/pytorch:2.1.0-cuda{BIG}.1-cudnn8-runtime"],
    ["image", "nvidia/cuda:12.4.1-base-ubuntu22.04", "--driver", BIG],
    ["driver", BIG], ["driver", f"{BIG}.{BIG}"], ["cuda", f"{BIG}.0"], ["cuda", f"12.{BIG}"],
    ["--driver", BIG, "good"], ["--driver", f"535.{BIG}", "good"],
], ids=lambda args: "-".join(a if len(a) < 20 else a[:12] + "..." for a in args))
def test_five_thousand_digit_numbers_on_the_command_line(tmp_path, args):
    _write(tmp_path, {})
    proc = subprocess.run([sys.executable, "-m", "gpulint", "--isolated", *args] if args[0] == "--driver"
                          else [sys.executable, "-m", "gpulint", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=TIMEOUT, preexec_fn=_limit_memory,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode in (0, 1, 2), proc.stderr[-2000:]  # 2: a usage error, said plainly
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
