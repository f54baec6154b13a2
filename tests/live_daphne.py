"""The site served for the tests, the one way each: a daphne process on the test database
(``DaphneServer``: the ``daphne_live_server`` fixture of tests/conftest.py, and a test's own
server that it may kill), ``manage.py serve`` on the test database (``serving``: the tests of
the supervisor, of two processes, of proxy headers), and the daphne command lines ``serve``
would start, without starting them (``serve_command_lines``). The processes serve
``tests.live_asgi:application``."""

import os
import random
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

BASE_DIR = Path(__file__).resolve().parent.parent


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive free ports on 127.0.0.1."""
    for _ in range(200):
        first = random.randint(20_000, 40_000)
        try:
            for port in range(first, first + count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return first
    raise AssertionError("no free ports")


def serve_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update(DJANGO_SETTINGS_MODULE="okeysite.settings", PYTHONUNBUFFERED="1", **extra)
    return env


def answers(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server on ``port`` answers a page (the rules: no database write, no login)."""
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/rules/", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def wait_until(check: Callable[[], object], log_path: Path, seconds: float = 30) -> None:
    """Wait until ``check()`` holds; after ``seconds`` fail with the end of the server's log."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, log_path.read_text()[-4000:]
        time.sleep(0.05)


def database_url_of_the_tests() -> str:
    """DATABASE_URL for the test database, for a process that reads the settings only (a clock
    worker; the daphne processes' tests.live_asgi names the database itself)."""
    from django.db import connection

    name = str(connection.settings_dict["NAME"])
    if connection.vendor == "sqlite":
        return f"sqlite:///{name}"
    return urllib.parse.urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{name}").geturl()


@contextmanager
def serving(
    log_path: Path, processes: int = 1, clock_workers: int = 0, **env: str
) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """`manage.py serve` on the test database (``env``: settings of its own), once all its daphne
    processes answer: the command and its first port. Stopped afterwards (SIGTERM, which stops
    every child) if still running."""
    from django.db import connection

    port = free_ports(processes)
    with log_path.open("wb") as log:
        command = subprocess.Popen(
            [
                *(sys.executable, "manage.py", "serve", "--port", str(port)),
                *("--processes", str(processes), "--clock-workers", str(clock_workers)),
                *("--application", "tests.live_asgi:application"),
            ],
            cwd=BASE_DIR,
            env=serve_env(
                OKEY_LIVE_DATABASE_NAME=str(connection.settings_dict["NAME"]),
                DATABASE_URL=database_url_of_the_tests(),
                **env,
            ),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until(
            lambda: command.poll() is None and all(answers(port + i) for i in range(processes)),
            log_path,
            seconds=60,
        )
        yield command, port
    finally:
        if command.poll() is None:
            command.terminate()
            command.wait(timeout=30)


def serve_command_lines(monkeypatch: pytest.MonkeyPatch, *args: str) -> list[list[str]]:
    """The daphne command lines `manage.py serve *args` starts, with Redis set (several
    processes need it); nothing is started."""
    from django.core.management import call_command

    from games.management.commands import serve

    started: list[list[str]] = []

    class Child:
        returncode = 0

        def __init__(self, args: list[str], **kwargs: Any) -> None:
            self.args = args
            started.append(args)

        def poll(self) -> int:
            return 0

        def wait(self, timeout: float | None = None) -> int:
            return 0

    monkeypatch.setattr(serve.subprocess, "Popen", Child)
    monkeypatch.setattr(serve.settings, "REDIS_URL", "redis://127.0.0.1:6379/0", raising=False)
    with open(os.devnull, "w") as quiet:
        call_command("serve", *args, stdout=quiet, stderr=quiet)
    return [c for c in started if "daphne" in c]


def _ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def fail_or_skip(message: str) -> None:
    """Skip a test loudly that cannot run here; under CI=true, fail it instead."""
    if _ci():
        pytest.fail(f"CI=true and {message}")
    warnings.warn(f"SKIPPING: {message}", stacklevel=2)
    pytest.skip(f"SKIPPING: {message}")


def in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Run ``fn(*args)`` in a fresh thread and return its result (its exception is raised here).

    For game changes in browser tests: Playwright's sync API keeps an event loop running in the
    test's thread, where ``async_to_sync`` refuses to run, so ``games.actions`` could not
    publish to the channel layer after commit (it would only log the failure)."""
    from django.db import connection

    def call() -> Any:
        try:
            return fn(*args)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call).result(timeout=60)


# Lines of the server's output that mean something went wrong on the server.
SERVER_ERROR = re.compile(r"Traceback|\bERROR\b|\bCRITICAL\b|TimeoutError|Exception inside")
LISTENING = re.compile(r"Listening on TCP address [^\s:]+:(\d+)")
# The server's clock says so in its log when it starts (games.live.server_tasks).
CLOCK_STARTED = "the clock runs in this server"


class DaphneServer:
    """A daphne process serving ``tests.live_asgi`` (the site on the test database)."""

    def __init__(self, host: str, log_path: Path) -> None:
        self.host = host
        self.log_path = log_path
        self.database_name = ""  # the test database it serves (``start``)
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._test_start = 0
        # While this file exists the server's clock plays nothing (games.clock.paused), and
        # its first pass that finds it so leaves the second file.
        self.clock_pause_file = log_path.with_name(log_path.name + ".clock-paused")
        self.clock_paused_seen = log_path.with_name(log_path.name + ".clock-paused.seen")

    def pause_clock(self) -> None:
        """Stop the server's clock from playing: a server kept for the session must not play
        the bots, timers and hands of tests that do not use it (they share its database).
        Returns once no pass is playing: a pass already running plays to its end first."""
        self.clock_paused_seen.unlink(missing_ok=True)
        self.clock_pause_file.touch()
        if CLOCK_STARTED in self.output():  # else no pass has begun: the first will see it
            wait_until(self.clock_paused_seen.exists, self.log_path, seconds=60)

    def resume_clock(self) -> None:
        self.clock_pause_file.unlink(missing_ok=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    def output(self) -> str:
        """Everything the server printed so far (stdout and stderr: Django's log, daphne's)."""
        return self.log_path.read_text(errors="replace")

    def output_of_this_test(self) -> str:
        """What the server printed since the current test started."""
        return self.output()[self._test_start :]

    def errors(self) -> list[str]:
        """The lines of this test's server output that report an error or a traceback."""
        return [
            line for line in self.output_of_this_test().splitlines() if SERVER_ERROR.search(line)
        ]

    def start(self, database_name: str) -> None:
        env = dict(os.environ)
        env.update(
            DJANGO_SETTINGS_MODULE="okeysite.settings",
            OKEY_LIVE_DATABASE_NAME=database_name,
            PYTHONUNBUFFERED="1",
            LOG_LEVEL="INFO",  # daphne's "Listening on" line says which port it got
            # The server plays bots and timers itself, as `make run` does; a bot moves 0.05 s
            # after the change that put it on turn (the clock is woken by it), and anything
            # else (a timer, a change made by the test process) is found within 0.5 s.
            CLOCK_IN_SERVER="true",
            BOT_DELAY_SECONDS="0.05",
            CLOCK_INTERVAL_SECONDS="0.5",
            CLOCK_PAUSE_FILE=str(self.clock_pause_file),
            # The scoreboard stays up between hands until the players press "ready".
            NEXT_HAND_PAUSE_SECONDS="120",
            # A table formed by "Play now" gets its bots soon (the journeys wait for them).
            QUICK_PLAY_WAIT_SECONDS="3",
            # Tests that leave seats without a page open must not see a bot take them over.
            AWAY_GRACE_SECONDS="300",
        )
        env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "daphne",
                    "-b",
                    self.host,
                    "-p",
                    # A free port the first time; the same one when started again (a test
                    # that kills the server and starts it again at the pages' address).
                    str(self.port),
                    "tests.live_asgi:application",
                ],
                cwd=BASE_DIR,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = LISTENING.search(self.output())
            if found:
                self.port = int(found.group(1))
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        pytest.fail(f"daphne did not start; its output:\n{self.output()}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)
