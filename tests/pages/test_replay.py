"""Hand history: the replay (one URL per step), the exports, and the provably fair deal.

Who sees what (``policy.can_replay``): a live hand only to its players, each seeing their own
rack and nothing hidden from their seat (tiles are counted as in test_hidden_information); a
hand that is over to whoever may see its table, every rack at every step. Exports hold no live
hand's seed or moves and never any chat. A scenario export replays through the engine's runner
to the stored scores; a changed seed fails the deal check on the page and in the command.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections import Counter
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from games import actions, audit, engine, policy
from games.engine.scenario import check, run_scenario
from games.models import ChatMessage, Hand, Match, Move, Table
from tests.play import play_hand, seed_of, user_table
from tests.users import SignedIn, client_for, make_user

pytestmark = pytest.mark.django_db
VARIANTS = list(engine.VARIANTS)
TILE = re.compile(r"(?<![A-Za-z0-9])[RYBK](?:1[0-3]|[1-9])(?![0-9])")
ROOT = Path(__file__).resolve().parent.parent.parent


# ----------------------------------------------------------------------------- helpers
def live_hand(variant: str, n: int = 0, moves: int = 24) -> tuple[Table, list[Any], Hand]:
    table, users = user_table(variant)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(700 + n))
    return table, users, play_hand(match.hands.get(), users, random.Random(n), moves)


def finished_hand(variant: str, n: int = 0, **table_kwargs: Any) -> tuple[Table, list[Any], Hand]:
    table, users = user_table(variant)
    if table_kwargs:
        Table.objects.filter(pk=table.pk).update(**table_kwargs)
        table.refresh_from_db()
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(800 + n))
    hand = play_hand(match.hands.get(), users, random.Random(n))
    assert hand.status == Hand.Status.FINISHED
    return table, users, hand


def engine_at(hand: Hand, step: int) -> engine.Hand:
    """The hand after ``step`` moves, rebuilt here from the seed and the Move rows alone."""
    table = hand.match.table
    eng = engine.Hand.from_seed(
        table.variant.key,
        hand.seed,
        table.options,
        players=table.players,
        starter=hand.starter,
        scores=hand.state["scores_before"],
        number=hand.number,
    )
    for m in hand.moves.order_by("number")[:step]:
        assert eng.play(m.seat, m.action).ok
    return eng


def step_url(hand: Hand, step: int, query: str = "") -> str:
    return reverse("hand_step", args=[hand.pk, step]) + query


def codes(text: str) -> Counter[str]:
    return Counter(TILE.findall(text))


def words_removed(page: str) -> str:
    page = re.sub(r'<div class="replay-words".*?</div>', " ", page, flags=re.S)
    return re.sub(r'<ol class="replay-moves".*?</ol>', " ", page, flags=re.S)


def shown(page: str) -> Counter[str]:
    """The tiles a page draws (``data-tile``) plus tile codes in its visible text, leaving out
    the sentences (the step's words and the move list), which are checked on their own."""
    page = words_removed(page)
    drawn = codes(" ".join(re.findall(r'data-tile="([^"]*)"', page)))
    return drawn | codes(re.sub(r"<[^>]+>", " ", page))


def sentences(page: str) -> list[str]:
    block = re.findall(r'<div class="replay-words".*?</div>', page, flags=re.S)
    block += re.findall(r'<ol class="replay-moves".*?</ol>', page, flags=re.S)
    return [re.sub(r"<[^>]+>", "", li) for b in block for li in re.findall(r"<li.*?</li>", b)]


def allowed(eng: engine.Hand, seat: int) -> Counter[str]:
    public = eng.public_view()
    pieces = [public["indicator"], public["okey"]]
    pieces += [t for pile in public["discards"] for t in pile]
    pieces += [t for meld in public["table"] for t in meld["tiles"]]
    pieces += eng.view(seat)["rack"]
    return codes(" ".join(pieces))


def rack_of(page: str, seat: int) -> list[str] | None:
    """The tiles drawn in a seat's rack on the replay page; None when the rack is hidden."""
    found = re.search(
        rf'<div class="replay-rack" data-rack="{seat}"([^>]*)>(.*?)</div>', page, re.S
    )
    assert found, f"no rack for seat {seat}"
    if "data-hidden-rack" in found.group(1):
        assert "data-tile" not in found.group(2)
        return None
    return re.findall(r'data-tile="([^"]+)"', found.group(2))


def rotated(values: list[Any], starter: int) -> list[Any]:
    n = len(values)
    return [values[(starter + k) % n] for k in range(n)]


# ----------------------------------------------------------------------------- the policy
def test_only_players_replay_a_live_hand_and_the_table_s_viewers_a_finished_one() -> None:
    table, users, hand = live_hand("duz", moves=2)
    seats = list(table.seats.all())
    stranger = make_user("stranger")
    staff = make_user("staffer", staff=True)
    assert policy.can_replay(table, seats, users[1], hand, 1)
    assert not policy.can_replay(table, seats, stranger, hand, None)
    assert not policy.can_replay(table, seats, staff, hand, None)
    hand.status = Hand.Status.FINISHED
    assert policy.can_replay(table, seats, stranger, hand, None)
    table.is_private = True
    assert not policy.can_replay(table, seats, stranger, hand, None)
    assert policy.can_replay(table, seats, stranger, hand, None, table.invite_token)
    assert policy.can_replay(table, seats, staff, hand, None)
    assert policy.can_replay(table, [], users[2], hand, 2)  # a player of the hand, seat left


# ----------------------------------------------------------------------------- a live hand
@pytest.mark.parametrize("variant", VARIANTS)
def test_a_player_replays_a_live_hand_seeing_only_their_own_rack(
    variant: str, signed_in: SignedIn
) -> None:
    table, users, hand = live_hand(variant, VARIANTS.index(variant))
    last = hand.version
    assert last >= 8
    for seat in range(table.players):
        client = signed_in(users[seat])
        for step in sorted({0, 1, last // 2, last}):
            page = client.get(step_url(hand, step)).content.decode()
            eng = engine_at(hand, step)
            assert f'data-step="{step}"' in page and f'data-last="{last}"' in page
            assert hand.seed not in page and "data-seed" not in page
            assert "data-replay-live" in page
            # Their own rack, all of it; every other rack hidden (only its size shown).
            assert Counter(rack_of(page, seat) or []) == Counter(eng.view(seat)["rack"])
            for other in range(table.players):
                if other != seat:
                    assert rack_of(page, other) is None
            extra = shown(page) - allowed(eng, seat)
            assert not extra, f"seat {seat}, step {step}: tiles it never saw: {dict(extra)}"
            # Another seat's draw never names its tile.
            for line in sentences(page):
                if "drew" in line:
                    assert "from the pile" in line or "You drew" in line, line
            # The hidden tiles are many: a leak would have shown.
            assert sum(len(r) for k, r in enumerate(eng.racks) if k != seat) > 20
    # Not beyond the hand's current version.
    assert signed_in(users[0]).get(step_url(hand, last + 1)).status_code == 404


def test_nobody_else_sees_a_live_hand(signed_in: SignedIn) -> None:
    table, users, hand = live_hand("okey51", 5)
    stranger = make_user("stranger")
    staff = make_user("staffer", staff=True)
    urls = [
        reverse("hand_replay", args=[hand.pk]),
        step_url(hand, 1),
        reverse("hand_verify", args=[hand.pk]),
        reverse("hand_scenario", args=[hand.pk]),
    ]
    for who in [None, stranger, staff]:
        client = signed_in(who)
        for url in urls:
            response = client.get(url)
            assert response.status_code == 404, (who, url)
            assert hand.seed not in response.content.decode()
    # A live hand is not exported, not even to its players.
    assert signed_in(users[0]).get(urls[3]).status_code == 404


def test_a_live_hand_s_deal_check_shows_its_commitment_only(signed_in: SignedIn) -> None:
    table, users, hand = live_hand("classic", 6)
    page = signed_in(users[2]).get(reverse("hand_verify", args=[hand.pk])).content.decode()
    assert hand.commitment in page
    assert hand.seed not in page
    assert "data-check" not in page and "data-dealt" not in page and "data-tile" not in page


def test_the_match_export_names_a_live_hand_without_its_seed_or_moves(signed_in: SignedIn) -> None:
    table, users, hand = live_hand("gobek17", 7)
    stranger = make_user("stranger")
    url = reverse("match_export", args=[hand.match_id])
    for who in [None, stranger, users[0]]:
        response = signed_in(who).get(url)
        assert response.status_code == 200
        text = response.content.decode()
        data = json.loads(text)
        (entry,) = data["hands"]
        assert entry["live"] is True and data["live_hand"] == 1
        assert "seed" not in entry and "moves" not in entry
        assert entry["commitment"] == hand.commitment
        assert hand.seed not in text
        assert not codes(text), "no tile of a live hand in the export"


# ----------------------------------------------------------------------------- a finished hand
@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_everyone_replays_a_finished_hand_with_every_rack(
    variant: str, signed_in: SignedIn
) -> None:
    table, users, hand = finished_hand(variant, VARIANTS.index(variant))
    last = hand.version
    stranger = make_user("stranger")
    for who in [None, stranger, users[1]]:
        client = signed_in(who)
        for step in sorted({0, last // 3, last}):
            response = client.get(step_url(hand, step))
            assert response.status_code == 200
            page = response.content.decode()
            eng = engine_at(hand, step)
            for seat in range(table.players):
                assert Counter(rack_of(page, seat) or []) == Counter(
                    engine.format_tile(t) for t in eng.racks[seat]
                )
            assert "data-replay-live" not in page
            # The seed beside its commitment, and the check.
            assert f"<code data-seed>{hand.seed}</code>" in page
            assert f"<code data-commitment>{hand.commitment}</code>" in page
            assert reverse("hand_verify", args=[hand.pk]) in page
    # /hands/<id>/ is the deal (step 0).
    page = signed_in().get(reverse("hand_replay", args=[hand.pk])).content.decode()
    assert 'data-step="0"' in page


@pytest.mark.slow
def test_a_private_table_s_finished_hand_needs_the_invite(signed_in: SignedIn) -> None:
    table, users, hand = finished_hand("duz", 3, is_private=True)
    stranger = make_user("stranger")
    staff = make_user("staffer", staff=True)
    invite = f"?invite={table.invite_token}"
    urls = [
        reverse("hand_replay", args=[hand.pk]),
        reverse("hand_verify", args=[hand.pk]),
        reverse("hand_scenario", args=[hand.pk]),
        reverse("match_export", args=[hand.match_id]),
    ]
    for url in urls:
        assert signed_in().get(url).status_code == 404
        assert signed_in(stranger).get(url).status_code == 404
        assert signed_in(stranger).get(url + invite).status_code == 200
        assert signed_in(staff).get(url).status_code == 200
        assert signed_in(users[3]).get(url).status_code == 200
    # The replay's links keep the invite.
    page = signed_in().get(urls[0] + invite).content.decode()
    assert f'hx-get="{step_url(hand, 1, invite)}"' in page


# ----------------------------------------------------------------------------- steps and words
COLOURS = {"R": "red", "Y": "yellow", "B": "blue", "K": "black"}


def said(code: str) -> str:
    """A tile as the words name it ("K4" is "black 4")."""
    return "fake okey" if code.startswith("F") else f"{COLOURS[code[0]]} {code[1:3].rstrip(':')}"


def expected_words(m: Move, names: list[str]) -> list[str]:
    """What the step must say about its move, from the move itself (the hand is over: every
    tile is named, in words)."""
    who = names[m.seat]
    do = m.action["do"]
    if do == "draw":
        drawn = [e for e in m.events if e["type"] == "draw"]
        return [f"{who} drew {said(drawn[0]['tile'])}."] if drawn else []
    if do == "take":
        taken = next(e for e in m.events if e["type"] == "take")
        return [f"{who} took {names[taken['from']]}'s {said(taken['tile'])}."]
    if do in ("discard", "finish"):
        return [f"{who} threw {said(m.action['tile'])}."]
    if do == "open":
        return [f"{who} opened with"]
    if do == "lay":
        return [f"{who} laid"]
    if do == "add":
        return [f"{who} added {said(m.action['tile'])} to a meld."]
    if do == "swap":
        return [f"{who} swapped {said(m.action['tile'])} for an okey."]
    if do == "give_back":
        return [f"{who} gave"]
    if do == "show_indicator":
        return [f"{who} showed the indicator."]
    raise AssertionError(do)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["classic", "okey51"])
def test_every_step_has_its_own_url_and_says_its_move(variant: str, signed_in: SignedIn) -> None:
    table, users, hand = finished_hand(variant, 10 + VARIANTS.index(variant))
    names = [u.get_username() for u in users]
    client = signed_in()
    moves = list(hand.moves.order_by("number"))
    for m in moves:
        # A step is fetched as Previous and Next fetch it (the step's fragment), and every
        # tenth as a link opened afresh would (the whole page around the same fragment).
        whole = m.number % 10 == 0 or m.number == len(moves)
        headers = {} if whole else {"HX-Request": "true"}
        response = client.get(step_url(hand, m.number), headers=headers)
        assert response.status_code == 200
        page = response.content.decode()
        assert ("<html" in page) == whole
        assert f'data-step="{m.number}"' in page
        words = re.search(r'<div class="replay-words".*?</div>', page, re.S)
        assert words
        text = re.sub(r"<[^>]+>", " ", words.group(0)).replace("&#x27;", "'")
        assert f"Move {m.number}: {names[m.seat]}" in text
        for expected in expected_words(m, names):
            assert expected in text, (m.action, text)
        # Its neighbours are linked for the buttons (and the arrow keys that click them).
        prev = re.search(r'<a [^>]*data-replay="prev"', page)
        assert prev and f'hx-get="{step_url(hand, m.number - 1)}"' in prev.group(0)
        if m.number < len(moves):
            nxt = re.search(r'<a [^>]*data-replay="next"', page)
            assert nxt and f'href="{step_url(hand, m.number + 1)}"' in nxt.group(0)
        else:
            assert '<span class="replay-button" aria-disabled="true" data-replay="next">' in page
    assert client.get(step_url(hand, len(moves) + 1)).status_code == 404
    last = moves[-1]
    finisher_words = client.get(step_url(hand, last.number)).content.decode()
    assert "finished the hand" in finisher_words or "ran dry" in finisher_words


@pytest.mark.slow
def test_htmx_gets_the_step_fragment_and_the_page_has_the_keys_script(signed_in: SignedIn) -> None:
    table, users, hand = finished_hand("duz", 21)
    client = signed_in()
    fragment = client.get(step_url(hand, 2), headers={"HX-Request": "true"})
    html = fragment.content.decode()
    assert html.lstrip().startswith('<div id="replay-step"')
    assert "<html" not in html and 'hx-push-url="true"' in html
    assert "HX-Request" in fragment["Vary"]
    # A history restore (no cached page) gets the whole page.
    restore = client.get(
        step_url(hand, 2), headers={"HX-Request": "true", "HX-History-Restore-Request": "true"}
    )
    assert "<html" in restore.content.decode()
    page = client.get(step_url(hand, 2)).content.decode()
    assert "js/replay.js" in page
    script = (ROOT / "static" / "js" / "replay.js").read_text()
    for key in ("ArrowLeft", "ArrowRight", "Home", "End"):
        assert key in script


def test_the_table_s_end_of_hand_section_links_to_the_replay(signed_in: SignedIn) -> None:
    table, users, hand = finished_hand("classic", 22)
    page = signed_in(users[0]).get(reverse("table", args=[table.pk])).content.decode()
    section = page.split("data-hand-over")[1]
    assert f'href="{reverse("hand_replay", args=[hand.pk])}" data-action="replay"' in section


# ----------------------------------------------------------------------------- exports
def scenario_download(hand: Hand, who: Any = None) -> dict[str, Any]:
    response = client_for(who).get(reverse("hand_scenario", args=[hand.pk]))
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    return json.loads(response.content)


@pytest.mark.parametrize("variant", VARIANTS)
def test_an_exported_hand_replays_through_the_scenario_runner_to_its_scores(variant: str) -> None:
    table, users, hand = finished_hand(variant, 30 + VARIANTS.index(variant))
    scenario = scenario_download(hand)
    assert scenario["seed"] == hand.seed and scenario["variant"] == variant
    result, diffs = check(scenario)
    assert not diffs
    stored = hand.state["result"]
    assert result["hand_scores"] == hand.hand_scores == stored["hand_scores"]
    assert result["scores"] == stored["scores"]
    assert all(m["ok"] for m in result["moves"]) and len(result["moves"]) == hand.version


def test_a_later_hand_with_another_starter_exports_renumbered_in_turn_order() -> None:
    table, users = user_table("okey51", {"hands": 3})
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(901))
    rng = random.Random(9)
    play_hand(match.hands.get(number=1), users, rng)
    actions.deal_next_hand(match, force=True)
    second = play_hand(match.hands.get(number=2), users, rng)
    assert second.starter == 1 and second.status == Hand.Status.FINISHED
    scenario = scenario_download(second)
    assert scenario["seats"] == [1, 2, 3, 0]
    assert scenario["start_scores"] == rotated(second.state["scores_before"], 1)
    result = run_scenario(scenario)
    assert result["hand_scores"] == rotated(second.hand_scores, 1)
    assert result["scores"] == rotated(second.state["result"]["scores"], 1)
    assert not check(scenario)[1]


@pytest.mark.slow
def test_the_scenario_command_line_replays_an_export(tmp_path: Path) -> None:
    table, users, hand = finished_hand("classic", 40)
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(scenario_download(hand)))
    run = subprocess.run(
        [sys.executable, "-m", "games.engine.scenario", "--check", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["check"] == "pass"
    assert out["hand_scores"] == hand.hand_scores


def test_the_match_export_has_hands_players_and_totals_but_never_chat(signed_in: SignedIn) -> None:
    table, users, hand = finished_hand("okey51", 50)
    match = Match.objects.get(pk=hand.match_id)
    ChatMessage.objects.create(
        table=table, match=match, user=users[0], author="p0", text="SECRET-CHAT-LINE iyi oyunlar"
    )
    ChatMessage.objects.create(table=table, user=users[1], author="p1", text="BEFORE-MATCH-LINE")
    ChatMessage.objects.create(table=table, match=match, author="p2", canned="good_game")
    response = signed_in().get(reverse("match_export", args=[match.pk]))
    assert response.status_code == 200
    text = response.content.decode()
    assert "SECRET-CHAT-LINE" not in text and "BEFORE-MATCH-LINE" not in text
    assert "good_game" not in text and "chat" not in text.lower()
    data = json.loads(text)
    assert data["variant"] == "okey51" and data["table"]["name"] == table.shown_name
    assert [p["user"] for p in data["players"]] == [u.get_username() for u in users]
    first = data["hands"][0]
    assert first["number"] == 1 and first["seed"] == hand.seed
    assert first["commitment"] == hand.commitment and first["hand_scores"] == hand.hand_scores
    assert len(first["moves"]) == hand.version
    assert first["moves"][0] == {
        "number": 1,
        "seat": 0,
        "by": "user",
        **hand.moves.get(number=1).action,
    }
    match.refresh_from_db()
    assert data["totals"] == match.totals
    # The next hand (dealt at once in tests) is live: named, without seed or moves.
    live = Hand.objects.filter(match=match, status=Hand.Status.PLAYING).first()
    if live is not None:
        assert data["live_hand"] == live.number
        entry = data["hands"][live.number - 1]
        assert entry["live"] and "seed" not in entry and live.seed not in text


def test_bots_are_exported_by_level(signed_in: SignedIn) -> None:
    table, users = user_table("duz")
    actions.stand(table, users[2])
    actions.add_bot(table, 2, "strong", by=actions.SYSTEM)
    actions.start_match(table, by=actions.SYSTEM, seed=seed_of(60))
    data = json.loads(
        signed_in().get(reverse("match_export", args=[table.matches.get().pk])).content
    )
    assert data["players"][2] == {"seat": 2, "bot": "strong", "team": None}
    assert data["players"][0]["user"] == users[0].get_username()


# ----------------------------------------------------------------------------- the fair deal
def test_the_deal_check_passes_and_fails_when_a_revealed_seed_is_changed(
    signed_in: SignedIn,
) -> None:
    table, users, hand = finished_hand("gobek17", 70)
    url = reverse("hand_verify", args=[hand.pk])
    page = signed_in().get(url).content.decode()
    assert 'data-verified="true"' in page
    for key in ("commitment", "deal", "moves", "version", "snapshot", "result", "audit"):
        assert f'data-check="{key}" data-passed="true"' in page
    assert f"<code data-seed>{hand.seed}</code>" in page
    assert page.count("data-dealt=") == table.players
    # Each seat's rack as dealt (the stored deal), the starter's with its 15th tile.
    dealt = re.findall(r'data-dealt="(\d)".*?<span class="tiles">(.*?)</span></li>', page, re.S)
    initial = hand.state["initial"]["racks"]
    assert [int(seat) for seat, _ in dealt] == list(range(table.players))
    for seat, shown in dealt:
        shown_tiles = re.findall(r'data-tile="([^"]+)"', shown)
        assert shown_tiles == [engine.format_tile(t) for t in initial[int(seat)]]
    assert len(initial[hand.starter]) == 15
    out = StringIO()
    call_command("verify_deal", str(hand.pk), stdout=out)
    assert out.getvalue().count(": passed") == 7

    Hand.objects.filter(pk=hand.pk).update(seed=seed_of(71))
    page = signed_in().get(url).content.decode()
    assert 'data-verified="false"' in page
    assert 'data-check="commitment" data-passed="false"' in page
    assert 'data-check="deal" data-passed="false"' in page
    err = StringIO()
    with pytest.raises(CommandError):
        call_command("verify_deal", str(hand.pk), stdout=StringIO(), stderr=err)
    assert f"hand {hand.pk}: commitment: FAILED" in err.getvalue()
    assert f"hand {hand.pk}: deal: FAILED" in err.getvalue()


@pytest.mark.slow
def test_the_deal_check_finds_a_changed_move_log(signed_in: SignedIn) -> None:
    table, users, hand = finished_hand("duz", 72)
    checks = {c.key: c.ok for c in audit.deal_checks(hand)}
    assert all(checks.values()), checks
    m = hand.moves.filter(action__do="discard").order_by("number").first()
    assert m is not None
    other = next(
        t for t in engine.deal(hand.seed).pile if engine.format_tile(t) != m.action["tile"]
    )
    Move.objects.filter(pk=m.pk).update(action={**m.action, "tile": engine.format_tile(other)})
    checks = {c.key: c.ok for c in audit.deal_checks(hand)}
    assert checks["commitment"] and checks["deal"]
    assert not checks["moves"] and not checks["audit"]
    # The replay says so from the changed move on, and points to the check.
    assert signed_in().get(step_url(hand, 0)).status_code == 200
    response = signed_in().get(step_url(hand, hand.version))
    assert response.status_code == 409
    assert reverse("hand_verify", args=[hand.pk]) in response.content.decode()


def test_the_command_fails_for_a_missing_hand() -> None:
    with pytest.raises(CommandError):
        call_command("verify_deal", "999999", stdout=StringIO(), stderr=StringIO())


def test_the_rules_pages_explain_how_to_check_a_deal(signed_in: SignedIn) -> None:
    page = signed_in().get(reverse("rules", args=["okey51"])).content.decode()
    assert 'id="fair-deal"' in page
    assert "SHA-256" in page.split('id="fair-deal"')[1]


@pytest.mark.slow
def test_the_deal_check_speaks_the_readers_language(signed_in: SignedIn) -> None:
    """Its details were English in a Turkish page ("122 moves", "hand scores [0, 0, 0, 0]")."""
    _table, _users, hand = finished_hand("classic", 73)
    client = signed_in()
    client.cookies["django_language"] = "tr"
    page = client.get(reverse("hand_verify", args=[hand.pk])).content.decode()
    details = re.findall(r'<span class="verify-detail">(.*?)</span>', page, re.S)
    assert any(re.fullmatch(r"\d+ hamle", d.strip()) for d in details), details
    assert any(d.strip().startswith("elin puanları: ") for d in details), details
    assert not any("moves" in d or "hand scores" in d or "[" in d for d in details), details
