"""Every error code the engine can return is listed, with a description, in one place."""

import re
from pathlib import Path

from games.engine.errors import ALL_ERRORS, MELD_ERRORS, MOVE_ERRORS

ENGINE = Path(__file__).resolve().parents[2] / "games" / "engine"


def test_it_lists_every_code_it_raises() -> None:
    raised: set[str] = set()
    for path in ENGINE.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        raised |= set(re.findall(r'MoveError\(\s*"([a-z_]+)"', text))
        raised |= set(re.findall(r'MeldError\(\s*"([a-z_]+)"', text))
    assert raised, "the scan found nothing"
    missing = raised - set(ALL_ERRORS) - {"bad_tile"}
    assert not missing
    assert "bad_tile" in MOVE_ERRORS
    assert all(code == code.lower() and " " not in code for code in ALL_ERRORS)
    assert all(ALL_ERRORS[c] for c in ALL_ERRORS)
    assert not set(MOVE_ERRORS) & set(MELD_ERRORS)
