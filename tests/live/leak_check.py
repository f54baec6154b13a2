"""The checker of tests/live/test_no_leaks.py: does a recorded page or socket frame show an observer
anything of a live hand they may not see? Not a test module.

The truth is the hand itself, rebuilt by the engine from its seed and move log at every
version (:func:`truth_of`). A text is checked against the version it shows (``#table-live``'s
``data-version``; a replay's ``data-step`` for its board and ``data-last`` for its move list;
otherwise the version when it was fetched):

- **Tile elements** (``data-tile``) are sorted into the zones that hold them. Each public zone
  must hold exactly what the engine's public view has there (the indicator and the okey; each
  seat's discards; each seat's melds on the table); a rack zone must hold exactly the
  observer's own rack, and only while that seat is theirs; any other tile element, or a
  revealed rack, is a leak. A tile code is not unique (two copies of each), so the zones are
  compared as multisets: another seat's tile drawn anywhere makes some zone hold one too many.
- **Tile codes anywhere else** (text, other attributes, JSON) must each be a tile that was
  public at some version so far, or in the observer's own rack so far (the event log names
  tiles taken, laid and given back, and the viewer's own draws); a line saying someone else
  drew a named tile is a leak. A tile of another rack or of the pile, never shown, fails.
- **The seed** (hex, either case, or as a decimal number) never appears.
- **Hidden from spectators**: a spectator's table after the version at which a seat hid the
  hand is veiled (``data-veiled``) and shows no tile at all.

Once the hand is over (the text shows its final version) the rules make the racks and the seed
public, and nothing is checked.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import lxml.html

from games import audit
from games.models import Hand
from games.pages import history

# A tile code standing alone: its colour letter not after another letter or digit (tested
# after the letter, which lets the regex engine skip ahead to the next R, Y, B or K).
TILE = re.compile(r"[RYBK](?<![A-Za-z0-9][RYBK])(?:1[0-3]|[1-9])(?![0-9])")
DATA_TILE = re.compile(r'data-tile="[^"]*"')
TOKEN = re.compile(r"[A-Za-z0-9]{20,}")


# ----------------------------------------------------------------------------- the truth
@dataclass
class Truth:
    """The hand at every version ``v`` (after ``v`` moves), from the engine."""

    hand_id: int
    seed: str
    final: int  # the version that ended the hand
    publics: list[dict[str, Any]]
    racks: list[list[list[str]]]  # racks[v][seat]: the seat's own view of its rack
    ever_public: list[frozenset[str]]  # tile codes public at some version <= v
    ever_own: list[list[frozenset[str]]]  # ever_own[v][seat]: codes in that rack at some <= v
    hidden_from: int | None = None  # hidden from spectators at this version (and after)

    def secret_codes(self, v: int, observer: Observer) -> set[str]:
        """Codes at version ``v`` the observer never saw (another rack's, the pile's)."""
        allowed = set(self.ever_public[v]) | own_codes(self, v, observer)
        hidden = {c for seat in self.racks[v] for c in seat} - allowed
        return {c for c in hidden if TILE.fullmatch(c)}


def public_codes(public: dict[str, Any]) -> set[str]:
    shown = [public["indicator"], public["okey"], public["discards"], public["table"]]
    return set(TILE.findall(json.dumps(shown)))


def truth_of(hand: Hand) -> Truth:
    """The hand (over) replayed from its deal, its public and per-seat views at each version."""
    moves = history.recorded_moves(hand)
    eng = audit.dealt(hand)
    publics, racks, ever_public, ever_own = [], [], [], []
    seen: set[str] = set()
    own: list[set[str]] = [set() for _ in range(eng.players)]

    def snap() -> None:
        public = eng.public_view()
        seat_racks = [list(eng.view(p)["rack"]) for p in range(eng.players)]
        seen.update(public_codes(public))
        for p, rack in enumerate(seat_racks):
            own[p].update(c for c in rack if TILE.fullmatch(c))
        publics.append(json.loads(json.dumps(public)))
        racks.append(seat_racks)
        ever_public.append(frozenset(seen))
        ever_own.append([frozenset(s) for s in own])

    snap()
    for m in moves:
        result = eng.play(m.seat, m.action)
        assert result.ok, (m.number, result.error)
        snap()
    assert eng.over and len(moves) == hand.version
    return Truth(hand.pk, hand.seed, hand.version, publics, racks, ever_public, ever_own)


# ----------------------------------------------------------------------------- observers
@dataclass
class Observer:
    name: str
    seat: int | None = None  # the seat they hold in the hand (None: they hold none)
    left_at: int | None = None  # the version at which staff took them off it

    def owns(self, v: int) -> bool:
        """May they see their seat's rack as it was at version ``v``?"""
        return self.seat is not None and (self.left_at is None or v <= self.left_at)

    def spectator(self, v: int) -> bool:
        """Do they watch, not play, the table at version ``v``?"""
        return self.seat is None or (self.left_at is not None and v > self.left_at)


def own_codes(truth: Truth, v: int, observer: Observer) -> set[str]:
    if observer.seat is None:
        return set()
    upto = v if observer.left_at is None else min(v, observer.left_at)
    return set(truth.ever_own[upto][observer.seat])


# ----------------------------------------------------------------------------- parsing
@dataclass
class Parsed:
    tiles: list[tuple[str, int | None, str]] = field(default_factory=list)  # zone, key, code
    live: dict[str, str] | None = None  # #table-live's attributes
    replay: dict[str, str] | None = None  # #replay-step's attributes
    veiled: bool = False


@lru_cache(maxsize=4096)
def parse(text: str) -> Parsed:
    """The text's tile elements by zone (cached: the same frame reaches several observers, and
    the checker's own test reads frames again; a Parsed is never changed after). libxml2's
    parser through lxml: Python's own took most of the check's time."""
    out = Parsed()
    if not text.strip():
        return out
    # A frame's several top-level elements land in the document's body.
    for element in lxml.html.document_fromstring(text).iter():
        if not isinstance(element.tag, str):  # a comment or a processing instruction
            continue
        a = element.attrib
        if a.get("id") == "table-live":
            out.live = dict(a)
        if a.get("id") == "replay-step":
            out.replay = dict(a)
        if "data-veiled" in a:
            out.veiled = True
        if "data-tile" in a:
            zone, key = _zone_of(element)
            out.tiles.append((zone, key, a["data-tile"]))
    return out


def _zone_of(element: Any) -> tuple[str, int | None]:
    ancestors = list(element.iterancestors())
    inside_rack_area = any(a.get("id") == "rack-area" for a in ancestors)
    for a in ancestors:
        classes = set((a.get("class") or "").split())
        if "rack" in classes and inside_rack_area:
            return "rack", None
        if "replay-rack" in classes:
            return "rack-of", int(a.get("data-rack"))
        if "discard-spot" in classes:
            return "discards", int(a.get("data-seat"))
        if "replay-discards" in classes:
            return "discards", int(a.get("data-discards"))
        if "meld-group" in classes or "replay-melds" in classes:
            return "melds", int(a.get("data-owner"))
        if "centre" in classes or "replay-centre" in classes:
            return "centre", None
        if "revealed" in classes or "revealed-rack" in classes:
            return "revealed", None
    return "elsewhere", None


# ----------------------------------------------------------------------------- the check
@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    version: int | None = None  # the version the text showed (None: not a board)
    own_rack_checked: bool = False  # a rack of the observer's was compared, and matched
    public_checked: bool = False  # a public zone with tiles was compared
    veiled: bool = False


def check(text: str, observer: Observer, truth: Truth, fetched_at: int | None) -> Report:
    """What ``text`` (a page or frame the observer received; ``fetched_at``: the hand's version
    when it was fetched, None for a socket frame) shows that the observer may not see."""
    report = Report()
    p = parse(text)
    board_v: int | None = None  # the version whose board the tile elements show
    words_v: int | None = fetched_at  # the version up to which its words may name tiles
    if p.live is not None:
        # A veiled board names no hand; the table shows no other.
        if p.live.get("data-hand") not in ("", str(truth.hand_id)):
            report.problems.append(f"a board of another hand ({p.live.get('data-hand')})")
            return report
        board_v = words_v = int(p.live["data-version"])
    elif p.replay is not None:
        board_v, words_v = int(p.replay["data-step"]), int(p.replay["data-last"])
    report.version = board_v
    if words_v is None:
        # A frame beside the board (watchers, an error, chat): it shows no tile at all.
        if p.tiles or TILE.search(words(text)):
            report.problems.append(f"tiles in a frame that is not a board: {text[:300]}")
        if _has_seed(text, truth.seed):
            report.problems.append("the seed")
        return report
    if words_v >= truth.final or (board_v is not None and board_v >= truth.final):
        return report  # the hand is over: its racks and seed are public now
    problems = report.problems
    if _has_seed(text, truth.seed):
        problems.append(f"the seed, at version {words_v}")
    # Words: every tile code named outside a tile element was public, or the observer's own.
    allowed = set(truth.ever_public[words_v]) | own_codes(truth, words_v, observer)
    said = words(text)
    named = set(TILE.findall(said))
    if named - allowed:
        first = sorted(named - allowed)[0]
        at = re.search(rf"(?<![A-Za-z0-9]){first}(?![0-9])", said)
        where = said[max(0, at.start() - 120) : at.end() + 60] if at else ""
        problems.append(
            f"tile codes never shown to {observer.name} by {words_v}: "
            f"{sorted(named - allowed)}, e.g. in {where!r}"
        )
    for line in re.findall(r"[^<>.]* drew [RYBKF][0-9]*", text):
        if not line.strip().startswith("You drew"):
            problems.append(f"someone else's draw named: {line.strip()!r}")
    if board_v is None:
        if p.tiles:
            problems.append(f"tile elements on a page with no board: {p.tiles[:8]}")
        return report
    _check_board(p, board_v, observer, truth, report)
    return report


def words(text: str) -> str:
    """The text without its tile elements' codes and without long tokens (a CSRF token, a
    commitment), where two characters can look like a tile code."""
    return TOKEN.sub(" ", DATA_TILE.sub(" ", text))


def _has_seed(text: str, seed: str) -> bool:
    lowered = text.lower()
    return seed.lower() in lowered or str(int(seed, 16)) in text


def _check_board(p: Parsed, v: int, observer: Observer, truth: Truth, report: Report) -> None:
    public, problems = truth.publics[v], report.problems
    zones: dict[tuple[str, int | None], Counter[str]] = {}
    for zone, key, code in p.tiles:
        zones.setdefault((zone, key), Counter())[code] += 1
    spectating = observer.spectator(v)
    if spectating and truth.hidden_from is not None and v > truth.hidden_from:
        report.veiled = True
        if p.tiles:
            problems.append(f"a tile shown to a spectator of a hidden hand at {v}: {p.tiles[:8]}")
        if p.live is not None and not p.veiled:
            problems.append(f"a spectator's board at {v} is not veiled though the hand is hidden")
        return
    shown_board = any(zone in ("centre", "discards", "melds") for zone, _k in zones)
    if shown_board:
        expected: dict[tuple[str, int | None], Counter[str]] = {
            ("centre", None): Counter([public["indicator"], public["okey"]])
        }
        for seat, pile in enumerate(public["discards"]):
            expected[("discards", seat)] = Counter(pile)
        for meld in public["table"]:
            expected.setdefault(("melds", meld["owner"]), Counter()).update(meld["tiles"])
        for key, want in expected.items():
            if zones.get(key, Counter()) != want:
                got = dict(zones.get(key, Counter()))
                problems.append(f"{key} at {v} shows {got}, the public view has {dict(want)}")
        for key, got in zones.items():
            if key[0] in ("centre", "discards", "melds") and key not in expected:
                problems.append(f"{key} at {v} shows {dict(got)}, not in the public view")
        report.public_checked = True
    for (zone, key), got in zones.items():
        if zone in ("centre", "discards", "melds"):
            continue
        if zone == "rack" or (zone == "rack-of" and key == observer.seat):
            if not observer.owns(v):
                problems.append(f"a rack shown to {observer.name} at {v}: {dict(got)}")
                continue
            assert observer.seat is not None
            want = Counter(truth.racks[v][observer.seat])
            if got != want:
                problems.append(f"the rack at {v} shows {dict(got)}, the seat holds {dict(want)}")
            else:
                report.own_rack_checked = True
        else:
            problems.append(f"tiles of {zone} {key} shown to {observer.name} at {v}: {dict(got)}")


def drawn_rack_frame(tiles: list[str], version: int, hand_id: int) -> str:
    """A board frame at ``version`` with a rack of ``tiles`` (for the checker's self-test)."""
    from games.templatetags.tiles import tile_html

    rack = "".join(f'<div class="slot">{tile_html(t, selectable=True)}</div>' for t in tiles)
    return (
        f'<div id="table-live" data-version="{version}" data-hand="{hand_id}"></div>'
        f'<div id="rack-area"><div class="rack"><div class="rack-row">{rack}</div></div></div>'
    )
