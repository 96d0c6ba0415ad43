"""gpulint over the public corpus of real files: it finishes (exit 0 or 1, never 2,
never a traceback) and its SARIF validates against the official schema."""

from __future__ import annotations

import pytest

from conftest import ROOT, SHARED, run_gpulint, validated_sarif

CORPUS = SHARED / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside the checkout")


@pytest.mark.parametrize("extra", [(), ("--preview", "--driver", "535.104.05")])
def test_corpus_run_finishes_cleanly(extra):
    result = run_gpulint("--isolated", "--format", "json", *extra, str(CORPUS), cwd=ROOT)
    assert result.rc in (0, 1), result.err
    assert "Traceback" not in result.err
    summary = result.json["summary"]
    assert summary["files_checked"] >= 270


def test_corpus_sarif_validates():
    result = run_gpulint("--isolated", "--format", "sarif", "--preview", str(CORPUS), cwd=ROOT)
    assert result.rc in (0, 1), result.err
    validated_sarif(result.out)
