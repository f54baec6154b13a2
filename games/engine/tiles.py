"""Tiles, notation, the indicator and the okey, and the published deal (RULES.md §1).

A tile is an ``int``: ``colour * 13 + (number - 1)`` for the 104 numbered tiles (0..51), and
:data:`FAKE` (52) for a fake okey. The two copies of a tile are the same ``int``; physical ids
(0..105) exist only for the deal. Whether a tile is *wild* depends on the hand's okey: in a rack
the okey's identity always means a wild okey, and a fake plays as the okey's identity.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

COLOURS = "RBKY"
"""Colour letters in canonical order: red, blue, black (kara), yellow."""

FAKE = 52
"""The fake okey (sahte okey), written ``F``."""

NUMBERED = 52
TILE_COUNT = 106


class TileError(ValueError):
    """A tile or meld token that cannot be read."""


def tile(colour: str, number: int) -> int:
    """The tile of a colour letter and a number 1..13."""
    return COLOURS.index(colour) * 13 + number - 1


def colour_of(t: int) -> int:
    """Colour index 0..3 of a numbered tile."""
    return t // 13


def number_of(t: int) -> int:
    """Number 1..13 of a numbered tile."""
    return t % 13 + 1


def parse_tile(text: str) -> int:
    """Read ``R5``, ``K13`` or ``F``; raise :class:`TileError` on anything else."""
    code = _CODES.get(text)
    if code is not None:
        return code
    if not isinstance(text, str):
        raise TileError(f"not a tile: {text!r}")
    s = text.strip().upper()
    if s == "F":
        return FAKE
    if len(s) < 2 or s[0] not in COLOURS or not s[1:].isdigit():
        raise TileError(f"not a tile: {text!r}")
    n = int(s[1:])
    if not 1 <= n <= 13 or s[1] == "0":
        raise TileError(f"not a tile: {text!r}")
    return tile(s[0], n)


NAMES = tuple(f"{c}{n}" for c in COLOURS for n in range(1, 14)) + ("F",)
_CODES = {name: code for code, name in enumerate(NAMES)}


def format_tile(t: int) -> str:
    """Write a tile in RULES.md notation."""
    if not 0 <= t <= FAKE:
        raise TileError(f"not a tile code: {t}")
    return NAMES[t]


def parse_token(text: str) -> tuple[int, int | None]:
    """Read a meld token: a tile, optionally ``:X`` saying what a wild okey stands for."""
    if not isinstance(text, str):
        raise TileError(f"not a tile: {text!r}")
    head, sep, tail = text.partition(":")
    t = parse_tile(head)
    if not sep:
        return t, None
    stands = parse_tile(tail)
    if stands == FAKE:
        raise TileError(f"a wild okey cannot stand for a fake: {text!r}")
    return t, stands


def okey_of(indicator: int) -> int:
    """The okey: the indicator's colour, one higher; 13 wraps to 1."""
    if indicator == FAKE:
        raise TileError("a fake okey cannot be the indicator")
    c, n = colour_of(indicator), number_of(indicator)
    return c * 13 + (n % 13)


def physical_tiles() -> list[int]:
    """The 106 tiles in canonical deal order: R,B,K,Y 1..13, the same 52 again, then F, F."""
    return list(range(NUMBERED)) * 2 + [FAKE, FAKE]


def new_seed() -> str:
    """A fresh 32-byte seed from :mod:`secrets`, as 64 hex digits."""
    return secrets.token_hex(32)


def seed_bytes(seed: str | bytes) -> bytes:
    """The 32 seed bytes of a 64-hex-digit seed."""
    if isinstance(seed, bytes):
        raw = seed
    else:
        try:
            raw = bytes.fromhex(seed)
        except ValueError as exc:
            raise TileError(f"a seed is 64 hex digits: {seed!r}") from exc
    if len(raw) != 32:
        raise TileError("a seed is 32 bytes (64 hex digits)")
    return raw


def commitment(seed: str | bytes) -> str:
    """SHA-256 of the seed bytes, published before the hand starts."""
    return hashlib.sha256(seed_bytes(seed)).hexdigest()


class _Stream:
    """Uniform integers from SHA-256(seed ‖ counter) blocks, as RULES.md "The deal" says."""

    def __init__(self, seed: bytes) -> None:
        self.seed = seed
        self.counter = 0
        self.buffer = b""

    def word(self) -> int:
        if len(self.buffer) < 4:
            block = hashlib.sha256(self.seed + self.counter.to_bytes(8, "big")).digest()
            self.counter += 1
            self.buffer += block
        w, self.buffer = int.from_bytes(self.buffer[:4], "big"), self.buffer[4:]
        return w

    def below(self, bound: int) -> int:
        limit = 2**32 - (2**32 % bound)
        while True:
            w = self.word()
            if w < limit:
                return w % bound


def shuffled(seed: str | bytes) -> list[int]:
    """The 106 tiles after the seeded Fisher-Yates shuffle."""
    tiles = physical_tiles()
    stream = _Stream(seed_bytes(seed))
    for i in range(len(tiles) - 1, 0, -1):
        j = stream.below(i + 1)
        tiles[i], tiles[j] = tiles[j], tiles[i]
    return tiles


@dataclass(frozen=True)
class Deal:
    """One hand's deal. ``racks[0]`` is the starter's; the pile is listed top first."""

    indicator: int
    racks: tuple[tuple[int, ...], ...]
    pile: tuple[int, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "indicator": format_tile(self.indicator),
            "racks": [[format_tile(t) for t in r] for r in self.racks],
            "pile": [format_tile(t) for t in self.pile],
        }


def deal(seed: str | bytes, players: int = 4, sizes: tuple[int, int] = (15, 14)) -> Deal:
    """Deal a hand from a seed exactly as RULES.md says, racks in turn order from the starter;
    ``sizes``: the starter's rack and each other rack (okey101 deals 22 and 21)."""
    if not 2 <= players <= 4:
        raise TileError("2 to 4 players")
    tiles = shuffled(seed)
    at = next(i for i, t in enumerate(tiles) if t != FAKE)
    indicator = tiles.pop(at)
    first, other = sizes
    racks = [tuple(tiles[:first])]
    pos = first
    for _ in range(players - 1):
        racks.append(tuple(tiles[pos : pos + other]))
        pos += other
    return Deal(indicator, tuple(racks), tuple(tiles[pos:]))
