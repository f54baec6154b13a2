"""A table socket's read after a change, on the server's event loop (PostgreSQL).

Every frame after a move starts with one read of the table (``reads.table_state``: two
statements). Run through ``database_sync_to_async`` it waits in a pool thread for the GIL at
every hand-over while the event loop renders other frames: 1.2 ms alone takes 2–3.5 ms under
load, the largest part of a push after the transport (docs/PERFORMANCE.md). Here the same two
statements (``games.reads``, the same SQL and the same converters) run on an asynchronous
psycopg connection, on the loop itself: the loop awaits the database and does other work
meanwhile, and no thread hands over.

The connections come from a small pool per server process (``DB_LOOP_POOL_MAX``), opened on
the server's loop with its first connection (``games.live.server_tasks.ServerTasks``) and made like
Django's own: the same parameters, the same type loaders (JSON as text for the fields'
converters, timestamps in the connection's time zone), the same session time zone and role,
autocommit. Both statements go to the server in one round trip (pipeline mode). Anywhere
else (SQLite, ``DB_LOOP_READS`` off, a loop without a pool, a table with no hand yet)
:func:`table_state` returns None and the caller reads in a pool thread; a failed read is
logged and falls back the same way.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from django.conf import settings
from django.db import connections, router

from games import reads
from games.models import Seat

log = logging.getLogger(__name__)

# This process's pool and the loop it lives on (a pool's connections belong to one loop).
_pool: Any = None
_pool_loop: asyncio.AbstractEventLoop | None = None
_opening: asyncio.Task[bool] | None = None
APPLICATION_NAME = "okey loop reads"
MAX_PLAYERS = 4  # a table seats 2 to 4 (games.models.Table)
# How long the pool's first connection may take before reads give up on the loop.
OPEN_SECONDS = 10.0


def enabled() -> bool:
    """Reads on the loop are for PostgreSQL (psycopg 3), unless ``DB_LOOP_READS`` is off."""
    using = _using()
    return connections[using].vendor == "postgresql" and settings.DB_LOOP_READS


def _using() -> str:
    return router.db_for_read(Seat)


def _connection_kwargs(using: str) -> dict[str, Any]:
    """Django's own connection parameters for ``using``, for an asynchronous connection."""
    import psycopg

    wrapper = connections[using]
    params = wrapper.get_connection_params()
    # Django's cursor classes are synchronous. Its server-binding cursor is psycopg's
    # default; its client-binding one (server_side_binding off, for PgBouncer) has an
    # asynchronous twin.
    sync_cursor = params.pop("cursor_factory", None)
    if sync_cursor is not None and issubclass(sync_cursor, psycopg.ClientCursor):
        params["cursor_factory"] = psycopg.AsyncClientCursor
    params["autocommit"] = True
    params.setdefault("application_name", APPLICATION_NAME)  # so pg_stat_activity tells them
    return params


def _configure(using: str) -> Any:
    """What Django does to a new connection (``_configure_connection``): the session's time
    zone (the timestamp loader assumes it) and the role."""
    from psycopg import sql

    wrapper = connections[using]
    timezone_name = wrapper.timezone_name
    role = wrapper.settings_dict["OPTIONS"].get("assume_role")
    set_time_zone = wrapper.ops.set_time_zone_sql()

    async def configure(connection: Any) -> None:
        async with connection.cursor() as cursor:
            if timezone_name and connection.info.parameter_status("TimeZone") != timezone_name:
                await cursor.execute(set_time_zone, [timezone_name])
            if role:
                await cursor.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))

    return configure


def start() -> None:
    """Open this process's pool on the running loop, in the background (the server's first
    connection calls this; until the pool is open, reads go to a thread)."""
    global _opening
    if not enabled():
        return
    loop = asyncio.get_running_loop()
    if _pool_loop is loop or (_opening is not None and _opening.get_loop() is loop):
        return
    _opening = loop.create_task(open_pool(), name="okey-loop-reads")


async def open_pool() -> bool:
    """Open this process's pool on the running loop, unless it is open there already; False
    if it cannot be (reads then go to a thread). A server runs one loop; a test that opens a
    pool closes it (:func:`stop`) before its loop ends."""
    global _pool, _pool_loop
    from psycopg_pool import AsyncConnectionPool

    loop = asyncio.get_running_loop()
    if _pool is not None and _pool_loop is loop:
        return True
    opening = _opening
    if (
        opening is not None
        and opening is not asyncio.current_task()
        and opening.get_loop() is loop
        and not opening.done()
    ):
        return await asyncio.shield(opening)  # one pool, however many ask at once
    using = _using()
    pool = AsyncConnectionPool(
        kwargs=_connection_kwargs(using),
        configure=_configure(using),
        min_size=1,
        max_size=settings.DB_LOOP_POOL_MAX,
        name="okey-loop-reads",
        open=False,
    )
    try:
        await pool.open(wait=True, timeout=OPEN_SECONDS)
    except Exception:  # reads go to a thread, as without a pool
        log.exception("the event loop's database pool did not open")
        await pool.close()
        return False
    _pool, _pool_loop = pool, loop
    return True


async def stop() -> None:
    """Close this process's pool (tests; a server simply exits)."""
    global _pool, _pool_loop, _opening
    pool, opening = _pool, _opening
    _pool = _pool_loop = _opening = None
    if opening is not None and not opening.done():
        opening.cancel()
    if pool is not None:
        await pool.close()


def _ready() -> Any:
    """The pool, if it is open on the running loop."""
    if _pool is None:
        return None
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    return _pool if _pool_loop is loop else None


async def table_and_seats(table_id: int) -> Any:
    """``reads.table_and_seats(table_id)``, read on the event loop; None where it cannot be
    (no pool here, no such table, a failed read): read it in a thread."""
    pool = _ready()
    if pool is None:
        return None

    using = _using()
    sql, params = reads.seats_query(table_id, using)
    try:
        async with pool.connection() as connection:
            cursor = connection.cursor()
            await cursor.execute(sql, params)
            rows = await cursor.fetchall()
    except Exception:
        log.exception("a seats read on the event loop failed; reading in a thread")
        return None
    return reads.table_and_seats_of(rows, using) if rows else None


async def table_state(table_id: int) -> Any:
    """``reads.table_state(table_id)``, read on the event loop; None where it cannot be
    (no pool here, no such table or no hand at it, a failed read): read it in a thread."""
    pool = _ready()
    if pool is None:
        return None

    using = _using()
    seats_sql, seats_params = reads.seats_query(table_id, using)
    # The hand's statement for the most seats a table has: a seat past the table's has no
    # layout, as the thread's read leaves it out. So both statements go in one round trip.
    hand_sql, hand_params = reads.hand_query(table_id, MAX_PLAYERS, reads.LOG_MOVES, "open", using)
    try:
        async with pool.connection() as connection:
            seats_cursor, hand_cursor = connection.cursor(), connection.cursor()
            async with connection.pipeline():
                await seats_cursor.execute(seats_sql, seats_params)
                await hand_cursor.execute(hand_sql, hand_params)
            rows = await seats_cursor.fetchall()
            row = await hand_cursor.fetchone()
    except Exception:
        log.exception("a table read on the event loop failed; reading in a thread")
        return None
    if not rows:
        return None  # no table: the thread's read says so (Table.DoesNotExist)
    table, seats = reads.table_and_seats_of(rows, using)
    hand, layouts, moves = reads.latest_hand_of(row, MAX_PLAYERS, using)
    if hand is None or moves is None:
        return None  # no hand yet (the table's match is read instead), or no moves column
    return reads.state_of_hand(table, seats, hand, layouts, moves)
