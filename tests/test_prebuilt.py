"""The parsed rule catalog and knowledge data shipped in rules/prebuilt hold what rules/*.yaml
say, and an installed gpulint reads them instead of the YAML."""

from __future__ import annotations

import marshal
import subprocess
import sys

from conftest import ROOT


def test_prebuilt_data_matches_the_yaml():
    proc = subprocess.run([sys.executable, "-m", "gpulint.prebuild", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_a_changed_rule_file_makes_the_check_fail(tmp_path):
    from gpulint import prebuild

    wanted = prebuild.prebuilt()
    for name, data in wanted.items():
        (tmp_path / name).write_bytes(marshal.dumps(data, prebuild.VERSION))
    assert prebuild.stale(tmp_path, wanted) == []
    wanted["catalog.marshal"][0]["severity"] = "info" if wanted["catalog.marshal"][0]["severity"] != "info" else "error"
    (tmp_path / "old.marshal").write_bytes(b"")
    assert prebuild.stale(tmp_path, wanted) == ["catalog.marshal", "old.marshal"]


def test_an_installed_gpulint_reads_the_prebuilt_data(monkeypatch, tmp_path):
    """Installed (rules/ inside the package): the catalog comes from rules/prebuilt, and no
    YAML is parsed nor cache written."""
    from gpulint import catalog, resources

    monkeypatch.setattr(resources, "installed", lambda: True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for module in (resources, catalog):  # parsing YAML here would be a failure
        monkeypatch.setattr(module, "read_yaml", lambda name: (_ for _ in ()).throw(AssertionError(name)))
    catalog.load_catalog.cache_clear()
    try:
        rules = catalog.load_catalog()
        assert "GL101" in rules and rules["GL101"].severity
        assert resources.load_yaml("cuda-driver.yaml")
    finally:
        catalog.load_catalog.cache_clear()
    assert not (tmp_path / "gpulint").exists()
