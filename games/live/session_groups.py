"""A signed-in socket's place in its user's and its session's groups, so that a session that
ends (a log-out, a new password, a deactivated account: ``actions.sessions_ended``) closes the
sockets opened with it. Channels reads ``scope["user"]`` once, at connect: without this a
copied session signed out over HTTP could go on playing over a socket opened before."""

from __future__ import annotations

from typing import Any

from games import reads
from games.actions import events

# The close code of a socket whose session ended (4000-4999: the application's own; 4401 as
# HTTP's "Unauthorized"). The page opens a new socket, signed in or not as its session now is.
CLOSE_SESSION_ENDED = 4401


def _groups(consumer: Any) -> list[str]:
    uid = reads.viewer_id(consumer.scope.get("user"))
    if uid is None:
        return []
    groups = [events.user_group(uid)]
    session = consumer.scope.get("session")
    key = getattr(session, "session_key", None)
    if key:
        groups.append(events.session_group(key))
    return groups


async def join(consumer: Any) -> None:
    """Put a consumer's socket in its user's and session's groups (a signed-in one only)."""
    consumer.joined_groups = _groups(consumer)
    for group in consumer.joined_groups:
        await consumer.channel_layer.group_add(group, consumer.channel_name)


async def leave(consumer: Any) -> None:
    for group in getattr(consumer, "joined_groups", ()):
        await consumer.channel_layer.group_discard(group, consumer.channel_name)
