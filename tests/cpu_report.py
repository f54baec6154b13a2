"""What each test costs the machine in CPU seconds: a pytest plugin, off unless asked for.

    .venv/bin/python -m pytest -p tests.cpu_report -n 2            # the 25 dearest tests
    CPU_REPORT=40 .venv/bin/python -m pytest -p tests.cpu_report   # the 40 dearest

A test's cost is the CPU its worker process spent during it, and every process below the worker
(its daphne, its Chromium and Playwright's driver, a `make run` it started): the live ones read
from /proc, the ones that ended and were waited for from the worker's own accounts. Wall time
(``--durations``) says little on a busy machine; CPU time says what a test takes from the
others. Each worker writes its figures to ``.pytest_cache/cpu-report/<worker>.json``; the
controller adds them up at the end, by test and by file. Linux only (/proc)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

TICK = os.sysconf("SC_CLK_TCK")
REPORTS = Path(__file__).resolve().parent.parent / ".pytest_cache" / "cpu-report"
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")


def _descendants(root: int) -> dict[int, float]:
    """CPU seconds of each live process below ``root`` (not ``root`` itself), with what its
    own ended children took (a closed Chromium renderer is counted in its parent's)."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended meanwhile
            continue
        pid = int(stat.parent.name)
        parents[pid] = int(fields[1])
        cpu[pid] = sum(int(f) for f in fields[11:15]) / TICK
    below = {}
    for pid, seconds in cpu.items():
        p, seen = parents.get(pid), 0
        while p and p != root and seen < 64:
            p, seen = parents.get(p), seen + 1
        if p == root and pid != root:
            below[pid] = seconds
    return below


def _own() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


_costs: Counter[str] = Counter()


def pytest_sessionstart(session: pytest.Session) -> None:
    if WORKER == "main":  # the controller, or a run without workers: no figures of an old run
        for stale in REPORTS.glob("*.json"):
            stale.unlink()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    own, below = _own(), _descendants(os.getpid())
    yield
    after = _descendants(os.getpid())
    # Each live process counts what it spent since the test began (or since it started). One
    # that ended was waited for by its parent, whose figure (or this process's own, for the
    # daphne stopped after the last test) now holds its whole life: what it had spent before
    # the test is taken off again.
    spent = sum(cpu - below.get(pid, 0.0) for pid, cpu in after.items())
    spent -= sum(cpu for pid, cpu in below.items() if pid not in after)
    _costs[item.nodeid] += _own() - own + spent


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not _costs or WORKER == "main":
        return
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / f"{WORKER}.json").write_text(json.dumps(dict(_costs)))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    costs: Counter[str] = Counter(_costs)  # run without workers: this process's own
    for report in REPORTS.glob("*.json"):
        costs.update(json.loads(report.read_text()))
        report.unlink()
    if not costs:
        return
    top = int(os.environ.get("CPU_REPORT", "25"))
    by_file: Counter[str] = Counter()
    for nodeid, seconds in costs.items():
        by_file[nodeid.split("::")[0]] += seconds
    write = terminalreporter.write_line
    terminalreporter.section("CPU seconds by test (the worker and every process below it)")
    write(f"{sum(costs.values()):8.1f}  all {len(costs)} tests")
    for nodeid, seconds in costs.most_common(top):
        write(f"{seconds:8.1f}  {nodeid}")
    terminalreporter.section("CPU seconds by file")
    for path, seconds in by_file.most_common(top):
        write(f"{seconds:8.1f}  {path}")
