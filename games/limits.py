"""How big a client's message may be, on a socket or in a form post of the same message, and
how many sockets and refused messages a client may cost the server.

The biggest a client sends is a rack's layout (about 30 tile codes) or a chat line of 200
characters, far below ``MAX_MESSAGE_LENGTH``: anything longer is refused unread. Daphne's own
cap (``manage.py serve`` and the Procfile) closes a socket on anything past
``SERVER_MAX_MESSAGE_BYTES``.
"""

MAX_MESSAGE_LENGTH = 8 * 1024
SERVER_MAX_MESSAGE_BYTES = 64 * 1024

# What one client may cost a table socket's server (docs/SECURITY.md, "Floods"): open table
# sockets (fresh Presence and Watcher rows, across every server process) per user or address
# on one table, and in all; a place behind one address (a café, a school) still fits several
# tables of players and their spectators.
SOCKETS_PER_TABLE = 8
SOCKETS_PER_USER = 16
SOCKETS_PER_ADDRESS = 64
# Lobby sockets open at once in one server process, per account and per address (a lobby
# socket reads and renders the whole table list on every change; a person needs one a tab).
# Counted in the process, in one step with no wait between the count and the take, so a burst
# of connects cannot overtake it.
LOBBY_SOCKETS_PER_USER = 8
LOBBY_SOCKETS_PER_ADDRESS = 32
# A socket's "refresh" (the table read and rendered again) at most once a second: more are
# answered by one frame at the end of that second.
REFRESH_SECONDS = 1.0
# Refused messages one socket may send in REFUSALS_WINDOW seconds; past that, its messages
# are dropped unread (one refusal says so) until the window has room again.
REFUSALS_ALLOWED = 20
REFUSALS_WINDOW = 10.0

# A budget on every message a socket sends, accepted, refused or unreadable (token buckets:
# MESSAGES_PER_SECOND refilled, up to a burst of MESSAGE_BURST). A fast player dragging tiles
# sends an arrangement and a weighing per drop, three or four drops a second at most, plus a
# heartbeat; a whole-rack arrangement is one message. Per socket, per account (all its
# sockets in one server process) and per address (a café of players). Past a budget the
# message is dropped unread; a socket that keeps on past MESSAGES_DROPPED_BEFORE_CLOSE dropped
# messages is closed with CLOSE_TOO_FAST.
MESSAGES_PER_SECOND = 10.0
MESSAGE_BURST = 40
ACCOUNT_MESSAGES_PER_SECOND = 20.0
ACCOUNT_MESSAGE_BURST = 80
ADDRESS_MESSAGES_PER_SECOND = 60.0
ADDRESS_MESSAGE_BURST = 240
MESSAGES_DROPPED_BEFORE_CLOSE = 200
# Within it, the messages a person sends a few times a minute and that write (sit, leave,
# back, ready, rematch, hide, the chat's): one every two seconds, bursts of 6, per socket.
# Each costs a write and a frame for everyone at the table (a flood of them took another
# table's moves from 21 to 100 ms at the median, measured).
RARE_MESSAGES_PER_SECOND = 0.5
RARE_MESSAGE_BURST = 6
# 4000-4999 are the application's own close codes; 4408: the client sent too fast.
CLOSE_TOO_FAST = 4408
# The same messages over HTTP (a page without a socket), counted in the cache across
# processes before anything is read: per account (or address, signed out) and per address.
HTTP_MESSAGES_PER_ACCOUNT = "300/m"
HTTP_MESSAGES_PER_ADDRESS = "1200/m"

# "New table": open tables (open or playing) one account may have created, and those that
# guest accounts created from one address (a guest is a click away: the address is what
# stays); past them the lobby could be filled by one creator.
OPEN_TABLES_PER_ACCOUNT = 3
OPEN_TABLES_PER_GUEST_ADDRESS = 6
# How many tables one address may ask to open in an hour (counted in the cache, before the
# form is read: accounts.limits.Rate).
NEW_TABLES_PER_HOUR = 12

# An open table a player opened where no player has been for this long closes (its players
# gone, nobody connected): the lobby cannot be filled with tables that never expire. The
# site's own tables (the demo's, an organiser's) are not closed.
IDLE_TABLE_MINUTES = 30
