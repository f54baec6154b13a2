"""Ctrl-C on `make run` stops everything it started: a real `make run` (install, migrate,
load_demo, daphne with the clock inside, or beside it a run_clock worker with Redis) on a free
port and a SQLite file of its own, a demo player seated at a demo table with the table and
lobby sockets open while the bots play, then SIGINT to the whole process group, as a
terminal's Ctrl-C sends it. The Redis variant is skipped loudly without REDIS_URL (failed under
CI=true).

`make run` is started as a terminal starts a foreground job: in a process group of its own, with
SIGINT handled as by default. A test process may itself ignore SIGINT (a suite started as a
background job, `make test &` or under `nohup`, does: a shell starts background jobs so), and a
child started plainly would inherit that, and so would make and daphne: no Ctrl-C could stop
them, however quick the server."""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

from tests.live_daphne import fail_or_skip, free_ports
from tests.test_settings_env import ENV_KEYS as SETTINGS_ENV

BASE_DIR = Path(__file__).resolve().parent.parent.parent
pytestmark = pytest.mark.server

# A terminal's Ctrl-C must stop the server within this (it took under a second when it works).
STOPPED_WITHIN = 10.0
# `make run` must print something new (an install, a migration, the server's start) at least
# this often until its server answers.
STARTED_WITHIN = 180.0


def make_run_env(port: int, database: Path, redis: bool) -> dict[str, str]:
    """What a new user's shell has: none of the site's settings (without Redis the clock runs
    inside daphne), nor the test suite's, nor the jobserver of a `make test` around pytest."""
    dropped = {*SETTINGS_ENV, "DJANGO_SETTINGS_MODULE", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"}
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(HOST="127.0.0.1", PORT=str(port), DATABASE_URL=f"sqlite:///{database}")
    if redis:
        env["REDIS_URL"] = os.environ["REDIS_URL"]
    return env


# Runs the command given after it with SIGINT and SIGQUIT at their defaults, as a shell runs a
# foreground job (an ignored signal stays ignored across exec; a shell cannot undo that).
FOREGROUND = (
    "import os, signal, sys; "
    "[signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGQUIT)]; "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


def foreground_job(args: list[str], **popen: Any) -> subprocess.Popen[bytes]:
    """``args`` started as a terminal's foreground job: its own process group (the one Ctrl-C
    signals), SIGINT and SIGQUIT handled as by default whatever this process does with them."""
    return subprocess.Popen(
        [sys.executable, "-c", FOREGROUND, *args], start_new_session=True, **popen
    )


def signals_of(pid: str) -> str:
    """The signal masks of a process (/proc: pending, blocked, ignored, caught), for a failure
    message: SIGINT is bit 2 (0x2)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "gone"
    return " ".join(
        line.replace("\t", "") for line in status.splitlines() if line.startswith("Sig")
    )


def group_members(pgid: int) -> list[str]:
    """The live (not zombie) processes of process group ``pgid``: "pid command" each."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        state, _ppid, pgrp = text.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == pgid and state != "Z":
            command = cmdline.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{stat.parent.name} {command}")
    return found


def group_report(pgid: int) -> str:
    """What each live process of group ``pgid`` is doing (state and the kernel function it
    waits in), for a failure message: a server that never answered says where it stands."""
    lines = []
    for member in group_members(pgid):
        pid = member.split()[0]
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            wchan = Path(f"/proc/{pid}/wchan").read_text()
        except OSError:
            state = wchan = "?"
        lines.append(f"{member} [state {state}, waiting in {wchan or '-'}]")
    return "\n".join(lines) or "none"


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except OSError:
        return False


def sign_in_and_sit(base: str) -> str:
    """Sign the demo player ayse in, seat her at the first demo table (the bots start
    playing); her session cookie."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = opener.open(f"{base}/accounts/login/", timeout=10).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token, page
    form = {"csrfmiddlewaretoken": token.group(1), "username": "ayse", "password": "okey1234"}
    opener.open(f"{base}/accounts/login/", urllib.parse.urlencode(form).encode(), timeout=10)
    cookies = {c.name: c.value for c in jar}
    assert "sessionid" in cookies, cookies
    sit = urllib.request.Request(
        f"{base}/tables/1/sit/",
        urllib.parse.urlencode({"position": "0"}).encode(),
        headers={"X-CSRFToken": cookies["csrftoken"], "HX-Request": "true"},
    )
    with opener.open(sit, timeout=10) as answer:
        assert answer.status == 200
    return "; ".join(f"{name}={value}" for name, value in cookies.items())


@pytest.mark.parametrize("redis", [False, True], ids=["clock-in-daphne", "redis-run-clock"])
def test_ctrl_c_on_make_run_stops_the_server(tmp_path: Path, redis: bool) -> None:
    if redis and not os.environ.get("REDIS_URL"):
        fail_or_skip(
            "REDIS TEST: REDIS_URL is unset: `make run` starts no run_clock worker without it. "
            "Run with e.g. REDIS_URL=redis://127.0.0.1:6379/0."
        )
    port = free_ports(1)
    base = f"http://127.0.0.1:{port}"
    log_path = tmp_path / "make-run.log"
    with log_path.open("wb") as log:
        make = foreground_job(
            ["make", "run"],
            cwd=BASE_DIR,
            env=make_run_env(port, tmp_path / "db.sqlite3", redis),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    pgid = make.pid
    sockets = contextlib.ExitStack()
    try:
        # A fresh database: every migration first, on a machine maybe busy with other jobs.
        # It waits while make shows progress (its log grows), for a hang is what it looks for.
        deadline, logged = time.monotonic() + STARTED_WITHIN, 0
        while not answers(f"{base}/rules/"):
            log = log_path.read_text()
            assert make.poll() is None, log
            if len(log) > logged:
                deadline, logged = time.monotonic() + STARTED_WITHIN, len(log)
            assert time.monotonic() < deadline, (
                f"no page and nothing new in the log for {STARTED_WITHIN} s; processes:\n"
                f"{group_report(pgid)}\nlog:\n{log[-3000:]}"
            )
            time.sleep(0.2)
        cookie = sign_in_and_sit(base)
        table, lobby = (
            sockets.enter_context(
                connect(
                    f"ws://127.0.0.1:{port}{path}",
                    origin=base,
                    additional_headers={"Cookie": cookie},
                )
            )
            for path in ("/ws/tables/1/", "/ws/lobby/")
        )
        assert lobby.recv(timeout=10)
        # Ctrl-C while the clock plays: ayse starts the hand (seat 0 starts a match's first
        # hand) with a discard, and the bots' turns follow, played by the server's clock.
        frame = table.recv(timeout=10)
        while 'id="rack-area"' not in frame:
            frame = table.recv(timeout=10)
        hand = re.search(r'data-hand="(\d+)"', frame)
        tile = re.search(r'data-tile="([^"]+)"', frame.split('id="rack-area"', 1)[1])
        assert hand and tile, frame
        move = {"do": "discard", "tile": tile.group(1)}
        table.send(
            json.dumps(
                {
                    "type": "move",
                    "hand": int(hand.group(1)),
                    "move": move,
                    "expected_version": 0,
                    "client_move_id": "ctrl-c",
                }
            )
        )
        while not any(int(v) >= 2 for v in re.findall(r'data-version="(\d+)"', frame)):
            frame = table.recv(timeout=30)  # a bot's move, played by the clock

        os.killpg(pgid, signal.SIGINT)  # Ctrl-C

        stopped = time.monotonic() + STOPPED_WITHIN
        while time.monotonic() < stopped:
            make.poll()  # reaps make once it ends
            if not group_members(pgid) and not answers(f"{base}/rules/"):
                break
            time.sleep(0.2)
        left = group_members(pgid)
        assert not left, (
            f"still running {STOPPED_WITHIN} s after Ctrl-C: {left}\n"
            + "".join(f"{m.split()[0]}: {signals_of(m.split()[0])}\n" for m in left)
            + (log_path.read_text()[-3000:])
        )
        assert not answers(f"{base}/rules/")
        assert make.wait(timeout=1) != 0  # make itself ends on the signal
    finally:
        sockets.close()
        if group_members(pgid):
            os.killpg(pgid, signal.SIGKILL)
        make.poll()


def test_a_foreground_job_takes_ctrl_c_even_when_the_suite_ignores_it() -> None:
    """A child of a process that ignores SIGINT ignores it too, unless started as a terminal
    starts a foreground job; the Ctrl-C test above starts `make run` so."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as in a suite started with `&`
    try:
        show = "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"
        plain = subprocess.run([sys.executable, "-c", show], capture_output=True, text=True)
        job = foreground_job([sys.executable, "-c", show], stdout=subprocess.PIPE, text=True)
        out, _ = job.communicate(timeout=60)
    finally:
        signal.signal(signal.SIGINT, before)
    assert plain.stdout.strip() == "True"  # what `make run` inherited before
    assert out.strip() == "False"
