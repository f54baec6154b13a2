"""Serve the site past one process: K daphne processes and the clock worker, on PostgreSQL and
Redis (production; ``make run`` is the one-process development server).

    python manage.py serve --processes 4 --port 8000      # daphne on 8000..8003 + run_clock

Each daphne process serves HTTP and WebSockets on its own port; put a proxy in front that
spreads connections over the ports (README: "Production settings"). The processes share the
database and the Redis channel layer, so a move made through any of them reaches the sockets
of all of them; the clock runs as its own worker (``run_clock``), since with Redis it must
not run inside the servers (``CLOCK_IN_SERVER`` is off by default there).

The command starts the children, forwards SIGINT/SIGTERM to them, and stops them all when one
of them exits (so a supervisor restarts the whole set), returning that child's exit status.
One process needs no Redis (``--processes 1 --clock-workers 0``, the clock then runs inside the
server). With ``PROXY_HEADERS=true`` daphne reads the client's address from the proxy's
X-Forwarded-For (``daphne_command``).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from games.limits import SERVER_MAX_MESSAGE_BYTES

MANAGE = Path(settings.BASE_DIR) / "manage.py"
# Daphne closes a socket whose message or frame is larger (it accepts 1 MiB by default): far
# above what the consumers read (games.limits.MAX_MESSAGE_LENGTH), which they refuse
# with a message. The Procfile passes the same.
WEBSOCKET_MAX_BYTES = SERVER_MAX_MESSAGE_BYTES


class Command(BaseCommand):
    help = "Run K daphne processes (ports PORT..PORT+K-1) and the clock worker."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--processes", type=int, default=2, help="daphne processes (2)")
        parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
        parser.add_argument("--port", type=int, default=8000, help="the first port (8000)")
        parser.add_argument(
            "--clock-workers", type=int, default=1, help="run_clock workers beside them (1)"
        )
        parser.add_argument(
            "--application",
            default="okeysite.asgi:application",
            help="the ASGI application daphne serves",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["processes"] > 1 and not settings.REDIS_URL:
            raise CommandError(
                "several processes need a channel layer they share: set REDIS_URL "
                "(without it, `make run` serves the site from one process)"
            )
        if options["processes"] < 1 or options["clock_workers"] < 0:
            raise CommandError("--processes is at least 1, --clock-workers at least 0")
        commands = [
            daphne_command(options["host"], options["port"] + i, options["application"])
            for i in range(options["processes"])
        ]
        commands += [[sys.executable, str(MANAGE), "run_clock"]] * options["clock_workers"]
        children = [subprocess.Popen(c, cwd=settings.BASE_DIR) for c in commands]
        self.stdout.write(
            f"serving on {options['host']} ports {options['port']}.."
            f"{options['port'] + options['processes'] - 1} "
            f"with {options['clock_workers']} clock worker(s)",
        )
        self.stdout.flush()
        stopping = False

        def stop(signum: int, frame: Any) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        code = 0
        try:
            while not stopping:
                ended = next((c for c in children if c.poll() is not None), None)
                if ended is not None:
                    code = ended.returncode or 0
                    self.stderr.write(f"{' '.join(ended.args[1:4])} exited ({code}): stopping")
                    break
                time.sleep(0.2)
        finally:
            stop_children(children)
        if code:
            sys.exit(code)


def daphne_command(host: str, port: int, application: str) -> list[str]:
    """One daphne process's command line. Behind a proxy (``settings.PROXY_HEADERS``) daphne
    takes the client's address and scheme from the proxy's X-Forwarded-For and
    X-Forwarded-Proto, so the log-in and request limits (accounts.limits) count each client,
    not the proxy; without one, those headers come from the client and are ignored."""
    proxy = ["--proxy-headers"] if settings.PROXY_HEADERS else []
    return [
        sys.executable,
        "-m",
        "daphne",
        "-b",
        host,
        "-p",
        str(port),
        "--websocket-max-message-size",
        str(WEBSOCKET_MAX_BYTES),
        "--websocket-max-frame-size",
        str(WEBSOCKET_MAX_BYTES),
        *proxy,
        application,
    ]


def stop_children(children: list[subprocess.Popen[Any]], timeout: float = 15) -> None:
    """Ask every child process to end (SIGTERM), then kill whichever is still there."""
    for child in children:
        if child.poll() is None:
            child.terminate()
    for child in children:
        try:
            child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=timeout)
