"""The scenario runner of SCENARIOS.md: one hand written as data, run through the engine.

python -m games.engine.scenario FILE.json [...]          one JSON result per line
python -m games.engine.scenario --check FILE.json [...]  compare with "expect"; exit 1 on a mismatch
python -m games.engine.scenario -                        read one scenario from stdin
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Mapping
from typing import Any

from .errors import MoveError
from .hand import Hand
from .tiles import TileError, deal, format_tile, parse_tile
from .variants import OptionsError, rules_for


def run_scenario(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """Run one scenario; return the result object of SCENARIOS.md."""
    variant = scenario["variant"]
    options = scenario.get("options") or {}
    out: dict[str, Any] = {"name": scenario.get("name")}
    if "seed" in scenario:
        players = int(scenario.get("players", 4))
        dealt = deal(scenario["seed"], players, rules_for(variant).rack_sizes)
        out["deal"] = dealt.to_json()
        hand = Hand.from_deal(
            variant, dealt, options, scores=scenario.get("start_scores"), seed=scenario["seed"]
        )
    else:
        racks = [[parse_tile(t) for t in rack] for rack in scenario["racks"]]
        if "players" in scenario and int(scenario["players"]) != len(racks):
            raise ValueError("players must equal the number of racks")
        pile = [parse_tile(t) for t in scenario.get("pile", [])]
        hand = Hand.new(
            variant,
            racks,
            pile,
            parse_tile(scenario["indicator"]),
            options,
            scores=scenario.get("start_scores"),
        )
    moves = []
    for move in scenario.get("moves", []):
        seat = move.get("seat")
        body = {k: v for k, v in move.items() if k != "seat"}
        moves.append(_public(hand.play(seat, body).to_json()))
    out["moves"] = moves
    r = hand.result
    out["hand"] = {
        "over": r["over"],
        "ending": r["ending"],
        "finisher": r.get("finisher"),
        "kind": r.get("kind"),
        "doublings": r.get("doublings", []),
        "multiplier": r.get("multiplier", 1),
    }
    out["penalties"] = hand.penalty_list()
    out["hand_scores"] = r.get("hand_scores")
    out["scores"] = r.get("scores", list(hand.scores_before))
    if hand.options.get("partners"):
        s = out["scores"]
        out["team_scores"] = [s[0] + s[2], s[1] + s[3]]
    out["match"] = {"over": bool(r.get("match_over", False)), "winners": r.get("winners", [])}
    out["racks"] = [[format_tile(t) for t in sorted(rack)] for rack in hand.racks]
    out["table"] = [m.to_json() for m in hand.table]
    return out


def _public(result: dict[str, Any]) -> dict[str, Any]:
    if result.get("ok"):
        result["events"] = [
            {k: v for k, v in e.items() if k != "private_to"} for e in result["events"]
        ]
    return result


# ----------------------------------------------------------------------------- checking
def _tile_multiset(items: list[Any]) -> Counter[str]:
    return Counter(str(x) for x in items)


def compare(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Differences between ``expected`` (only its keys) and ``actual``, recursively.

    Racks and a meld's tiles compare as multisets (the copies of a tile are interchangeable);
    a wild okey written without ``:X`` matches one written with it.
    """
    if isinstance(expected, dict):
        if isinstance(actual, list):
            # "moves": {"2": {...}} addresses a list by index.
            actual = {str(i): v for i, v in enumerate(actual)}
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        diffs: list[str] = []
        for key, value in expected.items():
            if key not in actual:
                diffs.append(f"{path}.{key}: missing")
                continue
            diffs += compare(value, actual[key], f"{path}.{key}")
        return diffs
    if isinstance(expected, list) and _is_multiset_path(path):
        return _compare_tiles(expected, actual, path)
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: expected {expected!r}, got {actual!r}"]
        diffs = []
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            diffs += compare(e, a, f"{path}[{i}]")
        return diffs
    if expected != actual:
        return [f"{path}: expected {expected!r}, got {actual!r}"]
    return []


def _is_multiset_path(path: str) -> bool:
    """The result's racks and its table melds' tiles (not the deal, whose order is the point)."""
    return (
        path == ".racks"
        or path.startswith(".racks[")
        or (path.startswith(".table") and path.endswith(".tiles"))
    )


def _compare_tiles(expected: Any, actual: Any, path: str) -> list[str]:
    if not isinstance(actual, list) or not isinstance(expected, list):
        return [f"{path}: expected {expected!r}, got {actual!r}"]
    if expected and all(isinstance(x, list) for x in expected):
        if len(expected) != len(actual):
            return [f"{path}: expected {expected!r}, got {actual!r}"]
        diffs = []
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            diffs += _compare_tiles(e, a, f"{path}[{i}]")
        return diffs
    # A wild okey written without ":X" in the expectation matches one written with it.
    if not any(":" in str(e) for e in expected):
        actual = [str(a).split(":")[0] for a in actual]
    if _tile_multiset(expected) != _tile_multiset(actual):
        return [f"{path}: expected {expected!r}, got {actual!r}"]
    return []


def check(scenario: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    result = run_scenario(scenario)
    return result, compare(scenario.get("expect", {}), result)


# ----------------------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    checking = "--check" in args
    files = [a for a in args if a != "--check"]
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    failed = 0
    for name in files:
        try:
            if name == "-":
                scenario = json.load(sys.stdin)
            else:
                with open(name, encoding="utf-8") as fh:
                    scenario = json.load(fh)
            result, diffs = check(scenario)
        except (
            OSError,
            ValueError,
            KeyError,
            TypeError,
            TileError,
            OptionsError,
            MoveError,
        ) as exc:
            failed += 1
            print(json.dumps({"file": name, "error": f"{type(exc).__name__}: {exc}"}))
            continue
        if checking:
            result = {"file": name, **result, "check": "pass" if not diffs else "fail"}
            if diffs:
                result["mismatches"] = diffs
                failed += 1
                print(f"FAIL {name}: " + "; ".join(diffs), file=sys.stderr)
        print(json.dumps(result, ensure_ascii=False))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
