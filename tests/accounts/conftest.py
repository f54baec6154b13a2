import pytest

from games.catalog import ensure_variants


@pytest.fixture
def variants(db: None) -> None:
    ensure_variants()  # a transactional test before this one may have flushed them
