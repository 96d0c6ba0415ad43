"""A manifest that defines a shared object (a RuntimeClass ...) is kept for other files'
checks, but only its shared objects: the pods and jobs beside them are let go at once and
read again for the file's own checks, whose findings must be those of the whole file."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, run_gpulint

from gpulint.model import Document
from gpulint.run import engine

FOLDER = FIXTURES / "crossfile" / "shared-narrowed"


@pytest.fixture(autouse=True)
def _narrowed(monkeypatch):
    # a run this small keeps whole trees; these cases are about what a large run keeps
    monkeypatch.setattr(engine, "NARROW_FROM_FILES", 0)


def _findings(*args: str) -> list[tuple[str, str, int, list]]:
    run = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none",
                      "--driver", "550.54.15", *args, str(FOLDER))
    assert run.rc == 0, run.err
    return [(f["code"], f["path"].rsplit("/", 1)[-1], f["line"], [(r["path"].rsplit("/", 1)[-1], r["line"])
                                                                   for r in f["related"]])
            for f in json.loads(run.out)["findings"]]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_pod_beside_a_runtimeclass_is_checked_whole(jobs):
    # a-plugin-config.yaml's MPS check reads every kept manifest's pods before the pod's
    # own turn: what it memoised from the kept part must not stand in for the whole file
    assert ("GL605", "b-runtimeclass-and-pod.yaml", 15, []) in _findings("--jobs", jobs)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_other_files_still_consult_the_kept_runtimeclass(jobs):
    assert ("GL701", "c-pod.yaml", 6, [("b-runtimeclass-and-pod.yaml", 4)]) in _findings("--jobs", jobs)


@pytest.mark.parametrize("folder", ["crossfile", "kept-objects"])
def test_a_small_run_keeps_whole_trees_and_says_what_a_large_one_says(monkeypatch, folder):
    # below NARROW_FROM_FILES (and in one process) every shared file is kept whole and parsed
    # once: the findings, their places and their related places are those of a run that
    # keeps only parts
    def report() -> str:
        run = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", "--preview",
                          "--driver", "550.54.15", "--jobs", "2", str(FIXTURES / folder))
        assert run.rc == 0, run.err
        return run.out

    narrowed = report()
    monkeypatch.setattr(engine, "NARROW_FROM_FILES", 10**9)
    assert report() == narrowed
    assert json.loads(narrowed)["findings"]


def test_a_large_run_holds_shared_texts_packed_and_says_what_a_small_one_says(monkeypatch, tmp_path):
    # each process of a large run holds the shared files' texts packed (and the line starts
    # their positions need); the fixes and related places made from them are those of a
    # run that holds them whole
    seen = tmp_path / "packed"
    real = Document.pack

    def pack(doc):
        with open(seen, "a", encoding="utf-8") as handle:  # from whichever process packs it
            handle.write(doc.path + "\n")
        real(doc)

    def report() -> str:
        run = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", "--preview",
                          "--driver", "550.54.15", "--jobs", "2", str(FIXTURES / "crossfile"))
        assert run.rc == 0, run.err
        return run.out

    monkeypatch.setattr(Document, "pack", pack)
    packed = report()
    assert len(set(seen.read_text(encoding="utf-8").split())) >= 5
    monkeypatch.setattr(engine, "NARROW_FROM_FILES", 10**9)
    assert report() == packed
    findings = json.loads(packed)["findings"]
    assert any(f["fix"] for f in findings) and any(f["related"] for f in findings)
