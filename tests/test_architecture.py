"""The map matches the land: the tree in docs/ARCHITECTURE.md is the tree of ``games/``, every
group message has its handler on the socket that hears it, and imports sit at the top of
their module but where this file says why not. (The layers themselves: ``lint-imports``.)"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from games.actions import events
from games.live.lobby_socket import LobbyConsumer
from games.live.table_socket import TableConsumer

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("games", "accounts", "leagues", "tournaments", "okeysite")

# The imports that stay inside a function, and why.
LATE_IMPORTS = {
    # Django connects an app's signal receivers once the apps are loaded, not at import.
    ("games/apps.py", "ready"): "from games import signals",
    ("accounts/apps.py", "ready"): "from accounts import signals",
    ("leagues/apps.py", "ready"): "from leagues import signals",
    # Migrations call it with their historical model; the real one only when none is given.
    ("games/catalog.py", "ensure_variants"): "from games.models import Variant as model",
    # The event-loop reads are PostgreSQL's: SQLite sites never load its driver's pool.
    ("games/live/loop_reads.py", "_connection_kwargs"): "import psycopg",
    ("games/live/loop_reads.py", "_configure"): "from psycopg import sql",
    ("games/live/loop_reads.py", "open_pool"): "from psycopg_pool import AsyncConnectionPool",
    # ``import games.engine`` does not load the scenario runner (a command-line tool).
    ("games/engine/__init__.py", "run_scenario"): "from .scenario import run_scenario as run",
}


def _late_imports() -> dict[tuple[str, str], str]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text())
            for fn in ast.walk(tree):
                if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for node in ast.walk(fn):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        found[(str(path.relative_to(ROOT)), fn.name)] = ast.unparse(node)
    return found


def test_imports_sit_at_the_top_but_where_a_reason_is_written_here() -> None:
    assert _late_imports() == LATE_IMPORTS


def _tree_block() -> str:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    assert text.startswith("# Architecture\n\n## The map"), "ARCHITECTURE.md opens with the map"
    return text.split("```", 2)[1]


def _listed_modules() -> set[str]:
    """The modules and packages of ``games/`` the map names, as paths."""
    listed: set[str] = set()
    stack: list[tuple[int, str]] = []
    for line in _tree_block().splitlines():
        match = re.match(r"^( *)(\w+(?:\.py|/))(?:\s|$)", line)
        if not match:
            continue
        indent, name = len(match.group(1)), match.group(2)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = "/".join([*(n for _, n in stack), name.rstrip("/")])
        if name.endswith("/"):
            stack.append((indent, name.rstrip("/")))
        listed.add(path)
    return {p for p in listed if p.startswith("games/")}


def _actual_modules() -> set[str]:
    """``games/``'s packages and modules, but the engine's inside, migrations, management
    commands and template tags (the map names their folders)."""
    found = set()
    games = ROOT / "games"
    for path in games.rglob("*"):
        rel = path.relative_to(ROOT)
        parts = rel.parts
        if "__pycache__" in parts or path.name == "__init__.py":
            continue
        if len(parts) > 2 and parts[1] in ("engine", "migrations", "management", "templatetags"):
            continue
        if path.is_dir() or path.suffix == ".py":
            found.add(str(rel))
    return found


def test_the_map_in_architecture_md_is_the_tree_of_games() -> None:
    listed, actual = _listed_modules(), _actual_modules()
    assert listed - actual == set(), "the map names modules that do not exist"
    assert actual - listed == set(), "modules missing from the map"


@pytest.mark.parametrize(
    ("consumer", "kinds"),
    [
        (TableConsumer, events.TABLE_KINDS | events.SESSION_KINDS),
        (LobbyConsumer, events.LOBBY_KINDS | events.SESSION_KINDS),
    ],
)
def test_every_group_message_has_its_marked_handler(consumer: type, kinds: frozenset[str]) -> None:
    handled = {
        getattr(member, "handles", None)
        for klass in consumer.__mro__
        for member in vars(klass).values()
    } - {None}
    assert handled == kinds
    for kind in kinds:
        assert getattr(consumer, events.handler_name(kind)).handles == kind


def test_a_handler_named_otherwise_than_its_kind_is_refused() -> None:
    with pytest.raises(TypeError, match="name it table_changed"):

        @events.handles(events.TABLE_CHANGED)
        async def on_table_changed(self: object, event: dict[str, object]) -> None: ...


def test_every_message_the_actions_build_is_of_a_kind_its_group_handles() -> None:
    built = [
        events.table_changed(1),
        events.table_changed(1, "ended"),
        events.hand_dealt(1, 2),
        events.hand_dealt(1, 2, new_match=True),
        events.hand_moved(1, 2, 3, 0, []),
        events.table_watchers(1, 4),
        events.chat_said(1, 2, 3),
        events.chat_muted(1, 2, 3, on=True),
        events.chat_deleted(1, 2),
        events.chat_changed(1, False),
    ]
    assert {m["type"] for m in built} == events.TABLE_KINDS - {events.LAYER_RESUMED}
    assert all(m["table"] == 1 for m in built)
    lobby = [events.lobby_changed(), events.lobby_html("<p>")]
    assert {m["type"] for m in lobby} == events.LOBBY_KINDS - {events.LAYER_RESUMED}
    assert {events.session_ended()["type"]} == events.SESSION_KINDS
