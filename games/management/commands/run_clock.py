"""The clock worker: plays bot seats and timed-out turns, and marks gone players away.

Run it beside the web servers when they share a Redis channel layer (``REDIS_URL``): its moves
reach every socket through Redis. Several may run at once (hands are leased). Without Redis the
clock runs inside the ASGI server instead (``CLOCK_IN_SERVER``, see
``games.live.server_tasks``): a worker in another process could not reach the server's
in-memory layer.
"""

import logging
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.db import close_old_connections

from games.clock import Housekeeping, outage, tick
from games.errors import UNREACHABLE

log = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Play bot turns and timed-out turns, in a loop (or once with --once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="one pass, then exit")
        parser.add_argument(
            "--interval",
            type=float,
            default=settings.CLOCK_INTERVAL_SECONDS,
            help="seconds between passes",
        )
        parser.add_argument(
            "--bot-delay",
            type=float,
            default=settings.BOT_DELAY_SECONDS,
            help="seconds a bot waits before its turn",
        )
        parser.add_argument(
            "--think-ms",
            type=float,
            default=settings.BOT_THINK_MS,
            help="milliseconds a searching bot may spend on a decision, inside the bot delay",
        )
        parser.add_argument(
            "--grace", type=int, default=settings.AWAY_GRACE_SECONDS, help="seconds before away"
        )
        parser.add_argument("--max-seconds", type=float, default=0, help="stop after (0: never)")

    def handle(self, *args: Any, **options: Any) -> None:
        backend = settings.CHANNEL_LAYERS["default"]["BACKEND"]
        if "InMemory" in backend and not options["once"]:
            log.warning(
                "run_clock with the in-memory channel layer: its moves are saved, but open "
                "pages hear of them only on their next change. Set REDIS_URL, or let the "
                "server run the clock (CLOCK_IN_SERVER)."
            )
        started = time.monotonic()
        housekeeping = Housekeeping()
        first = True
        while True:
            if not first:
                # Long-running worker: drop connections that went stale between passes.
                close_old_connections()
            first = False
            try:
                played = tick(
                    bot_delay=options["bot_delay"],
                    grace_seconds=options["grace"],
                    think_ms=options["think_ms"],
                    housekeeping=housekeeping.due(),
                )
                outage.answered()
            except UNREACHABLE as exc:  # one line per outage; the next pass retries
                outage.failed(exc)
                played = 0
            except Exception:  # keep the clock running; the next pass retries
                log.exception("clock pass failed; retrying")
                played = 0
            if options["once"]:
                self.stdout.write(f"{played} moves played")
                return
            limit = options["max_seconds"]
            if limit and time.monotonic() - started > limit:
                return
            if not played:
                time.sleep(options["interval"])
