"""gpulint's findings on the shared corpus match the reviewed snapshot, and every record in it
has a verdict that keeps the finding (see tests/corpus_snapshot.py)."""

from __future__ import annotations

import pytest

from corpus_snapshot import CORPUS, current, difference, load

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS} (set GPULINT_CORPUS)")


def test_findings_match_the_reviewed_snapshot():
    diff = difference(current(), load())
    assert not diff, "findings differ from tests/corpus/findings.tsv " \
        "(review them, then `python tests/corpus_snapshot.py --update`):\n" + "\n".join(diff)


def test_every_record_is_reviewed_and_kept():
    bad = [r for r in load() if r.verdict not in ("tp", "judgement") or not r.evidence.strip()]
    assert not bad, "records without a tp/judgement verdict and evidence:\n" + "\n".join(
        f"{r.run} {r.path}:{r.line} {r.code} {r.verdict}" for r in bad
    )
