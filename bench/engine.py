"""Rules-engine benchmark: solver latency and self-play throughput (a benchmark, not a test).

    python bench/engine.py                 # everything, about a minute on 2 cores
    python bench/engine.py --quick         # fewer samples, for a smoke run
    python bench/engine.py --json out.json # also save the figures

What it measures, single-threaded, with fixed seeds so that runs compare:

- ``solver.can_finish`` on 15-tile racks with 0, 1 and 2 wild okeys, separately for random deals
  (a seeded deal's starter rack, its wild count forced by swapping with the rest of the deal) and
  near-finished racks (a winning 14 plus one tile, with one or two tiles replaced);
- ``solver.least_leftover`` and ``solver.best_opening`` on the same kinds of racks (wilds 0/1/2
  in equal shares);
- okey101's openings on 22-tile racks (a seeded deal's starter rack as okey101 deals it, wilds
  0/1/2, 12-13-1 not a run): ``solver.best_opening`` (the melds of highest total) and
  ``solver.pair_count`` (the most pairs); the brute force is too slow at 22 tiles to run beside
  them (``tests/engine/test_opening_22.py`` compares the two on smaller racks);
- ``solver.workable_tiles`` on tables of 4 to 12 melds;
- complete hands per second of random legal self-play per variant
  (``games.engine.selfplay.random_hand``), when that module exists.

The solver memoises per-colour tables for the life of the process, so each solver case runs in a
fresh subprocess and is reported twice: **cold** is the first pass over N racks with empty tables;
**warm** is a pass over N *new* racks after N others have been seen (the steady state of a
long-running server; the racks measured warm were never seen before). The brute-force reference of
``tests/engine/reference.py`` runs in the same process on the first racks of the warm set (its
caches cleared before every call) as a baseline, and the agreement of the two is counted.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from games.engine import solver  # noqa: E402
from games.engine.melds import Meld, read_meld  # noqa: E402
from games.engine.tiles import deal, format_tile, parse_tile  # noqa: E402
from tests.engine import racks as rk  # noqa: E402
from tests.engine import reference as ref  # noqa: E402

WRAP = True  # the default of classic, duz and okey51
VARIANTS = ("classic", "duz", "okey51", "gobek17", "okey101")
GOALS = {
    "finish": (100.0, 1000.0),  # median, p95 in µs
    "opening": (300.0, 3000.0),
    "opening101": (1000.0, 10000.0),
    "pairs101": (1000.0, 10000.0),
}
SELFPLAY_GOAL = ("okey51", 50.0)  # hands per second

Case = dict[str, Any]
Rack = tuple[list[int], int, list[str], str]  # (codes, okey code, names, okey name)


# ---------------------------------------------------------------------------------------------
# Racks, from fixed seeds
# ---------------------------------------------------------------------------------------------
def _seed(label: str) -> str:
    return hashlib.sha256(label.encode()).hexdigest()


def dealt_rack(index: int, wilds: int) -> tuple[list[str], str]:
    seed = _seed(f"bench-deal-{index}")
    d = deal(seed, 4)
    indicator = format_tile(d.indicator)
    okey = rk.okey_for(indicator)
    rack = [format_tile(t) for t in d.racks[0]]
    rest = [format_tile(t) for r in d.racks[1:] for t in r] + [format_tile(t) for t in d.pile]
    return rk.set_wilds(rack, rest, okey, wilds, random.Random(seed)), okey


def dealt_rack_101(index: int, wilds: int) -> tuple[list[str], str]:
    """The starter's 22 tiles of a seeded okey101 deal, with ``wilds`` wild okeys in it."""
    seed = _seed(f"bench-deal-101-{index}")
    d = deal(seed, 4, (22, 21))
    indicator = format_tile(d.indicator)
    okey = rk.okey_for(indicator)
    rack = [format_tile(t) for t in d.racks[0]]
    rest = [format_tile(t) for r in d.racks[1:] for t in r] + [format_tile(t) for t in d.pile]
    return rk.set_wilds(rack, rest, okey, wilds, random.Random(seed)), okey


def near_rack(index: int, wilds: int) -> tuple[list[str], str]:
    rng = random.Random(f"bench-near-{index}-{wilds}")
    rack, indicator = rk.near_finished(rng, wilds, WRAP, 1 + index % 2)
    return rack, rk.okey_for(indicator)


def build_racks(kind: str, wilds: int | None, start: int, count: int) -> list[Rack]:
    out = []
    for i in range(start, start + count):
        w = i % 3 if wilds is None else wilds
        make = {"deal": dealt_rack, "near": near_rack, "deal22": dealt_rack_101}[kind]
        names, okey = make(i, w)
        out.append(([parse_tile(t) for t in names], parse_tile(okey), names, okey))
    return out


def build_tables(start: int, count: int) -> list[tuple[list[Meld], int]]:
    """Tables of 4 to 12 melds of 3 to 5 tiles (runs and sets, up to two wild okeys), never
    more copies of a tile than exist."""
    out = []
    for i in range(start, start + count):
        rng = random.Random(f"bench-table-{i}")
        want = 4 + i % 9
        indicator = rk.name(rng.randrange(4), rng.randint(1, 13))
        okey_name = rk.okey_for(indicator)
        limit = Counter(rk.box_without(indicator, []))
        used: Counter[str] = Counter()
        tables: list[list[str]] = []
        while len(tables) < want:
            wild = int(rng.random() < 0.15 and used[okey_name] < 2)
            melds = rk.random_melds(rng, rng.choice([3, 3, 4, 5]), wild, WRAP, indicator)
            if melds is None:
                continue
            after = used + Counter(melds[0])
            if all(after[t] <= limit[t] for t in after):
                used = after
                tables.append(melds[0])
        okey = parse_tile(okey_name)
        table = []
        for k, tokens in enumerate(tables):
            meld = read_meld(tokens, okey, WRAP)
            meld.id = k
            table.append(meld)
        out.append((table, okey))
    return out


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------
def timed(fn: Callable[[], object]) -> tuple[int, object]:
    t0 = time.perf_counter_ns()
    result = fn()
    return time.perf_counter_ns() - t0, result


def summary(ns: Sequence[int]) -> dict[str, float]:
    us = sorted(x / 1000 for x in ns)
    return {
        "n": len(us),
        "median_us": statistics.median(us),
        "p95_us": us[max(0, math.ceil(0.95 * len(us)) - 1)],
        "max_us": us[-1],
        "mean_us": statistics.fmean(us),
    }


ENGINE: dict[str, Callable[[Rack], object]] = {
    "finish": lambda r: solver.can_finish(r[0], r[1], WRAP),
    "leftover": lambda r: solver.least_leftover(r[0], r[1], WRAP),
    "opening": lambda r: solver.best_opening(r[0], r[1], WRAP).total,
    "opening101": lambda r: solver.best_opening(r[0], r[1], False).total,
    "pairs101": lambda r: solver.pair_count(r[0], r[1]),
}
REFERENCE: dict[str, Callable[[Rack], object]] = {
    "finish": lambda r: ref.can_finish(r[2], r[3], WRAP),
    "leftover": lambda r: ref.least_leftover(r[2], r[3], WRAP),
    "opening": lambda r: ref.best_opening(r[2], r[3], WRAP),
}


def run_case(case: Case, n: int, ref_n: int) -> dict[str, Any]:
    """One solver case in this (fresh) process: cold pass, warm-up, warm pass, reference."""
    fn_name = case["fn"]
    if fn_name == "workable":
        cold_set = build_tables(0, n)
        warmup_set = build_tables(10**6, n)
        warm_set = build_tables(2 * 10**6, n)

        def call(t: tuple[list[Meld], int]) -> object:
            return solver.workable_tiles(t[0], WRAP, True)

        cold = [timed(lambda t=t: call(t))[0] for t in cold_set]
        for t in warmup_set:
            call(t)
        warm = [timed(lambda t=t: call(t))[0] for t in warm_set]
        return {"cold": summary(cold), "warm": summary(warm), "reference": None}

    kind, wilds = case["set"], case["wilds"]
    cold_set = build_racks(kind, wilds, 0, n)
    warmup_set = build_racks(kind, wilds, 10**6, n)
    warm_set = build_racks(kind, wilds, 2 * 10**6, n)
    engine = ENGINE[fn_name]
    cold = [timed(lambda r=r: engine(r))[0] for r in cold_set]
    for r in warmup_set:
        engine(r)
    warm_runs = [timed(lambda r=r: engine(r)) for r in warm_set]
    warm = [t for t, _ in warm_runs]
    # The reference on the first racks of the warm set, caches cleared before every call.
    reference = REFERENCE.get(fn_name)
    if reference is None:
        return {"cold": summary(cold), "warm": summary(warm), "reference": None}
    ref_ns = []
    agree = 0
    for r, (_, got) in zip(warm_set[:ref_n], warm_runs[:ref_n], strict=True):
        ref.clear_caches()
        t, expected = timed(lambda r=r: reference(r))
        ref_ns.append(t)
        agree += got == expected
    ref_summary = summary(ref_ns)
    same_racks = summary(warm[:ref_n])
    ref_summary["engine_median_same_racks_us"] = same_racks["median_us"]
    ref_summary["ratio_median"] = ref_summary["median_us"] / same_racks["median_us"]
    ref_summary["agree"] = agree
    return {"cold": summary(cold), "warm": summary(warm), "reference": ref_summary}


CASES: list[Case] = [
    *(
        {"name": f"can_finish  deal  {w} wild", "fn": "finish", "set": "deal", "wilds": w}
        for w in (0, 1, 2)
    ),
    *(
        {"name": f"can_finish  near  {w} wild", "fn": "finish", "set": "near", "wilds": w}
        for w in (0, 1, 2)
    ),
    {"name": "least_leftover  deal", "fn": "leftover", "set": "deal", "wilds": None},
    {"name": "least_leftover  near", "fn": "leftover", "set": "near", "wilds": None},
    {"name": "best_opening  deal", "fn": "opening", "set": "deal", "wilds": None},
    {"name": "best_opening  near", "fn": "opening", "set": "near", "wilds": None},
    {"name": "workable_tiles  4-12 melds", "fn": "workable", "set": "table", "wilds": None},
    {"name": "okey101 best_opening  22", "fn": "opening101", "set": "deal22", "wilds": None},
    {"name": "okey101 pair_count  22", "fn": "pairs101", "set": "deal22", "wilds": None},
]


# ---------------------------------------------------------------------------------------------
# Self-play
# ---------------------------------------------------------------------------------------------
def selfplay(seconds: float, max_hands: int) -> dict[str, Any] | None:
    if importlib.util.find_spec("games.engine.selfplay") is None:
        return None
    from games.engine import selfplay

    out: dict[str, Any] = {}
    for variant in VARIANTS:
        times: list[int] = []
        errors: list[str] = []
        started = time.perf_counter()
        i = 0
        while len(times) < max_hands and time.perf_counter() - started < seconds:
            seed = _seed(f"bench-selfplay-{variant}-{i}")
            i += 1
            try:
                t, _hand = timed(lambda s=seed, v=variant: selfplay.random_hand(v, s))
            except Exception as exc:  # a self-play failure is a finding, not a crash
                errors.append(f"{seed[:12]}: {type(exc).__name__}: {exc}"[:200])
                continue
            times.append(t)
        total_s = sum(times) / 1e9
        out[variant] = {
            "hands": len(times),
            "hands_per_s": len(times) / total_s if total_s else 0.0,
            "median_ms": statistics.median(times) / 1e6 if times else None,
            "errors": errors,
        }
    return out


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------
def machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
    }


def verdict(fn: str, s: dict[str, float]) -> str:
    if fn not in GOALS:
        return ""
    med, p95 = GOALS[fn]
    return "met" if s["median_us"] <= med and s["p95_us"] <= p95 else "NOT met"


def fmt(s: dict[str, float]) -> str:
    return f"{s['median_us']:9.1f} {s['p95_us']:9.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--case", type=int, help=argparse.SUPPRESS)  # child process
    parser.add_argument("-n", type=int, default=None, help="racks per pass (default 1000)")
    args = parser.parse_args(argv)
    n = args.n or (200 if args.quick else 1000)
    ref_n = 30 if args.quick else 100

    if args.case is not None:
        print(json.dumps(run_case(CASES[args.case], n, ref_n)))
        return 0

    info = machine()
    print(
        f"machine: {info['nproc']} cpu ({info['cpu']}), {info['implementation']} "
        f"{info['python']}, {info['platform']}"
    )
    print(f"racks per pass: {n}; reference on {ref_n} of them; wrap_13_1 on; times in µs")
    print("cold: first pass in a fresh process; warm: new racks after N others were seen\n")
    header = (
        f"{'case':30} {'cold med':>9} {'cold p95':>9} {'warm med':>9} {'warm p95':>9}"
        f"  {'goal (warm)':12} {'ref med':>9} {'ref/eng':>8} agree"
    )
    print(header)
    print("-" * len(header))
    results: dict[str, Any] = {"machine": info, "n": n, "ref_n": ref_n, "cases": {}}
    started = time.perf_counter()
    for k, case in enumerate(CASES):
        proc = subprocess.run(
            [sys.executable, __file__, "--case", str(k), "-n", str(n)]
            + (["--quick"] if args.quick else []),
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            print(f"{case['name']:30} FAILED: {proc.stderr.strip().splitlines()[-1:]}")
            results["cases"][case["name"]] = {"error": proc.stderr[-2000:]}
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        results["cases"][case["name"]] = r
        goal = verdict(case["fn"], r["warm"])
        cold_goal = verdict(case["fn"], r["cold"])
        rs = r["reference"]
        ref_part = (
            f"{rs['median_us']:9.0f} {rs['ratio_median']:7.0f}x {rs['agree']}/{rs['n']}"
            if rs
            else f"{'n/a':>9} {'':>8}"
        )
        goal_text = f"{goal} (cold {cold_goal})" if goal else ""
        print(f"{case['name']:30} {fmt(r['cold'])} {fmt(r['warm'])}  {goal_text:12} {ref_part}")
        sys.stdout.flush()

    print()
    sp = selfplay(seconds=3.0 if args.quick else 6.0, max_hands=30 if args.quick else 200)
    results["selfplay"] = sp
    if sp is None:
        print("self-play: games.engine.selfplay not found (skipped)")
    else:
        print("self-play (random legal moves, whole hands, one process):")
        for variant, s in sp.items():
            goal = ""
            if variant == SELFPLAY_GOAL[0]:
                goal = f"  goal ≥ {SELFPLAY_GOAL[1]:.0f}/s: "
                goal += "met" if s["hands_per_s"] >= SELFPLAY_GOAL[1] else "NOT met"
            med = f"{s['median_ms']:.1f} ms median" if s["median_ms"] is not None else "-"
            print(
                f"  {variant:8} {s['hands']:4} hands  {s['hands_per_s']:7.1f} hands/s  "
                f"({med}){goal}"
            )
            for e in s["errors"][:3]:
                print(f"           error: {e}")
            if len(s["errors"]) > 3:
                print(f"           ... {len(s['errors']) - 3} more errors")
    results["seconds"] = time.perf_counter() - started
    print(f"\ntotal {results['seconds']:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
