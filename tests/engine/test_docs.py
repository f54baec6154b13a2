"""The code examples of docs/engine.md and of the engine's docstrings run, and show what they
say (doctest)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "engine.md"


def test_the_examples_of_docs_engine_md_run() -> None:
    # A fence ("```") right after an example's output would read as part of it: blank it.
    lines = DOCS.read_text(encoding="utf-8").splitlines()
    text = "\n".join("" if line.strip().startswith("```") else line for line in lines)
    test = doctest.DocTestParser().get_doctest(text, {}, "docs/engine.md", str(DOCS), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    result = runner.run(test)
    assert result.attempted > 10
    assert result.failed == 0


@pytest.mark.parametrize("module", ["games.engine.variants", "games.engine.hand"])
def test_the_engine_docstring_examples_run(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
