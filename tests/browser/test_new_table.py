"""The lobby's New-table form as a person fills it, on a phone: picking a variant brings its
options without a reload, an option the chosen scoring ignores is hidden (the number of hands
under a countdown) and comes back with the other scoring, and the table opens with what was
chosen, its creator seated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from games.catalog import ensure_variants
from games.models import Seat, Table
from tests import ui
from tests.live_daphne import DaphneServer, in_thread
from tests.users import make_user

PHONE = {"width": 390, "height": 844}


def test_a_player_opens_a_classic_table_with_plus_minus_scoring_from_the_lobby(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path
) -> None:
    in_thread(ensure_variants)
    host = in_thread(lambda: make_user("organiser"))
    page = ui.signed_in_page(chromium, daphne_live_server, host, PHONE)
    assert page.goto(daphne_live_server.url + "/").ok
    form = page.locator("form#new-table")
    form.locator('select[name="variant"]').select_option("okey51")
    form.locator('[data-option="hands"]').wait_for()  # okey51's options came
    assert form.locator('[data-option="scoring"]').count() == 0
    ui.settled(page)
    form.locator('select[name="variant"]').select_option("classic")
    form.locator('[data-option="scoring"]').wait_for()
    ui.settled(page)
    hands, start = (
        form.locator('[data-option="hands"]'),
        form.locator('[data-option="start_score"]'),
    )
    assert hands.is_hidden() and start.is_visible()  # a countdown: no number of hands
    form.locator('select[name="scoring"]').select_option("plus_minus")
    assert hands.is_visible() and start.is_hidden()
    form.locator('input[name="hands"]').fill("3")
    form.locator('input[name="name"]').fill("Friday game")
    page.screenshot(path=str(artifacts / "new-table-phone.png"), full_page=True)
    form.locator('[data-action="create-table"]').click()
    page.wait_for_url("**/tables/*/", timeout=15_000)
    assert page.locator("h1").inner_text() == "Friday game"
    table = in_thread(lambda: Table.objects.get(name="Friday game"))
    assert table.variant.key == "classic"
    assert table.options["scoring"] == "plus_minus" and table.options["hands"] == 3
    assert in_thread(lambda: Seat.objects.get(table=table, position=0).user_id) == host.pk
    assert page.okey_errors == []
