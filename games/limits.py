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
# A socket's "refresh" (the table read and rendered again) at most once a second: more are
# answered by one frame at the end of that second.
REFRESH_SECONDS = 1.0
# Refused messages one socket may send in REFUSALS_WINDOW seconds; past that, its messages
# are dropped unread (one refusal says so) until the window has room again.
REFUSALS_ALLOWED = 20
REFUSALS_WINDOW = 10.0

# "New table": open tables (open or playing) one account may have created, and those that
# guest accounts created from one address (a guest is a click away: the address is what
# stays); past them the lobby could be filled by one creator.
OPEN_TABLES_PER_ACCOUNT = 3
OPEN_TABLES_PER_GUEST_ADDRESS = 6
# How many tables one address may ask to open in an hour (counted in the cache, before the
# form is read: accounts.limits.Rate).
NEW_TABLES_PER_HOUR = 12
