"""What a server process keeps of what it read and rendered, so that a change is read once
and each distinct view rendered once, however many sockets show it. Every such cache of the
site is here, bounded, and made again from the database whenever it is missing or stale.

- **Kept states** (:func:`kept`, :func:`keep`): by table, the latest ``reads.TableState`` this
  process made (the task that read it, or brought it forward by a move). A move's frame brings
  it forward instead of reading the table again (``table_socket._state_of_change``).
- **Once per change** (:func:`once`): after a change, by its id, the table's state and each
  distinct view of it, being made or made lately; the other sockets await the same work.
- **Rendered fragments** (:class:`RenderCache`): chat lines by message and language
  (``chat_lines``), and the lobby's "New table" form by language and variants (``forms``).

The table and its seats (who sits, their names, who is ``here``) as a kept state has them are
as of its read: a move does not change them, and every change to them is announced, and read.
The sockets of a server process that died go stale without a message (``Presence.FRESH``):
the clock's next pass announces them (``actions.announce_stale_sockets``), and marks their
seats away after the grace period, announced too. As a
safety net for anything unannounced (a row edited by hand), while moves bring a state forward
its table and seats are read again in the background once ``REFRESH_SECONDS`` old (off the
move's frame: the next move takes them), and a state whose seats are ``KEEP_SECONDS`` old is
not brought forward but read.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar

from channels.db import database_sync_to_async
from django.core.signals import setting_changed
from django.dispatch import receiver

from games import reads
from games.live import loop_reads
from games.models import Table

log = logging.getLogger(__name__)

T = TypeVar("T")

REFRESH_SECONDS = 60.0
KEEP_SECONDS = 180.0


# ----------------------------------------------------------------------------- rendered
class RenderCache:
    """Rendered HTML by key, the least lately used dropped past ``size``; safe to share
    between the threads that render."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._html: OrderedDict[tuple[Any, ...], str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> str | None:
        with self._lock:
            html = self._html.get(key)
            if html is not None:
                self._html.move_to_end(key)
            return html

    def put(self, key: tuple[Any, ...], html: str) -> None:
        with self._lock:
            self._html[key] = html
            self._html.move_to_end(key)
            while len(self._html) > self.size:
                self._html.popitem(last=False)

    def forget(self, key: tuple[Any, ...]) -> None:
        with self._lock:
            self._html.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._html.clear()


chat_lines = RenderCache(512)
forms = RenderCache(32)


@receiver(setting_changed, dispatch_uid="games.live.state_cache.forget_forms")
def _forget_forms(*, setting: str, **kwargs: Any) -> None:
    """Other catalogues or settings (tests): render the form again."""
    forms.clear()


# ----------------------------------------------------------------------------- once
_ONCE: OrderedDict[tuple[Any, ...], asyncio.Future[Any]] = OrderedDict()
_ONCE_MAX = 512


async def once(key: tuple[Any, ...], make: Callable[[], Awaitable[T]]) -> T:
    """``await make()``, shared by every caller with the same ``key`` in this process."""
    made = _ONCE.get(key)
    if made is None or made.get_loop() is not asyncio.get_running_loop():
        made = asyncio.ensure_future(make())
        _ONCE[key] = made
        while len(_ONCE) > _ONCE_MAX:
            _ONCE.popitem(last=False)
    # A socket that closes while waiting leaves the work running for the others.
    return await asyncio.shield(made)


# ----------------------------------------------------------------------------- kept states
_KEPT: OrderedDict[int, asyncio.Future[reads.TableState]] = OrderedDict()
_KEPT_MAX = 1024
# The table and seats read again in the background, by table, with when the read began.
_SEATS: OrderedDict[int, tuple[Table, tuple[Any, ...], float]] = OrderedDict()
_REFRESHING: set[int] = set()
_BACKGROUND: set[asyncio.Task[None]] = set()  # the refreshes running (a task needs a holder)


def kept(table_id: int) -> asyncio.Future[reads.TableState] | None:
    """The task that made the table's latest state in this process, if any."""
    return _KEPT.get(table_id)


def keep(table_id: int, made: asyncio.Future[reads.TableState]) -> None:
    """``made`` makes the table's latest state from now on."""
    _KEPT[table_id] = made
    _KEPT.move_to_end(table_id)
    while len(_KEPT) > _KEPT_MAX:
        _KEPT.popitem(last=False)
    # The least lately changed first: drop those no move can be brought forward from.
    while _KEPT:
        oldest = next(iter(_KEPT.values()))
        if not oldest.done() or not _expired(oldest):
            break
        _KEPT.popitem(last=False)


def young(state: reads.TableState) -> bool:
    """Whether a move may bring ``state`` forward: its seats were read lately enough."""
    return time.monotonic() - state.read_at < KEEP_SECONDS


def _expired(made: asyncio.Future[reads.TableState]) -> bool:
    if made.cancelled() or made.exception() is not None:
        return True
    return not young(made.result())


async def made_by(held: asyncio.Future[reads.TableState]) -> reads.TableState | None:
    """The state a kept task made (awaited if it is still being made); None if it failed, or
    belongs to another event loop (tests run several)."""
    if held.get_loop() is not asyncio.get_running_loop():
        return None
    try:
        return await asyncio.shield(held)
    except asyncio.CancelledError:
        if held.cancelled():  # the loop is closing, or it was cancelled: not this task
            return None
        raise
    except Exception:
        return None


def with_fresher_seats(state: reads.TableState) -> reads.TableState:
    """``state`` with the table and seats read again in the background since its read, if
    any (a read that began after ``state``'s was made has seen at least what it saw); and a
    new background read begun if its seats are ``REFRESH_SECONDS`` old."""
    table_id = state.table.pk
    fresher = _SEATS.pop(table_id, None)
    if fresher is not None and fresher[2] > state.read_at:
        table, seats, read_at = fresher
        state = replace(state, table=table, seats=seats, read_at=read_at)
    if time.monotonic() - state.read_at >= REFRESH_SECONDS and table_id not in _REFRESHING:
        _REFRESHING.add(table_id)
        task = asyncio.ensure_future(_read_seats(table_id))
        _BACKGROUND.add(task)
        task.add_done_callback(_BACKGROUND.discard)
    return state


async def _read_seats(table_id: int) -> None:
    """Read the table and its seats for :func:`with_fresher_seats` (on the loop where the
    server reads there, else in a pool thread)."""
    began = time.monotonic()
    try:
        found = await loop_reads.table_and_seats(table_id)
        if found is None:
            read = database_sync_to_async(reads.table_and_seats, thread_sensitive=False)
            found = await read(table_id)
    except Table.DoesNotExist:
        return
    except Exception:  # the next move's frame tries again, or reads once KEEP_SECONDS pass
        log.exception("reading the seats of table %s failed", table_id)
        return
    finally:
        _REFRESHING.discard(table_id)
    _SEATS[table_id] = (*found, began)
    while len(_SEATS) > _KEPT_MAX:
        _SEATS.popitem(last=False)
