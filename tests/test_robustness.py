"""Bad input never produces a traceback: whatever the bytes, gpulint exits 0 or 1
and reports what it could not parse as GL001 (or GL004 for templates)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_gpulint

NAMES = ("Dockerfile", "daemon.json", "config.toml", "pod.yaml", "values.yaml", "deploy.json",
         "config.toml.tmpl", "chart.yaml", "docker-compose.yml", "run.sh", "README.md", ".gitlab-ci.yml")

# Fragments of every format gpulint reads, so the generated text reaches deep into the
# parsers and checks instead of failing at the first byte.
FRAGMENTS = st.sampled_from([
    "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04 AS build\n", "ARG CUDA=12.8.1\n", "FROM ${CUDA}\n",
    "RUN nvcc -lcublas -o app app.cu\n", "COPY --from=build /app /app\n", "RUN <<EOF\n", "EOF\n",
    "ENV NVIDIA_VISIBLE_DEVICES=all\n", "RUN apt-get install -y cuda-12-4 nvidia-driver-550\n",
    "version = 2\n", "version = 3\n", '[plugins."io.containerd.grpc.v1.cri".containerd]\n',
    '  default_runtime_name = "nvidia"\n', '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia]\n',
    '  runtime_type = "io.containerd.runc.v1"\n', "  options = { BinaryName = 1 }\n",
    'imports = ["conf.d/*.toml"]\n', '{"runtimes": {"nvidia": {"path": null}}, ', '"default-runtime": 3}',
    "apiVersion: v1\nkind: Pod\n", "spec:\n  containers:\n", "    - name: a\n      image: nvidia/cuda\n",
    "      resources: {limits: {nvidia.com/gpu: 0.5}, requests: {nvidia.com/gpu: []}}\n",
    "---\n", "kind: List\nitems: 3\n", "runtimeClassName: {}\n", "nodeSelector: [1]\n",
    "driver: {version: 535}\noperator: {}\ntoolkit: {}\n", "{{ .Values.x }}\n", "{% if x %}\n",
    "services:\n  app:\n", "    image: ${IMG:-nvidia/cuda:11.0-base}\n", "x-gpu: &gpu\n", "    <<: *gpu\n",
    "    deploy: {resources: {limits: {devices: [{driver: nvidia, count: 1, capabilities: gpu}]}}}\n",
    "          devices:\n            - driver: nvida\n              device_ids: [0, 1]\n",
    "```bash\n", "```\n", "$ docker run --gpus device=0,1 -e NVIDIA_VISIBLE_DEVICES=all \\\n",
    "  nvidia/cuda:12.0-runtime nvidia-smi\n", "podman run --gpus all --privileged x\n", "script:\n  - ",
    "\t", " ", ":", "[", "]", "{", "}", "\"", "'", "#", "\\\n", "\r\n", "\x00", "\ufeff", "é",
])
TEXTS = st.lists(st.one_of(FRAGMENTS, st.text(max_size=20)), max_size=25).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(NAMES), text=TEXTS)
def test_any_text_is_linted_without_an_internal_error(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    result = run_gpulint("--isolated", "--preview", "--format", "json", "--failure-threshold", "none",
                         "--driver", "535.104.05", name, cwd=tmp_path)
    assert result.rc == 0, result.err
    assert "Traceback" not in result.err


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(NAMES), text=TEXTS)
def test_fixing_any_text_is_stable(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    first = run_gpulint("--isolated", "--preview", "--unsafe-fixes", "--failure-threshold", "none",
                        name, cwd=tmp_path)
    assert first.rc == 0, first.err
    fixed = path.read_bytes()
    second = run_gpulint("--isolated", "--preview", "--unsafe-fixes", "--failure-threshold", "none",
                         name, cwd=tmp_path)
    assert second.rc == 0, second.err
    assert path.read_bytes() == fixed  # a second --fix changes nothing
