"""Scores that explain themselves: at a hand's end each player's score is itemised on the
scoreboard (tiles left, never opened, the okey held, each penalty with its count, the finish,
the doubling), and during a match "Scores" opens the hands one by one over the felt."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from games import engine
from games.models import Hand
from tests import ui
from tests.live_daphne import DaphneServer, in_thread
from tests.play import played_out


def last_hand(match: Any) -> Hand:
    return match.hands.order_by("-number").first()  # type: ignore[no-any-return]


@pytest.mark.parametrize(("size", "language"), [("desktop", "en"), ("phone", "tr")])
def test_a_hands_scores_are_itemised_and_the_match_scores_open_over_the_felt(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path, size: str, language: str
) -> None:
    table, users, match = in_thread(lambda: played_out("okey101", {"hands": 3}, 7))
    hand = in_thread(lambda: last_hand(match))
    parts = engine.score_parts(hand.engine_hand())
    page = ui.signed_in_page(
        chromium, daphne_live_server, users[0], ui.PHONE if size == "phone" else ui.DESKTOP
    )
    ui.in_language(page, daphne_live_server, language)
    ui.open_table(page, daphne_live_server, table.pk)

    # Each row's parts: as many as the engine's, their points adding up to the row's score.
    rows = page.locator("[data-hand-over] .scoreboard tbody tr")
    assert rows.count() == 4
    for seat in range(4):
        row = rows.nth(seat)
        shown = row.locator("[data-score-parts] li")
        assert shown.count() == len(parts[seat]), seat
        points = [
            int(re.findall(r"[+-]\d+", shown.nth(i).inner_text())[-1]) for i in range(shown.count())
        ]
        hand_score = int(row.locator("td.num").nth(0).inner_text())
        assert sum(points) == hand_score == hand.hand_scores[seat]
    every = " ".join(page.locator("[data-score-parts]").all_inner_texts())
    finished = "Eli bitirdi" if language == "tr" else "Finished"
    assert finished in every or hand.ending != "finish"
    page.screenshot(path=str(artifacts / f"okey101-itemised-scores-{size}-{language}.png"))

    # "Scores": the match's three hands over the felt, closed again with one tap.
    scores = page.locator("[data-scores]")
    assert scores.inner_text() == ("Puanlar" if language == "tr" else "Scores")
    scores.click()
    dialog = page.locator("#scores-dialog")
    dialog.wait_for(state="visible")
    assert dialog.locator("tbody tr[data-hand]").count() == 3
    totals = [int(dialog.locator(f'[data-total="{seat}"]').inner_text()) for seat in range(4)]
    assert totals == list(in_thread(lambda: type(match).objects.get(pk=match.pk).totals))
    page.screenshot(path=str(artifacts / f"okey101-match-scores-{size}-{language}.png"))
    dialog.locator("[data-scores-close]").click()
    dialog.wait_for(state="hidden")
    assert page.okey_errors == []
