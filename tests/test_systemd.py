"""The systemd units of dockerd and containerd and their drop-ins (kind `systemd`),
through the CLI."""

from __future__ import annotations

from conftest import lint_fixture


def test_a_drop_in_that_adds_a_command_without_clearing_the_units_is_gl209():
    run = lint_fixture("systemd/exec-start-added")
    assert run.at() == [("GL209", 3, 1)]
    finding = run.findings[0]
    assert "Service has more than one ExecStart= setting" in finding["message"]
    assert "the packaged unit's" in finding["message"]
    assert finding["fix"]["edits"][0]["content"] == "ExecStart=\n"


def test_a_drop_in_that_clears_the_command_first_is_clean():
    run = lint_fixture("systemd/exec-start-reset")
    assert run.findings == []


def test_a_second_command_after_the_linted_unit_points_at_it(lint_files):
    run = lint_files({
        "lib/systemd/system/containerd.service": "[Service]\nType=notify\nExecStart=/usr/bin/containerd\n",
        "etc/systemd/system/containerd.service.d/10-config.conf":
            "[Service]\nExecStart=/usr/bin/containerd --config /etc/containerd/gpu.toml\n",
    })
    assert run.at() == [("GL209", 2, 1)]
    assert run.findings[0]["related"][0]["path"].endswith("lib/systemd/system/containerd.service")


def test_a_oneshot_service_may_run_several_commands(lint_files):
    run = lint_files({"etc/systemd/system/docker.service.d/x.conf":
                      "[Service]\nType=oneshot\nExecStart=/usr/bin/dockerd --validate\n"})
    assert run.findings == []


def test_a_section_header_systemd_cannot_read_is_gl001_where_it_is():
    run = lint_fixture("systemd/unreadable/docker.service")
    assert run.at() == [("GL001", 3, 1)]
    assert "invalid section header `[Service`" in run.findings[0]["message"]


def test_a_line_without_equals_is_gl001_and_the_rest_is_read():
    run = lint_fixture("systemd/unreadable/containerd.service")
    assert run.at() == [("GL001", 4, 1)]
    assert "systemd ignores the line" in run.findings[0]["message"]
