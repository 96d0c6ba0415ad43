"""The literals the recognisers look for before their patterns rule out only texts the patterns
cannot match: every name a pattern counts holds one of them."""

from __future__ import annotations

from gpulint.kinds.device_plugin import recognise as device_plugin
from gpulint.kinds.operator_values import recognise as operator_values


def test_every_flag_name_holds_a_part():
    for name in device_plugin._FLAG_NAMES:
        assert any(part in name + ":" for part in device_plugin.FLAG_PARTS), name


def test_every_operator_name_holds_a_part():
    for name in operator_values._ONLY_NAMES:
        assert any(part in name + ":" for part in operator_values.ONLY_PARTS), name


def test_recognised_as_before():
    values = "migStrategy: single\nfailOnInitError: true\n"
    assert device_plugin.by_content("values.yaml", values) is True
    assert device_plugin.by_content("values.yaml", "migStrategy: single\n") is None
    operator = "toolkit:\n  enabled: true\nmigManager:\n  enabled: false\n"
    assert operator_values.by_content("values.yaml", operator) is True
    assert operator_values.by_content("values.yaml", "toolkit:\n  enabled: true\n") is None
