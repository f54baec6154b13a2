"""Serve the site past one process: K daphne processes and the clock worker, on PostgreSQL and
Redis (production; ``make run`` is the one-process development server).

    python manage.py serve --processes 4 --port 8000      # daphne on 8000..8003 + run_clock

Each daphne process serves HTTP and WebSockets on its own port; put a proxy in front that
spreads connections over the ports (README: "Production settings"). The processes share the
database and the Redis channel layer, so a move made through any of them reaches the sockets
of all of them; the clock runs as its own worker (``run_clock``), since with Redis it must
not run inside the servers (``CLOCK_IN_SERVER`` is off by default there).

The command supervises its children (``Supervisor``): a child that crashes (killed by a
signal, or a non-zero exit) is started again alone, after a backoff, while the others go on
serving; one that exits cleanly (status 0, or stopped with SIGTERM/SIGINT by someone) is
left stopped, as systemd's ``Restart=on-failure`` would. SIGINT/SIGTERM to the command stops
every child (SIGTERM, then SIGKILL for one still there after ``--stop-timeout``) and it exits
0; it also exits once no child is left to run. A supervisor (systemd: deploy/systemd/) runs
this command and restarts it if it dies itself.

One process needs no Redis (``--processes 1 --clock-workers 0``, the clock then runs inside the
server). With ``PROXY_HEADERS=true`` daphne reads the client's address from the proxy's
X-Forwarded-For (``daphne_command``).
"""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
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

# Restart backoff: the first restart after FIRST_RESTART_DELAY seconds, each quick crash after
# that doubles the wait up to MAX_RESTART_DELAY (a child that crashes at once, e.g. on a bad
# setting, does not spin); a child that stayed up STAYED_UP seconds starts again from the first.
FIRST_RESTART_DELAY = 1.0
MAX_RESTART_DELAY = 30.0
STAYED_UP = 60.0
# A child exiting by these signals was stopped on purpose, like one exiting with status 0.
CLEAN_SIGNALS = (signal.SIGTERM, signal.SIGINT)


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
        parser.add_argument(
            "--stop-timeout",
            type=float,
            default=10.0,
            help="seconds a child may take to stop after SIGTERM before it is killed (10)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["processes"] > 1 and not settings.REDIS_URL:
            raise CommandError(
                "several processes need a channel layer they share: set REDIS_URL "
                "(without it, `make run` serves the site from one process)"
            )
        if options["processes"] < 1 or options["clock_workers"] < 0:
            raise CommandError("--processes is at least 1, --clock-workers at least 0")
        supervisor = Supervisor(
            child_commands(options), say=self._say, stop_timeout=options["stop_timeout"]
        )
        stop_signals = (signal.SIGTERM, signal.SIGINT)
        before = {s: signal.getsignal(s) for s in stop_signals}
        for s in stop_signals:
            signal.signal(s, lambda signum, frame: supervisor.ask_to_stop())
        try:
            supervisor.start()
            self._say(
                f"serving on {options['host']} ports {options['port']}.."
                f"{options['port'] + options['processes'] - 1} "
                f"with {options['clock_workers']} clock worker(s)"
            )
            supervisor.run()
        finally:
            supervisor.stop()  # a no-op after a clean run; else no child outlives the command
            for s, handler in before.items():
                signal.signal(s, handler)

    def _say(self, line: str) -> None:
        self.stdout.write(line)
        self.stdout.flush()


def child_commands(options: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The children to run, each with a name for the log: the daphne processes by port, then
    the clock workers."""
    children = [
        (f"daphne :{port}", daphne_command(options["host"], port, options["application"]))
        for port in range(options["port"], options["port"] + options["processes"])
    ]
    clock = [sys.executable, str(MANAGE), "run_clock"]
    children += [(f"run_clock #{i + 1}", clock) for i in range(options["clock_workers"])]
    return children


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


def _die_with_parent() -> None:
    """In a child, before it runs (Linux): SIGTERM when the command dies, even by SIGKILL, so
    no daphne outlives it holding its port."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # another system: a supervisor stops the whole group
        pass


@dataclass
class Child:
    """One supervised process: its command, and when it started or will start again."""

    name: str
    command: list[str]
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    restart_at: float | None = None  # set while it waits to start again
    delay: float = 0.0  # the wait before its last restart (0: none yet)


def crashed(returncode: int) -> bool:
    """A non-zero exit or death by a signal, but the signals that ask a process to stop."""
    return returncode != 0 and -returncode not in CLEAN_SIGNALS


class Supervisor:
    """Starts the children, restarts each one that crashes on its own with a backoff, and stops
    them all when asked. ``now`` and ``sleep`` are the clock (tests pass their own)."""

    def __init__(
        self,
        commands: list[tuple[str, list[str]]],
        say: Callable[[str], None],
        stop_timeout: float = 10.0,
        now: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.children = [Child(name, command) for name, command in commands]
        self.say = say
        self.stop_timeout = stop_timeout
        self.now = now
        self.sleep = sleep
        self.stopping = False

    def start(self) -> None:
        for child in self.children:
            self._spawn(child)

    def ask_to_stop(self) -> None:
        """From the signal handler: only a flag, the loop does the rest."""
        self.stopping = True

    def run(self) -> None:
        """Until asked to stop, or until no child is running or waiting to start again."""
        while not self.stopping and self.step():
            self.sleep(0.2)
        self.stop()

    def step(self) -> bool:
        """Look at every child once: note the ones that ended, start the ones whose wait is
        over. False once there is nothing left to supervise."""
        now = self.now()
        for child in self.children:
            if child.process is not None and child.process.poll() is not None:
                self._ended(child, child.process.returncode, now)
            if child.restart_at is not None and now >= child.restart_at and not self.stopping:
                self._spawn(child)
        return any(c.process is not None or c.restart_at is not None for c in self.children)

    def _ended(self, child: Child, code: int, now: float) -> None:
        child.process = None
        how = f"was killed by signal {-code}" if code < 0 else f"exited ({code})"
        if self.stopping or not crashed(code):
            self.say(f"{child.name} {how}: not started again")
            return
        up_for = now - child.started_at
        if up_for >= STAYED_UP or not child.delay:
            child.delay = FIRST_RESTART_DELAY
        else:
            child.delay = min(child.delay * 2, MAX_RESTART_DELAY)
        child.restart_at = now + child.delay
        self.say(
            f"{child.name} {how} after {up_for:.1f} s: starting it again in {child.delay:g} s "
            "(the others go on)"
        )

    def _spawn(self, child: Child) -> None:
        child.restart_at = None
        child.started_at = self.now()
        try:
            child.process = subprocess.Popen(
                child.command,
                cwd=settings.BASE_DIR,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        except OSError as error:  # counts as a crash at once: the backoff applies
            self.say(f"{child.name} could not start: {error}")
            self._ended(child, 1, child.started_at)
            return
        # (The test doubles of tests/accounts and tests/live/test_bad_input have no pid.)
        self.say(f"started {child.name} (pid {getattr(child.process, 'pid', '?')})")

    def stop(self) -> None:
        """SIGTERM to every child, SIGKILL to any still there after ``stop_timeout``; none is
        started again."""
        self.stopping = True
        running = [c.process for c in self.children if c.process is not None]
        for child in self.children:
            child.restart_at = None
        if running:
            self.say(f"stopping {len(running)} process(es)")
        stop_children(running, self.stop_timeout)
        for child in self.children:
            child.process = None


def stop_children(children: list[subprocess.Popen[Any]], timeout: float = 10) -> None:
    """Ask every child process to end (SIGTERM), then kill whichever is still there after
    ``timeout`` seconds (counted once, for them all)."""
    for child in children:
        if child.poll() is None:
            child.terminate()
    deadline = time.monotonic() + timeout
    for child in children:
        try:
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
