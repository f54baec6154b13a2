"""Hidden information by construction: before a hand ends, a spectator's or another seat's page
and socket frames hold no tile of any other rack, nothing of the pile, and no seed.

The check counts tiles. Every physical tile is in exactly one place, so the tiles a viewer may
see are the public ones (indicator, discards, melds on the table, plus the okey's name) and
their own rack. If any tile code shows up on the page more often than that allows, some rack
or the pile has leaked.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.urls import reverse

from games import actions, engine
from games.models import Hand, Table
from tests.markup import allowed, assert_hidden
from tests.play import connect, random_move, seed_of, user_table
from tests.sockets import Players, TableSockets, cookie_for
from tests.users import SignedIn

pytestmark = pytest.mark.django_db(transaction=True)
VARIANTS = list(engine.VARIANTS)


def played_table(variant: str, n: int) -> tuple[Table, list[Any], Hand]:
    table, users = user_table(variant)
    connect(table, users)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(500 + n))
    hand = match.hands.get()
    rng = random.Random(n)
    for _ in range(24):  # far enough for discards, and in the open variants often melds
        hand.refresh_from_db()
        seat, move = random_move(hand, rng)
        trial = hand.engine_hand()
        trial.play(seat, move)
        if trial.over:
            break
        actions.play(hand, seat, move, by=users[seat])
    hand.refresh_from_db()
    return table, users, hand


@pytest.mark.parametrize("variant", VARIANTS)
def test_it_shows_spectators_and_other_seats_no_hidden_tile(
    variant: str, signed_in: SignedIn
) -> None:
    table, users, hand = played_table(variant, VARIANTS.index(variant))
    public = hand.public_view()
    url = reverse("table", args=[table.pk])
    assert_hidden(Client().get(url).content.decode(), hand, allowed(public))
    for seat, user in enumerate(users):
        page = signed_in(user).get(url).content.decode()
        own = hand.view_for(seat)["rack"]
        assert_hidden(page, hand, allowed(public, own))
        # And the viewer's own rack is all there.
        rack = page.split('class="rack"')[1].split("rack-tools")[0]
        assert Counter(re.findall(r'data-tile="([^"]+)"', rack)) == Counter(own)


@pytest.fixture
def hand_of_the_variant(variant: str, transactional_db: None) -> Players:
    """A hand of the test's ``variant`` well under way (``played_table``)."""
    table, users, hand = played_table(variant, 10 + VARIANTS.index(variant))
    return Players(table.pk, users, [cookie_for(u) for u in users], hand)


@pytest.mark.parametrize("variant", VARIANTS)
async def test_it_sends_sockets_no_hidden_tile(
    variant: str, hand_of_the_variant: Players, table_socket: TableSockets
) -> None:
    hand = hand_of_the_variant.hand
    public, rack = hand.public_view(), hand.view_for(2)["rack"]
    cookie = hand_of_the_variant.cookies[2]
    for who, may_see in [("", allowed(public)), (cookie, allowed(public, rack))]:
        ws = await table_socket(hand_of_the_variant.table_id, who, first_frame=False)
        frame = await ws.receive_from()
        await ws.disconnect()
        assert 'id="table-live"' in frame
        await database_sync_to_async(assert_hidden)(frame, hand, may_see)
