"""How big a client's message may be, on a socket or in a form post of the same message.

The biggest a client sends is a rack's layout (about 30 tile codes) or a chat line of 200
characters, far below ``MAX_MESSAGE_LENGTH``: anything longer is refused unread. Daphne's own
cap (``manage.py serve`` and the Procfile) closes a socket on anything past
``SERVER_MAX_MESSAGE_BYTES``.
"""

MAX_MESSAGE_LENGTH = 8 * 1024
SERVER_MAX_MESSAGE_BYTES = 64 * 1024
