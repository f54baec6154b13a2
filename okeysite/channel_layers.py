"""The Redis channel layer, with this process's messages read by one task of the layer's own.

channels_redis's ``RedisChannelLayer.receive`` pops the process's next message (``BZPOPMIN``
on its one process-wide Redis list) inside whichever consumer's ``receive`` holds the lock.
When that consumer's socket closes, channels cancels its ``receive``; if Redis had already
popped a message for *another* socket of the process, the reply is dropped and the message is
lost (django/channels_redis#366, django/channels#1683). A socket's own disconnect is exactly
when that happens: the lobby's "one player fewer", sent by the closing lobby socket, reached
no other lobby of its process.

Here one task per layer (on the server's event loop) pops the process's messages and puts
each in its channel's buffer; a consumer's ``receive`` only waits on its buffer, so
cancelling it loses nothing. Everything else (sending, groups, capacity, expiry) is
channels_redis's.

Redis failing under the pop may mean it restarted, and without persistence it lost the groups
of every socket of the process: they would hear nothing more. So the layer keeps the groups
its process's channels joined, and once Redis answers again it adds them back and puts
``{"type": "layer.resumed"}`` in each such channel's buffer: what was published meanwhile is
lost, and the consumer sends its viewer the state as it is now.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from channels_redis import core

log = logging.getLogger(__name__)

# After a Redis error the reader waits this long before it pops again (Redis restarting).
RETRY_SECONDS = 1.0
# How long closing the layer waits for its reader to stop before closing the connections.
CLOSE_SECONDS = 1.0
# What a channel of this process gets after Redis failed and answers again.
RESUMED = "layer.resumed"


class RedisChannelLayer(core.RedisChannelLayer):
    """``channels_redis.core.RedisChannelLayer`` whose process-local messages are read by one
    reader task, never by a consumer's cancellable ``receive``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reader: asyncio.Task[None] | None = None
        # The groups this process's channels are in, to add them back after Redis failed.
        self._joined: dict[str, set[str]] = {}

    async def group_add(self, group: str, channel: str) -> None:
        if "!" in channel:
            self._joined.setdefault(group, set()).add(channel)
        await super().group_add(group, channel)

    async def group_discard(self, group: str, channel: str) -> None:
        # Forgotten first: a socket that left is never added back, even if Redis fails here.
        members = self._joined.get(group)
        if members is not None:
            members.discard(channel)
            if not members:
                del self._joined[group]
        await super().group_discard(group, channel)

    async def receive(self, channel: str) -> dict[str, Any]:
        if "!" not in channel:  # a named channel (a worker's): channels_redis's own receive
            return await super().receive(channel)
        assert self.require_valid_channel_name(channel)
        self._start_reader(self.non_local_name(channel))
        buffer = self.receive_buffer[channel]
        try:
            message = await buffer.get()
        finally:
            # A closed socket's empty buffer goes (the reader makes a new one if a late
            # message comes for it).
            if buffer.empty() and self.receive_buffer.get(channel) is buffer:
                del self.receive_buffer[channel]
        return message  # type: ignore[no-any-return]

    def _start_reader(self, process_channel: str) -> None:
        loop = asyncio.get_running_loop()
        reader = self._reader
        if reader is not None and not reader.done() and reader.get_loop() is loop:
            return
        # The first receive, or a new event loop (a test's): a task of a closed loop is gone.
        self._reader = loop.create_task(self._read(process_channel), name="okey-layer-reader")

    async def _read(self, process_channel: str) -> None:
        """Pop this process's messages for as long as this task is the layer's reader, into
        their channels' buffers (a group message may name several of this process's
        channels)."""
        me = asyncio.current_task()
        assert me is not None
        # A cancelled reader stops even if the Redis client swallowed the CancelledError
        # (the task still counts the request): otherwise it would pop on, and whatever waits
        # for it (an event loop closing, a test's teardown) would wait forever.
        while self._reader is me and not me.cancelling():
            try:
                channels, message = await self.receive_single(process_channel)
            except Exception:
                if self._reader is not me or me.cancelling():
                    return  # the layer is closing: its connections went from under the pop
                log.exception("reading this process's channel messages from Redis failed")
                await self._resume(me)
                continue
            for name in channels if isinstance(channels, list) else [channels]:
                self.receive_buffer[name].put_nowait(message)

    async def _resume(self, me: asyncio.Task[None]) -> None:
        """After Redis failed: once it answers, this process's channels are in their groups
        again (it may have restarted without them) and each is told to send afresh."""
        while self._reader is me and not me.cancelling():
            await asyncio.sleep(RETRY_SECONDS)
            try:
                for group, channels in list(self._joined.items()):
                    for channel in list(channels):
                        await super().group_add(group, channel)
            except Exception as exc:  # still down: no traceback every second
                log.warning("Redis is still unreachable: %s", exc)
                continue
            for channel in {c for channels in self._joined.values() for c in channels}:
                self.receive_buffer[channel].put_nowait({"type": RESUMED})
            log.warning("Redis answers again: groups rejoined, sockets told to send afresh")
            return

    async def stop_reading(self) -> None:
        """Stop the reader. It stops even if its cancellation is lost inside the Redis client:
        it is no longer the layer's reader, so it ends once its pop returns (within the
        pop's timeout), and an event loop that is closing never waits on it for ever."""
        reader, self._reader = self._reader, None
        if reader is not None and not reader.done():
            with contextlib.suppress(RuntimeError):  # its loop may already be closed
                reader.cancel()
                if reader.get_loop() is asyncio.get_running_loop():
                    await asyncio.wait({reader}, timeout=CLOSE_SECONDS)

    async def close_pools(self) -> None:
        """Stop the reader, then close the connections (channels_redis's), which ends its pop
        at once."""
        await self.stop_reading()
        await super().close_pools()
