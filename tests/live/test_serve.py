"""Past one process: `manage.py serve` runs several daphne processes on Redis, and players
connected to different processes at one table see each other's moves at once.

The two-process test needs Redis (the in-memory layer cannot cross processes): skipped loudly
without REDIS_URL, failed under CI=true.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import ui
from tests.live_daphne import fail_or_skip, free_ports, in_thread, serve_env

BASE_DIR = Path(__file__).resolve().parent.parent.parent
pytestmark = pytest.mark.browser


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
def two_processes(transactional_db: None, tmp_path: Path) -> Any:
    """`manage.py serve --processes 2` on the test database (no clock worker: the test's
    players make every move), stopped afterwards with all its children."""
    from django.db import connection

    if not os.environ.get("REDIS_URL"):
        fail_or_skip(
            "REDIS TEST: REDIS_URL is unset: two daphne processes cannot share a channel layer. "
            "Run with e.g. REDIS_URL=redis://127.0.0.1:6379/0."
        )
    port = free_ports(2)
    log = (tmp_path / "serve.log").open("wb")
    command = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "serve",
            "--processes",
            "2",
            "--port",
            str(port),
            "--clock-workers",
            "0",
            "--application",
            "tests.live_asgi:application",
        ],
        cwd=BASE_DIR,
        env=serve_env(OKEY_LIVE_DATABASE_NAME=str(connection.settings_dict["NAME"])),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    processes = [Process("127.0.0.1", port), Process("127.0.0.1", port + 1)]
    try:
        deadline = time.monotonic() + 60
        for p in processes:
            while True:
                try:
                    with urllib.request.urlopen(f"{p.url}/rules/", timeout=2) as answer:
                        assert answer.status == 200
                    break
                except OSError:
                    assert command.poll() is None, (tmp_path / "serve.log").read_text()
                    assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
                    time.sleep(0.1)
        yield processes
    finally:
        command.terminate()
        command.wait(timeout=30)
        log.close()
    # Stopping the command stops its daphne processes too.
    for p in processes:
        with pytest.raises(OSError):
            urllib.request.urlopen(f"{p.url}/rules/", timeout=2)


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
