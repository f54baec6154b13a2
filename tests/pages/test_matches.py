"""A player's match history (/players/<username>/history/) and a match's page (/matches/<id>/).

The history lists the matches a player held a seat in (``Participant`` rows), newest first,
20 a page, filtered by variant, start date and result; a private table is named and linked
only for viewers who may see it, and the queries do not grow with the rows. The match page's
scoreboard is the stored ``Hand.hand_scores``, its SVG chart's polylines hold the running
totals, a live hand shows no scores, and a private match needs its invite unless the viewer
played in it.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from games import actions, engine
from games.catalog import ensure_variants
from games.models import Hand, Match, Participant, Table
from tests.markup import Node, parse
from tests.play import (
    bot_table,
    play_hand,
    play_match_with_bots,
    played_out,
    seed_of,
    store_random_hand,
    user_table,
)
from tests.users import SignedIn, make_user

pytestmark = pytest.mark.django_db
User = get_user_model()


# ----------------------------------------------------------------------------- helpers
def new_table(variant: str = "duz", *, is_private: bool = False, created_by: Any = None) -> Table:
    ensure_variants()
    return actions.create_table(
        variant=variant, created_by=created_by, is_private=is_private, name=f"{variant} room"
    )


def stored_match(
    table: Table,
    players: list[Any],
    n: int,
    *,
    status: str = Match.Status.FINISHED,
    winners: list[int] | None = None,
    day: int = 0,
    totals: list[int] | None = None,
) -> Match:
    """A match of one stored hand (``store_random_hand``), seats held by ``players`` (a user,
    or a bot level as a string), started ``day`` days after 1 March 2026 at noon."""
    hand = store_random_hand(table, seed_of(n), n)
    for k, who in enumerate(players):
        if isinstance(who, str):
            Participant.objects.create(hand=hand, position=k, bot_level=who)
        else:
            Participant.objects.create(hand=hand, position=k, user=who)
    started = timezone.make_aware(datetime(2026, 3, 1, 12)) + timedelta(days=day)
    Match.objects.filter(pk=hand.match_id).update(
        status=status,
        winners=winners or [],
        started_at=started,
        **({"totals": totals} if totals is not None else {}),
    )
    return Match.objects.get(pk=hand.match_id)


def history(client: Client, username: str, query: str = "") -> Node:
    response = client.get(reverse("player_history", args=[username]) + query)
    assert response.status_code == 200
    return parse(response.content)


def row_ids(page: Node) -> list[int]:
    return [int(r.attrs["data-match"]) for r in page.all("tr", data_match=True)]


def match_page(client: Client, match: Match, query: str = "", language: str = "en") -> Node:
    response = client.get(reverse("match", args=[match.pk]) + query, HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    return parse(response.content)


def polylines(page: Node) -> dict[int, list[tuple[float, float]]]:
    """Each seat's polyline in the chart, as (hand number, total) points."""
    lines = {}
    for line in page.one("svg", data_chart=True).all("polyline"):
        pts = [tuple(float(v) for v in p.split(",")) for p in line.attrs["points"].split()]
        lines[int(line.attrs["data-seat"])] = pts
    return lines


def scoreboard(page: Node) -> dict[int, list[int] | None]:
    """Each hand's scores on the page by hand number (None: no scores shown)."""
    rows = {}
    for tr in page.one("table", data_scoreboard=True).all("tr", data_hand=True):
        cells = sorted(tr.all("td", data_score=True), key=lambda td: int(td.attrs["data-score"]))
        rows[int(tr.attrs["data-hand"])] = [int(td.text()) for td in cells] or None
    return rows


def totals_row(page: Node) -> list[int]:
    cells = page.one("tr", data_totals=True).all("td", data_total=True)
    return [int(td.text()) for td in sorted(cells, key=lambda td: int(td.attrs["data-total"]))]


# ----------------------------------------------------------------------------- the history
def test_the_history_lists_the_player_s_matches_newest_first(signed_in: SignedIn) -> None:
    ada, bob, cem = (make_user(n) for n in ("ada", "bob", "cem"))
    table = new_table("duz")
    old = stored_match(table, [ada, "random", bob, "greedy"], 1, winners=[0], day=0)
    new = stored_match(table, ["random", bob, "random", ada], 2, winners=[1], day=5)
    stored_match(table, [bob, cem, "random", "random"], 3, day=9)  # not Ada's
    mid = stored_match(table, [ada, bob, cem, "random"], 4, status=Match.Status.PLAYING, day=3)
    Hand.objects.create(
        match=mid, number=2, starter=1, commitment="c", seed="s", state={}, status="playing"
    )

    page = history(signed_in(), "ada")

    assert row_ids(page) == [new.pk, mid.pk, old.pk]
    rows = {int(r.attrs["data-match"]): r for r in page.all("tr", data_match=True)}
    assert rows[old.pk].attrs["data-result"] == "won"
    assert rows[new.pk].attrs["data-result"] == "lost"
    assert rows[mid.pk].attrs["data-result"] == "unfinished"
    # Their own seat's total: seat 0 in the old match, seat 3 in the new one.
    assert rows[old.pk].one("td", data_total=True).text() == str(old.totals[0])
    assert rows[new.pk].one("td", data_total=True).text() == str(new.totals[3])
    assert rows[mid.pk].one("td", data_hands=True).text() == "2"
    assert rows[old.pk].one("td", data_hands=True).text() == "1"
    assert rows[old.pk].one("td", data_date=True).attrs["data-date"] == "2026-03-01"
    assert "Düz Okey" in rows[old.pk].text()
    link = rows[old.pk].one("a", data_table_link=True)
    assert link.attrs["href"] == reverse("table", args=[table.pk]) and link.text() == "duz room"
    assert rows[old.pk].one("a", data_action="match").attrs["href"] == reverse(
        "match", args=[old.pk]
    )
    assert page.one(data_count=True).attrs["data-count"] == "3"


def test_an_unknown_player_s_history_is_404(signed_in: SignedIn) -> None:
    assert signed_in().get(reverse("player_history", args=["nobody"])).status_code == 404


@pytest.mark.slow
def test_each_filter_narrows_the_list(signed_in: SignedIn) -> None:
    ada = make_user("ada")
    duz, classic = new_table("duz"), new_table("classic")
    bots = ["random", "random", "random"]
    won = stored_match(duz, [ada, *bots], 1, winners=[0], day=0)  # 1 March
    lost = stored_match(classic, [*bots, ada], 2, winners=[0], day=10)  # 11 March
    playing = stored_match(duz, [ada, *bots], 3, status=Match.Status.PLAYING, day=20)  # 21 March
    abandoned = stored_match(classic, [ada, *bots], 4, status=Match.Status.ABANDONED, day=30)
    client = signed_in()

    assert row_ids(history(client, "ada")) == [abandoned.pk, playing.pk, lost.pk, won.pk]
    assert row_ids(history(client, "ada", "?variant=duz")) == [playing.pk, won.pk]
    assert row_ids(history(client, "ada", "?variant=classic")) == [abandoned.pk, lost.pk]
    assert row_ids(history(client, "ada", "?result=won")) == [won.pk]
    assert row_ids(history(client, "ada", "?result=lost")) == [lost.pk]
    assert row_ids(history(client, "ada", "?result=unfinished")) == [abandoned.pk, playing.pk]
    assert row_ids(history(client, "ada", "?date_from=2026-03-11")) == [
        abandoned.pk,
        playing.pk,
        lost.pk,
    ]
    assert row_ids(history(client, "ada", "?date_to=2026-03-11")) == [lost.pk, won.pk]
    both = "?date_from=2026-03-02&date_to=2026-03-21"
    assert row_ids(history(client, "ada", both)) == [playing.pk, lost.pk]
    combined = "?variant=classic&result=unfinished&date_from=2026-03-31&date_to=2026-03-31"
    assert row_ids(history(client, "ada", combined)) == [abandoned.pk]
    assert row_ids(history(client, "ada", "?variant=duz&result=lost")) == []
    # The select offers the four variants; an invalid value is ignored, not an error.
    options = [
        o.attrs["value"] for o in history(client, "ada").one("select", name="variant").all("option")
    ]
    assert options == ["", *engine.VARIANTS]
    assert len(row_ids(history(client, "ada", "?date_from=not-a-date&result=nope"))) == 4


@pytest.mark.slow
def test_the_history_is_paginated_and_page_links_keep_the_filters(signed_in: SignedIn) -> None:
    ada = make_user("ada")
    duz, classic = new_table("duz"), new_table("classic")
    bots = ["random", "random", "random"]
    duz_ids = [stored_match(duz, [ada, *bots], n, day=n).pk for n in range(25)]
    classic_ids = [stored_match(classic, [ada, *bots], 100 + n, day=n).pk for n in range(3)]
    client = signed_in()

    first = history(client, "ada")
    assert len(row_ids(first)) == 20
    assert first.one("nav", class_="pagination").attrs["data-pages"] == "2"

    page1 = history(client, "ada", "?variant=duz")
    newest_first = list(reversed(duz_ids))
    assert row_ids(page1) == newest_first[:20]
    href = page1.one("a", data_page_link="next").attrs["href"]
    assert "variant=duz" in href and "page=2" in href
    page2 = history(client, "ada", href)
    assert row_ids(page2) == newest_first[20:]
    assert page2.one("nav", class_="pagination").attrs["data-page"] == "2"
    assert not page2.all("a", data_page_link="next")
    back = page2.one("a", data_page_link="prev").attrs["href"]
    assert "variant=duz" in back and row_ids(history(client, "ada", back)) == newest_first[:20]
    assert not set(row_ids(page2)) & set(classic_ids)
    # A page past the end shows the last one.
    assert row_ids(history(client, "ada", "?variant=duz&page=9")) == newest_first[20:]


@pytest.mark.slow
def test_the_history_s_queries_do_not_grow_with_its_rows(
    django_assert_max_num_queries: Any,
    signed_in: SignedIn,
) -> None:
    ada, viewer = (make_user(n) for n in ("ada", "viewer"))
    tables = [new_table("duz"), new_table("okey51", is_private=True)]
    stored_match(tables[0], [ada, "random", viewer, "random"], 0, winners=[0])
    client = signed_in(viewer)
    client.get(reverse("player_history", args=["ada"]))  # the session is warm
    with CaptureQueriesContext(connection) as one_row:
        assert client.get(reverse("player_history", args=["ada"])).status_code == 200
    for n in range(1, 20):
        more = [new_table("classic" if n % 2 else "gobek17", is_private=n % 3 == 0)]
        stored_match(more[0], [viewer, ada, "random", "random"], n, day=n)

    with django_assert_max_num_queries(len(one_row.captured_queries)):
        page = history(client, "ada", "?result=lost")
    assert len(row_ids(page)) == 19


def test_a_private_table_is_named_and_linked_only_for_those_who_may_see_it(
    signed_in: SignedIn,
) -> None:
    host, mate, stranger = (make_user(n) for n in ("host", "mate", "stranger"))
    table = new_table("okey51", is_private=True, created_by=host)
    table.name = "Secret room"
    table.save()
    match = stored_match(table, [host, mate, "random", "random"], 1, winners=[1])

    def row(client: Client, username: str) -> Node:
        return history(client, username).one("tr", data_match=str(match.pk))

    # The host created the table: its name and link.
    mine = row(signed_in(host), "host")
    assert mine.one("a", data_table_link=True).text() == "Secret room"
    assert mine.one("a", data_action="match").attrs["href"] == reverse("match", args=[match.pk])
    # The other player is no longer seated: no name, no table link, but the match is theirs.
    for username in ("host", "mate"):
        theirs = row(signed_in(mate), username)
        assert "Secret room" not in theirs.text() and "private table" in theirs.text()
        assert not theirs.all("a", data_table_link=True)
        assert theirs.one("a", data_action="match").attrs["href"] == reverse(
            "match", args=[match.pk]
        )
    # Anybody else: nothing to follow.
    for client in (signed_in(), signed_in(stranger)):
        other = row(client, "mate")
        assert "Secret room" not in other.text() and "private table" in other.text()
        assert not other.all("a")
        assert other.attrs["data-result"] == "won"


def test_the_profile_links_the_history_and_its_matches(signed_in: SignedIn) -> None:
    ada = make_user("ada")
    match = stored_match(new_table("duz"), [ada, "random", "random", "random"], 1)
    page = parse(signed_in().get(reverse("profile", args=["ada"])).content)
    assert page.one("a", data_action="history").attrs["href"] == reverse(
        "player_history", args=["ada"]
    )
    row = page.one("tr", data_match=str(match.pk))
    assert row.one("a", data_action="match").attrs["href"] == reverse("match", args=[match.pk])


# ----------------------------------------------------------------------------- the match page
@pytest.mark.slow
def test_the_scoreboard_and_the_chart_are_the_stored_hands(signed_in: SignedIn) -> None:
    table, users, match = played_out("okey51", {"hands": 3}, 1)
    hands = list(match.hands.order_by("number"))
    assert len(hands) == 3 and all(h.status == Hand.Status.FINISHED for h in hands)

    page = match_page(signed_in(), match)

    assert scoreboard(page) == {h.number: h.hand_scores for h in hands}
    start = engine.scoring.start_score("okey51", table.options)
    running = [[start] * 4]
    for h in hands:
        running.append([t + s for t, s in zip(running[-1], h.hand_scores, strict=True)])
    assert totals_row(page) == running[-1] == match.totals
    lines = polylines(page)
    assert sorted(lines) == [0, 1, 2, 3]
    for seat, points in lines.items():
        assert [x for x, _ in points] == [0, 1, 2, 3]
        assert [y for _, y in points] == [row[seat] for row in running]
    # The legend names each seat beside its line, each line in its own colour.
    legend = [li.text() for li in page.one(data_legend=True).all("li")]
    assert legend == [u.get_username() for u in users]
    colours = {line.attrs["stroke"] for line in page.one("svg", data_chart=True).all("polyline")}
    assert len(colours) == 4
    # Players per seat, the winners, and the links.
    heads = [th.text() for th in page.one("table", data_scoreboard=True).all("th", data_seat=True)]
    assert [h.rstrip(" ★") for h in heads] == [u.get_username() for u in users]
    winners = page.one(data_winners=True)
    assert winners.attrs["data-winners"] == ",".join(str(w) for w in match.winners)
    for w in match.winners:
        assert users[w].get_username() in winners.text()
    replays = [a.attrs["href"] for a in page.all("a", data_action="replay")]
    assert replays == [reverse("hand_replay", args=[h.pk]) for h in hands]
    export = page.one("a", data_action="download-match").attrs["href"]
    assert export == reverse("match_export", args=[match.pk])
    for h in hands:
        row = page.one("tr", data_hand=str(h.number))
        if h.finisher is not None:
            assert row.one("td", data_finisher=True).text() == users[h.finisher].get_username()


@pytest.mark.slow
def test_the_chart_is_drawn_with_the_same_numbers_in_turkish(signed_in: SignedIn) -> None:
    """SVG reads coordinates with a decimal point: a Turkish page ("236,0") drew no chart."""
    _table, _users, match = played_out("okey51", {"hands": 3}, 1)
    english = match_page(signed_in(), match).one("svg", data_chart=True)
    turkish = match_page(signed_in(), match, "", language="tr").one("svg", data_chart=True)
    numeric = ("x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "width", "height")
    for svg in (english, turkish):
        for node in svg.all():
            for name in numeric:
                if name in node.attrs:
                    float(node.attrs[name])  # a number as SVG reads it
    assert [(n.tag, n.attrs) for n in turkish.all()] == [(n.tag, n.attrs) for n in english.all()]


def test_bots_are_named_by_seat_with_their_level(signed_in: SignedIn) -> None:
    """Three bots at one table are told apart, as the table itself names them."""
    table = bot_table("duz", level="random")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(31))
    play_match_with_bots(match, random.Random(31))
    page = match_page(signed_in(), match)
    heads = [th.text() for th in page.one("table", data_scoreboard=True).all("th", data_seat=True)]
    assert [h.rstrip(" ★") for h in heads] == [f"Bot {n} (random)" for n in range(1, 5)]


@pytest.mark.slow
def test_a_live_hand_is_being_played_with_no_scores(signed_in: SignedIn) -> None:
    table, users = user_table("okey51", {"hands": 3})
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(41))
    rng = random.Random(41)
    first = play_hand(match.hands.get(), users, rng)
    actions.deal_next_hand(match, force=True)
    live = play_hand(match.hands.get(number=2), users, rng, moves=12)
    assert live.status == Hand.Status.PLAYING

    page = match_page(signed_in(), match)

    assert scoreboard(page) == {1: first.hand_scores, 2: None}
    row = page.one("tr", data_hand="2")
    assert row.all(data_being_played=True) and "being played" in row.text()
    start = engine.scoring.start_score("okey51", table.options)
    assert totals_row(page) == [start + s for s in first.hand_scores]
    for seat, points in polylines(page).items():
        assert points == [(0, start), (1, start + first.hand_scores[seat])]
    # The live hand's replay is for its players only.
    assert [a.attrs["href"] for a in page.all("a", data_action="replay")] == [
        reverse("hand_replay", args=[first.pk])
    ]
    mine = match_page(signed_in(users[0]), match)
    assert reverse("hand_replay", args=[live.pk]) in [
        a.attrs["href"] for a in mine.all("a", data_action="replay")
    ]
    # No seed of a live hand, not even for its players.
    html = signed_in(users[0]).get(reverse("match", args=[match.pk])).content.decode()
    assert live.seed not in html


def test_an_unknown_match_is_404(signed_in: SignedIn) -> None:
    assert signed_in().get(reverse("match", args=[987654])).status_code == 404


@pytest.mark.slow
def test_a_private_match_needs_its_invite_unless_the_viewer_played_in_it(
    signed_in: SignedIn,
) -> None:
    table, users, match = played_out("duz", {}, 2)
    Table.objects.filter(pk=table.pk).update(is_private=True)
    actions.stand(table, users[1])  # no longer seated: only having played lets them in
    stranger = make_user("stranger")
    url = reverse("match", args=[match.pk])
    invite = f"?invite={table.invite_token}"

    for client in (signed_in(), signed_in(stranger)):
        assert client.get(url).status_code == 404
        assert client.get(url + "?invite=wrong").status_code == 404
    page = match_page(signed_in(stranger), match, invite)
    # Its links keep the invite.
    assert page.one("a", data_action="download-match").attrs["href"].endswith(invite)
    for a in page.all("a", data_action="replay"):
        assert a.attrs["href"].endswith(invite)
        assert signed_in(stranger).get(a.attrs["href"]).status_code == 200
    assert signed_in(users[1]).get(url).status_code == 200
    assert not table.seats.filter(user=users[1]).exists()
    assert signed_in(users[0]).get(url).status_code == 200  # still seated
