"""The audit of a stored hand: deal it again from its seed, replay its move log through the
engine, and compare with what is stored (the commitment, the deal, each move and its events,
the version, the snapshot, the result).

Used by ``manage.py verify_hands`` (:func:`verify_hand`), ``manage.py verify_deal`` and the
deal check page (:func:`deal_checks`), and the replay pages (:func:`dealt`, :func:`record`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from games import engine
from games.actions.matches import snapshot
from games.models import Hand, Move


def dealt(hand: Hand) -> engine.Hand:
    """The hand dealt again from its seed as its match dealt it (``engine.Match.deal_hand``):
    with the previous hand's final scores (the start scores for hand 1) and its recorded
    starter. Raises ``engine.TileError`` (a bad seed), ``engine.OptionsError`` or
    ``ValueError``."""
    table = hand.match.table
    previous = Hand.objects.filter(match=hand.match, number=hand.number - 1).only("state").first()
    scores = (previous.state.get("result") or {}).get("scores") if previous is not None else None
    # Void hands before it (okey101) count for nothing: its number counts them, its match not.
    voided = Hand.objects.filter(match=hand.match, number__lt=hand.number, ending="void").count()
    rules = engine.Match(
        table.variant.key,
        table.options,
        table.players,
        scores=scores or None,
        dealt=hand.number - 1,
        voided=voided,
    )
    return rules.deal_hand(hand.seed, starter=hand.starter)


def record(moves: list[Move], events: bool = False) -> list[engine.Recorded]:
    """Move rows as the engine replays them (``engine.replay_moves``), with their stored
    events to compare when ``events``."""
    return [engine.Recorded(m.seat, m.action, m.events if events else None) for m in moves]


@dataclass(frozen=True)
class Finding:
    """One check of a stored hand: passed or not, the problems it found (in the audit's words;
    a check that could not be made because an earlier one failed adds none) and what the deal
    check shows beside it."""

    key: str
    ok: bool
    problems: list[str] = field(default_factory=list)
    detail: str = ""


def audit(hand: Hand) -> list[Finding]:
    """Check a stored hand against its seed, replaying it once: the commitment, the deal made
    again (``dealt``), the move log played on it (``engine.replay_moves``), the
    version, the stored snapshot and the stored result. The site's audit (:func:`verify_hand`)
    and the deal check (:func:`deal_checks`) both read it."""
    found: list[Finding] = []
    try:
        digest = engine.commitment(hand.seed)
    except engine.TileError as exc:
        found.append(Finding("commitment", False, [str(exc)], str(exc)))
    else:
        ok = digest == hand.commitment
        wrong = [] if ok else ["the seed does not match its commitment"]
        found.append(Finding("commitment", ok, wrong, f"sha256 = {digest}"))
    moves = list(hand.moves.order_by("number"))
    ok = hand.version == len(moves)
    wrong = [] if ok else [f"version {hand.version} but {len(moves)} moves"]
    version = Finding("version", ok, wrong, str(hand.version))
    try:
        eng = dealt(hand)
    except (engine.TileError, engine.OptionsError, ValueError) as exc:
        cannot = f"cannot deal: {exc}"
        found.append(Finding("deal", False, [cannot], cannot))
        found.append(Finding("moves", False, [], cannot))
        return [*found, version, *(Finding(k, False, [], cannot) for k in ("snapshot", "result"))]
    state = hand.state or {}
    ok = (state.get("indicator"), state.get("initial")) == (eng.indicator, eng.initial)
    found.append(Finding("deal", ok, [] if ok else ["the deal differs from the stored one"]))

    jump = next((k for k, m in enumerate(moves) if m.number != k + 1), None)
    replay = engine.replay_moves(eng, record(moves[:jump], events=True))
    wrong = list(replay.problems)
    if jump is not None and replay.error is None:
        wrong.append(f"move numbers jump from {jump} to {moves[jump].number}")
    n = len(moves)
    said = ngettext("%(n)s move", "%(n)s moves", n) % {"n": n}
    found.append(Finding("moves", not wrong, wrong, "; ".join(wrong) or said))
    found.append(version)
    # The snapshot and the result are compared only when the whole log replays.
    replayed = not wrong

    ok = replayed and snapshot(eng) == hand.state
    wrong = [] if ok or not replayed else ["the replayed state differs from the stored snapshot"]
    found.append(Finding("snapshot", ok, wrong))

    r = eng.result
    if hand.status == Hand.Status.FINISHED:
        stored = (hand.hand_scores, hand.ending, hand.finisher, hand.kind)
        if not r["over"]:
            problem = "stored as finished but the replay has not ended"
        elif (r["hand_scores"], r["ending"], r["finisher"], r["kind"] or "") != stored:
            problem = "the stored result differs from the replay"
        else:
            problem = ""
        if r["over"]:
            scores = ", ".join(str(s) for s in r["hand_scores"])
            detail = gettext("scores of the hand: %(scores)s") % {"scores": scores}
        else:
            detail = gettext("the hand has not ended")
    else:
        problem = "the replay has ended but the hand is not stored as over" if r["over"] else ""
        detail = gettext("the hand has not ended")
    ok = replayed and not problem
    found.append(Finding("result", ok, [problem] if problem and replayed else [], detail))
    return found


def verify_hand(hand: Hand) -> list[str]:
    """Replay a hand from its seed and move log; list every way it differs from what is stored
    (:func:`audit`)."""
    return [p for finding in audit(hand) for p in finding.problems]


# How often a hand that moved while it was being checked is read and checked again.
SETTLE_TRIES = 5


def verify_settled(hand_id: int, tries: int = SETTLE_TRIES) -> list[str] | None:
    """:func:`verify_hand` of a hand that may be being played: the hand row and its moves are
    read by separate queries, so a move committed between the two would look like a
    difference. A hand whose version changed while it was checked is read and checked again;
    one still moving after ``tries`` is not judged (None). A missing hand has nothing to
    check ([])."""
    for _attempt in range(tries):
        hand = Hand.objects.select_related("match__table__variant").filter(pk=hand_id).first()
        if hand is None:
            return []
        problems = verify_hand(hand)
        now = Hand.objects.filter(pk=hand_id).values_list("version", "status").first()
        if now == (hand.version, hand.status):
            return problems
    return None


@dataclass(frozen=True)
class Check:
    """One check of a deal: a stable key, what it checks (in words), whether it passed."""

    key: str
    label: str
    ok: bool
    detail: str = ""


CHECK_LABELS: dict[str, Any] = {
    "commitment": _("The SHA-256 of the seed is the commitment shown before the hand began."),
    "deal": _("Dealing again from the seed gives the recorded deal (indicator, racks, pile)."),
    "moves": _("Every recorded move is accepted when replayed from that deal, as recorded."),
    "version": _("The hand's version is its number of moves."),
    "snapshot": _("The replay ends in the stored state of the hand."),
    "result": _("The replay ends with the stored result."),
    "audit": _("The site's own audit (verify_hands) finds nothing wrong."),
}


def deal_checks(hand: Hand) -> list[Check]:
    """Check a hand's deal from its seed: each finding of :func:`audit` as a check, and
    last whether the site's audit (:func:`verify_hand`: the same findings) finds nothing."""
    found = audit(hand)
    problems = [p for f in found for p in f.problems]
    checks = [Check(f.key, str(CHECK_LABELS[f.key]), f.ok, f.detail) for f in found]
    return [*checks, Check("audit", str(CHECK_LABELS["audit"]), not problems, "; ".join(problems))]
