"""A table socket's read on the event loop (``games.live.loop_reads``, PostgreSQL): the same table
as the read in a thread (``reads.table_state``), field for field and view for view, and a
read in a thread wherever the loop cannot read (no pool, no hand yet, a lost connection)."""

from __future__ import annotations

import logging
import random
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.utils import timezone

from accounts.models import Profile
from games import actions, reads
from games.live import loop_reads
from games.models import Hand, Presence
from tests.play import connect, play_random_moves, seed_of, user_table
from tests.sockets import Players

pytestmark = pytest.mark.django_db(transaction=True)

postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="reads on the event loop are for PostgreSQL"
)


def fields(obj: Any) -> dict[str, Any]:
    return {f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}


def a_table_in_play(variant: str, moves: int, players: int = 4) -> tuple[int, list[Any]]:
    """A table mid-hand (or at its end): a player with a display name, one whose socket went
    stale, a rack arranged by hand, and ``moves`` random legal moves (openings among them in
    the open variants)."""
    table, users = user_table(variant, players=players)
    Profile.objects.create(user=users[0], display_name="Ayşe Öz")
    connect(table, users)
    stale = timezone.now() - timedelta(seconds=Presence.FRESH + 5)
    Presence.objects.filter(user=users[-1]).update(seen_at=stale)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(1300))
    play_random_moves(match, users, moves, random.Random(13))
    hand = match.hands.get()
    if hand.status == Hand.Status.PLAYING:
        rack = hand.view_for(1)["rack"]
        actions.arrange(hand.pk, 1, [*reversed(rack), *[None] * (32 - len(rack))], by=users[1])
    return table.pk, users


def assert_same_state(on_loop: reads.TableState, in_thread: reads.TableState) -> None:
    assert fields(on_loop.table) == fields(in_thread.table)
    assert fields(on_loop.table.variant) == fields(in_thread.table.variant)
    assert [fields(s) for s in on_loop.seats] == [fields(s) for s in in_thread.seats]
    assert [s.here for s in on_loop.seats] == [s.here for s in in_thread.seats]
    assert [reads.tables._name(s) for s in on_loop.seats] == [
        reads.tables._name(s) for s in in_thread.seats
    ]
    assert on_loop.hand is not None and in_thread.hand is not None
    assert fields(on_loop.hand) == fields(in_thread.hand)
    assert fields(on_loop.match) == fields(in_thread.match)
    for name in ("public", "layouts", "log_moves", "openings", "finish"):
        assert getattr(on_loop, name) == getattr(in_thread, name), name


@postgresql_only
@pytest.mark.parametrize(
    ("variant", "moves", "players"),
    [("classic", 9, 4), ("classic", 12, 3), ("classic", 7, 2), ("okey51", 60, 4), ("duz", 400, 4)],
)
async def test_it_reads_the_table_a_thread_reads(
    settings: Any, variant: str, moves: int, players: int
) -> None:
    """Mid-hand, with openings (okey51), at the hand's end (duz), and at tables of two and
    three (the loop's statement asks for four seats' layouts)."""
    settings.DB_LOOP_READS = True
    table_id, users = await database_sync_to_async(a_table_in_play)(variant, moves, players)
    assert await loop_reads.open_pool()
    try:
        on_loop = await loop_reads.table_state(table_id)
        in_thread = await database_sync_to_async(reads.table_state)(table_id)
        assert on_loop is not None
        assert_same_state(on_loop, in_thread)
        # The table and seats alone (read again while moves are brought forward).
        seats_on_loop = await loop_reads.table_and_seats(table_id)
        assert seats_on_loop is not None
        table, seats = seats_on_loop
        assert fields(table) == fields(in_thread.table)
        assert [(fields(s), s.here) for s in seats] == [
            (fields(s), s.here) for s in in_thread.seats
        ]
        # Every viewer's page is the same from either read.
        for viewer in [*users, AnonymousUser()]:
            assert reads.table_context(table_id, viewer, state=on_loop) == (
                reads.table_context(table_id, viewer, state=in_thread)
            )
    finally:
        await loop_reads.stop()


@postgresql_only
async def test_a_table_with_no_hand_or_no_table_is_read_in_a_thread(
    settings: Any, players: Players
) -> None:
    settings.DB_LOOP_READS = True
    table_id = players.table_id  # a duz table, no match yet
    assert await loop_reads.open_pool()
    try:
        assert await loop_reads.table_state(table_id) is None  # no hand: its match is read
        assert await loop_reads.table_state(table_id + 1000) is None  # Table.DoesNotExist
        assert await loop_reads.table_and_seats(table_id + 1000) is None
    finally:
        await loop_reads.stop()


async def test_without_a_pool_on_this_loop_it_reads_nothing(settings: Any) -> None:
    """Off (DB_LOOP_READS), on SQLite, or before the pool opens: None, and no pool opens."""
    settings.DB_LOOP_READS = False
    table_id, _users = await database_sync_to_async(a_table_in_play)("classic", 3)
    assert not loop_reads.enabled()
    loop_reads.start()
    assert await loop_reads.table_state(table_id) is None
    assert await loop_reads.table_and_seats(table_id) is None
    assert loop_reads._pool is None and loop_reads._opening is None


@postgresql_only
async def test_a_lost_connection_is_read_in_a_thread_then_replaced(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The server closes the pool's connection (a restart, an idle timeout): that read fails,
    is logged and left to a thread; the pool connects anew for the next."""
    settings.DB_LOOP_READS = True
    table_id, _users = await database_sync_to_async(a_table_in_play)("classic", 5)
    assert await loop_reads.open_pool()
    try:
        assert await loop_reads.table_state(table_id) is not None

        # Only this pool's connection: a daphne process of the live-server tests reads the
        # same test database with a pool of the same name, and must not lose its own.
        assert loop_reads._pool.get_stats()["pool_size"] == 1
        async with loop_reads._pool.connection() as conn:
            backend = conn.info.backend_pid

        def kill_the_pool() -> int:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND application_name = %s"
                    " AND pid = %s",
                    [loop_reads.APPLICATION_NAME, backend],
                )
                return int(cursor.fetchone()[0])

        assert await database_sync_to_async(kill_the_pool)() == 1
        with caplog.at_level(logging.ERROR, logger="games.live.loop_reads"):
            assert await loop_reads.table_state(table_id) is None
        assert "reading in a thread" in caplog.text
        state = await loop_reads.table_state(table_id)
        assert state is not None and state.hand is not None
    finally:
        await loop_reads.stop()


@postgresql_only
async def test_the_pool_is_made_like_djangos_connections(settings: Any) -> None:
    """Autocommit (a read sees every committed move), the session in Django's time zone
    (the timestamp loader assumes it), JSON columns as text (the fields' converters load it)."""
    settings.DB_LOOP_READS = True
    assert await loop_reads.open_pool()
    try:
        async with loop_reads._pool.connection() as conn, conn.cursor() as cursor:
            assert conn.autocommit
            await cursor.execute("SHOW TIME ZONE")
            assert (await cursor.fetchone())[0] == connection.timezone_name
            await cursor.execute("SELECT '{\"a\": 1}'::jsonb, now()")
            text, now = await cursor.fetchone()
            assert text == '{"a": 1}'
            assert now.tzinfo is not None and now.utcoffset() == timedelta(0)
            assert abs(now - timezone.now()) < timedelta(seconds=60)
    finally:
        await loop_reads.stop()


@postgresql_only
async def test_a_pool_asked_for_while_it_opens_is_the_same_pool(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's first connection starts opening the pool; a read (or a test) asking for
    it meanwhile waits for that one instead of opening a second, whose connections nobody
    would close."""
    import psycopg_pool

    settings.DB_LOOP_READS = True
    made: list[object] = []
    real = psycopg_pool.AsyncConnectionPool

    class Counted(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            made.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(psycopg_pool, "AsyncConnectionPool", Counted)
    try:
        loop_reads.start()
        assert await loop_reads.open_pool()
        assert await loop_reads.open_pool()
        assert len(made) == 1 and loop_reads._pool is made[0]
    finally:
        await loop_reads.stop()
