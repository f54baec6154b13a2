"""The table page's reads: ``reads.table_state``, read once and shared by every
viewer's ``table_context`` without being changed; and the statements written out in SQL
(``games.reads``), which must read exactly what the ORM queries they replace read."""

from __future__ import annotations

import copy
import random
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import override

from accounts.models import Profile
from games import actions, reads
from games.errors import NotAllowed
from games.models import Hand, Match, Move, Participant, Presence, Seat, Table, Watcher
from tests.play import connect, play_random_moves, seed_of, user_table
from tests.users import SignedIn, make_user

pytestmark = pytest.mark.django_db


def fields(obj: Any) -> dict[str, Any]:
    return {f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}


def mixed_table() -> tuple[Table, list[Any]]:
    """A duz table: a player with a display name (and a fresh socket), one without a profile,
    a bot, an empty seat."""
    table, users = user_table("duz")
    Profile.objects.create(user=users[0], display_name="Ayşe")
    connect(table, users[:2])
    stale = timezone.now() - timedelta(seconds=Presence.FRESH + 5)
    Presence.objects.filter(user=users[1]).update(seen_at=stale)
    actions.stand(table, users[2])
    actions.add_bot(table, 2, "strong", by=actions.SYSTEM)
    actions.stand(table, users[3])
    return table, users


def played(variant: str = "okey51", moves: int = 30, **options: Any) -> tuple[Table, list[Any]]:
    table, users = user_table(variant, options or None)
    connect(table, users)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(1200))
    play_random_moves(match, users, moves, random.Random(12))
    return table, users


# ----------------------------------------------------------------------------- games.reads
def test_the_seats_are_read_as_the_orm_reads_them() -> None:
    table, _users = mixed_table()
    orm = list(
        Seat.objects.filter(table_id=table.pk)
        .select_related("table__variant", "user__profile")
        .annotate(here=Presence.here())
        .order_by("position")
    )
    read, seats = reads.table_and_seats(table.pk)
    assert fields(read) == fields(orm[0].table)
    assert fields(read.variant) == fields(orm[0].table.variant)
    assert [fields(s) for s in seats] == [fields(s) for s in orm]
    assert [s.here for s in seats] == [s.here for s in orm] == [True, False, False, False]
    assert all(s.table is read for s in seats)
    with CaptureQueriesContext(connection) as queries:
        assert fields(seats[0].user) == fields(orm[0].user)
        assert fields(seats[0].user.profile) == fields(orm[0].user.profile)
        with pytest.raises(Profile.DoesNotExist):
            seats[1].user.profile  # noqa: B018 - no profile row: known without a query
        assert seats[2].user is None and seats[3].user is None
        assert [reads.tables._name(s) for s in seats] == [reads.tables._name(s) for s in orm]
    assert len(queries) == 0
    with pytest.raises(Table.DoesNotExist):
        reads.table_and_seats(table.pk + 1000)


def test_the_hand_and_the_layouts_are_read_as_the_orm_reads_them() -> None:
    table, users = played()
    hand = Hand.objects.get(match__table=table)
    rack = hand.view_for(1)["rack"]
    actions.arrange(hand.pk, 1, [*reversed(rack), *[None] * (32 - len(rack))], by=users[1])
    orm = (
        Hand.objects.filter(match__table_id=table.pk)
        .select_related("match")
        .order_by("-match__started_at", "-number")
        .first()
    )
    hand, layouts, _moves = reads.latest_hand(table.pk, table.players)
    assert hand is not None and orm is not None
    assert fields(hand) == fields(orm)
    assert fields(hand.match) == fields(orm.match)
    stored = dict(Participant.objects.filter(hand=orm).values_list("position", "layout"))
    assert layouts == stored and layouts[1]
    empty = actions.create_table(variant="duz", created_by=None)
    assert reads.latest_hand(empty.pk, empty.players) == (None, {}, [])


def test_the_moves_are_read_as_the_orm_reads_them() -> None:
    """The last moves and the earlier openings (``reads.hand_moves``): rows written here
    directly, every kind of action among them, so that each bound of the query is crossed."""
    table, _users = played("okey51", moves=0)
    hand = Hand.objects.get(match__table=table)
    kinds = ["draw", "discard", "open", "take", "lay", "open", "discard", "draw", "finish"] * 3
    for number, kind in enumerate(kinds, start=1):
        action = {"do": kind, "tile": "R5"} if kind != "open" else {"do": "open", "melds": [["R1"]]}
        events = [{"type": kind, "seat": number % 4, "n": number, "note": "ğü ★"}]
        Move.objects.create(
            hand=hand, number=number, seat=number % 4, action=action, events=events, by=Move.By.BOT
        )
    for after, upto in [(-10, 0), (-5, 5), (0, 27), (17, 27), (20, 24), (26, 27), (27, 30)]:
        for kind in ("open", "finish", "nothing"):
            orm = list(
                Move.objects.filter(
                    Q(number__gt=after) | Q(action__do=kind), hand_id=hand.pk, number__lte=upto
                )
                .order_by("number")
                .values_list("number", "action", "events")
            )
            assert reads.hand_moves(hand.pk, after, upto, kind) == orm, (after, upto, kind)
    # The table's read takes them with the hand, up to the hand's version.
    for version, last in [(0, 10), (5, 10), (27, 10), (24, 3), (27, 0)]:
        Hand.objects.filter(pk=hand.pk).update(version=version)
        for kind in ("open", "finish"):
            _hand, _layouts, moves = reads.latest_hand(table.pk, table.players, last, kind)
            assert moves == reads.hand_moves(hand.pk, version - last, version, kind)
    opens = [n for n, a, _e in reads.hand_moves(hand.pk, 24, 27, "open") if a["do"] == "open"]
    assert (
        opens == [3, 6, 12, 15, 21, 24] and reads.hand_moves(hand.pk, 24, 27, "open")[-1][0] == 27
    )


def test_postgresql_plans_a_repeated_read_once() -> None:
    """On PostgreSQL the table's reads are prepared on their connection after a few runs
    (``DB_PREPARED_STATEMENTS``), so the server stops planning them on every frame."""
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")
    table, _users = played("duz", moves=4)
    for _ in range(6):
        reads.table_state(table.pk)
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    seats_from = reads.sql._seats_statement(connection.alias).sql.split(" FROM ", 1)[1][:40]
    assert any(seats_from in sql for sql in prepared), prepared


def test_the_page_counts_are_read_as_the_orm_counts_them() -> None:
    table, users = played("duz", moves=2)
    fan = make_user("fan")
    actions.watcher_opened(table.pk, fan, "w-fan")
    actions.watcher_opened(table.pk, None, "w-anonymous")
    actions.watcher_opened(table.pk, users[1], "w-seated")
    actions.watcher_opened(table.pk, None, "w-stale")
    old = timezone.now() - timedelta(seconds=Presence.FRESH + 5)
    Watcher.objects.filter(channel_name="w-stale").update(seen_at=old)

    def latest() -> list[int]:
        matches = Match.objects.filter(table=table).order_by("-started_at", "-id")
        return list(matches.values_list("id", flat=True)[:2])

    counts = reads.page_counts(table.pk, users[0].pk)
    assert counts.watching == reads.watching([table.pk])[table.pk] == 2
    listed = {t["id"]: t["watching"] for t in reads.lobby_tables(None)}  # counted there too
    assert listed[table.pk] == 2
    assert not counts.has_mutes
    assert counts.latest_matches == latest() and len(counts.latest_matches) == 1
    actions.mute_chat(table.pk, users[0], users[1].pk)
    assert reads.page_counts(table.pk, users[0].pk).has_mutes
    assert not reads.page_counts(table.pk, users[1].pk).has_mutes
    assert not reads.page_counts(table.pk, None).has_mutes
    Match.objects.create(table=table, hands_planned=1)  # a second one (as a rematch makes)
    assert reads.page_counts(table.pk, None).latest_matches == latest()
    assert len(latest()) == 2
    empty = actions.create_table(variant="duz", created_by=None)
    assert reads.page_counts(empty.pk, None) == reads.PageCounts(0, False, [])


# ----------------------------------------------------------------------------- the state
def snapshot(state: reads.TableState) -> Any:
    assert state.engine_hand is not None
    return copy.deepcopy(
        (
            state.public,
            state.layouts,
            state.log_moves,
            state.openings,
            state.finish,
            state.engine_hand.to_state(),
            [fields(s) for s in state.seats],
            fields(state.table),
        )
    )


@pytest.mark.parametrize(("variant", "options"), [("okey51", {"assisted": True}), ("duz", {})])
def test_one_state_serves_every_viewer_unchanged_and_without_a_query(
    variant: str, options: dict[str, Any]
) -> None:
    table, users = played(variant, moves=40, **options)
    spectator = make_user("watching")
    state = reads.table_state(table.pk)
    before = snapshot(state)
    for language in ("en", "tr"):
        with override(language):
            for viewer in [*users, spectator, None]:
                with CaptureQueriesContext(connection) as queries:
                    shared = reads.table_context(table.pk, viewer, state=state)
                assert len(queries) == 0
                assert shared == reads.table_context(table.pk, viewer)
    assert snapshot(state) == before


def test_a_hidden_hand_and_a_table_without_hands_from_a_state() -> None:
    table, users = played("duz", moves=4)
    actions.hide_from_spectators(table.pk, users[0])
    state = reads.table_state(table.pk)
    spectator = reads.table_context(table.pk, None, state=state)
    assert spectator["veiled"] and spectator["public"] is None and spectator["log"] == []
    player = reads.table_context(table.pk, users[0], state=state)
    assert player["hidden"] and player["public"] is not None and player["rack_rows"]
    empty = actions.create_table(variant="duz", created_by=None)
    state = reads.table_state(empty.pk)
    assert state.hand is None and state.match is None
    assert reads.table_context(empty.pk, None, state=state) == reads.table_context(empty.pk, None)


def test_a_private_table_refuses_a_state_as_it_refuses_a_read() -> None:
    table, _users = user_table("duz")
    Table.objects.filter(pk=table.pk).update(is_private=True)
    state = reads.table_state(table.pk)
    stranger = make_user("stranger")
    with pytest.raises(NotAllowed):
        reads.table_context(table.pk, stranger, state=state)
    token = Table.objects.get(pk=table.pk).invite_token
    assert reads.table_context(table.pk, stranger, token, state=state)["invite"] == token


def test_the_page_reads_the_table_once(signed_in: SignedIn) -> None:
    table, users = played("okey51", moves=30)
    client = signed_in(users[0])
    url = reverse("table", args=[table.pk])
    client.get(url)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    # The session, the user, the table and its seats, the hand with its moves, the page's
    # counts, the chat lines: no profile for the header, no query per seat.
    assert len(queries) == 6
