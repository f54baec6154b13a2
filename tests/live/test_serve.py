"""Past one process: `manage.py serve` runs several daphne processes on Redis, and players
connected to different processes at one table see each other's moves at once. It supervises
them: a child killed is started again alone (with a backoff) while the others go on serving,
and SIGINT/SIGTERM stops them all.

The two-process tests need Redis (the in-memory layer cannot cross processes): skipped loudly
without REDIS_URL, failed under CI=true. One daphne and a clock worker need none.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from games.management.commands import serve
from tests import ui
from tests.live_daphne import answers, fail_or_skip, in_thread, serve_env, serving, wait_until

BASE_DIR = Path(__file__).resolve().parent.parent.parent
pytestmark = pytest.mark.server


@dataclass
class Process:
    """One daphne process of the set, as the browser helpers address a server."""

    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


def test_serve_refuses_several_processes_without_redis() -> None:
    env = serve_env(SECRET_KEY="x")
    env.pop("REDIS_URL", None)
    run = subprocess.run(
        [sys.executable, "manage.py", "serve", "--processes", "2"],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode != 0
    assert "REDIS_URL" in run.stderr


@pytest.fixture
def two_processes(transactional_db: None, tmp_path: Path) -> Iterator[list[Process]]:
    """`manage.py serve --processes 2` on the test database (no clock worker: the test's
    players make every move), stopped afterwards with all its children."""
    if not os.environ.get("REDIS_URL"):
        fail_or_skip(
            "REDIS TEST: REDIS_URL is unset: two daphne processes cannot share a channel layer. "
            "Run with e.g. REDIS_URL=redis://127.0.0.1:6379/0."
        )
    with serving(tmp_path / "serve.log", processes=2) as (_command, port):
        yield [Process("127.0.0.1", port), Process("127.0.0.1", port + 1)]
    # Stopping the command stops its daphne processes too.
    assert not answers(port) and not answers(port + 1)


def test_players_on_two_processes_see_each_others_moves(
    two_processes: list[Process], chromium: Any
) -> None:
    from games import actions
    from tests.play import seed_of, user_table

    def make() -> tuple[Any, list[Any]]:
        table, users = user_table("duz", {"timer": 0})
        actions.start_match(table, by=actions.SYSTEM, seed=seed_of(61))
        return table, users

    table, users = in_thread(make)
    # Each seat's page on the process its index picks: seats 0 and 2 on one, 1 and 3 on the
    # other, so every move crosses from one process to the other.
    pages = []
    for seat, user in enumerate(users):
        server = two_processes[seat % 2]
        page = ui.signed_in_page(chromium, server, user)
        ui.open_table(page, server, table.pk)
        pages.append(page)
    for _ in range(6):  # six moves, each played on one process and seen on the other
        mover = next(p for p in pages if ui.state(p)["turn"] == ui.state(p)["seat"])
        before = ui.version(mover)
        started = time.monotonic()
        assert ui.simple_turn(mover)
        for page in pages:
            ui.wait_version(page, before + 1, timeout=5_000)
        assert time.monotonic() - started < 5
    versions = {ui.version(p) for p in pages}
    assert versions == {6}


# ----------------------------------------------------------------------------- supervision
def alive(pid: int) -> bool:
    """The process is there and not a zombie (a child ``serve`` has not reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def children_of(pid: int) -> dict[str, int]:
    """The live child processes of ``pid`` (Linux), by what they run: "daphne :8000",
    "run_clock", or the code of a ``python -c`` child."""

    def command_line(pid: int) -> list[str] | None:
        try:
            return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except OSError:
            return None

    found = {}
    parent = command_line(pid)
    for threads_children in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            children = threads_children.read_text().split()
        except OSError:  # the process or thread has just ended
            continue
        for child in map(int, children):
            args = command_line(child)
            # Gone, a zombie, or forked and not yet running its own program.
            if args is None or args == parent or not alive(child):
                continue
            if "daphne" in args:
                name = f"daphne :{args[args.index('-p') + 1]}"
            elif "run_clock" in args:
                name = "run_clock"
            elif "-c" in args:
                name = args[args.index("-c") + 1]
            else:  # a child caught between fork and exec, or another helper: not ours to name
                continue
            found[name] = child
    return found


def kill_and_see_it_restarted(
    command: subprocess.Popen[bytes], name: str, port: int | None, log_path: Path
) -> None:
    """SIGKILL the child ``name`` of ``command``: every other child goes on (the same pid; a
    daphne answers at once), and ``name`` is started again (a new pid; a daphne answers on
    its port)."""
    before = children_of(command.pid)
    others = {n: pid for n, pid in before.items() if n != name}
    os.kill(before[name], signal.SIGKILL)
    wait_until(lambda: not alive(before[name]), log_path, seconds=5)
    for other, pid in others.items():
        assert alive(pid), f"{other} died with {name}\n" + log_path.read_text()
        if other.startswith("daphne :"):
            assert answers(int(other.split(":")[1])), f"{other} stopped serving"

    wait_until(lambda: children_of(command.pid).get(name, before[name]) != before[name], log_path)
    again = children_of(command.pid)
    assert alive(again[name])
    if port is not None:
        wait_until(lambda: answers(port), log_path)
    assert {n: pid for n, pid in again.items() if n != name} == others
    assert all(alive(pid) for pid in others.values())


def stop_and_see_every_child_gone(command: subprocess.Popen[bytes], log_path: Path) -> None:
    pids = children_of(command.pid)
    command.send_signal(signal.SIGTERM)
    assert command.wait(timeout=30) == 0, log_path.read_text()
    assert not [name for name, pid in pids.items() if alive(pid)], log_path.read_text()


def test_one_daphne_killed_is_started_again_while_the_clock_worker_goes_on(
    transactional_db: None, tmp_path: Path
) -> None:
    """No Redis needed: one daphne process and one clock worker."""
    log_path = tmp_path / "serve.log"
    with serving(log_path, processes=1, clock_workers=1) as (command, port):
        wait_until(lambda: "run_clock" in children_of(command.pid), log_path)
        kill_and_see_it_restarted(command, f"daphne :{port}", port, log_path)
        kill_and_see_it_restarted(command, "run_clock", None, log_path)
        assert answers(port)
        assert command.poll() is None
        stop_and_see_every_child_gone(command, log_path)
    assert not answers(port)


def test_one_of_two_daphnes_killed_the_other_serves_and_it_comes_back(
    transactional_db: None, tmp_path: Path
) -> None:
    if not os.environ.get("REDIS_URL"):
        fail_or_skip(
            "REDIS TEST: REDIS_URL is unset: two daphne processes cannot share a channel layer. "
            "Run with e.g. REDIS_URL=redis://127.0.0.1:6379/0."
        )
    log_path = tmp_path / "serve.log"
    with serving(log_path, processes=2, clock_workers=1) as (command, port):
        wait_until(lambda: len(children_of(command.pid)) == 3, log_path)
        kill_and_see_it_restarted(command, f"daphne :{port + 1}", port + 1, log_path)
        kill_and_see_it_restarted(command, f"daphne :{port}", port, log_path)
        stop_and_see_every_child_gone(command, log_path)
    assert not answers(port) and not answers(port + 1)


# A child that ignores SIGTERM, and one that stops on it; `serve` runs them instead of daphne.
STUBBORN = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('stubborn ready', flush=True); time.sleep(600)"
)
POLITE = "import time; time.sleep(600)"
DRIVER = f"""
import os, sys
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "okeysite.settings")
django.setup()
from django.core.management import call_command
from games.management.commands import serve
serve.child_commands = lambda options: [
    ("polite", [sys.executable, "-c", {POLITE!r}]),
    ("stubborn", [sys.executable, "-c", {STUBBORN!r}]),
]
call_command("serve", "--processes", "1", "--stop-timeout", "1")
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_stops_every_child_and_kills_one_that_ignores_sigterm(
    tmp_path: Path, signum: int
) -> None:
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        command = subprocess.Popen(
            [sys.executable, "-c", DRIVER],
            cwd=BASE_DIR,
            env=serve_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    pids: dict[str, int] = {}
    try:
        wait_until(lambda: "stubborn ready" in log_path.read_text(), log_path)
        pids.update(children_of(command.pid))
        assert set(pids) == {POLITE, STUBBORN}

        started = time.monotonic()
        command.send_signal(signum)
        assert command.wait(timeout=15) == 0, log_path.read_text()
        # The polite child ends on SIGTERM at once, the stubborn one is killed after 1 s.
        assert 1 <= time.monotonic() - started < 10
        assert not [name for name, pid in pids.items() if alive(pid)], log_path.read_text()
        assert "stopping 2 process(es)" in log_path.read_text()
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()
        for pid in pids.values():
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


# ----------------------------------------------------------------------------- backoff
class FakeProcess:
    """A child process as the supervisor sees it, ended by the test."""

    pids = iter(range(1000, 10**6))

    def __init__(self, command: list[str], **kwargs: Any) -> None:
        self.command = command
        self.pid = next(self.pids)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode

    def terminate(self) -> None:
        self.returncode = -signal.SIGTERM

    def kill(self) -> None:
        self.returncode = -signal.SIGKILL

    def wait(self, timeout: float | None = None) -> int | None:
        return self.returncode


def test_a_crashing_child_restarts_with_a_doubling_backoff_that_resets_after_a_long_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[FakeProcess] = []

    def popen(command: list[str], **kwargs: Any) -> FakeProcess:
        started.append(FakeProcess(command, **kwargs))
        return started[-1]

    monkeypatch.setattr(serve.subprocess, "Popen", popen)
    clock = [0.0]
    said: list[str] = []
    supervisor = serve.Supervisor(
        [("web", ["web"]), ("clock", ["clock"])], say=said.append, now=lambda: clock[0]
    )
    supervisor.start()
    web, clock_worker = supervisor.children

    def crash_and_wait(how: int = -signal.SIGKILL) -> float:
        """Crash the web child now; the seconds until it is started again."""
        assert web.process is not None
        web.process.returncode = how
        crashed_at = clock[0]
        supervisor.step()
        assert web.process is None  # not at once
        while web.process is None:
            clock[0] += 0.25
            assert supervisor.step()
        return clock[0] - crashed_at

    waits = [crash_and_wait(code) for code in (-signal.SIGKILL, 1, -signal.SIGSEGV, 1, 1, 1, 1)]
    assert waits == [1, 2, 4, 8, 16, 30, 30]
    clock[0] += serve.STAYED_UP  # it stays up a while: the next crash waits 1 s again
    assert crash_and_wait() == 1
    assert crash_and_wait() == 2
    # The other child was never touched.
    assert clock_worker.process is started[1] and clock_worker.process.returncode is None
    assert [p.command for p in started].count(["clock"]) == 1
    assert "web was killed by signal 9 after" in said[2]

    # Stopped on purpose (SIGTERM, or a clean exit): not started again; once nothing is left
    # the supervisor is done.
    assert web.process is not None
    web.process.returncode = -signal.SIGTERM
    clock_worker.process.returncode = 0
    clock[0] += 100
    assert not supervisor.step()
    assert web.process is None and web.restart_at is None
    assert len(started) == 2 + 9
