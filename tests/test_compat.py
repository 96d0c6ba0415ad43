"""GL601-GL604: CUDA image versus node driver, through the CLI's JSON report."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, run_gpulint


def test_supported_branches_are_the_current_data_center_ones():
    from gpulint.knowledge.cuda import supported_branches

    assert [(b.number, b.type) for b in supported_branches()] == [(580, "LTSB"), (595, "production"),
                                                                  (620, "LTSB")]
