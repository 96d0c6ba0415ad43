"""The real files of tests/corpus/files: each has one row in SOURCES.tsv naming the public
repository, commit and path it comes from under a permissive license, and gpulint reads
every one of them as a file of one of its kinds."""

from __future__ import annotations

import re

from conftest import ROOT, run_gpulint
from corpus_snapshot import PROJECT_CORPUS, sources

PERMISSIVE = {"Apache-2.0", "Apache-2.0 WITH LLVM-exception", "MIT", "BSD-2-Clause", "BSD-3-Clause", "ISC"}


def test_every_real_file_has_its_source_and_a_permissive_license():
    rows = sources()
    files = sorted(str(p.relative_to(PROJECT_CORPUS)) for p in PROJECT_CORPUS.rglob("*")
                   if p.is_file() and p.name != "SOURCES.tsv")
    assert sorted(r["file"] for r in rows) == files
    for row in rows:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", row["repo"]), row
        assert re.fullmatch(r"[0-9a-f]{40}", row["commit"]), row
        assert row["path"] and not row["path"].startswith("/"), row
        assert row["license"] in PERMISSIVE, row


def test_gpulint_reads_every_real_file_as_one_of_its_kinds():
    result = run_gpulint("--isolated", "--format", "json", "--failure-threshold", "none", str(PROJECT_CORPUS),
                         cwd=ROOT)
    assert result.rc == 0, result.err
    summary = result.json["summary"]
    # SOURCES.tsv is the one file no kind reads
    assert (summary["files_checked"], summary["files_skipped"], summary["files_not_checked"]) == \
        (len(sources()), 1, 0)
