"""The oracle harness's own file preparation, checked without any daemon."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

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
