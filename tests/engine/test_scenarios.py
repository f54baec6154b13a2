"""Every scenario file, ours and the shared examples, passes the runner's --check.

The shared examples (``../shared/scenarios/``, or ``$OKEY_SHARED/scenarios``) are copied into
``tests/scenarios/`` as ``shared-*.json``, so a fresh clone needs no folder beside the repository;
when the shared folder exists its files are run too, and the copies are checked against them.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from games.engine.scenario import check

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "scenarios"
OURS = sorted(SCENARIOS.glob("*.json"))
# In-repo copies of the shared examples (tests/scenarios/README.md).
COPIES = sorted(SCENARIOS.glob("shared-*.json"))
SHARED_DIR = Path(os.environ.get("OKEY_SHARED", ROOT.parent / "shared")) / "scenarios"


def shared_files() -> list[Path]:
    """The shared example files, or a skip when the shared folder is not beside the repo."""
    files = sorted(SHARED_DIR.glob("*.json"))
    if not files:
        pytest.skip(f"no shared scenarios at {SHARED_DIR} (set OKEY_SHARED)")
    return files


def test_it_has_a_scenario_suite() -> None:
    assert len(OURS) >= 80
    assert [p.name for p in COPIES] == [
        "shared-classic-take-and-finish.json",
        "shared-okey51-open-and-feed.json",
    ]


@pytest.mark.parametrize("path", OURS, ids=lambda p: p.name)
def test_it_passes_the_scenario(path: Path) -> None:
    scenario = json.loads(path.read_text(encoding="utf-8"))
    _, diffs = check(scenario)
    assert not diffs, diffs


def test_it_passes_the_shared_scenarios_when_present() -> None:
    for path in shared_files():
        _, diffs = check(json.loads(path.read_text(encoding="utf-8")))
        assert not diffs, (path.name, diffs)


def test_its_copies_match_the_shared_scenarios_when_present() -> None:
    shared = {p.name: p for p in shared_files()}
    for copy in COPIES:
        original = shared.get(copy.name.removeprefix("shared-"))
        if original is None:
            continue
        assert json.loads(copy.read_text(encoding="utf-8")) == json.loads(
            original.read_text(encoding="utf-8")
        ), f"{copy.name} differs from {original}"


def test_it_runs_from_the_command_line_and_stdin() -> None:
    files = [str(p) for p in COPIES]
    done = subprocess.run(
        [sys.executable, "-m", "games.engine.scenario", "--check", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["check"] for line in lines] == ["pass"] * len(files)
    piped = subprocess.run(
        [sys.executable, "-m", "games.engine.scenario", "-"],
        cwd=ROOT,
        input=COPIES[0].read_text(encoding="utf-8"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert piped.returncode == 0
    assert json.loads(piped.stdout)["hand"]["over"] is True


def test_it_fails_check_on_a_wrong_expectation() -> None:
    scenario = json.loads(COPIES[0].read_text(encoding="utf-8"))
    scenario["expect"]["hand_scores"] = [0, 0, 0, 0]
    _, diffs = check(scenario)
    assert diffs


def test_it_reports_the_deal_of_a_seed_scenario() -> None:
    scenario = {"name": "seed", "variant": "okey51", "seed": "ab" * 32, "moves": []}
    _, diffs = check(scenario)
    result, _ = check(scenario)
    assert not diffs
    deal = result["deal"]
    assert [len(r) for r in deal["racks"]] == [15, 14, 14, 14]
    assert len(deal["pile"]) == 106 - 1 - 15 - 42
