"""A table's live socket (``/ws/tables/<id>/``): it pushes each viewer their own fragments and
takes moves as JSON.

Frames out are HTML for the htmx ws extension, swapped by element id (out-of-band):
``#table-live`` after every change, ``#rack-area`` only when the viewer's rack tiles change
(so their arrangement and selection survive other seats' moves), and ``#move-error`` to the
mover alone when a move is refused. Each is rendered from ``reads.table_context`` for this
viewer, in their language. A seat's two fragments come from one read of the table, so the
rack always matches the board sent with it; the spectators' fragment is rendered once per
table state and language in a process, however many spectators watch.

Messages in are JSON, each declared once in ``games.protocol`` (moves, the rack's
arrangement, ready, rematch, hide, sit, leave, "I'm back", the chat's lines and mutes, and
``refresh``) and carried out by ``actions.perform``, exactly as the HTTP fallbacks do; chat
lines go to ``#chat-lines``, outside ``#table-live``. The group broadcast after commit updates
everyone, the mover included.

The socket never polls the database: it renders when a group message says something changed
(every writer publishes after commit, the clock included: see ``server_tasks``). A client that
reconnects or sees a gap in versions asks for the table again (``refresh``).

A seated player's socket has a Presence row, kept fresh by its server process's heartbeat
(``server_tasks``): once every socket of theirs is closed or stale for the grace period, the
clock marks the seat away and a bot keeps it warm.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import time
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.core.exceptions import SynchronousOnlyOperation
from django.template.loader import render_to_string
from django.utils import translation

from accounts.language import of_session
from games import actions, chat, frames, limits, messages, policy, protocol, reads
from games.actions import events
from games.errors import UNREACHABLE, GameError, NotAllowed
from games.live import loop_reads, server_tasks, session_groups, state_cache
from games.live.socket_guard import (
    Bucket,
    Guarded,
    OneRefreshASecond,
    socket_address,
)
from games.models import ChatMessage, Hand, Table

log = logging.getLogger(__name__)


def _off_the_move_thread(fn: Any) -> Any:
    """``database_sync_to_async`` in a pool thread: reads and renders never queue in the one
    thread where the process's writes (a move, a seat) run one after another, so a move is
    not kept waiting behind the frames of the move before it.

    Every database call of a socket goes through ``database_sync_to_async``, which closes
    the calling thread's stale connections before and after the call, in the thread that
    uses them (so no ``aclose_old_connections()``: it would queue a hop in the write thread
    before every frame, for a connection the frame does not use)."""
    return database_sync_to_async(fn, thread_sensitive=False)


class Rack:
    """A seat's rack fragment, rendered the first time a socket sends it: most frames leave
    a seat's rack as it was (a move changes the mover's rack only), and skip it."""

    def __init__(self, context: dict[str, Any], language: str) -> None:
        self.context, self.language = context, language
        self._html: str | None = None

    def html(self) -> str:
        if self._html is None:
            with translation.override(self.language):
                self._html = frames.rack(self.context)
        return self._html


# The close code of a socket refused for too many open sockets (4000-4999: the
# application's own; 4429 as HTTP's "Too Many Requests").
CLOSE_TOO_MANY = 4429

# The answer to a ping: not HTML, so the page's script takes it before the ws extension would
# swap anything.
PONG = "pong"


# What replaces a rack on the page once its seat is no longer the viewer's.
EMPTY_RACK = '<div id="rack-area" class="rack-area" hx-swap-oob="true" data-hand=""></div>'


def language_of(scope: dict[str, Any]) -> str:
    """The viewer's language: the signed-in player's own (the session's, see
    accounts.language), else the language cookie the site sets, else the browser's choice."""

    try:
        # AuthMiddlewareStack has loaded the session (to find the user) before the consumer.
        wanted = of_session(scope.get("session"))
    except SynchronousOnlyOperation:  # a session not loaded yet, read from the event loop
        wanted = None
    if wanted:
        return wanted
    cookies = scope.get("cookies") or {}
    wanted = cookies.get(settings.LANGUAGE_COOKIE_NAME)
    if not wanted:
        headers = dict(scope.get("headers") or [])
        accept = headers.get(b"accept-language", b"").decode("latin-1")
        wanted = accept.split(",")[0].split(";")[0].strip() if accept else ""
    try:
        return translation.get_supported_language_variant(wanted or settings.LANGUAGE_CODE)
    except LookupError:
        return settings.LANGUAGE_CODE


class TableConsumer(Guarded, OneRefreshASecond, server_tasks.QuietSend, AsyncWebsocketConsumer):
    """A table's socket; :class:`Guarded` refuses oversized messages, answers a handler's
    unforeseen failure and cleans up after a socket that ends without its disconnect."""

    table_id: int
    seat_id: int | None = None
    position: int | None = None
    invite: str | None = None
    language: str = "en"
    sent_rack: Any = None
    # The users whose chat lines this viewer muted at the table (loaded when the socket is
    # admitted, kept up to date by chat.muted): their messages are not sent here.
    muted: frozenset[int] = frozenset()
    # The frame being made after a change, and the latest change heard of (see _changed).
    sending: asyncio.Task[None] | None = None
    latest_change: dict[str, Any] | None = None
    changes = 0
    read_next = False  # a change merged into the next frame needs a read (see _changed)
    # The client's address (the limits on sockets per address), refreshes answered once a
    # second (OneRefreshASecond), and when this socket's messages were refused lately (past a
    # number, its messages are dropped for a while).
    address: str | None = None
    refresh_seconds = limits.REFRESH_SECONDS
    refused: collections.deque[float]
    rare_budget: Bucket  # the budget of its rare messages (protocol.Message.rare)
    # The arrangement being saved, and the latest one sent meanwhile (saved next).
    arranging: asyncio.Task[None] | None = None
    next_arrange: protocol.Arrange | None = None
    # The viewer's seat (id, position) in the table last read for a frame (see _follow_seat).
    seen_seat: tuple[int | None, int | None] = (None, None)

    # ------------------------------------------------------------------ connection
    async def connect(self) -> None:
        self.refused = collections.deque()
        self.rare_budget = Bucket(
            limits.RARE_MESSAGES_PER_SECOND, limits.RARE_MESSAGE_BURST, time.monotonic()
        )
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        query = parse_qs(self.scope.get("query_string", b"").decode())
        self.invite = (query.get("invite") or [None])[0]
        self.language = language_of(self.scope)
        allowed = await database_sync_to_async(self._admit)()
        if not allowed:
            await self.close()
            return
        self.address = socket_address(self.scope)
        # In the table's group before the socket is accepted: no change after the client
        # sees the socket open goes unheard.
        await self.channel_layer.group_add(events.table_group(self.table_id), self.channel_name)
        await self.accept()
        if not await self._counted(self.seat_id):
            return
        await session_groups.join(self)
        await self._send_table()

    def _admit(self) -> bool:
        table = Table.objects.filter(pk=self.table_id).prefetch_related("seats").first()
        if table is None:
            return False
        user = self.scope.get("user")
        seats = list(table.seats.all())
        if not policy.can_see(table, seats, user, self.invite):
            return False
        uid = reads.viewer_id(user)
        seat = next((s for s in seats if uid is not None and s.user_id == uid), None)
        if seat is not None:
            self.seat_id, self.position = seat.pk, seat.position
        self.muted = frozenset(reads.muted_ids(self.table_id, user))
        return True

    async def disconnect(self, code: int) -> None:
        server_tasks.socket_closed("table", self.channel_name)
        server_tasks.socket_closed("watch", self.channel_name)
        for task in (self.sending, self.refreshing, self.arranging):
            if task is not None:
                task.cancel()
        if not hasattr(self, "table_id"):
            return
        await self.channel_layer.group_discard(events.table_group(self.table_id), self.channel_name)
        await session_groups.leave(self)
        if self.seat_id is not None:
            await database_sync_to_async(actions.socket_closed)(self.channel_name)
        else:
            await database_sync_to_async(actions.watcher_closed)(self.channel_name)

    # ------------------------------------------------------------------ messages in
    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Every message is read through ``games.protocol`` and carried out by
        ``actions.perform``, as the HTTP fallbacks do; a refusal goes to this socket alone."""
        try:
            data = json.loads(text_data or "")
        except (ValueError, RecursionError):  # not JSON, or nested too deep to read
            data = None
        try:
            message = protocol.parse(data)
        except GameError as exc:
            await self._refuse(exc)
            return
        if isinstance(message, protocol.Refresh):
            self._refresh()
            return
        if isinstance(message, protocol.Ping):
            # The page's heartbeat after a silence: any answer proves the way back works.
            await self.send(text_data=PONG)
            return
        if self._refusing():
            return
        if message.rare and not self.rare_budget.take(time.monotonic()):
            self._tell_too_fast("too many messages: slow down")
            return
        if isinstance(message, protocol.Arrange):
            # Only the latest arrangement matters: one being saved, the next waits, and any
            # sent meanwhile replace it (a drag sends one per drop).
            self.next_arrange = message
            if self.arranging is None or self.arranging.done():
                self.arranging = asyncio.create_task(self._save_arrangements())
            return
        if self.arranging is not None and not self.arranging.done():
            await self.arranging  # a move reads the arrangement sent before it
        if isinstance(message, protocol.Weigh):
            await self._weigh(message)
            return
        await self._perform(message)

    async def _save_arrangements(self) -> None:
        """Save the latest arrangement sent until none is left (a task of its own: failures
        are answered here, as ``Guarded`` answers a handler's)."""
        try:
            while self.next_arrange is not None:
                message, self.next_arrange = self.next_arrange, None
                await self._perform(message)
        except UNREACHABLE as exc:
            log.warning("an arrangement at table %s failed: %s", self.table_id, exc)
            await self._refuse(GameError("unavailable", "the database is unreachable"))
        except Exception:
            log.exception("an arrangement at table %s failed", self.table_id)
            await self._refuse(GameError("server_error", "the server failed to save that"))

    async def _perform(self, message: protocol.Message) -> None:
        """Carry out a message (``actions.perform``); a refusal goes to this socket alone."""
        move_id = message.client_move_id if isinstance(message, protocol.Move) else None
        sender = actions.Sender(self.table_id, self.scope.get("user"), self.position, self.invite)
        try:
            await database_sync_to_async(actions.perform)(message, sender)
        except UNREACHABLE as exc:
            if not isinstance(message, protocol.Move):
                raise
            # Answered with the move's id: the page knows this move was not confirmed, and
            # may send it again (its version and id keep it from being played twice).
            log.warning("a move at table %s failed: %s", self.table_id, exc)
            await self._refuse(GameError("unavailable", "the database is unreachable"), move_id)
        except GameError as exc:
            self.refused.append(time.monotonic())
            await self._refuse(exc, move_id)
            if isinstance(message, protocol.Arrange) or exc.code in ("stale_version", "hand_over"):
                # Put the server's arrangement (or the table as it is now) back on screen.
                self.sent_rack = None
                await self._send_table()

    async def _answer_refresh(self) -> None:
        """A refresh: the table as it is now (the rack only if it changed since this socket
        sent it, so a selection on screen survives), at most once per ``REFRESH_SECONDS``."""
        await self._send_table()

    def _refusing(self) -> bool:
        """Past ``REFUSALS_ALLOWED`` refused messages in ``REFUSALS_WINDOW`` seconds, the
        socket's messages are dropped unread (no database work) until the window has room;
        one refusal says so. (A page that plays never comes near: a move is refused only when
        the player's view was out of date.)"""
        now = time.monotonic()
        while self.refused and self.refused[0] < now - limits.REFUSALS_WINDOW:
            self.refused.popleft()
        if len(self.refused) < limits.REFUSALS_ALLOWED:
            return False
        self._tell_too_fast("too many refused messages: wait a few seconds")
        return True

    async def _weigh(self, message: protocol.Weigh) -> None:
        """Tell the seat's page what its stand's groups and selected tiles are worth (a read of
        the hand: ``reads.rack_weight``); a spectator, or a page whose rack is out of date, is
        answered with nothing."""
        if self.position is None:
            return

        def weighed() -> str:
            weight = reads.rack_weight(
                self.table_id, message.hand, self.position, message.layout, message.slots
            )
            with translation.override(self.language):
                return str(frames.rack_weight(weight)) if weight is not None else ""

        html = await database_sync_to_async(weighed)()
        if html:
            await self.send(text_data=html)

    async def _refuse(self, exc: GameError, move_id: Any = None) -> None:
        """Tell this socket alone why its request was refused, in its language."""
        with translation.override(self.language):
            html = render_to_string(
                "games/_move_error.html",
                {"code": exc.code, "text": messages.refused(exc), "move_id": move_id},
            )
        await self.send(text_data=html)

    # ------------------------------------------------------------------ frames out
    async def _send_table(
        self, change: str | None = None, event: dict[str, Any] | None = None
    ) -> None:
        """Send this viewer's fragments. ``change``: the id of the group message (``event``)
        that says the table changed; the table is then made once for all its sockets in this
        process (``_state_of_change``), and each distinct view (a seat, or the spectators of
        one language and invite) rendered once, however many sockets show it."""
        try:
            if change is None:
                live, rack, rack_key = await _off_the_move_thread(self._render)(None)
            else:
                state = await state_cache.once(
                    ("state", self.table_id, change), lambda: self._state_of_change(event or {})
                )
                user = self.scope.get("user")
                policy.check_see(state.table, state.seats, user, self.invite)
                self.seen_seat = self._seat_in(state)
                position = self.seen_seat[1]
                view = (position, self.language, self.invite)
                live, rack, rack_key = await state_cache.once(
                    ("view", self.table_id, change, *view), lambda: self._render_read(state)
                )
                if rack is not None and rack_key != self.sent_rack:
                    if position in state.stale_layouts:
                        # The rack goes out, but the seat may have arranged it since the state
                        # was read: this socket reads the table for its frame.
                        live, rack, rack_key = await _off_the_move_thread(self._render)(None)
        except (Table.DoesNotExist, Hand.DoesNotExist, NotAllowed):
            # The table (or its hand) was deleted, or this viewer may no longer see it.
            await self.close(code=4404)
            return
        await self._follow_seat()
        if rack is not None and rack_key != self.sent_rack:
            self.sent_rack = rack_key
            live += rack.html()
        elif rack is None and self.sent_rack is not None:
            # The seat was given up (or handed to a bot): its rack leaves the page.
            self.sent_rack = None
            live += EMPTY_RACK
        await self.send(text_data=live)

    async def _follow_seat(self) -> None:
        """The viewer sat down, stood up or left since this socket last looked (the frame
        just made says which seat they hold): the socket becomes that seat's, or a
        spectator's, at once, so a page never needs a reload to play or to stop playing.
        The presence rows follow: "here" at the seat, or one more watching."""
        seat_id, position = self.seen_seat
        if seat_id == self.seat_id:
            self.position = position
            return
        was = self.seat_id
        # Set before any await: a frame made meanwhile finds the switch done.
        self.seat_id, self.position = seat_id, position
        channel = self.channel_name
        if was is None:
            server_tasks.socket_closed("watch", channel)
            await database_sync_to_async(actions.watcher_closed)(channel)
        else:
            server_tasks.socket_closed("table", channel)
            await database_sync_to_async(actions.socket_closed)(channel)
        await self._counted(seat_id)

    async def _counted(self, seat_id: int | None) -> bool:
        """Count this socket as the seat's (``seat_id``: "here") or as one more watching, and
        heartbeat it; past the limits on sockets per account or address it is told why and
        closed (False)."""
        channel, user = self.channel_name, self.scope.get("user")
        try:
            if seat_id is not None:
                await database_sync_to_async(actions.socket_opened)(
                    seat_id, user, channel, self.address
                )
                server_tasks.socket_opened("table", channel)
            else:
                await database_sync_to_async(actions.watcher_opened)(
                    self.table_id, user, channel, self.address
                )
                server_tasks.socket_opened("watch", channel)
        except GameError as exc:  # too many sockets from this account or address
            await self._refuse(exc)
            await self.close(code=CLOSE_TOO_MANY)
            return False
        return True

    async def _state_of_change(self, event: dict[str, Any]) -> reads.TableState:
        """The table after the change ``event`` tells of. A move (``hand.moved`` with its
        ``apply`` part) brings forward the state this process made last for the table (read,
        or brought forward itself; awaited if still being made), when that state is the hand
        at the version before and was read less than ``KEEP_SECONDS`` ago: no read, only the
        engine's move on a copy (``reads.state_after_move``). Anything else, or a gap in
        versions (a message lost or coalesced, a process that just started), reads the table.
        Runs as the ``state_cache.once`` task of the change, which is kept as the table's latest."""
        made = asyncio.current_task()
        held = state_cache.kept(self.table_id)
        if made is not None:
            state_cache.keep(self.table_id, made)
        apply = event.get("apply") if event.get("type") == events.HAND_MOVED else None
        state = None
        if isinstance(apply, dict) and held is not None and held is not made:
            state = await state_cache.made_by(held)
        if state is not None:
            state = state_cache.with_fresher_seats(state)
            hand, hand_id, version = state.hand, event.get("hand"), event.get("version")
            young = state_cache.young(state)
            if young and hand is not None and hand.pk == hand_id and isinstance(version, int):
                if hand.version >= version:
                    return state  # read after the move had committed: it has it
                seat = event.get("seat", -1)
                after = reads.state_after_move(state, hand_id, version, seat, apply)
                if after is not None:
                    return after
        return await self._read_state()

    async def _read_state(self) -> reads.TableState:
        """The table after a change: on the event loop where the server has a pool for it
        (``games.live.loop_reads``), else in a pool thread."""
        state = await loop_reads.table_state(self.table_id)
        if state is None:
            state = await _off_the_move_thread(reads.table_state)(self.table_id)
        return state

    async def _render_read(self, state: reads.TableState) -> tuple[str, Rack | None, Any]:
        """:meth:`_render` of a state already read, here on the event loop: it reads nothing
        (Django would refuse a query here), and a hop to a thread would only add its wait
        for the GIL (up to the 5 ms switch interval while another thread renders)."""
        return self._render(state)

    def _seat_in(self, state: reads.TableState) -> tuple[int | None, int | None]:
        """The viewer's seat at the table as ``state`` has it: its id and position (None,
        None: a spectator)."""
        uid = reads.viewer_id(self.scope.get("user"))
        seat = next((s for s in state.seats if uid and s.user_id == uid), None)
        return (seat.pk, seat.position) if seat is not None else (None, None)

    def _render(self, state: reads.TableState | None) -> tuple[str, Rack | None, Any]:
        """The live fragment and, for a seat, its rack fragment (rendered when first sent)
        and what the rack holds, from one read of the table (``state``, else read now): the
        rack, and whether it changed, always match the board sent with it."""
        user = self.scope.get("user")
        if state is None:
            state = reads.table_state(self.table_id)
            self.seen_seat = self._seat_in(state)
        position = self._seat_in(state)[1]
        with translation.override(self.language):
            context = reads.table_context(self.table_id, user, self.invite, state=state)
            live = frames.live(context)
        rack = Rack(context, self.language) if position is not None else None
        hand, view = context["hand"], context["view"]
        rack_key = None
        if position is not None and hand is not None:
            rack_key = (hand["id"], tuple(sorted(view["rack"])) if view is not None else ())
        return live, rack, rack_key

    # Group messages from the actions (sent after commit): render the table as it is now.
    @events.handles(events.HAND_MOVED)
    async def hand_moved(self, event: dict[str, Any]) -> None:
        self._changed(event)

    @events.handles(events.HAND_DEALT)
    async def hand_dealt(self, event: dict[str, Any]) -> None:
        self.sent_rack = None
        self._changed(event)
        if event.get("match"):
            # A new match (a rematch): the chat shows the new match's window. (The muted set
            # stays: a line from someone in it is checked against the mutes of its time.)
            html = await database_sync_to_async(self._chat_lines)()
            if html:
                await self.send(text_data=html)

    @events.handles(events.TABLE_CHANGED)
    async def table_changed(self, event: dict[str, Any]) -> None:
        self._changed(event)

    @events.handles(events.LAYER_RESUMED)
    async def layer_resumed(self, event: dict[str, Any]) -> None:
        """Redis failed and answers again (``okeysite.channel_layers``): the changes published
        meanwhile were lost, so this socket reads the table and sends it as it is now."""
        self._changed(dict(events.table_changed(self.table_id)))

    def _changed(self, event: dict[str, Any]) -> None:
        """The table changed: send the table as it is now, once this socket's frame being
        made (if any) has gone. Changes that arrive meanwhile are sent as one frame, the
        latest: every frame is the whole table, so a skipped one loses nothing, and a burst
        (a reconnecting table, a fast bot) costs one frame, not one per change. A change
        that no move can carry forward (anything but a move's message with its ``apply``
        part: a seat, a hidden hand, a new hand) is never merged away: the frame that
        merges it reads the table."""
        if not (event.get("type") == events.HAND_MOVED and isinstance(event.get("apply"), dict)):
            self.read_next = True
        self.latest_change = event
        self.changes += 1
        if self.sending is None or self.sending.done():
            self.sending = asyncio.create_task(self._send_latest())

    async def _send_latest(self) -> None:
        sent = 0
        while sent != self.changes:
            sent = self.changes
            event = self.latest_change or {}
            if self.read_next:
                self.read_next = False
                if "apply" in event:
                    # Its own change id with the apply part: the read is not the kept path.
                    event = {k: v for k, v in event.items() if k != "apply"}
                    event["change"] = f"{event.get('change')}:read"
            try:
                await self._send_table(event.get("change"), event)
            except Exception:  # a task's error would go unseen: log it, the next change retries
                log.exception("a frame for table %s failed", self.table_id)

    @events.handles(events.SESSION_ENDED)
    async def session_ended(self, event: dict[str, Any]) -> None:
        """The session this socket was opened with ended: it plays and chats no more."""
        await self.close(code=session_groups.CLOSE_SESSION_ENDED)

    @events.handles(events.TABLE_WATCHERS)
    async def table_watchers(self, event: dict[str, Any]) -> None:
        """How many watch now (counted once by the actions): a small fragment, no query."""
        with translation.override(self.language):
            html = render_to_string("games/_watchers.html", {"watching": event["count"]})
        await self.send(text_data=html)

    # ------------------------------------------------------------------ chat
    # Chat is beside the board: its fragments go to #chat-lines and #chat-form (outside
    # #table-live), so the board's frames never touch it, and it never changes the hand.
    @events.handles(events.CHAT_MESSAGE)
    async def chat_message(self, event: dict[str, Any]) -> None:
        """A new line: appended to #chat-lines, unless this viewer muted its author."""
        author = event.get("user")
        if author in self.muted:
            if await database_sync_to_async(self._muted_when_said)(event["id"], author):
                return
        html = await database_sync_to_async(self._chat_line)(event["id"])
        if html:
            await self.send(text_data=html)

    def _muted_when_said(self, message_id: int, author: int) -> bool:
        """Was the author muted by this viewer when the message was said? (A mute ends with
        the match it was made in: this socket's set is read again.)"""
        user = self.scope.get("user")
        self.muted = frozenset(reads.muted_ids(self.table_id, user))
        said = ChatMessage.objects.filter(pk=message_id).values_list("created_at", flat=True)
        at = said.first()
        return at is None or author in reads.muted_ids(self.table_id, user, at)

    def _chat_line(self, message_id: int) -> str:
        """A line's fragment, rendered once per message and language in this process (a
        line looks the same to every reader of one language)."""
        key = ("chat", message_id, self.language)
        html = state_cache.chat_lines.get(key)
        if html is None:
            message = ChatMessage.objects.filter(pk=message_id, table_id=self.table_id).first()
            if message is None:  # deleted in the meantime
                return ""
            with translation.override(self.language):
                line = render_to_string(
                    "games/_chat_line.html", {"line": chat.line(message), "shared": True}
                )
            html = f'<ol id="chat-lines" hx-swap-oob="beforeend">{line}</ol>'
            state_cache.chat_lines.put(key, html)
        return html

    @events.handles(events.CHAT_DELETED)
    async def chat_deleted(self, event: dict[str, Any]) -> None:
        """Staff removed a line: it goes from every page (no query)."""
        message_id = int(event["id"])
        for code, _name in settings.LANGUAGES:
            state_cache.chat_lines.forget(("chat", message_id, code))
        await self.send(text_data=f'<li id="chat-line-{message_id}" hx-swap-oob="delete"></li>')

    @events.handles(events.CHAT_MUTED)
    async def chat_muted(self, event: dict[str, Any]) -> None:
        """The viewer (on any of their sockets) muted or unmuted someone: this socket's set
        changes and its list is sent again without (or with) that person's lines."""
        if event.get("user") != reads.viewer_id(self.scope.get("user")):
            return
        muted = int(event["muted"])
        self.muted = self.muted | {muted} if event.get("on") else self.muted - {muted}
        html = await database_sync_to_async(self._chat_lines)()
        if html:
            await self.send(text_data=html)

    def _chat_lines(self) -> str:
        try:
            with translation.override(self.language):
                context = reads.chat_context(self.table_id, self.scope.get("user"), self.invite)
                return render_to_string("games/table.html#chat_lines", {"chat": context})
        except (Table.DoesNotExist, NotAllowed):
            return ""

    @events.handles(events.CHAT_CHANGED)
    async def chat_changed(self, event: dict[str, Any]) -> None:
        """Staff turned the table's chat on or off: the input, or the notice (no query)."""
        signed_in = reads.viewer_id(self.scope.get("user")) is not None
        enabled = bool(event.get("enabled"))
        with translation.override(self.language):
            context = {
                "table_id": self.table_id,
                "enabled": enabled,
                "signed_in": signed_in,
                "can_send": enabled and signed_in,
                "canned": chat.canned_buttons(),
                "max_length": chat.MAX_LENGTH,
                "invite": self.invite,
            }
            html = render_to_string("games/table.html#chat_form", {"chat": context})
        await self.send(text_data=html)
