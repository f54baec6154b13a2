"""The pages a player reads after playing (their profile, their match history, a match's
scoreboard and chart, a hand's replay) fit a phone's width, and their charts are drawn:
nothing scrolls the page sideways (a wide table scrolls inside its own box), in English and
Turkish. Screenshots are written under ``test-artifacts/``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import ui
from tests.live_daphne import DaphneServer, in_thread
from tests.play import played_out

PHONE = {"width": 390, "height": 844}

# A chart's coordinates as SVG reads them ("236.0"; a Turkish page once wrote "236,0").
BAD_NUMBERS = """() => [...document.querySelectorAll('svg *')].flatMap(e =>
  ['x', 'y', 'x1', 'x2', 'y1', 'y2', 'cx', 'cy', 'width', 'height']
    .map(a => e.getAttribute(a)).filter(v => v !== null && !/^-?[0-9.]+%?$/.test(v)))"""


@pytest.mark.parametrize("language", ["en", "tr"])
def test_a_players_pages_fit_a_phone(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path, language: str
) -> None:
    def make() -> tuple[Any, Any]:
        _table, users, match = played_out("okey51", {"hands": 3}, 2)
        return users[0], match

    player, match = in_thread(make)
    page = ui.signed_in_page(chromium, daphne_live_server, player, PHONE)
    page.context.add_cookies(
        [{"name": "django_language", "value": language, "url": daphne_live_server.url}]
    )
    name = player.get_username()
    hand = in_thread(lambda: match.hands.order_by("number").first().pk)
    for what, path in (
        ("profile", f"/players/{name}/"),
        ("history", f"/players/{name}/history/"),
        ("match", f"/matches/{match.pk}/"),
        ("replay", f"/hands/{hand}/"),
    ):
        assert page.goto(daphne_live_server.url + path).ok, path
        assert page.locator("html").get_attribute("lang") == language
        page.screenshot(path=str(artifacts / f"phone-{what}-{language}.png"), full_page=True)
        assert not page.evaluate(BAD_NUMBERS), f"{path}: a chart's coordinates are not numbers"
        sideways = page.evaluate("() => document.documentElement.scrollWidth - innerWidth")
        assert sideways <= 0, f"{path} scrolls sideways by {sideways}px"
    assert page.okey_errors == []
