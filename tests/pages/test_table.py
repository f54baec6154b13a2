"""The lobby lists tables; a table page shows who is there, who is away, and only your rack."""

from __future__ import annotations

import html
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from games import actions, engine, frames, reads
from games.engine import layout
from games.engine.assist import arranged
from games.models import Match, Seat
from tests.markup import parse
from tests.play import connect, play_hand, seed_of, user_table
from tests.users import SignedIn

pytestmark = pytest.mark.django_db


def test_it_lists_tables_and_shows_who_is_away() -> None:
    table, users = user_table("okey51")
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(31))
    Seat.objects.filter(table=table, position=2).update(away=True)
    client = Client()
    home = client.get(reverse("home")).content.decode()
    assert table.name in home
    page = client.get(reverse("table", args=[table.pk])).content.decode()
    assert page.count("away — a bot is playing") == 1
    assert users[2].username in page


def test_it_shows_a_player_only_their_own_rack(signed_in: SignedIn) -> None:
    table, users = user_table("duz")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(32))
    eng = match.hands.get().engine_hand()
    client = signed_in(users[1])
    page = client.get(reverse("table", args=[table.pk])).content.decode()
    rack = page.split('class="rack"')[1].split("rack-tools")[0]
    assert rack.count("data-tile=") == len(eng.racks[1])
    for t in eng.racks[1]:
        assert f'data-tile="{engine.format_tile(t)}"' in rack
    assert match.hands.get().seed not in page


def test_the_sort_buttons_carry_the_engines_sorts_of_the_players_rack(signed_in: SignedIn) -> None:
    table, users = user_table("classic")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(33))
    view = match.hands.get().engine_hand().view(2)
    client = signed_in(users[2])
    page = client.get(reverse("table", args=[table.pk])).content.decode()
    for by in layout.SORTS:
        tag = re.search(r'<button[^>]*data-sort="' + by + r'"[^>]*>', page)
        assert tag is not None, by
        found = re.search(r'data-layout="([^"]*)"', tag.group(0))
        assert found is not None, by
        sorted_rack = layout.sorted_layout(view["rack"], view["okey"], by)
        assert json.loads(html.unescape(found.group(1))) == sorted_rack
    # "Arrange runs and sets", on every table: the rack's best runs and sets at once.
    tag = re.search(r'<button[^>]*data-sort="melds"[^>]*>', page)
    assert tag is not None
    found = re.search(r'data-layout="([^"]*)"', tag.group(0))
    assert found is not None
    melds = json.loads(html.unescape(found.group(1)))
    assert melds == arranged(view["rack"], view["okey"], True)
    assert layout.check(melds, view["rack"]) == melds


@pytest.mark.parametrize("variant", engine.VARIANTS)
def test_the_show_indicator_button_is_at_the_tables_whose_variant_has_the_show(
    variant: str,
    signed_in: SignedIn,
) -> None:
    table, users = user_table(variant)
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(34))
    client = signed_in(users[0])
    page = client.get(reverse("table", args=[table.pk])).content.decode()
    assert ('data-action="show_indicator"' in page) == engine.has_indicator_show(variant)
    assert engine.has_indicator_show(variant) == (variant == "classic")


def test_it_hides_private_tables_without_the_invite() -> None:
    table = actions.create_table(variant="classic", created_by=None, is_private=True)
    client = Client()
    assert client.get(reverse("table", args=[table.pk])).status_code == 404
    url = reverse("table", args=[table.pk]) + f"?invite={table.invite_token}"
    assert client.get(url).status_code == 200
    assert table.shown_name not in client.get(reverse("home")).content.decode()


def test_it_speaks_turkish() -> None:
    from pathlib import Path

    mo = Path(__file__).resolve().parents[2] / "locale" / "tr" / "LC_MESSAGES" / "django.mo"
    if not mo.exists():
        pytest.skip("the Turkish catalogue is not compiled (make compiles it with msgfmt)")
    client = Client(headers={"accept-language": "tr"})
    page = client.get(reverse("home")).content.decode()
    assert "Masalar" in page and "Lobi" in page
    page = Client(headers={"accept-language": "en"}).get(reverse("home")).content.decode()
    assert "Tables" in page


def test_each_frame_speaks_its_viewers_language_though_the_words_are_kept() -> None:
    """The fragments' words are looked up once per language and kept (games/frames.py): a
    Turkish frame, then an English one, then a Turkish one again, each in its own words."""
    if not (Path(__file__).resolve().parents[2] / "locale/tr/LC_MESSAGES/django.mo").exists():
        pytest.skip("the Turkish catalogue is not compiled (make compiles it with msgfmt)")
    table, users = user_table("duz")
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(33))
    shown = {}
    for language in ("tr", "en", "tr"):
        with translation.override(language):
            context = reads.table_context(table.pk, users[0])
            shown[language] = frames.live(context) + frames.rack(context)
    assert "Deste" in shown["tr"] and "Masadan ayrıl" in shown["tr"]
    assert "Serilere göre diz" in shown["tr"] and "Sort by runs" not in shown["tr"]
    assert "Pile" in shown["en"] and "Leave table" in shown["en"] and "Sort by runs" in shown["en"]
    assert "Deste" not in shown["en"]


def test_between_hands_the_scoreboard_marks_who_is_ready(settings: Any) -> None:
    settings.NEXT_HAND_PAUSE_SECONDS = 60  # the next hand waits for everyone, or a minute
    table, users = user_table("classic")
    connect(table, users)  # all four here: the next hand waits for each of them
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(34))
    play_hand(match.hands.get(), users, random.Random(34))
    match.refresh_from_db()
    assert match.status == Match.Status.PLAYING and match.next_hand_at is not None
    actions.ready(table, users[2])

    def ready_rows(viewer: Any) -> list[str]:
        board = parse(frames.live(reads.table_context(table.pk, viewer)))
        rows = board.one("table", class_="scoreboard").one("tbody").all("tr")
        return [row.all("td")[0].text() for row in rows if row.all(data_ready=True)]

    assert ready_rows(users[0]) == [f"{users[2].username} ready"]
    assert ready_rows(users[2]) == [f"{users[2].username} ready"]
    actions.ready(table, users[0])
    assert ready_rows(users[1]) == [f"{users[0].username} ready", f"{users[2].username} ready"]


def test_it_shows_table_melds_and_discards_to_everyone() -> None:
    import random

    from tests.play import bot_table, random_move

    table = bot_table("okey51")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(33))
    rng = random.Random(2)
    hand = match.hands.get()
    for _ in range(400):
        hand.refresh_from_db()
        if hand.status != "playing" or hand.state["table"]:
            break
        seat, move = random_move(hand, rng)
        actions.play(hand, seat, move, by=actions.BOT)
    assert hand.state["table"], "nobody opened"
    page = Client().get(reverse("table", args=[table.pk])).content.decode()
    assert "data-meld=" in page and "discard-spot" in page
    assert 'aria-label="Your rack"' not in page and 'data-action="discard"' not in page
    # Who opened, and with how much (from the move log's open events).
    opener = next(s for s, kind in enumerate(hand.state["opened"]) if kind)
    event = next(
        e for m in hand.moves.filter(action__do="open") for e in m.events if e["type"] == "open"
    )
    assert event["seat"] == opener
    shown = (
        f"opened with {event['pairs']} pairs"
        if event["with"] == "pairs"
        else (f"opened with {event['total']}")
    )
    assert shown in page


def test_pages_showing_a_rack_are_never_cached(signed_in: SignedIn) -> None:
    """The table page of a seated player, and the move endpoint's answers, show a rack: no
    shared cache keeps them, nor the browser's (another person at the same computer)."""
    table, users = user_table("duz")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(33))
    client = signed_in(users[1])
    page = client.get(reverse("table", args=[table.pk]))
    for word in ("private", "no-store"):
        assert word in page["Cache-Control"]
    hand = match.hands.get()
    rack = [engine.format_tile(t) for t in hand.engine_hand().racks[1]]
    lay = rack + [None] * (layout.SLOTS - len(rack))
    payload = json.dumps({"type": "arrange", "hand": hand.pk, "layout": lay})
    answer = client.post(reverse("table_move", args=[table.pk]), {"payload": payload})
    assert 'class="rack"' in answer.content.decode()
    assert "private" in answer["Cache-Control"] and "no-store" in answer["Cache-Control"]
