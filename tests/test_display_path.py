"""How a path is shown: what os.path.relpath gives, with `/` (its quick ways for the usual
paths must agree with it)."""

from __future__ import annotations

import os
import sys
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulint.paths import display_path

_PART = st.sampled_from(["a", "b", "ab", "c", ".", "..", "x.yaml"])
_FOLDERS = ["", "a", "a/b", "a/b/c", "b", "ab/c"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")
@settings(max_examples=300, deadline=None)
@given(st.lists(_PART, min_size=1, max_size=6), st.sampled_from(_FOLDERS), st.booleans())
def test_a_path_is_shown_as_relpath_shows_it(parts, cwd, absolute):
    before = os.getcwd()
    with tempfile.TemporaryDirectory() as root:
        root = os.path.realpath(root)
        for folder in _FOLDERS:
            os.makedirs(os.path.join(root, folder), exist_ok=True)
        path = "/".join(parts)
        if absolute:
            path = root + "/" + path
        os.chdir(os.path.join(root, cwd))
        try:
            assert display_path(path) == os.path.relpath(path)
        finally:
            os.chdir(before)


def test_a_file_outside_the_current_folder_climbs_to_it(tmp_path, monkeypatch):
    inside = tmp_path / "repo" / "sub"
    inside.mkdir(parents=True)
    monkeypatch.chdir(inside)
    outside = tmp_path / "elsewhere" / "Dockerfile"
    assert display_path(str(outside)) == "../../elsewhere/Dockerfile"
    assert display_path(str(inside / "Dockerfile")) == "Dockerfile"
