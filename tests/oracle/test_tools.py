"""The oracle harness's own file preparation, checked without any daemon."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent / "tools"


def _load(name: str):
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), str(TOOLS / name))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


ctd = _load("ctd-verdict")


def test_the_isolation_import_goes_after_a_utf8_bom(tmp_path):
    src = tmp_path / "config.toml"
    src.write_text("\ufeffversion = 2\n[plugins]\n", encoding="utf-8")
    dst, how = ctd.prepare(str(src), str(tmp_path), 2)
    text = Path(dst).read_text(encoding="utf-8")
    assert text.startswith("\ufeffimports = [")
    assert text.count("\ufeff") == 1
    assert "after the BOM" in how


def test_without_a_bom_the_import_is_line_one(tmp_path):
    src = tmp_path / "config.toml"
    src.write_text("version = 2\n", encoding="utf-8")
    dst, _ = ctd.prepare(str(src), str(tmp_path), 2)
    assert Path(dst).read_text(encoding="utf-8").startswith("imports = [")


def test_the_override_version_comes_from_the_text_when_tomllib_refuses():
    text = '\ufeffversion = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  a = 1\n  a = 2\n'
    assert ctd.override_version(None, "Cannot overwrite a value", text) == 2
    assert ctd.override_version(None, "error", "[plugins]\n") == 1
    assert ctd.override_version(3, None, "version = 3\n") == 3


def test_a_version_2_override_names_the_opt_plugin_by_its_uri(tmp_path):
    src = tmp_path / "config.toml"
    src.write_text("version = 2\n", encoding="utf-8")
    ctd.prepare(str(src), str(tmp_path), 2)
    assert '[plugins."io.containerd.internal.v1.opt"]' in (tmp_path / "override.toml").read_text()


def test_a_release_is_found_by_version_prefix(tmp_path):
    sys.path.insert(0, str(TOOLS / "lib"))
    import oracle_common as oc

    for name in ("containerd-1.7.24", "containerd-2.1.9", "dockerd-26.1.5"):
        (tmp_path / "releases" / name / "usr" / "bin").mkdir(parents=True)
    assert oc.find_release(tmp_path, "containerd", None) is None
    assert oc.find_release(tmp_path, "containerd", "system") is None
    assert oc.find_release(tmp_path, "containerd", "2.1").name == "containerd-2.1.9"
    assert oc.find_release(tmp_path, "containerd", "containerd-1.7.24").name == "containerd-1.7.24"
    assert oc.find_release(tmp_path, "dockerd", "26").name == "dockerd-26.1.5"
    with pytest.raises(oc.Fatal):
        oc.find_release(tmp_path, "containerd", "1.6")


def test_the_combiner_is_seeded_and_names_each_mutation(tmp_path):
    sys.path.insert(0, str(TOOLS / "lib"))
    import mutations

    for kind in ("containerd", "daemon-json"):
        first = mutations.generate(5, 40, kind)
        assert first == mutations.generate(5, 40, kind)
        assert first != mutations.generate(6, 40, kind)
        for _main, files, recipe in first:
            assert 1 <= len(recipe["mutations"]) <= 3
            assert all(m["class"] in (mutations.CTD_CLASSES if kind == "containerd" else mutations.DJ_CLASSES)
                       for m in recipe["mutations"])
