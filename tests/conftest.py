"""Fixtures shared by the whole suite, and the report header that says what it ran against.

- ``daphne_live_server``: the site served by a real daphne process (HTTP and WebSockets) on the
  test database; see its docstring. ``own_server``: a daphne of the test's own, to stop.
- ``chromium_page``: a Playwright page in Debian's Chromium; ``chromium``: the browser itself,
  for tests with several contexts; ``artifacts``: the git-ignored folder for screenshots.
- ``signed_in``: a test client signed in as a user; ``players``: four players seated at a
  table for a socket test; ``table_socket``: table sockets opened for the test, closed after it.
"""

import asyncio
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from tests import workers
from tests.live_daphne import DaphneServer, fail_or_skip
from tests.pytest_env import FAST_PASSWORD_HASHERS

if TYPE_CHECKING:
    from tests.sockets import Players, TableSockets
    from tests.users import SignedIn

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _redact_url(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def pytest_report_header(config: pytest.Config) -> list[str]:
    from django.conf import settings
    from django.db import connection

    db = settings.DATABASES["default"]
    where = db.get("NAME", "")
    if db.get("HOST"):
        where = f"{db['HOST']}:{db.get('PORT') or 'default port'}/{where}"
    layer = settings.CHANNEL_LAYERS["default"]
    hosts = layer.get("CONFIG", {}).get("hosts", [])
    # A host is a URL, or a dict of connection options with the URL as its "address".
    addresses = [str(h["address"]) if isinstance(h, dict) else str(h) for h in hosts]
    layer_where = ", ".join(_redact_url(a) for a in addresses) if hosts else "this process"
    return [
        f"database: {connection.vendor} ({db['ENGINE']}, {where}; tests use a test database)",
        f"channel layer: {layer['BACKEND']} ({layer_where})",
    ]


# ------------------------------------------------------------------------------- workers
def pytest_configure(config: pytest.Config) -> None:
    """A pytest-xdist worker keeps its channel layer and cache keys apart from the other
    workers' on a shared Redis (tests/workers.py)."""
    from django.conf import settings

    workers.isolate(settings)
    workers.forget_earlier_runs(settings)
    settings.PASSWORD_HASHERS = FAST_PASSWORD_HASHERS


# ------------------------------------------------------------------------------- cache
@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    """Every test starts with an empty cache (log-in limits count there: accounts.limits);
    under pytest-xdist, only this worker's keys are emptied (tests/workers.py)."""
    workers.clear_cache()


@pytest.fixture(autouse=True)
def _language_of_the_site() -> Iterator[None]:
    """Every test starts in the site's default language: a request through the test client
    activates the reader's language in this thread (LocaleMiddleware) and leaves it active,
    so a test that fetched a Turkish page would turn the next test's words Turkish."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _rate_windows_hold_still(monkeypatch: pytest.MonkeyPatch) -> None:
    """django-ratelimit counts in fixed windows that end at a moment of the hour taken from the
    key's hash (an address's: 192.0.2.77's at 17:15 past): a test that ran across that moment
    would see its count start again. An hourly window now ends a whole period after the test began
    (a test that moves the clock past that end gets the next one)."""
    import time

    from django_ratelimit import core

    windows = core._get_window
    end = int(time.time()) + 3600

    def held(value: Any, period: int) -> int:
        if period != 3600 or time.time() >= end:
            return int(windows(value, period))
        return end

    monkeypatch.setattr(core, "_get_window", held)


# ------------------------------------------------------------------------------- channel layer
@pytest.fixture(autouse=True)
def _fresh_channel_layer() -> None:
    """Every test gets its own channel layer object. channels_redis keeps an asyncio lock per
    channel, bound to the event loop that first used it; pytest-asyncio gives each test a new
    loop, and a lock still held when an earlier test's loop closed fails every later socket
    with "bound to a different event loop". (A server runs one loop: no such problem.)"""
    from channels.layers import channel_layers

    channel_layers.backends.clear()


# The longest tests (half a minute to a minute and more each on this 2-core machine), run first:
# the workers take the next test as they become free (make test: --dist load --maxschedchunk 1),
# so the long ones start together at the beginning instead of leaving one worker busy at the end.
LONG_FIRST = (
    "tests/live/test_no_leaks.py",
    "tests/browser/test_play.py::test_four_players",
    "tests/actions/test_writer.py::test_it_verifies",
    "tests/browser/test_play.py::test_a_classic_hand",
    "tests/browser/test_okey101_practice.py",
    "tests/browser/test_play.py::test_practice_with_bots",
    "tests/live/test_kept_state.py::test_a_state_brought_forward",
    "tests/live/test_spectators.py::test_a_spectators_every_frame",
    "tests/pages/test_replay.py::test_every_step",
    "tests/browser/test_quick_play_journeys.py",
    "tests/browser/test_table_layout.py",
    "tests/engine/test_bots.py::test_it_plays_whole_hands",
    "tests/live/test_faults.py",
    "tests/live/test_serve.py",
    "tests/live/test_make_run.py",
    "tests/browser/",
)


def _long_rank(item: pytest.Item) -> int:
    return next(
        (i for i, prefix in enumerate(LONG_FIRST) if item.nodeid.startswith(prefix)),
        len(LONG_FIRST),
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first (``LONG_FIRST``; the sort is stable, so the rest keep their
    order), before pytest-django groups the tests as Django does (those with a rolled-back
    database, then those that flush it, then the rest: a flush removes the variants the
    migrations made). Every coroutine test closes its channel layers on its own loop (below), set up
    first so that it is torn down after the test's other fixtures (their sockets closed)."""
    import inspect

    items.sort(key=_long_rank)
    for item in items:
        if inspect.iscoroutinefunction(getattr(item, "obj", None)):
            item.fixturenames.insert(0, "_layers_closed_on_the_tests_loop")  # type: ignore[attr-defined]
        used = set(getattr(item, "fixturenames", ()))
        if used & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        if used & SERVER_FIXTURES:
            item.add_marker(pytest.mark.server)


# The marks follow from what a test uses (`make test-fast` leaves both out); a module that
# starts servers itself (`make run`, `manage.py serve`) marks itself ``server``.
BROWSER_FIXTURES = {"chromium", "chromium_page"}
SERVER_FIXTURES = {"daphne_live_server", "_daphne_process", "own_server", "two_processes"}
SERVER_FIXTURES |= {"served_behind_a_proxy"}


@pytest.fixture
async def _layers_closed_on_the_tests_loop() -> AsyncIterator[None]:
    """The Redis layer's reader pops on the test's loop. The loop's closing cancels it, and
    a cancellation the Redis client swallows would keep the loop from closing (the test hangs
    in teardown); closing the layer's connections ends the pop whatever became of the
    cancellation. A task that still does not stop is named, with its stack, before the hang."""
    import asyncio
    import sys

    from channels.layers import channel_layers

    yield
    for layer in list(channel_layers.backends.values()):
        close_pools = getattr(layer, "close_pools", None)
        if close_pools is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(close_pools(), timeout=10)
    me = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks() if task is not me and not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        _, stuck = await asyncio.wait(pending, timeout=10)
        for task in stuck:
            print(f"a task does not stop when cancelled: {task!r}", file=sys.stderr)
            task.print_stack(file=sys.stderr)


@pytest.fixture
def redis_layer() -> Any:
    """The site's channel layer on Redis; the test fails under CI (skips elsewhere) without
    ``REDIS_URL``."""
    import os

    from channels.layers import get_channel_layer

    if not os.environ.get("REDIS_URL"):
        fail_or_skip(
            "REDIS TEST: REDIS_URL is unset: the Redis channel layer cannot be tested. "
            "Run with e.g. REDIS_URL=redis://127.0.0.1:6379/0."
        )
    return get_channel_layer()


# ------------------------------------------------------------------------------- loop reads
@pytest.fixture(autouse=True)
def _no_loop_reads(settings: Any) -> None:
    """Table sockets in this process read in a thread (games.loop_reads off): a pool opened on
    a test's event loop would outlive the loop with its connections open, and PostgreSQL
    would refuse to drop the test database. Tests of the loop reads turn them on and close
    the pool themselves; the daphne processes of the live-server tests use them (PostgreSQL)."""
    settings.DB_LOOP_READS = False


@pytest.fixture(autouse=True)
def _broadcast_from_a_thread(settings: Any) -> None:
    """Messages after commit go out from the publishing thread, as in a worker: a test's event
    loop closes with the test, and a send or a pop of the Redis layer still running on it
    (the client can swallow their cancellation) would keep it from closing. The daphne
    processes of the live-server tests publish on their loops; tests/actions/test_broadcast.py
    tests it on a loop of its own."""
    settings.BROADCAST_ON_SERVER_LOOP = False


# ------------------------------------------------------------------------------- test database
@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """SQLite: keep the test database in a file, not in memory, so another process (the
    ``daphne_live_server``) can open it. pytest-django calls this before creating the test
    database; a TEST NAME set in the settings is kept."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    test = db.setdefault("TEST", {})
    if db["ENGINE"] == "django.db.backends.sqlite3" and test.get("NAME") in (None, "", ":memory:"):
        test["NAME"] = str(tmp_path_factory.mktemp("db") / "test.sqlite3")


@pytest.fixture(scope="session", autouse=True)
def _flush_tries_again_after_a_deadlock() -> Iterator[None]:
    """A transactional test's database is emptied (TRUNCATE) while a test daphne may still be
    finishing a request of that test (a page's socket closing writes its presence): on
    PostgreSQL the two can deadlock, and the server then fails one of them, sometimes the
    flush. The flush runs in one transaction, rolled back whole; it is tried again."""
    from django.core.management.base import CommandError
    from django.core.management.commands import flush
    from django.db import OperationalError

    handle = flush.Command.handle

    def handle_again(self: Any, *args: Any, **options: Any) -> Any:
        for attempt in range(5):
            try:
                return handle(self, *args, **options)
            except CommandError as exc:
                deadlock = isinstance(exc.__cause__, OperationalError) and "deadlock" in str(
                    exc.__cause__
                )
                if not deadlock or attempt == 4:
                    raise
        return None

    flush.Command.handle = handle_again  # type: ignore[method-assign]
    try:
        yield
    finally:
        flush.Command.handle = handle  # type: ignore[method-assign]


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """pytest-django's, and on PostgreSQL every other connection to the test database ended
    before it is dropped: a socket's thread can end with its connection still checked out of
    the process's pool, and DROP DATABASE then waited 5 s and failed at every worker's end."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock():
        connection.close_pool()
        with connection._nodb_cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                [connection.settings_dict["NAME"]],
            )


# ------------------------------------------------------------------------------- live daphne
@pytest.fixture(scope="session")
def _daphne_process(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DaphneServer]:
    """One daphne process for the session, started on first use, stopped before the test
    database is dropped (PostgreSQL refuses to drop a database in use)."""
    from django.db import connections

    connection = connections["default"]
    if connection.vendor == "sqlite" and connection.is_in_memory_db():
        pytest.fail("daphne_live_server needs a test database in a file, not in memory")
    server = DaphneServer("127.0.0.1", tmp_path_factory.mktemp("daphne") / "daphne.log")
    server.start(str(connection.settings_dict["NAME"]))
    server.pause_clock()  # it plays only during the tests that use it
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_server(transactional_db: None, tmp_path: Path) -> Iterator[DaphneServer]:
    """A daphne process of this test's own, on the test database, for a test that stops or
    kills it (the session's ``daphne_live_server`` is shared: not to be stopped). Started
    again with ``own_server.start(own_server.database_name)`` it keeps its port."""
    from django.db import connection

    if connection.vendor == "sqlite" and connection.is_in_memory_db():
        pytest.fail("a daphne process needs a test database in a file, not in memory")
    server = DaphneServer("127.0.0.1", tmp_path / "daphne-1.log")
    server.database_name = str(connection.settings_dict["NAME"])
    server.start(server.database_name)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def daphne_live_server(
    transactional_db: None, _daphne_process: DaphneServer
) -> Iterator[DaphneServer]:
    """The site served by a real daphne (ASGI: HTTP and WebSockets) on the test database.

    Browser tests use it (a WSGI test server has no WebSockets)::

        def test_something(daphne_live_server, chromium_page):
            chromium_page.goto(f"{daphne_live_server.url}/tables/{table.pk}/")

    (Name it before ``chromium_page``: fixtures close in reverse order, so the browser's
    sockets close before the test's tables are emptied.)

    - ``.url`` (``http://127.0.0.1:<port>``), ``.ws_url`` (``ws://...``), ``.host``, ``.port``.
    - The test runs with ``transactional_db``: what the test writes is committed, and the server
      (another process) sees it; the tables are emptied after the test. The server's own
      writes are visible to the test too. On SQLite the test database is a file for this
      (``django_db_modify_db_settings`` above).
    - Channel layer: with ``REDIS_URL`` the server shares the test's Redis layer, so
      ``games.actions`` calls in the test reach the server's sockets. Without it each process
      has its own in-memory layer: a message published by the test never reaches the server
      (only what the server does itself, or finds in the database, does).
    - With ``chromium_page``, change games in another thread:
      ``tests.live_daphne.in_thread(fn, *args)``. Playwright keeps an event loop running in the
      test's thread, where ``async_to_sync`` refuses to run, so a ``games.actions`` call made
      there commits but cannot publish (it logs "publishing to table ... failed").
    - The server's output: ``.output_of_this_test()`` and ``.errors()`` (lines with a traceback,
      ERROR, CRITICAL or TimeoutError since this test started); assert ``not server.errors()``.
    - One process serves the whole session (it starts with the first test that asks for it);
      its clock plays bots and timers during the tests that use it, and is paused between.
    """
    _daphne_process._test_start = len(_daphne_process.output())
    if _daphne_process.process is None or _daphne_process.process.poll() is not None:
        pytest.fail(f"the daphne process has stopped; its output:\n{_daphne_process.output()}")
    _daphne_process.resume_clock()
    yield _daphne_process
    # Paused before the tables are emptied: the other tests share the database, and the
    # server's clock would play their bots, timers and next hands.
    _daphne_process.pause_clock()
    _sockets_closed_on_the_server()


def _sockets_closed_on_the_server(within: float = 10.0) -> None:
    """Wait until the server has written the close of every socket of the test (the browser's
    contexts close before this; a socket's close deletes its presence row): the tables are
    emptied after those writes, not during them, when the emptying and a close's write could
    deadlock on PostgreSQL (the server's side then logged it as this test's error). Rows of
    sockets a test made up (no layer's "!" in the name) are not waited for."""
    from games.models import LobbyPresence, Presence, Watcher

    deadline = time.monotonic() + within
    while time.monotonic() < deadline and any(
        model.objects.filter(channel_name__contains="!").exists()
        for model in (Presence, Watcher, LobbyPresence)
    ):
        time.sleep(0.05)


# ------------------------------------------------------------------------------- browser
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


@pytest.fixture
def artifacts() -> Path:
    """Where browser tests save screenshots (git-ignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


class _Chromium:
    """This worker's Chromium, driven through Playwright's sync API, kept for the session.

    The sync API runs its event loop inside a greenlet of the thread that started it, and
    leaves that loop marked as the thread's running loop between calls: the suite's async tests
    (pytest-asyncio runs each on a new loop in the same thread) would then refuse to start, and
    Django would refuse ORM calls everywhere. So the loop is the thread's running loop only
    while a browser test runs (``lent``), and put aside between them."""

    def __init__(self) -> None:
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self._loop = asyncio.events._get_running_loop()
        self.browser = self._launch()
        self._put_aside()

    def _launch(self) -> Any:
        browser = self._playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        _still_unless_asked(browser)
        return browser

    def _put_aside(self) -> None:
        asyncio.events._set_running_loop(None)

    @contextlib.contextmanager
    def lent(self) -> Iterator[Any]:
        """The browser for one test; every context the test opened is closed after it."""
        asyncio.events._set_running_loop(self._loop)
        try:
            if not self.browser.is_connected():  # it crashed during an earlier test
                self.browser = self._launch()
            yield self.browser
        finally:
            try:
                for context in list(self.browser.contexts):
                    with contextlib.suppress(Exception):
                        context.close()
            finally:
                self._put_aside()

    def close(self) -> None:
        asyncio.events._set_running_loop(self._loop)
        try:
            with contextlib.suppress(Exception):
                self.browser.close()
            self._playwright.stop()
        finally:
            self._put_aside()


def _still_unless_asked(browser: Any) -> None:
    """The browser's contexts prefer reduced motion unless a test asks for motion
    (``reduced_motion="no-preference"``; ``ui.signed_in_page(..., motion=True)``). The site
    honours the preference (no sliding tiles, no melds flashing in, a countdown bar that
    steps), and so Chromium paints no frames of those animations: an opening laid out by a
    dozen drags cost it 6 s of CPU with them, 4.5 s without. The tests of dragging keep the
    motion a person sees by default."""
    new_context, new_page = browser.new_context, browser.new_page

    def still_context(**options: Any) -> Any:
        options.setdefault("reduced_motion", "reduce")
        return new_context(**options)

    def still_page(**options: Any) -> Any:
        options.setdefault("reduced_motion", "reduce")
        return new_page(**options)

    browser.new_context, browser.new_page = still_context, still_page


@pytest.fixture(scope="session")
def _chromium_of_this_worker() -> Iterator[_Chromium]:
    """One Chromium per worker process, started with the first browser test."""
    if not CHROMIUM.exists():
        fail_or_skip(
            f"BROWSER TEST: {CHROMIUM} is missing: browser tests cannot run. "
            "Install it with `apt-get install chromium` (make test does this as root)."
        )
    chromium = _Chromium()
    try:
        yield chromium
    finally:
        chromium.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Any:
    """Each phase's report on its test (``item.rep_call``), for fixtures that look back."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


def _keep_what_the_pages_showed(browser: Any, test: str) -> None:
    """After a browser test failed: each open page's screenshot and what it knew (its address,
    its socket's last frames, the connection notice, the table's data) in
    test-artifacts/failures/, since a failure under load rarely comes again when looked for."""
    folder = ARTIFACTS / "failures"
    folder.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^\w.-]+", "_", test)[:120]
    pages = [page for context in browser.contexts for page in context.pages]
    for n, page in enumerate(pages):
        with contextlib.suppress(Exception):
            page.screenshot(path=str(folder / f"{name}-{n}.png"), timeout=5_000)
        with contextlib.suppress(Exception):
            known = page.evaluate(
                """() => ({
                  url: location.href,
                  frames: window.__okeyFrames || null,
                  connection: {...((document.getElementById("connection") || {}).dataset || {})},
                  table: {...((document.getElementById("table-live") || {}).dataset || {})},
                })"""
            )
            known["errors"] = getattr(page, "okey_errors", None)
            (folder / f"{name}-{n}.json").write_text(json.dumps(known, indent=1, default=str))


@pytest.fixture
def chromium(
    _chromium_of_this_worker: _Chromium,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> Iterator[Any]:
    """A Playwright Browser (Debian's Chromium), for tests with several contexts (one per
    player); pair it with ``daphne_live_server``, the ASGI server where WebSockets connect.
    The worker's one Chromium, lent to the test: the contexts it opens are closed after it,
    so each test starts with none (cookies, storage and pages of its own).

    Without /usr/bin/chromium the test skips loudly, except under CI=true, where it fails.
    """
    # Playwright's loop is this thread's running loop during the test, and Django refuses ORM
    # calls from a thread with a running loop: allow them only while the test runs, so that
    # async code elsewhere in the suite is still checked.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with _chromium_of_this_worker.lent() as browser:
        yield browser
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            _keep_what_the_pages_showed(browser, request.node.name)


@pytest.fixture
def chromium_page(chromium: Any) -> Any:
    """A Playwright page in a fresh context of Debian's Chromium (see ``chromium``); pair it
    with ``daphne_live_server``: browser tests run against ASGI, so their WebSockets connect."""
    return chromium.new_page()


# ------------------------------------------------------------------------- clients and sockets
@pytest.fixture
def variants(db: None) -> None:
    """The variants' rows, which the migrations make: a transactional test before this one
    may have flushed them (``pytest.mark.usefixtures("variants")`` for a whole module)."""
    from games.catalog import ensure_variants

    ensure_variants()


@pytest.fixture(autouse=True)
def _fresh_message_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's in-process sockets start with full account and address budgets, and no
    lobby socket counted: these are the process's, and a test sending from one address must
    not spend the next test's."""
    from games import limits
    from games.live import lobby_socket, socket_guard

    monkeypatch.setattr(lobby_socket, "OPEN", socket_guard.OpenSockets())
    monkeypatch.setattr(
        socket_guard,
        "ACCOUNTS",
        socket_guard.Buckets(limits.ACCOUNT_MESSAGES_PER_SECOND, limits.ACCOUNT_MESSAGE_BURST),
    )


@pytest.fixture
def unmetered_sockets(monkeypatch: pytest.MonkeyPatch, _fresh_message_budgets: None) -> None:
    """In-process sockets without an account's message budget (``games.limits``), for tests
    that send far faster than a person on purpose (fuzzing, the refusal limits). (The budgets
    of a connection and an address are daphne's: ``okeysite.frame_guard``.)"""
    from games.live import socket_guard

    unlimited = 10**9
    monkeypatch.setattr(socket_guard, "ACCOUNTS", socket_guard.Buckets(unlimited, unlimited))


@pytest.fixture
def signed_in() -> "SignedIn":
    """``signed_in(user=None, language="", **client_kwargs)``: a test client signed in as
    ``user`` (``None``: an anonymous one), with a reader's language cookie if given, made by
    ``tests.users.client_for``, the one way the suite signs a client in; ``client_kwargs`` go
    to ``Client``. Call it where the test may use the ORM (in an async test: inside
    ``database_sync_to_async``)."""
    from tests.users import client_for

    return client_for


@pytest.fixture
def players(request: pytest.FixtureRequest, transactional_db: None) -> "Players":
    """Four new players seated at a table, each with a session cookie, made before an async
    test's body (out of its event loop, where the ORM is allowed); the test's ``players`` mark
    says what table (``tests.sockets.players_at_table``)::

        @pytest.mark.players("okey51", seed=42)  # their match started, dealt from seed_of(42)
        async def test_something(players: Players, table_socket: TableSockets) -> None:
            ws = await table_socket(players.table_id, players.cookies[1])

    Without the mark: a duz table, no match yet. Its data is committed (``transactional_db``,
    as the async tests' own mark asks), so that the sockets' threads see it."""
    from tests.sockets import players_at_table

    mark = request.node.get_closest_marker("players")
    if mark is None:
        return players_at_table()
    return players_at_table(*mark.args, **mark.kwargs)


@pytest.fixture
async def table_socket() -> AsyncIterator["TableSockets"]:
    """``await table_socket(table_id, cookie="", query="", first_frame=True)``: a table socket
    through the real ASGI application, asserted connected, its first frame taken (unless
    ``first_frame`` is false: the test reads it); every socket opened is closed at the test's
    end, and the server's background tasks stopped (as ``tests.sockets.lobby_sockets`` does).
    A socket that is to be refused is built with ``tests.sockets.socket``."""
    from tests.sockets import TableSockets

    sockets = TableSockets()
    yield sockets
    await sockets.close_all()


@pytest.fixture
def private_table(transactional_db: None) -> Any:
    """A private okey51 table nobody sits at yet (its ``invite_token`` lets people in)."""
    from games import actions
    from games.catalog import ensure_variants

    ensure_variants()
    return actions.create_table(variant="okey51", created_by=None, is_private=True)
