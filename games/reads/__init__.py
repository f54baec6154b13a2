"""Reading the games: plain data for pages and sockets, never a write.

- ``sql``: the hottest reads, written out in SQL (the table and its seats, the shown hand, a
  move's locked read, the page's counts, the lobby's list, the chat's lines);
- ``tables``: a table's state, read once per change and shared by every viewer, and each
  viewer's context built from the engine's per-seat view (or its public view);
- ``lobby``: the lobby's list, players online, a table's pre-match seat controls;
- ``stats``: a player's statistics per variant.
"""

from games.reads.lobby import (
    LOBBY_SIZE,
    invite_path,
    live_seat,
    lobby_context,
    lobby_tables,
    online_count,
    seat_controls,
    variants,
)
from games.reads.sql import (
    LobbyList,
    LockedHand,
    PageCounts,
    chat_lines,
    hand_moves,
    hand_query,
    latest_hand,
    latest_hand_of,
    lobby_list,
    locked_hand,
    page_counts,
    seats_query,
    table_and_seats,
    table_and_seats_of,
)
from games.reads.stats import player_stats
from games.reads.tables import (
    LOG_MOVES,
    RackSorts,
    TableState,
    bot_level_name,
    chat_context,
    current_hand,
    holder_name,
    latest_match,
    latest_matches,
    muted_ids,
    rack_weight,
    shown_hand,
    state_after_move,
    state_of_hand,
    table_context,
    table_state,
    table_with_seats,
    viewer_id,
    watching,
)

__all__ = [
    "LOBBY_SIZE",
    "LOG_MOVES",
    "LobbyList",
    "LockedHand",
    "PageCounts",
    "RackSorts",
    "rack_weight",
    "TableState",
    "bot_level_name",
    "chat_context",
    "chat_lines",
    "current_hand",
    "hand_moves",
    "hand_query",
    "holder_name",
    "invite_path",
    "latest_hand",
    "latest_hand_of",
    "latest_match",
    "latest_matches",
    "live_seat",
    "lobby_context",
    "lobby_list",
    "lobby_tables",
    "locked_hand",
    "muted_ids",
    "online_count",
    "page_counts",
    "player_stats",
    "seat_controls",
    "seats_query",
    "shown_hand",
    "state_after_move",
    "state_of_hand",
    "table_and_seats",
    "table_and_seats_of",
    "table_context",
    "table_state",
    "table_with_seats",
    "variants",
    "viewer_id",
    "watching",
]
