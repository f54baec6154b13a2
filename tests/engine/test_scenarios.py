"""Every scenario file, ours and the shared examples, passes the runner's --check."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from games.engine.scenario import check

ROOT = Path(__file__).resolve().parents[2]
OURS = sorted((ROOT / "tests" / "scenarios").glob("*.json"))
SHARED = sorted((ROOT.parent / "shared" / "scenarios").glob("*.json"))


def test_it_has_a_scenario_suite() -> None:
    assert len(OURS) >= 80


@pytest.mark.parametrize("path", OURS + SHARED, ids=lambda p: p.name)
def test_it_passes_the_scenario(path: Path) -> None:
    scenario = json.loads(path.read_text(encoding="utf-8"))
    _, diffs = check(scenario)
    assert not diffs, diffs


def test_it_runs_from_the_command_line_and_stdin() -> None:
    files = [str(p) for p in SHARED]
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
        input=SHARED[0].read_text(encoding="utf-8"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert piped.returncode == 0
    assert json.loads(piped.stdout)["hand"]["over"] is True


def test_it_fails_check_on_a_wrong_expectation() -> None:
    scenario = json.loads(SHARED[0].read_text(encoding="utf-8"))
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
