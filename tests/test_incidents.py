"""Real reports with a diagnosed configuration cause, one folder each under
tests/fixtures/incidents/ (INDEX.tsv says what each shows): gpulint, through the CLI,
must report the expected code at the expected line of the file that holds the mistake.

Cases whose cause no file can show (`-`: it is on the node, or in a kind gpulint does not
read yet) are listed for the record and left out of the recall figure."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from conftest import FIXTURES, ROOT, run_gpulint

INCIDENTS = FIXTURES / "incidents"
# every case a file can show is caught; a regression lowers this
RECALL_FLOOR = 1.0


@dataclass(frozen=True)
class Case:
    folder: str
    url: str
    cause: str
    code: str | None  # None: no file can show the cause
    line: int | None
    file: str
    reason: str


def _cases() -> list[Case]:
    cases = []
    for raw in (INCIDENTS / "INDEX.tsv").read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        folder, url, cause, expected, file, reason = (raw.split("\t") + [""] * 6)[:6]
        code, _, line = expected.partition(":")
        cases.append(Case(folder, url, cause, None if expected == "-" else code,
                          int(line) if line else None, file, reason))
    return cases


CASES = _cases()
SHOWN = [c for c in CASES if c.code is not None]


def _lint(case: Case):
    folder = INCIDENTS / case.folder
    # a case whose mistake depends on the release the nodes run states it as a user would
    config = folder / ".gpulint.toml"
    settings = ("--config", str(config)) if config.is_file() else ("--isolated",)
    return run_gpulint(*settings, "--format", "json", str(folder), cwd=ROOT)


def _caught(case: Case, run) -> bool:
    want = (INCIDENTS / case.folder / case.file).resolve()
    return any(f["code"] == case.code and f["line"] == case.line
               and (ROOT / f["path"]).resolve() == want
               for f in run.findings)


def test_index_is_well_formed():
    folders = {c.folder for c in CASES if c.folder != "-"}
    assert len(CASES) >= 40
    assert len({c.url for c in CASES}) == len(CASES), "one line per report"
    for case in CASES:
        assert case.url.startswith("https://github.com/"), case
        if case.code is None:
            assert case.reason, f"{case.url}: a `-` case says why no file shows it"
        else:
            assert (INCIDENTS / case.folder / case.file).is_file(), case
    on_disk = {p.name for p in INCIDENTS.iterdir() if p.is_dir()}
    assert on_disk == folders, "every folder is indexed and every indexed folder exists"


@pytest.mark.parametrize("case", SHOWN, ids=[c.folder for c in SHOWN])
def test_incident_is_caught(case):
    run = _lint(case)
    got = sorted((f["code"], f["line"], f["path"]) for f in run.findings)
    assert _caught(case, run), f"{case.url} ({case.cause}): want {case.code} at line {case.line} of {case.file}, got {got}"


def test_recall_figure(capsys):
    caught = sum(_caught(c, _lint(c)) for c in SHOWN)
    recall = caught / len(SHOWN)
    with capsys.disabled():
        print(f"\nincident recall: {caught}/{len(SHOWN)} = {recall:.0%} "
              f"({len(CASES) - len(SHOWN)} of {len(CASES)} reports no file can show)")
    assert recall >= RECALL_FLOOR
