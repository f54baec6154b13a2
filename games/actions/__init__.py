"""The only code that writes game state: one module per thing it changes.

Every change follows one pattern ("check, then do, then tell on commit"): open a transaction,
lock the rows it touches, check with ``games.policy``, apply through the engine, write, and
send the change to the sockets only after the commit (``events``). Pages, sockets, the admin
and the clock call these functions and nothing else.

- ``tables``: open a table, change its settings, a new invite, hide the hand from spectators;
- ``seats``: sit, stand, leave, "I'm back", bots, staff removing a player, "New table" and
  "Play now";
- ``quick_play``: "Play now" seats people together; bots fill a forming table's empty seats;
- ``requests``: a client's message to a table (``games.protocol``) carried out;
- ``matches``: start, deal, close a hand and its match, the next hand, end a match;
- ``moves``: a seat's move and its rack's arrangement;
- ``leases``: what the clock writes (a hand leased to one worker, a timed-out turn claimed);
- ``presence``: sockets opened and closed, the heartbeat, players marked away;
- ``chat``: what is said at a table, mutes, staff deleting a line;
- ``events``: every message sent to the sockets and to the other apps;
- ``broadcast``: how a message reaches the channel layer after commit.
"""

from games.actions.chat import delete_chat_message, mute_chat, send_chat, unmute_chat
from games.actions.events import LOBBY_GROUP, table_group
from games.actions.leases import (
    FAILED_BACKOFF_SECONDS,
    LEASE_SECONDS,
    claim_timeout,
    release_lease,
    set_aside,
    take_lease,
)
from games.actions.matches import deal_next_hand, end_match, ready, rematch, start_match
from games.actions.moves import Played, arrange, play, submit
from games.actions.presence import (
    announce_stale_sockets,
    close_idle_tables,
    lobby_socket_closed,
    lobby_socket_opened,
    mark_gone_players_away,
    sessions_ended,
    socket_closed,
    socket_opened,
    sockets_alive,
    watcher_closed,
    watcher_opened,
)
from games.actions.quick_play import fill_with_bots, quick_play, start_with_bots
from games.actions.requests import Sender, perform
from games.actions.seats import (
    PLAY_NOW_LEVEL,
    PLAY_NOW_LEVELS,
    add_bot,
    come_back,
    leave,
    leave_table,
    open_table,
    play_now,
    remove_bot,
    remove_player,
    sit,
    stand,
)
from games.actions.tables import (
    check_table_settings,
    create_table,
    hide_from_spectators,
    name_changed,
    rotate_invite,
    update_table,
)
from games.errors import GameError, NotAllowed, StaleVersion
from games.policy import BOT, CLOCK, SYSTEM

__all__ = [
    "BOT",
    "CLOCK",
    "FAILED_BACKOFF_SECONDS",
    "LEASE_SECONDS",
    "LOBBY_GROUP",
    "PLAY_NOW_LEVEL",
    "PLAY_NOW_LEVELS",
    "SYSTEM",
    "Sender",
    "GameError",
    "NotAllowed",
    "Played",
    "StaleVersion",
    "add_bot",
    "arrange",
    "check_table_settings",
    "claim_timeout",
    "come_back",
    "create_table",
    "deal_next_hand",
    "delete_chat_message",
    "end_match",
    "fill_with_bots",
    "hide_from_spectators",
    "leave",
    "leave_table",
    "lobby_socket_closed",
    "lobby_socket_opened",
    "announce_stale_sockets",
    "mark_gone_players_away",
    "close_idle_tables",
    "mute_chat",
    "name_changed",
    "open_table",
    "perform",
    "play",
    "play_now",
    "quick_play",
    "ready",
    "rematch",
    "release_lease",
    "remove_bot",
    "remove_player",
    "rotate_invite",
    "send_chat",
    "sessions_ended",
    "set_aside",
    "sit",
    "socket_closed",
    "socket_opened",
    "sockets_alive",
    "stand",
    "start_match",
    "start_with_bots",
    "submit",
    "table_group",
    "take_lease",
    "unmute_chat",
    "update_table",
    "watcher_closed",
    "watcher_opened",
]
