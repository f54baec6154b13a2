"""The rules engine is pure Python: it imports and runs scenarios where ``django`` cannot load.

Each check runs in a fresh interpreter whose ``sitecustomize`` puts a meta-path finder in front
of all others that raises ImportError for ``django`` and every ``django.*`` module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED_SCENARIOS = Path(os.environ.get("OKEY_SHARED", ROOT.parent / "shared")) / "scenarios"

BLOCKER = '''
import sys


class _NoDjango:
    """Refuse to import django or any of its submodules."""

    def find_spec(self, name, path=None, target=None):
        if name == "django" or name.startswith("django."):
            raise ImportError(f"django is blocked in this test: {name}")
        return None


sys.meta_path.insert(0, _NoDjango())
'''

SEED_SCENARIO = {
    "name": "classic: a seeded deal, no moves",
    "variant": "classic",
    "seed": "0123456789abcdef" * 4,
    "moves": [],
    "expect": {"hand": {"over": False}},
}


def run_blocked(
    tmp_path: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python *args`` from the project root with django blocked."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_blocker_blocks_django(tmp_path: Path) -> None:
    """The harness itself works: importing django fails in the child."""
    code = "import django"
    proc = run_blocked(tmp_path, "-c", code)
    assert proc.returncode != 0
    assert "django is blocked" in proc.stderr


def test_engine_imports_without_django(tmp_path: Path) -> None:
    code = """
import importlib, pkgutil, sys
import games.engine as engine
names = sorted(m.name for m in pkgutil.walk_packages(engine.__path__, "games.engine."))
for name in names:
    importlib.import_module(name)
assert "django" not in sys.modules, sorted(m for m in sys.modules if m.startswith("django"))
assert not any(m.startswith("django.") for m in sys.modules)
print(len(names), "modules")
"""
    proc = run_blocked(tmp_path, "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert "modules" in proc.stdout


def test_scenario_runner_on_stdin_without_django(tmp_path: Path) -> None:
    proc = run_blocked(
        tmp_path, "-m", "games.engine.scenario", "--check", "-", stdin=json.dumps(SEED_SCENARIO)
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["check"] == "pass"
    assert set(result["deal"]) == {"indicator", "racks", "pile"}


def test_shared_scenarios_without_django(tmp_path: Path) -> None:
    files = sorted(SHARED_SCENARIOS.glob("*.json"))
    if not files:
        pytest.skip(f"no shared scenarios at {SHARED_SCENARIOS} (set OKEY_SHARED)")
    proc = run_blocked(tmp_path, "-m", "games.engine.scenario", "--check", *(str(f) for f in files))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [json.loads(line) for line in proc.stdout.strip().splitlines()]
    assert len(lines) == len(files)
    assert all(line["check"] == "pass" for line in lines)
