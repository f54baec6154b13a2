"""Errors the game actions raise: each has a stable ``code`` a client can act on."""

from __future__ import annotations

from django.db import InterfaceError, OperationalError


class GameError(Exception):
    """A refused request; ``code`` is stable (engine codes for refused moves)."""

    def __init__(
        self,
        code: str,
        message: str,
        detail: str | None = None,
        tiles: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = detail
        self.tiles = tiles  # a refused move's group at fault (the engine's MoveError.tiles)


class StaleVersion(GameError):
    """The client played against an older version of the hand."""


class NotAllowed(GameError):
    """The policy refused: this person may not do that here."""


# The database cannot be reached (a lost connection, a restart, no connection from the pool):
# nothing is wrong with what was asked, and it may be asked again.
UNREACHABLE = (OperationalError, InterfaceError)
