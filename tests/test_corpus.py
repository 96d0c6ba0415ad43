"""gpulint over the public corpus of real files: it finishes (exit 0 or 1, never 2,
never a traceback) and its SARIF validates against the official schema."""

from __future__ import annotations

import json

import jsonschema
import pytest

from conftest import ROOT, SHARED, run_gpulint

CORPUS = SHARED / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside the checkout")
SARIF_SCHEMA = json.loads((ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text())


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
    jsonschema.validate(json.loads(result.out), SARIF_SCHEMA)
