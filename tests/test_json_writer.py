"""The JSON report's own writer gives exactly the bytes of `json.dumps(value, indent=2)`."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from gpulint.report.jsonfmt import dumps

SCALARS = st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=20)


@given(VALUES, st.sampled_from(["", "  ", "    "]))
def test_the_writer_gives_what_json_dumps_gives(value, indent):
    assert dumps(value, indent) == json.dumps(value, indent=2).replace("\n", "\n" + indent)
