"""The clock worker: bots play their seats, timeouts are played once, players come back."""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import OperationalError, connection, connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from games import actions, audit, clock, engine, limits
from games.catalog import ensure_variants
from games.models import Hand, Match, Move, Presence, Seat, Table
from tests.play import bot_table, connect, seed_of, user_table
from tests.users import make_user

pytestmark = pytest.mark.django_db
VARIANTS = list(engine.VARIANTS)


def beat(at: Any) -> None:
    """The heartbeat of the servers holding every open socket, at a simulated time: ticks
    ahead of the freshness window would otherwise find every player gone."""
    Presence.objects.update(seen_at=at)


def run_until_over(match: Match, passes: int = 3000) -> None:
    for _ in range(passes):
        match.refresh_from_db()
        if match.status != Match.Status.PLAYING:
            return
        clock.tick()
    raise AssertionError("the match did not end")


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_it_plays_a_match_of_four_bots_to_its_end(variant: str) -> None:
    options = {"start_score": 4} if variant == "classic" else None
    table = bot_table(variant, options, level="greedy")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(len(variant)))
    run_until_over(match)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert Move.objects.filter(hand__match=match, by="bot").exists()
    call_command("verify_hands")


def test_it_plays_a_timed_out_turn_once_and_only_once() -> None:
    table, users = user_table("duz")
    connect(table, users)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(21))
    hand = match.hands.get()
    assert hand.deadline is not None
    assert clock.tick() == 0  # nobody is late yet
    later = timezone.now() + timedelta(seconds=31)
    beat(later)
    played = clock.tick(now=later)
    assert played == 1  # the starter's turn is a single discard
    hand.refresh_from_db()
    assert hand.turn == 1 and hand.version == 1
    assert list(hand.moves.values_list("by", flat=True)) == ["clock"]
    assert clock.tick() == 0  # the next seat's new deadline has not passed
    seat = Seat.objects.get(table=table, position=0)
    assert seat.timeouts_in_a_row == 1 and not seat.away


def test_it_gives_a_returning_player_their_next_turn() -> None:
    table, users = user_table("duz")
    connect(table, users)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(22))
    hand = match.hands.get()
    late = timezone.now() + timedelta(seconds=40)
    beat(late)
    clock.tick(now=late)  # seat 0 timed out; the bot discarded for it
    hand.refresh_from_db()
    # Seats 1-3 play their turns themselves.
    for seat in (1, 2, 3):
        hand.refresh_from_db()
        eng = hand.engine_hand()
        actions.play(hand, seat, {"do": "draw"}, by=users[seat])
        hand.refresh_from_db()
        tile = engine.format_tile(hand.engine_hand().racks[seat][0])
        actions.play(hand, seat, {"do": "discard", "tile": tile}, by=users[seat])
        del eng
    hand.refresh_from_db()
    assert hand.turn == 0
    assert clock.tick() == 0  # not late, not away: the clock leaves seat 0 alone
    actions.play(hand, 0, {"do": "draw"}, by=users[0])
    assert Move.objects.filter(hand=hand).last().by == "user"  # type: ignore[union-attr]
    assert Seat.objects.get(table=table, position=0).timeouts_in_a_row == 0


def test_it_marks_away_after_two_timeouts_and_gives_the_seat_back() -> None:
    table, users = user_table("duz")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(23))
    hand = match.hands.get()
    when = timezone.now()
    for _ in range(5):  # seat 0, then seats 1-3 time out, then seat 0 again
        when += timedelta(seconds=31)
        clock.tick(now=when, grace_seconds=10**6)  # here, but not moving
    seat0 = Seat.objects.get(table=table, position=0)
    assert seat0.away and seat0.timeouts_in_a_row == 2
    hand.refresh_from_db()
    # Away: the bot plays seat 0's turns at once, without waiting for the deadline.
    while hand.turn != 0:
        when += timedelta(seconds=31)
        clock.tick(now=when, grace_seconds=10**6)
        hand.refresh_from_db()
    assert clock.tick() >= 1
    actions.sit(table, users[0])  # the player is back
    assert not Seat.objects.get(table=table, position=0).away


def test_it_marks_a_disconnected_player_away_after_the_grace_period() -> None:
    table, users = user_table("okey51")
    connect(table, users[:2])
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(24))
    Seat.objects.filter(table=table, position=3).update(away=True)  # not the one we watch
    seat = Seat.objects.get(table=table, position=2)
    actions.socket_opened(seat, users[2], "tab-1")
    actions.socket_opened(seat, users[2], "tab-2")
    actions.socket_closed("tab-1")
    # One tab still open and fresh: here, whatever the grace period.
    soon = timezone.now() + timedelta(seconds=30)
    beat(soon)
    assert actions.mark_gone_players_away(20, soon) == 0
    assert not Seat.objects.get(pk=seat.pk).away
    actions.socket_closed("tab-2")
    assert actions.mark_gone_players_away(20, timezone.now() + timedelta(seconds=5)) == 0
    assert actions.mark_gone_players_away(20, timezone.now() + timedelta(seconds=21)) == 1
    assert Seat.objects.get(pk=seat.pk).away
    actions.socket_opened(seat, users[2], "tab-3")
    assert not Seat.objects.get(pk=seat.pk).away


def test_a_second_tab_of_a_player_already_here_tells_nobody(  # type: ignore[no-untyped-def]
    django_capture_on_commit_callbacks,
) -> None:
    """Opening or closing one of several tabs of a seated player changes nothing anyone sees:
    no frame goes out (at 400 sockets a reconnect storm would re-render every table)."""
    table, users = user_table("duz")
    seat = Seat.objects.get(table=table, position=1)
    with django_capture_on_commit_callbacks() as first:
        actions.socket_opened(seat, users[1], "tab-1")
    with django_capture_on_commit_callbacks() as second:
        actions.socket_opened(seat, users[1], "tab-2")
    with django_capture_on_commit_callbacks() as one_closed:
        actions.socket_closed("tab-1")
    with django_capture_on_commit_callbacks() as last_closed:
        actions.socket_closed("tab-2")
    # (A change publishes to the table and to the lobby.)
    assert [len(c) > 0 for c in (first, second, one_closed, last_closed)] == [1, 0, 0, 1]
    Seat.objects.filter(pk=seat.pk).update(away=True)
    actions.socket_opened(seat, users[1], "tab-3")
    with django_capture_on_commit_callbacks() as back:
        actions.socket_opened(seat, users[1], "tab-4")  # tab-3 is fresh, but they were away
    assert len(back) == 0  # tab-3 brought them back already
    Seat.objects.filter(pk=seat.pk).update(away=True)
    with django_capture_on_commit_callbacks() as returning:
        actions.socket_opened(seat, users[1], "tab-5")
    assert len(returning) > 0


def test_it_marks_away_a_player_whose_server_died() -> None:
    """A daphne that crashed never closed its sockets: their rows stop being refreshed."""
    table, users = user_table("okey51")
    connect(table, users)
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(27))
    seat = Seat.objects.get(table=table, position=1)
    actions.sockets_alive([f"test-socket-{seat.pk}"], [])  # its server's heartbeat
    page = Client().get(reverse("table", args=[table.pk])).content.decode()
    assert page.count(">here<") == 4
    # The server dies: no close, no more heartbeats. Within the freshness window, still here.
    within = timezone.now() + timedelta(seconds=Presence.FRESH - 5)
    assert actions.mark_gone_players_away(20, within) == 0
    later = timezone.now() + timedelta(seconds=Presence.FRESH + 21)
    assert actions.mark_gone_players_away(20, later) == 4
    assert all(Seat.objects.filter(table=table).values_list("away", flat=True))


def test_it_marks_away_a_player_who_never_connected() -> None:
    table, users = user_table("duz", {"timer": 0})  # no move timer: only the away rule helps
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(28))
    assert actions.mark_gone_players_away(20, timezone.now() + timedelta(seconds=5)) == 0
    assert actions.mark_gone_players_away(20, timezone.now() + timedelta(seconds=21)) == 4
    # The table does not wait for ever: the stand-in bots play.
    assert clock.tick(now=timezone.now() + timedelta(seconds=21)) >= 1


def test_it_does_not_pass_presence_to_the_next_occupant() -> None:
    table, users = user_table("okey51")
    connect(table, users)
    actions.stand(table, users[3])
    newcomer = make_user("newcomer")
    actions.sit(table, newcomer, 3)
    page = Client().get(reverse("table", args=[table.pk])).content.decode()
    assert page.count(">here<") == 3
    assert page.count(">not connected<") == 1
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(29))
    later = timezone.now() + timedelta(seconds=21)
    beat(later)
    assert actions.mark_gone_players_away(20, later) == 1
    assert Seat.objects.get(table=table, position=3).away


def test_it_runs_as_a_management_command() -> None:
    table = bot_table("okey51", level="random")
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(25))
    call_command("run_clock", "--once", "--bot-delay", "0")
    hand = Hand.objects.get(match__table=table)
    assert hand.version >= 1


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_it_never_double_moves_with_two_workers() -> None:
    table = bot_table("okey51", level="greedy")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(26))
    errors: list[BaseException] = []
    # Each time a bot thinks, note which position of which hand it thought about.
    thoughts: list[tuple[int, int]] = []
    real_view_for = Hand.view_for

    def counting_view_for(self: Hand, seat: int) -> dict[str, object]:
        thoughts.append((self.pk, self.version))
        return real_view_for(self, seat)

    def worker() -> None:
        try:
            for _ in range(400):
                if Match.objects.get(pk=match.pk).status != Match.Status.PLAYING:
                    return
                clock.tick()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            connections.close_all()

    Hand.view_for = counting_view_for  # type: ignore[method-assign]
    try:
        threads = [threading.Thread(target=worker) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        Hand.view_for = real_view_for  # type: ignore[method-assign]
    assert not errors
    # Under the lease, a bot's work for a position is done once, not once per worker.
    assert thoughts and len(thoughts) == len(set(thoughts)), len(thoughts) - len(set(thoughts))
    for hand in Hand.objects.filter(match=match):
        numbers = list(hand.moves.values_list("number", flat=True))
        assert numbers == list(range(1, len(numbers) + 1))
        assert not audit.verify_hand(hand)


def test_it_goes_on_when_one_hand_is_broken(caplog: pytest.LogCaptureFixture) -> None:
    broken = bot_table("duz", level="greedy")
    fine = bot_table("duz", level="greedy")
    broken_hand = actions.start_match(broken, by=actions.SYSTEM, seed=seed_of(80)).hands.get()
    fine_hand = actions.start_match(fine, by=actions.SYSTEM, seed=seed_of(81)).hands.get()
    Seat.objects.filter(table=broken, position=0).delete()  # the seat on turn is gone
    Hand.objects.filter(pk=broken_hand.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    with caplog.at_level("ERROR", logger="games.clock"):
        played = clock.tick()
    assert played >= 1
    fine_hand.refresh_from_db()
    assert fine_hand.version >= 1  # the other table was played
    assert any(f"hand {broken_hand.pk}" in r.getMessage() for r in caplog.records)
    # The broken hand is put aside for a while instead of failing every pass.
    assert broken_hand.pk not in clock.due_hands(timezone.now())


def test_it_lets_a_hand_go_quietly_when_it_is_deleted_mid_turn(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table removed while the clock plays its bot (the admin, a test's cleanup): no error."""
    table = bot_table("duz", level="greedy")
    hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(82)).hands.get()
    real_play_turn = clock.play_turn

    def delete_then_play(hand_id: int, *args: object, **kwargs: object) -> int:
        Hand.objects.filter(pk=hand_id).delete()
        return real_play_turn(hand_id, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(clock, "play_turn", delete_then_play)
    with caplog.at_level("INFO", logger="games.clock"):
        assert clock.tick() == 0
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    assert any(f"hand {hand.pk} is gone" in r.getMessage() for r in caplog.records)


def test_it_picks_due_hands_in_one_query_without_loading_state() -> None:
    table, users = user_table("duz")
    connect(table, users)
    waiting = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(82)).hands.get()
    bots = bot_table("okey51", level="greedy")
    bot_hand = actions.start_match(bots, by=actions.SYSTEM, seed=seed_of(83)).hands.get()
    now = timezone.now()
    with CaptureQueriesContext(connection) as queries:
        due = clock.due_hands(now)
    assert due == [bot_hand.pk]  # a player on turn with time left is not due
    assert len(queries) == 1
    assert '"state"' not in queries[0]["sql"]
    # The bot's thinking delay counts from the hand's last change.
    assert clock.due_hands(now, bot_delay=60) == []
    # A passed deadline makes the player's hand due; a claimed timeout keeps it due.
    later = now + timedelta(seconds=31)
    assert set(clock.due_hands(later)) == {waiting.pk, bot_hand.pk}
    actions.claim_timeout(waiting.pk, later)
    assert waiting.pk in clock.due_hands(now)


def test_an_expert_bot_thinks_inside_the_pause_not_after_it() -> None:
    experts = bot_table("classic", level="expert")
    expert_hand = actions.start_match(experts, by=actions.SYSTEM, seed=seed_of(84)).hands.get()
    greedy = bot_table("duz", level="greedy")
    greedy_hand = actions.start_match(greedy, by=actions.SYSTEM, seed=seed_of(85)).hands.get()
    changed = Hand.objects.get(pk=expert_hand.pk).updated_at
    Hand.objects.filter(pk=greedy_hand.pk).update(updated_at=changed)
    # A pause of 0.8 s and 300 ms to think: the expert starts 0.5 s after the change, so that
    # its move lands at 0.8 s like the others'; a greedy bot, which does not search, at 0.8 s.
    at = changed + timedelta(seconds=0.55)
    assert clock.due_hands(at, bot_delay=0.8, think_ms=300) == [expert_hand.pk]
    assert clock.due_hands(at, bot_delay=0.8) == []
    later = changed + timedelta(seconds=0.85)
    assert set(clock.due_hands(later, bot_delay=0.8, think_ms=300)) == {
        expert_hand.pk,
        greedy_hand.pk,
    }
    # Its budget reaches the engine, and its moves are the engine's to judge.
    played = clock.tick(bot_delay=0.8, think_ms=30, now=later)
    assert played >= 2
    moves = Move.objects.filter(hand=expert_hand).order_by("number")
    assert moves.exists() and all(m.bot_level == "expert" and m.by == "bot" for m in moves)
    assert audit.verify_hand(Hand.objects.get(pk=expert_hand.pk)) == []


def test_it_leases_a_hand_to_one_worker_at_a_time() -> None:
    table = bot_table("duz", level="greedy")
    hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(84)).hands.get()
    token = actions.take_lease(hand.pk)
    assert token is not None
    assert actions.take_lease(hand.pk) is None  # a second worker is turned away
    assert clock.due_hands(timezone.now()) == []
    assert clock.run_hand(hand.pk) == 0
    hand.refresh_from_db()
    assert hand.version == 0
    actions.release_lease(hand.pk, token)
    assert clock.run_hand(hand.pk) >= 1
    # A worker that died holding a lease loses it when the lease runs out.
    assert actions.take_lease(hand.pk) is not None
    expired = timezone.now() + timedelta(seconds=actions.LEASE_SECONDS + 1)
    assert actions.take_lease(hand.pk, expired) is not None


def test_a_hand_whose_turn_fails_is_set_aside_and_the_others_are_played(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = actions.start_match(bot_table("duz", level="greedy"), by=actions.SYSTEM)
    fine = actions.start_match(bot_table("duz", level="greedy"), by=actions.SYSTEM)
    broken_hand, fine_hand = broken.hands.get(), fine.hands.get()
    play_turn = clock.play_turn

    def fails_for_one(hand_id: int, *args: Any, **kwargs: Any) -> int:
        if hand_id == broken_hand.pk:
            raise RuntimeError("a broken hand")
        return play_turn(hand_id, *args, **kwargs)

    monkeypatch.setattr(clock, "play_turn", fails_for_one)
    assert clock.tick() >= 1
    broken_hand.refresh_from_db()
    fine_hand.refresh_from_db()
    assert broken_hand.version == 0 and broken_hand.lease_owner == "failed"
    assert fine_hand.version >= 1 and fine_hand.lease_owner == ""
    now = timezone.now()
    assert broken_hand.pk not in clock.due_hands(now)  # left alone for a while,
    later = now + timedelta(seconds=actions.FAILED_BACKOFF_SECONDS + 1)
    assert broken_hand.pk in clock.due_hands(later)  # then tried again


def test_it_plays_nothing_while_its_pause_file_exists(settings: Any, tmp_path: Path) -> None:
    table = bot_table("duz")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(31))
    pause = tmp_path / "clock-paused"
    settings.CLOCK_PAUSE_FILE = str(pause)
    pause.touch()
    seen = tmp_path / "clock-paused.seen"
    assert not seen.exists()
    assert clock.paused()
    assert seen.exists()  # whoever paused it knows no pass is playing any more
    assert clock.tick() == 0
    assert not Move.objects.filter(hand__match=match).exists()
    pause.unlink()
    assert not clock.paused()
    assert clock.tick() >= 1  # the bots' turns were due all along
    assert Move.objects.filter(hand__match=match).exists()


def test_a_killed_servers_sockets_stop_counting_within_20_seconds_and_pages_are_told(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    """A daphne killed with -9 closes none of its sockets: within 20 s its players no longer
    show "here", its spectators no longer count as watching, and the clock tells the table's
    pages and the lobby (no heartbeat, close or move needed to make them look again)."""
    from games import reads
    from games.actions import broadcast
    from games.models import Watcher

    table, users = user_table("okey51")
    connect(table, users)
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(31))
    actions.watcher_opened(table.pk, make_user("fan"), "ghost-watcher")
    assert reads.watching([table.pk]) == {table.pk: 1}
    sent: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(broadcast, "send", lambda group, message: sent.append((group, message)))

    # Killed: no close, no more heartbeats. Before the rows go stale, nobody is told anything.
    with django_capture_on_commit_callbacks(execute=True):
        clock.tick(now=timezone.now() + timedelta(seconds=2), grace_seconds=300)
    assert not [m for g, m in sent if g == f"table-{table.pk}"]

    later = timezone.now() + timedelta(seconds=20)
    with django_capture_on_commit_callbacks(execute=True):
        clock.tick(now=later, grace_seconds=300)  # nobody marked away yet
    to_table = [m for g, m in sent if g == f"table-{table.pk}"]
    assert (table.pk, 0) in [(m["table"], m["count"]) for m in to_table if "count" in m]
    assert any(m["type"] == "table.changed" for m in to_table)
    assert any(g == "lobby" for g, _ in sent)
    assert Watcher.objects.filter(seen_at__gte=Presence.fresh_since(later)).count() == 0
    here = Seat.objects.filter(table=table).annotate(here=Presence.here(later))
    assert not any(s.here for s in here)
    # Told once: the next pass finds nothing new to announce.
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        clock.tick(now=later + timedelta(seconds=1), grace_seconds=300)
    assert not [m for g, m in sent if m["type"] == "table.watchers"]


def test_a_stalled_servers_heartbeat_brings_its_players_back_and_tells_the_table(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    """A process that stalled past the freshness window and beats again: its sockets count
    again, and the table's pages are told (they had been told the player was gone)."""
    from games.actions import broadcast

    table, users = user_table("okey51")
    connect(table, users)
    seat = Seat.objects.get(table=table, position=2)
    old = timezone.now() - timedelta(seconds=Presence.FRESH + 1)
    Presence.objects.filter(seat=seat).update(seen_at=old)
    sent: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(broadcast, "send", lambda group, message: sent.append((group, message)))
    with django_capture_on_commit_callbacks(execute=True):
        actions.sockets_alive([f"test-socket-{seat.pk}"], [])
    assert [m["type"] for g, m in sent if g == f"table-{table.pk}"] == ["table.changed"]
    assert Seat.objects.filter(pk=seat.pk).annotate(here=Presence.here()).get().here
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):  # a beat of fresh rows: quiet
        actions.sockets_alive([f"test-socket-{seat.pk}"], [])
    assert sent == []


# ----------------------------------------------------------------------------- idle tables
def test_an_open_table_nobody_has_been_at_for_a_while_closes_and_leaves_the_lobby() -> None:
    """A table a player opened, where no player has been for IDLE_TABLE_MINUTES (no socket
    open, nobody sat down or was seen since), closes: the lobby cannot be filled with tables
    that never expire. The site's own tables (the demo's, an organiser's) stay; so does one
    where a player is connected, or was lately."""
    ensure_variants()
    now = timezone.now()
    long_ago = now - timedelta(minutes=limits.IDLE_TABLE_MINUTES + 1)
    idle = actions.open_table(variant="duz", user=make_user("gone"), name="Idle")
    watched = actions.open_table(variant="duz", user=make_user("here"), name="Here")
    actions.open_table(variant="duz", user=make_user("lately"), name="Lately")  # sat just now
    site = actions.create_table(variant="duz", created_by=None, name="Demo")
    Table.objects.update(created_at=long_ago)
    Seat.objects.filter(table__in=[idle, watched, site]).update(last_seen=long_ago)
    here = Seat.objects.get(table=watched, position=0)
    actions.socket_opened(here, here.user, "idle-test-socket")
    Seat.objects.filter(pk=here.pk).update(last_seen=long_ago)
    assert actions.close_idle_tables(now) == 1
    status = dict(Table.objects.values_list("name", "status"))
    assert status == {
        "Idle": Table.Status.FINISHED,
        "Here": Table.Status.OPEN,
        "Lately": Table.Status.OPEN,
        "Demo": Table.Status.OPEN,
    }
    # Its player may open another at once: it no longer counts as one of theirs.
    assert actions.seats.live_elsewhere(Seat.objects.get(table=idle, position=0).user) is None
    assert actions.close_idle_tables(now) == 0


def test_the_clock_closes_idle_tables_once_a_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    closed: list[Any] = []
    monkeypatch.setattr(actions, "close_idle_tables", lambda now: closed.append(now))
    monkeypatch.setattr(clock, "_idle_tables", clock.Housekeeping(clock.IDLE_TABLES_SECONDS))
    for _ in range(3):
        clock.tick()
    assert len(closed) == 1


# ----------------------------------------------------------------------------- outages
def test_an_outage_is_told_in_one_line_when_it_goes_and_one_when_it_is_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The clock retried every 0.3 s while PostgreSQL was down and logged two tracebacks each
    time (about seven a second): now one line when it goes, one when it answers again."""
    caplog.set_level(logging.INFO, logger="games.clock")
    outage = clock.Outage("the clock")
    for _ in range(20):
        outage.failed(OperationalError("connection refused"))
    assert not outage.settled(0)
    outage.answered()
    outage.answered()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and "unreachable" in lines[0] and "answers again" in lines[1]
    assert not any(r.exc_info for r in caplog.records)
    assert not outage.settled(20) and outage.settled(0)


def test_a_pass_that_cannot_reach_the_database_fails_as_a_whole_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)

    def down(*args: Any) -> None:
        raise OperationalError("the database is down")

    monkeypatch.setattr(actions, "announce_stale_sockets", down)
    with pytest.raises(OperationalError):
        clock.tick()
    assert not [r for r in caplog.records if r.exc_info]


def test_after_an_outage_players_connected_throughout_are_not_marked_away(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Their servers' heartbeats could not write during the outage, so their sockets look
    gone: away is marked again only once the database has answered for the grace period."""
    table, users = user_table("okey51")
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(24))
    Seat.objects.filter(table=table).update(last_seen=timezone.now() - timedelta(minutes=5))
    outage = clock.Outage("the clock")
    monkeypatch.setattr(clock, "outage", outage)
    outage.failed(OperationalError("down"))
    outage.answered()  # back just now
    clock.tick(grace_seconds=20)
    assert not Seat.objects.filter(table=table, away=True).exists()
    outage.back_at -= 21  # the grace period since it came back
    clock.tick(grace_seconds=20)
    assert Seat.objects.filter(table=table, away=True).count() == 4
