"""The project read around the linted files: the one holding them, whether they are named
on the command line or sent on stdin under `--stdin-filename`."""

from __future__ import annotations

from conftest import run_gpulint, write_files

RUNTIME_CLASS = ("apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: {name}\n"
                 "handler: {handler}\n")
POD = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\nspec:\n  runtimeClassName: {name}\n"
       "  containers:\n    - name: c\n      image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n"
       "      resources:\n        limits:\n          nvidia.com/gpu: 1\n")
CONTAINERD = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n'
              '  default_runtime_name = "runc"\n'
              '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
              '  runtime_type = "io.containerd.runc.v2"\n'
              '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.{handler}]\n'
              '  runtime_type = "io.containerd.runc.v2"\n'
              '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.{handler}.options]\n'
              '    BinaryName = "/usr/bin/nvidia-container-runtime"\n')


def _repo(root, files, marker=".git"):
    write_files(root, files)
    if marker == ".git":
        (root / ".git").mkdir()
    else:
        (root / marker).write_text("")
    return root


def _found(run):
    return [(f["code"], f["severity"], f["path"], f["line"]) for f in run.findings]


# -- stdin ------------------------------------------------------------------------------

def test_a_pod_on_stdin_is_judged_with_the_runtime_classes_of_its_repository(tmp_path):
    repo = _repo(tmp_path, {"k8s/runtimeclass.yaml": RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"),
                            "k8s/pod.yaml": POD.format(name="nvidia-gpu")})
    buffer = POD.format(name="nvidia-gpux")  # the editor's unsaved text
    on_stdin = run_gpulint("--format", "json", "-", "--stdin-filename", "k8s/pod.yaml", cwd=repo, stdin=buffer)
    (repo / "k8s" / "pod.yaml").write_text(buffer)
    on_disk = run_gpulint("--format", "json", "k8s/pod.yaml", cwd=repo)
    assert _found(on_stdin) == _found(on_disk) == [("GL701", "warning", "k8s/pod.yaml", 6)]
    assert on_stdin.findings[0]["related"][0]["path"] == "k8s/runtimeclass.yaml"
    assert on_stdin.rc == on_disk.rc == 1
    # without the project around it, the class might come from anywhere: only a note
    alone = run_gpulint("--isolated", "--format", "json", "-", "--stdin-filename", "k8s/pod.yaml",
                        cwd=repo, stdin=buffer)
    assert _found(alone) == [("GL701", "info", "k8s/pod.yaml", 6)]


def test_stdin_stands_for_the_file_on_disk(tmp_path):
    """The file on disk is replaced by the text on stdin, not read beside it."""
    repo = _repo(tmp_path, {"k8s/runtimeclass.yaml": RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"),
                            "k8s/pod.yaml": POD.format(name="nvidia-gpux")})
    fixed = run_gpulint("--format", "json", "-", "--stdin-filename", "k8s/pod.yaml", cwd=repo,
                        stdin=POD.format(name="nvidia-gpu"))
    assert (fixed.rc, fixed.findings) == (0, [])
    assert fixed.json["summary"]["files_checked"] == 1
    # a RuntimeClass sent on stdin replaces the one on disk for the other files' checks too:
    # its handler is judged against the containerd config elsewhere in the repository
    write_files(repo, {"etc/containerd/config.toml": CONTAINERD.format(handler="nvidia")})
    renamed = run_gpulint("--format", "json", "-", "--stdin-filename", "k8s/runtimeclass.yaml", cwd=repo,
                          stdin=RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia-cdi"))
    assert _found(renamed) == [("GL702", "error", "k8s/runtimeclass.yaml", 5)]
    assert renamed.findings[0]["related"][0]["path"] == "etc/containerd/config.toml"


def test_stdin_from_a_subfolder_reads_the_whole_repository(tmp_path):
    repo = _repo(tmp_path, {"etc/containerd/config.toml": CONTAINERD.format(handler="nvidia"),
                            "deploy/k8s/pod.yaml": ""})
    run = run_gpulint("--format", "json", "-", "--stdin-filename", "rc.yaml", cwd=repo / "deploy" / "k8s",
                      stdin=RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia-cdi"))
    assert _found(run) == [("GL702", "error", "rc.yaml", 5)]
    assert run.findings[0]["related"][0]["path"] == "../../etc/containerd/config.toml"


def test_stdin_without_a_name_has_no_project(tmp_path):
    repo = _repo(tmp_path, {"k8s/runtimeclass.yaml": RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia")})
    run = run_gpulint("--format", "json", "--kind", "kubernetes", "-", cwd=repo, stdin=POD.format(name="x"))
    assert [f["severity"] for f in run.findings] == ["info"]


# -- the project of each linted path -----------------------------------------------------

def _two_repos(tmp_path, marker_b=".git"):
    """repo-a's nodes define the runtime `nvidia`; repo-b's define `nvidia-cdi`, the handler
    of repo-b's RuntimeClass."""
    a = _repo(tmp_path / "repo-a", {"etc/containerd/config.toml": CONTAINERD.format(handler="nvidia")})
    b = _repo(tmp_path / "repo-b", {
        "nodes/containerd/config.toml": CONTAINERD.format(handler="nvidia-cdi"),
        "k8s/runtimeclass.yaml": RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia-cdi")},
        marker=marker_b)
    return a, b


def test_a_file_of_another_repository_is_judged_with_that_repository(tmp_path):
    a, b = _two_repos(tmp_path)
    from_a = run_gpulint("--format", "json", "../repo-b/k8s/runtimeclass.yaml", cwd=a)
    from_b = run_gpulint("--format", "json", "k8s/runtimeclass.yaml", cwd=b)
    assert (from_a.rc, from_a.findings) == (from_b.rc, from_b.findings) == (0, [])
    # repo-b's handler changed: now its own nodes do not define it, wherever gpulint runs
    (b / "k8s" / "runtimeclass.yaml").write_text(RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"))
    from_a = run_gpulint("--format", "json", "../repo-b/k8s/runtimeclass.yaml", cwd=a)
    from_b = run_gpulint("--format", "json", "k8s/runtimeclass.yaml", cwd=b)
    assert _found(from_a) == [("GL702", "error", "../repo-b/k8s/runtimeclass.yaml", 5)]
    assert _found(from_b) == [("GL702", "error", "k8s/runtimeclass.yaml", 5)]
    assert from_a.findings[0]["related"][0]["path"] == "../repo-b/nodes/containerd/config.toml"


def test_a_gpulint_configuration_marks_a_project_too(tmp_path):
    a, b = _two_repos(tmp_path, marker_b=".gpulint.toml")
    run = run_gpulint("--format", "json", "../repo-b/k8s/runtimeclass.yaml", cwd=a)
    assert (run.rc, run.findings) == (0, [])
    # stdin named into the other repository reads that repository as well
    piped = run_gpulint("--format", "json", "-", "--stdin-filename", "../repo-b/k8s/runtimeclass.yaml", cwd=a,
                        stdin=RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"))
    assert _found(piped) == [("GL702", "error", "../repo-b/k8s/runtimeclass.yaml", 5)]


def test_the_configuration_is_the_one_of_the_linted_files(tmp_path):
    """`cd repo-a && gpulint ../repo-b/daemon.json` reads repo-b's configuration, as a run in
    repo-b does; a run in repo-a keeps repo-a's."""
    write_files(tmp_path, {"repo-a/.gpulint.toml": "\n", "repo-a/Dockerfile": "FROM ubuntu:22.04\n",
                           "repo-b/.gpulint.toml": 'ignore = ["GL201"]\n',
                           "repo-b/nodes/daemon.json": '{"default-runtime": "nvidia"}\n'})
    from_a = run_gpulint("--format", "json", "../repo-b/nodes/daemon.json", cwd=tmp_path / "repo-a")
    in_b = run_gpulint("--format", "json", "nodes/daemon.json", cwd=tmp_path / "repo-b")
    assert from_a.rc == in_b.rc == 0 and from_a.findings == in_b.findings == []
    assert run_gpulint("--format", "json", "--isolated", "../repo-b/nodes/daemon.json",
                       cwd=tmp_path / "repo-a").codes() == ["GL201"]
