"""Requests at the same moment, for the concurrency tests: each call in a thread and database
connection of its own, all released together by a barrier, as several server processes would
run them. Not a test module."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from django.db import connections


def at_once(calls: Sequence[Callable[[], Any]], timeout: float = 120) -> list[Any]:
    """Run every call at once; what each returned, or the exception it raised, in the calls'
    order (a call still running after ``timeout`` seconds fails the test)."""
    barrier = threading.Barrier(len(calls))
    answers: list[Any] = [None] * len(calls)

    def run(n: int) -> None:
        try:
            barrier.wait(timeout=30)
            answers[n] = calls[n]()
        except Exception as exc:
            answers[n] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
        assert not thread.is_alive(), f"a call still runs after {timeout} s"
    return answers


def codes(answers: Sequence[Any]) -> list[str]:
    """Each answer as a word, sorted: "ok" for a return, an error's ``code``, or its repr."""
    return sorted(
        "ok" if not isinstance(a, Exception) else getattr(a, "code", None) or repr(a)
        for a in answers
    )
