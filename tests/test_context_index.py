"""The project's context kept between runs in the cache folder (`gpulint.run.index`): a
pre-commit call on one changed file reads the unchanged files around it from the index, and
judges it exactly as a run that reads them all afresh."""

from __future__ import annotations

import os
import time

from conftest import run_gpulint
from test_project_context import CONTAINERD, POD, RUNTIME_CLASS, _found, _repo


def _age(path, seconds):
    """Set the file's modification time `seconds` back: a file written just now is not trusted
    to the index (it may change again within the same tick of the clock)."""
    then = time.time_ns() - seconds * 1_000_000_000
    os.utime(path, ns=(then, then))


def _project(tmp_path):
    repo = _repo(tmp_path / "repo", {
        "k8s/runtimeclass.yaml": RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"),
        "k8s/pod.yaml": POD.format(name="nvidia-gpu"),
        "nodes/containerd/config.toml": CONTAINERD.format(handler="nvidia"),
        "images/Dockerfile": "FROM ubuntu:22.04\nRUN apt-get update\n",
        "notes.md": "# not read for context\n",
    })
    for path in [*repo.rglob("*"), repo]:  # folders too: a folder listed just now is listed again
        _age(path, 60)
    return repo


def _lint(repo, cache, *extra, path="k8s/pod.yaml"):
    return run_gpulint("--format", "json", "--cache-dir", str(cache), *extra, path, cwd=repo)


def _indexes(cache):
    return sorted(cache.glob("index-*"))


def _header(index):
    """What the index file lists (`stored.read_index`)."""
    from gpulint.stored import read_index

    header, documents = read_index(index)
    if documents is not None:
        documents.close()
    return header


def test_a_warm_index_gives_what_reading_every_file_gives(tmp_path):
    repo, cache = _project(tmp_path), tmp_path / "cache"
    afresh = _lint(repo, cache, "--no-cache")
    assert not _indexes(cache)  # --no-cache writes none
    cold = _lint(repo, cache)
    assert len(_indexes(cache)) == 1
    warm = _lint(repo, cache)
    assert afresh.out == cold.out == warm.out
    assert afresh.rc == cold.rc == warm.rc
    assert warm.err == ""


def test_a_changed_runtime_class_changes_the_finding_on_the_next_run(tmp_path):
    repo, cache = _project(tmp_path), tmp_path / "cache"
    assert _found(_lint(repo, cache)) == []
    # the class is renamed: the pod names a class the repository no longer defines
    runtime_class = repo / "k8s" / "runtimeclass.yaml"
    runtime_class.write_text(RUNTIME_CLASS.format(name="nvidia-gpu-2", handler="nvidia"))
    _age(runtime_class, 30)
    changed = _lint(repo, cache)
    assert changed.out == _lint(repo, cache, "--no-cache").out
    assert _found(changed) == [("GL701", "warning", "k8s/pod.yaml", 6)]
    runtime_class.write_text(RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"))
    _age(runtime_class, 20)
    assert _found(_lint(repo, cache)) == []


def test_a_changed_node_config_is_read_again_even_at_the_same_size(tmp_path):
    repo, cache = _project(tmp_path), tmp_path / "cache"
    runtime_class = repo / "k8s" / "runtimeclass.yaml"
    runtime_class.write_text(RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidiy"))
    _age(runtime_class, 30)
    # the class names a handler no node config defines
    assert _found(_lint(repo, cache, path="k8s/runtimeclass.yaml")) == [
        ("GL702", "error", "k8s/runtimeclass.yaml", 5)]
    config = repo / "nodes" / "containerd" / "config.toml"
    before = config.stat()
    config.write_text(CONTAINERD.format(handler="nvidiy"))  # same size: the time tells
    os.utime(config, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert config.stat().st_size == before.st_size
    assert _found(_lint(repo, cache, path="k8s/runtimeclass.yaml")) == []


def test_a_new_and_a_removed_shared_file_are_seen(tmp_path):
    repo, cache = _project(tmp_path), tmp_path / "cache"
    (repo / "k8s" / "runtimeclass.yaml").unlink()
    gone = _lint(repo, cache)
    assert gone.out == _lint(repo, cache, "--no-cache").out
    (repo / "k8s" / "classes").mkdir()
    (repo / "k8s" / "classes" / "gpu.yaml").write_text(RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"))
    _age(repo / "k8s" / "classes" / "gpu.yaml", 30)
    back = _lint(repo, cache)
    assert back.out == _lint(repo, cache, "--no-cache").out
    assert back.out != gone.out


def test_a_file_whose_size_and_time_are_unchanged_comes_from_the_index(tmp_path):
    """What shows that the index is read: a class renamed behind gpulint's back (same size,
    time put back) is still seen under its old name, until the file is written again."""
    repo, cache = _project(tmp_path), tmp_path / "cache"
    assert _found(_lint(repo, cache)) == []
    runtime_class = repo / "k8s" / "runtimeclass.yaml"
    before = runtime_class.stat()
    runtime_class.write_text(RUNTIME_CLASS.format(name="nvidia-gpx", handler="nvidia"))
    os.utime(runtime_class, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _found(_lint(repo, cache)) == []
    assert _found(_lint(repo, cache, "--no-cache")) == [("GL701", "warning", "k8s/pod.yaml", 6)]


def test_a_file_written_just_now_is_read_again_on_the_next_run(tmp_path):
    repo, cache = _project(tmp_path), tmp_path / "cache"
    runtime_class = repo / "k8s" / "runtimeclass.yaml"
    runtime_class.write_text(RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"))  # now
    assert _found(_lint(repo, cache)) == []
    before = runtime_class.stat()  # written again within the same tick: same size and time
    runtime_class.write_text(RUNTIME_CLASS.format(name="nvidia-gpx", handler="nvidia"))
    os.utime(runtime_class, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _found(_lint(repo, cache)) == [("GL701", "warning", "k8s/pod.yaml", 6)]


def test_a_corrupt_or_foreign_index_is_rebuilt_silently(tmp_path):
    repo, cache = _project(tmp_path), tmp_path / "cache"
    expected = _lint(repo, cache)
    (index,) = _indexes(cache)
    index.write_bytes(b"gpulint-index\x01\xff\xff not an index")
    torn = _lint(repo, cache)
    assert (torn.out, torn.err, torn.rc) == (expected.out, "", expected.rc)
    # one another gpulint wrote under the same name: its entries are not trusted
    from gpulint.stored import write_index

    write_index(index, lambda places: ("walk", "another gpulint", {str(repo / "k8s" / "runtimeclass.yaml"): (0, 0, None)},
                                       {}), [])
    foreign = _lint(repo, cache)
    assert (foreign.out, foreign.err) == (expected.out, "")
    assert _header(index)[1] != "another gpulint"
    assert not list(cache.glob("*.tmp"))


def test_the_index_serves_a_run_from_another_folder(tmp_path):
    """Paths in findings are shown from where gpulint runs, not where the index was made."""
    repo, cache = _project(tmp_path), tmp_path / "cache"
    (repo / "k8s" / "runtimeclass.yaml").write_text(RUNTIME_CLASS.format(name="nvidia-gpu-2", handler="nvidia"))
    _age(repo / "k8s" / "runtimeclass.yaml", 30)
    assert _found(_lint(repo, cache)) != []
    inside = run_gpulint("--format", "json", "--cache-dir", str(cache), "pod.yaml", cwd=repo / "k8s")
    afresh = run_gpulint("--format", "json", "--no-cache", "pod.yaml", cwd=repo / "k8s")
    assert inside.out == afresh.out


def test_runs_at_the_same_time_leave_an_index_that_reads(tmp_path):
    import subprocess
    import sys

    repo, cache = _project(tmp_path), tmp_path / "cache"
    expected = _lint(repo, cache, "--no-cache").out
    command = [sys.executable, "-m", "gpulint", "--format", "json", "--cache-dir", str(cache), "k8s/pod.yaml"]
    for _ in range(2):
        runs = [subprocess.Popen(command, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(3)]
        outputs = [run.communicate() for run in runs]
        assert all(out == expected and err == "" for out, err in outputs)
    (index,) = _indexes(cache)
    assert isinstance(_header(index), tuple)
    assert not list(cache.glob("*.tmp"))
    assert _lint(repo, cache).out == expected


def test_classes_in_excluded_and_git_ignored_folders_are_not_consulted(tmp_path):
    repo, cache = _project(tmp_path), tmp_path / "cache"
    (repo / "k8s" / "runtimeclass.yaml").unlink()
    for folder in ("node_modules/chart", "generated", "vendor/dropped", "vendor/kept"):
        (repo / folder).mkdir(parents=True)
        (repo / folder / "class.yaml").write_text(RUNTIME_CLASS.format(name="nvidia-gpu", handler="nvidia"))
        _age(repo / folder / "class.yaml", 30)
    (repo / ".gitignore").write_text("generated/\n")
    (repo / "vendor" / ".gitignore").write_text("drop*/\n")
    # only vendor/kept/class.yaml defines the class
    assert _found(_lint(repo, cache)) == []
    (repo / "vendor" / "kept" / "class.yaml").unlink()
    warm = _lint(repo, cache)
    assert warm.out == _lint(repo, cache, "--no-cache").out
    assert _found(warm) == [("GL701", "info", "k8s/pod.yaml", 6)]


def test_a_changed_dockerfile_leaves_the_index_as_it_was(tmp_path):
    """A Dockerfile no image mapping names is consulted by no other file's checks: the
    index neither stats it nor is written again when it changes."""
    repo, cache = _project(tmp_path), tmp_path / "cache"
    dockerfile = repo / "images" / "Dockerfile"
    first = _lint(repo, cache, path="images/Dockerfile")
    (index,) = _indexes(cache)
    written = index.stat().st_mtime_ns
    dockerfile.write_text("FROM ubuntu:24.04\nRUN apt-get update\n")
    again = _lint(repo, cache, path="images/Dockerfile")
    assert index.stat().st_mtime_ns == written
    assert again.out == _lint(repo, cache, "--no-cache", path="images/Dockerfile").out
    assert str(dockerfile) not in _header(index)[2]
    assert first.rc == again.rc


def test_an_edited_gitignore_is_seen_by_the_next_warm_run(tmp_path):
    """Folders whose listing did not change are not listed again; an ignore file that
    changed decides anew for all of them."""
    repo, cache = _project(tmp_path), tmp_path / "cache"
    gitignore = repo / "k8s" / ".gitignore"
    gitignore.write_text("# nothing\n")
    for path in (gitignore, repo / "k8s"):
        _age(path, 60)
    assert _found(_lint(repo, cache)) == []
    assert _found(_lint(repo, cache)) == []
    gitignore.write_text("runtime*\n")  # in place: the folder's own time stays
    _age(gitignore, 30)
    warm = _lint(repo, cache)
    assert _found(warm) == [("GL701", "info", "k8s/pod.yaml", 6)]
    assert warm.out == _lint(repo, cache, "--no-cache").out


def test_an_index_cut_short_is_rebuilt_silently(tmp_path):
    """The parsed documents follow the listing in the index file: one that lost its end (a
    full disk, a copy stopped half way) is not read from."""
    repo, cache = _project(tmp_path), tmp_path / "cache"
    expected = _lint(repo, cache)
    (index,) = _indexes(cache)
    data = index.read_bytes()
    index.write_bytes(data[:-100])
    cut = _lint(repo, cache)
    assert (cut.out, cut.err, cut.rc) == (expected.out, "", expected.rc)
    assert index.read_bytes() == data  # written again whole
    # an append stopped half way: its end is no listing
    index.write_bytes(data + b"\x80\x04 an append stopped half way")
    torn = _lint(repo, cache)
    assert (torn.out, torn.err, torn.rc) == (expected.out, "", expected.rc)
    assert index.read_bytes() == data


def test_workers_read_the_index_side_by_side(tmp_path):
    """Worker processes forked from one run share the index file's handle: each reads the
    documents it consults at their own offsets, never garbled by another worker's reads."""
    import subprocess
    import sys

    files = {f"k8s/c{i}/runtimeclass.yaml": RUNTIME_CLASS.format(name=f"gpu-{i}", handler=f"h{i}")
             for i in range(150)}
    files.update({f"nodes/n{i}/config.toml": CONTAINERD.format(handler=f"h{i}") for i in range(50)})
    files.update({f"pods/p{i}/pod.yaml": POD.format(name=f"gpu-{i * 7}") for i in range(12)})
    repo = _repo(tmp_path / "repo", files)
    for path in [*repo.rglob("*"), repo]:
        _age(path, 60)
    cache = tmp_path / "cache"
    pods = [f"pods/p{i}/pod.yaml" for i in range(12)]
    afresh = _lint(repo, cache, "--no-cache", path=pods[0])
    assert _lint(repo, cache, path=pods[0]).out == afresh.out  # the index is made
    command = [sys.executable, "-m", "gpulint", "--format", "json", "--cache-dir", str(cache), "--jobs", "4"]
    expected = subprocess.run([*command, "--no-cache", *pods], cwd=repo, capture_output=True, text=True)
    assert expected.returncode == 0 and expected.stderr == ""
    for _ in range(3):
        warm = subprocess.run([*command, *pods], cwd=repo, capture_output=True, text=True)
        assert (warm.returncode, warm.stderr) == (0, "")
        assert warm.stdout == expected.stdout


def test_parallel_workers_read_the_index_each_at_its_own_position(tmp_path):
    """Workers forked from one process share its open index file: each must read a document
    at its own offset, never at a position another worker's read has just moved."""
    files = {f"nodes/n{i}/etc/docker/daemon.json":
             '{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}, "log-opts": {"max-size": "%dm"}}\n' % i
             for i in range(60)}
    files.update({f"apps/a{i}/compose.yaml":
                  "services:\n  app:\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    runtime: nvidia\n"
                  for i in range(400)})
    repo = _repo(tmp_path / "repo", files)
    for path in [*repo.rglob("*"), repo]:
        _age(path, 60)
    cache = tmp_path / "cache"
    first = run_gpulint("--format", "json", "--cache-dir", str(cache), "--jobs", "4", "apps", cwd=repo)
    assert first.rc == 0, first.err
    for _ in range(2):  # documents now come from the index, read by four processes at once
        again = run_gpulint("--format", "json", "--cache-dir", str(cache), "--jobs", "4", "apps", cwd=repo)
        assert (again.rc, again.err) == (0, "")


def test_changed_documents_are_appended_and_the_dead_ones_dropped_in_time(tmp_path, monkeypatch):
    """A run that reads a few files again appends their documents and a new listing to the
    index instead of writing it whole; once the documents no listing names outweigh the
    live ones, the index is written whole without them."""
    import gpulint.stored

    monkeypatch.setattr(gpulint.stored, "SLACK", 0)
    repo, cache = _project(tmp_path), tmp_path / "cache"
    _lint(repo, cache)
    (index,) = _indexes(cache)
    first = index.read_bytes()
    sizes = [len(first)]
    runtime_class = repo / "k8s" / "runtimeclass.yaml"
    for turn in range(8):
        renamed = turn % 2 == 0
        runtime_class.write_text(RUNTIME_CLASS.format(name="nvidia-gpu-2" if renamed else "nvidia-gpu",
                                                      handler="nvidia"))
        _age(runtime_class, 50 - turn)
        warm = _lint(repo, cache)
        assert warm.out == _lint(repo, cache, "--no-cache").out
        assert _found(warm) == ([("GL701", "warning", "k8s/pod.yaml", 6)] if renamed else [])
        sizes.append(index.stat().st_size)
        if turn == 0:
            assert index.read_bytes().startswith(first) and sizes[1] > sizes[0]  # appended to
    assert any(later < earlier for earlier, later in zip(sizes, sizes[1:]))  # written whole again
    assert max(sizes) <= 3 * sizes[0]
