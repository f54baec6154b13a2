"""Who is here: a seated player's socket (``Presence``), a spectator's (``Watcher``) and a
lobby socket (``LobbyPresence``), opened, closed and kept fresh by their server process's
heartbeat; and players gone too long marked away, so that a bot plays for them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import Count, Exists, OuterRef, Q
from django.utils import timezone

from games import limits, policy, reads
from games.actions import events
from games.actions.tables import locked_table
from games.models import (
    LobbyPresence,
    Presence,
    Seat,
    Table,
    Watcher,
)


def lobby_socket_opened(user: AbstractBaseUser, channel_name: str) -> None:
    """A signed-in user's lobby socket opened: they count as online (see LobbyPresence)."""
    now = timezone.now()
    was_online = _online(user.pk, now)
    LobbyPresence.objects.update_or_create(
        channel_name=channel_name, defaults={"user": user, "seen_at": now}
    )
    # Rows of sockets whose server died are dropped once long stale.
    LobbyPresence.objects.filter(seen_at__lt=now - timedelta(seconds=10 * Presence.FRESH)).delete()
    if not was_online:
        events.to_lobby()  # one more player online


def _online(user_id: Any, now: Any) -> bool:
    """The user has a fresh lobby or table socket (the lobby's "players online")."""
    since = Presence.fresh_since(now)
    return (
        LobbyPresence.objects.filter(user_id=user_id, seen_at__gte=since).exists()
        or Presence.objects.filter(user_id=user_id, seen_at__gte=since).exists()
    )


def lobby_socket_closed(channel_name: str) -> None:
    row = LobbyPresence.objects.filter(channel_name=channel_name).first()
    if row is None:
        return
    row.delete()
    if not _online(row.user_id, timezone.now()):
        events.to_lobby()  # one player fewer online


def sockets_alive(
    table_channels: list[str], lobby_channels: list[str], watch_channels: list[str] | None = None
) -> None:
    """One server process's heartbeat for all its open sockets (``live.server_tasks``): a few
    queries per kind, however many sockets the process holds. Rows that had gone stale (the
    process stalled past ``Presence.FRESH``) count again, and their tables are told."""
    now = timezone.now()
    since = Presence.fresh_since(now)
    with transaction.atomic():
        if table_channels:
            rows = Presence.objects.filter(channel_name__in=table_channels)
            back = set(rows.filter(seen_at__lt=since).values_list("seat__table_id", flat=True))
            rows.update(seen_at=now)
            for table_id in back:
                events.to_table(events.table_changed(table_id))
        if lobby_channels:
            LobbyPresence.objects.filter(channel_name__in=lobby_channels).update(seen_at=now)
        if watch_channels:
            rows = Watcher.objects.filter(channel_name__in=watch_channels)
            back = set(rows.filter(seen_at__lt=since).values_list("table_id", flat=True))
            rows.update(seen_at=now)
            for table_id in back:
                _publish_watchers(table_id)


# The end of the span of ages already announced by announce_stale_sockets in this process,
# and how often it looks (its three queries are not worth making on every clock pass).
_announced_until: Any = None
ANNOUNCE_EVERY = timedelta(seconds=1)


def announce_stale_sockets(now: Any = None) -> int:
    """The clock's pass over sockets whose server died without closing them (killed, lost
    its host): their rows stopped counting when they went stale (``Presence.FRESH``), and
    here the pages that show them are told, once: each table with a player no longer here
    or a spectator fewer, and the lobby (its counts). Each pass looks at the rows that went
    stale since the previous one; a second clock worker may tell a table twice, which costs
    one more frame. Returns how many tables were told."""
    global _announced_until
    now = now or timezone.now()
    until = Presence.fresh_since(now)
    start = _announced_until
    if start is None or start > until:  # first pass (or a clock set back): look further back
        start = until - timedelta(seconds=10 * Presence.FRESH)
    elif until - start < ANNOUNCE_EVERY:
        return 0  # the clock passes four times a second; a second's delay is soon enough
    span = {"seen_at__gte": start, "seen_at__lt": until}
    seated = set(Presence.objects.filter(**span).values_list("seat__table_id", flat=True))
    watched = set(Watcher.objects.filter(**span).values_list("table_id", flat=True))
    lobby = LobbyPresence.objects.filter(**span).exists()
    with transaction.atomic():
        for table_id in seated:
            events.to_table(events.table_changed(table_id))
        for table_id in watched:
            _publish_watchers(table_id, now)  # tells the lobby too
        if (seated or lobby) and not watched:
            events.to_lobby()  # fewer players online
    _announced_until = until
    return len(seated | watched)


def watcher_opened(table_id: int, user: Any, channel_name: str, address: str | None = None) -> None:
    """A spectator's table socket opened (anyone not seated there; the socket already asked
    the policy whether they may see the table): one more watching. Refused
    (``too_many_sockets``) past the limits on sockets per user and address."""
    now = timezone.now()
    uid = policy.viewer_id(user)
    with transaction.atomic():
        _lock_counts(uid, address)
        policy.check_open_socket(_socket_counts(table_id, uid, address, channel_name, now))
        Watcher.objects.update_or_create(
            channel_name=channel_name,
            defaults={"table_id": table_id, "user_id": uid, "seen_at": now, "address": address},
        )
        # Rows of sockets whose server died are dropped once long stale.
        Watcher.objects.filter(seen_at__lt=now - timedelta(seconds=10 * Presence.FRESH)).delete()
        _publish_watchers(table_id)


def watcher_closed(channel_name: str) -> None:
    with transaction.atomic():
        row = Watcher.objects.filter(channel_name=channel_name).first()
        if row is None:
            return
        row.delete()
        _publish_watchers(row.table_id)


def _publish_watchers(table_id: int, now: Any = None) -> None:
    """After commit, tell the table's sockets how many watch now (counted once here, so no
    socket queries for it), and the lobby, which shows the count too."""
    count = reads.watching([table_id], now).get(table_id, 0)
    events.to_table(events.table_watchers(table_id, count))
    events.to_lobby()


def socket_opened(
    seat: Seat | int, user: AbstractBaseUser, channel_name: str, address: str | None = None
) -> None:
    """A seated player's socket opened: they are here (and back, if they were away).
    Refused (``too_many_sockets``) past the limits on sockets per user and address."""
    pk = seat.pk if isinstance(seat, Seat) else seat
    now = timezone.now()
    with transaction.atomic():
        _lock_counts(user.pk, address)
        s = Seat.objects.select_for_update().filter(pk=pk).first()
        if s is None or s.user_id != user.pk:
            # The seat changed hands since the socket was admitted, or its table was deleted
            # meanwhile (a page reconnecting to it): the socket's frame closes it.
            return
        policy.check_open_socket(
            _socket_counts(s.table_id, user.pk, address, channel_name, now), seated=True
        )
        # Another fresh socket of theirs (a second tab, a reconnect racing the old socket's
        # close): the table already shows them here, so nobody needs a new frame.
        already_here = (
            Presence.objects.filter(seat=s, user=user, seen_at__gte=Presence.fresh_since(now))
            .exclude(channel_name=channel_name)
            .exists()
        )
        Presence.objects.update_or_create(
            channel_name=channel_name,
            defaults={"seat": s, "user": user, "seen_at": now, "address": address},
        )
        returning = s.away
        s.away = False
        s.timeouts_in_a_row = 0 if returning else s.timeouts_in_a_row
        s.last_seen = now
        s.save(update_fields=["last_seen", "away", "timeouts_in_a_row"])
        if returning or not already_here:
            events.to_table(events.table_changed(s.table_id))


def _lock_counts(user_id: int | None, address: str | None) -> None:
    """Count and take a socket under a lock of its account and address, to the transaction's
    end: a burst of simultaneous connects (from any server process) then takes turns, and
    cannot all pass a cap on counts read before the others wrote. On PostgreSQL, advisory
    locks (in one order: two connects never deadlock); SQLite's transactions already take the
    database's one write lock when they begin (IMMEDIATE mode, okeysite.settings)."""
    if connection.vendor != "postgresql":
        return
    keys = sorted(
        key
        for key in (
            f"sockets:user:{user_id}" if user_id is not None else None,
            f"sockets:address:{address}" if address else None,
        )
        if key
    )
    with connection.cursor() as cursor:
        for key in keys:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [key])


def _socket_counts(
    table_id: int, user_id: int | None, address: str | None, channel_name: str, now: Any
) -> policy.SocketCounts:
    """The fresh table sockets of the user (seated or watching) and the address's watching
    sockets, at the table and in all, but ``channel_name`` itself (a socket moving from
    watching to a seat): two queries."""
    since = Presence.fresh_since(now)
    who = Q()
    if user_id is not None:
        who |= Q(user_id=user_id)
    if address:
        who |= Q(address=address)
    if not who:
        return policy.SocketCounts()

    def counted(rows: Any, at_table: Q) -> dict[str, int]:
        mine = Q(user_id=user_id) if user_id is not None else Q(pk__in=[])
        here = Q(address=address) if address else Q(pk__in=[])
        return dict(
            rows.filter(who, seen_at__gte=since)
            .exclude(channel_name=channel_name)
            .aggregate(
                user_at_table=Count("pk", filter=mine & at_table),
                user_in_all=Count("pk", filter=mine),
                address_at_table=Count("pk", filter=here & at_table),
                address_in_all=Count("pk", filter=here),
            )
        )

    watching = counted(Watcher.objects, Q(table_id=table_id))
    seated = counted(Presence.objects, Q(seat__table_id=table_id))
    # An account's own sockets count wherever they are; an address's, where it watches (the
    # players at their seats behind it are counted by their accounts: policy.check_open_socket).
    return policy.SocketCounts(
        user_at_table=watching["user_at_table"] + seated["user_at_table"],
        user_in_all=watching["user_in_all"] + seated["user_in_all"],
        address_at_table=watching["address_at_table"],
        address_in_all=watching["address_in_all"],
    )


def socket_closed(channel_name: str) -> None:
    """A seated player's socket closed; with none of theirs left the grace period starts."""
    with transaction.atomic():
        row = Presence.objects.select_related("seat").filter(channel_name=channel_name).first()
        if row is None:
            return
        row.delete()
        now = timezone.now()
        if row.seat.user_id == row.user_id:
            Seat.objects.filter(pk=row.seat_id).update(last_seen=now)
        # Still here on another fresh socket: the table looks the same, nobody needs a frame.
        still_here = Presence.objects.filter(
            seat_id=row.seat_id, user_id=row.user_id, seen_at__gte=Presence.fresh_since(now)
        ).exists()
        if not still_here:
            events.to_table(events.table_changed(row.seat.table_id))


def mark_gone_players_away(grace_seconds: int = 20, now: Any = None) -> int:
    """Players at a playing table with no fresh socket, not seen for the grace period, are
    marked away (a bot plays for them until they come back). This covers a closed socket, a
    server that died without closing its sockets, and a player who never connected."""
    now = now or timezone.now()
    gone = (
        Seat.objects.filter(
            user__isnull=False,
            away=False,
            table__status=Table.Status.PLAYING,
        )
        .exclude(last_seen__gt=now - timedelta(seconds=grace_seconds))
        .annotate(here=Presence.here(now))
        .filter(here=False)
    )
    pks = list(gone.values_list("pk", "table_id"))
    count = Seat.objects.filter(pk__in=[pk for pk, _ in pks], away=False).update(away=True)
    for table_id in {t for _, t in pks}:
        events.to_table(events.table_changed(table_id))
    # Rows of sockets whose server died are kept a while for the record, then dropped.
    Presence.objects.filter(seen_at__lt=now - timedelta(seconds=10 * Presence.FRESH)).delete()
    return count


def sessions_ended(*, user_id: int | None = None, session_key: str | None = None) -> None:
    """A user's sessions (a new password, a deactivated account) or one session (a log-out)
    ended: their open table and lobby sockets close after commit, so that a copied session
    signed out over HTTP cannot keep playing or chatting over a socket opened before."""
    events.to_sessions(user_id=user_id, session_key=session_key)


def close_idle_tables(now: Any = None, limit: int = 200) -> int:
    """Close the open tables that players opened (not the site's or an organiser's) where no
    player has been for ``limits.IDLE_TABLE_MINUTES``: no seat's socket is open, and no one
    sat down or was last seen there since. A table nobody comes back to leaves the lobby, and
    its creator's count of open tables, so that the lobby cannot be filled with tables that
    never expire. Returns how many were closed."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=limits.IDLE_TABLE_MINUTES)
    fresh = Presence.objects.filter(
        seat__table_id=OuterRef("pk"), seen_at__gte=Presence.fresh_since(now)
    )
    lately = Seat.objects.filter(table_id=OuterRef("pk"), last_seen__gt=cutoff)
    idle = (
        Table.objects.filter(
            status=Table.Status.OPEN, created_by__isnull=False, created_at__lte=cutoff
        )
        .exclude(Exists(fresh))
        .exclude(Exists(lately))
    )
    closed = 0
    for table_id in list(idle.values_list("pk", flat=True)[:limit]):
        with transaction.atomic():
            t, _seats = locked_table(table_id)
            if not idle.filter(pk=table_id).exists():
                continue  # someone came, or it started or closed, meanwhile
            t.status = Table.Status.FINISHED
            t.save(update_fields=["status"])
        closed += 1
        events.to_table(events.table_changed(table_id))
    if closed:
        events.to_lobby()
    return closed
