// The table page: the rack (drag, select, sort, keyboard), move buttons, the countdown.
// The server renders everything; this script only sends moves and the rack's arrangement.
// Moves go over the table socket as JSON ({type: "move", hand, move, expected_version,
// client_move_id}); without an open socket they go over HTTP to the same service.
(function () {
  "use strict";

  var socket = null; // the ws extension's socket wrapper, while its socket is open
  // The move sent last and not yet answered (a new version, or a refusal): if the socket drops
  // before either, the player is told the move may not have been played. The server's move ids
  // and versions make sure a move never applies twice or late.
  var pending = null;
  // "Leave table" was pressed: once the page is no longer the seat's, the player goes to the
  // lobby (a refusal ends it).
  var leaving = false;
  var moveCounter = 0;
  // The stand's slot the previous player's discard was dragged onto: the tile goes there when
  // the rack comes back with it.
  var takenInto = -1;
  var rackSortables = [];
  var spotSortables = [];

  function live() { return document.getElementById("table-live"); }
  // A move's key typed without its letter's Turkish marks counts (c for "Çek" on a keyboard
  // without ç).
  var PLAIN_LETTERS = { "ç": "c", "ğ": "g", "ı": "i", "ö": "o", "ş": "s", "ü": "u" };
  function plainKey(key) { return PLAIN_LETTERS[key] || key; }
  function rackArea() { return document.getElementById("rack-area"); }
  function page() { return document.querySelector(".table-page"); }

  function handId() {
    var el = live();
    var id = el && el.dataset.hand;
    return id ? parseInt(id, 10) : null;
  }

  function version() {
    var el = live();
    return el ? parseInt(el.dataset.version || "0", 10) : 0;
  }

  function showError(text, code) {
    var el = document.getElementById("move-error");
    if (!el) return;
    el.textContent = text || "";
    if (code) el.dataset.error = code; else delete el.dataset.error;
  }

  function newMoveId() {
    moveCounter += 1;
    var random = (window.crypto && window.crypto.randomUUID) ? window.crypto.randomUUID() :
      String(Math.random()).slice(2);
    return "m-" + random.slice(0, 18) + "-" + moveCounter;
  }

  // ------------------------------------------------------------------ the rack
  function rackTiles() {
    var area = rackArea();
    return area ? Array.prototype.slice.call(area.querySelectorAll(".rack .tile")) : [];
  }

  function layout() {
    var area = rackArea();
    if (!area) return null;
    return Array.prototype.map.call(area.querySelectorAll(".rack .slot"), function (slot) {
      var tile = slot.querySelector(".tile");
      return tile ? tile.dataset.tile : null;
    });
  }

  function selected() {
    return rackTiles().filter(function (t) { return t.getAttribute("aria-pressed") === "true"; });
  }

  function toggle(tile, on) {
    var pressed = on === undefined ? tile.getAttribute("aria-pressed") !== "true" : on;
    tile.setAttribute("aria-pressed", pressed ? "true" : "false");
    showTargets();
    markStand();
    weighSoon();
  }

  // What the stand's groups and the selected tiles are worth is the engine's to say: the page
  // asks its socket (a "weigh" with the stand and the selected slots) after the selection or the
  // stand changed, and the answer (#rack-weight) says "87 / 101" and marks each group on the
  // stand valid or not (data-stand).
  var weighTimer = null;
  function weighSoon() {
    var area = rackArea();
    if (!area || area.dataset.weigh === undefined) return;
    clearTimeout(weighTimer);
    weighTimer = setTimeout(function () {
      var hand = handId();
      var lay = layout();
      if (hand === null || !lay || !socket || connection === "lost") return;
      send({ type: "weigh", hand: hand, layout: lay, slots: selectedSlots() }, true);
    }, 60);
  }

  // Valid groups are marked green; a group that is none is marked red only while one of its
  // tiles is selected (a freshly dealt row is not a group anyone meant).
  function markStand() {
    var weight = document.getElementById("rack-weight");
    var slots = rackArea() ? rackArea().querySelectorAll(".rack .slot") : [];
    var picked = selectedSlots();
    var marks = {};
    try {
      JSON.parse((weight && weight.dataset.stand) || "[]").forEach(function (group) {
        var chosen = group.slots.some(function (i) { return picked.indexOf(i) >= 0; });
        if (!group.valid && !chosen) return;
        group.slots.forEach(function (i, k) {
          marks[i] = (group.valid ? "group-ok" : "group-bad") +
            (k === 0 ? " group-start" : "") + (k === group.slots.length - 1 ? " group-end" : "");
        });
      });
    } catch (e) { marks = {}; }
    Array.prototype.forEach.call(slots, function (slot, i) {
      slot.classList.remove("group-ok", "group-bad", "group-start", "group-end");
      if (marks[i]) marks[i].split(" ").forEach(function (c) { slot.classList.add(c); });
    });
  }

  // A meld's "+" and "⇄" show while the one selected tile is among the rack tiles the engine
  // lets onto it (data-add, data-swap: engine.meld_targets); the meld is marked as a target.
  function showTargets() {
    var picked = selected();
    var code = picked.length === 1 ? picked[0].dataset.tile : null;
    document.querySelectorAll("#table-live .meld[data-meld]").forEach(function (meld) {
      var fits = false;
      ["add", "swap"].forEach(function (kind) {
        var button = meld.querySelector('button[data-action="' + kind + '"]');
        if (!button) return;
        var ok = code !== null && (meld.dataset[kind] || "").split(" ").indexOf(code) >= 0;
        button.hidden = !ok;
        fits = fits || ok;
      });
      meld.classList.toggle("is-target", fits);
    });
  }

  function clearSelection() {
    selected().forEach(function (t) { toggle(t, false); });
  }

  function sendArrangement() {
    var hand = handId();
    var lay = layout();
    if (hand === null || !lay) return;
    send({ type: "arrange", hand: hand, layout: lay }, true);
    weighSoon();
  }

  // Assisted tables: the board (re-sent on every change) lists the rack tiles that fit the
  // table now; the rack (re-sent only when its tiles change) is marked to match.
  function markFeedable() {
    var carrier = document.querySelector("#table-live [data-assist-feedable]");
    var codes = carrier ? carrier.dataset.assistFeedable.split(" ") : [];
    rackTiles().forEach(function (t) {
      t.classList.toggle("feedable", codes.indexOf(t.dataset.tile) >= 0);
    });
  }

  // The rack's slots get their drag handlers when the rack itself is drawn (the page, or the
  // server re-sending it after its tiles change); another seat's move re-sends only the table,
  // so a tile being dragged at that moment stays in hand. The drop spots live in the table and
  // are made again with it.
  function stillness() {
    return Boolean(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
  }

  // The drag handlers of lists a frame replaced. Taking one down ends the drag in progress
  // (SortableJS drops the tile in hand, whichever list it came from), so they are taken down
  // once no tile is held; until then they sit on elements no longer on the page. A list
  // still on the page gets new handlers at once, and its old ones must go first.
  var retired = [];
  var retiring = false;
  function retire(sortables) {
    sortables.forEach(function (s) {
      if (s.el && s.el.isConnected) s.destroy();
      else retired.push(s);
    });
    if (!retiring) takeDownRetired();
  }
  function takeDownRetired() {
    retiring = typeof Sortable !== "undefined" && Boolean(Sortable.dragged);
    if (retiring) {
      setTimeout(takeDownRetired, 250);
      return;
    }
    retired.forEach(function (s) { s.destroy(); });
    retired = [];
  }

  function setupRack() {
    markFeedable();
    retire(rackSortables);
    rackSortables = [];
    var area = rackArea();
    if (!area || typeof Sortable === "undefined") return;
    area.querySelectorAll(".rack .slot").forEach(function (slot) {
      rackSortables.push(Sortable.create(slot, {
        // A tile dropped on another is put in its place and the others shift along the row.
        group: { name: "rack", pull: true, put: true },
        // Tiles slide into place, unless the player asked their system for less motion.
        animation: stillness() ? 0 : 120,
        onAdd: function (evt) {
          if (evt.from.closest && evt.from.closest(".discard-spot")) {
            // The previous player's discard dragged onto the stand: take it (the server's
            // frame brings the tile; it is then stood where it was dropped).
            evt.item.remove();
            takenInto = Array.prototype.indexOf.call(area.querySelectorAll(".rack .slot"), evt.to);
            play("take", {});
            return;
          }
          if (evt.to.children.length > 1) insertInto(evt.to, evt.item, evt.from);
        },
        onEnd: function (evt) {
          if (evt.to && evt.to.dataset && evt.to.dataset.drop) return; // a move, not a rearrangement
          if (evt.from !== evt.to) sendArrangement();
        },
      }));
    });
  }

  // ``item`` was dropped on ``slot``, which held a tile: the item takes the slot and the tiles
  // between it and the nearest free slot of the row shift one place toward that free slot (the
  // one the item left, when it came from the same row: a move within a group).
  function insertInto(slot, item, from) {
    var slots = Array.prototype.slice.call(rackArea().querySelectorAll(".rack .slot"));
    var at = slots.indexOf(slot);
    var perRow = slots.length / 2;
    var rowStart = at - (at % perRow);
    var row = slots.slice(rowStart, rowStart + perRow);
    var i = at - rowStart;
    function free(k) { return row[k] && !row[k].querySelector(".tile"); }
    var target = -1;
    var left = row.indexOf(from) >= 0 && row.indexOf(from) < i && free(row.indexOf(from));
    if (!left) {
      for (var r = i + 1; r < row.length; r++) if (free(r)) { target = r; break; }
    }
    if (target < 0) {
      for (var l = i - 1; l >= 0; l--) if (free(l)) { target = l; break; }
    }
    if (target < 0) { from.appendChild(item); return; } // a full row: the tile goes back
    var step = target > i ? 1 : -1;
    for (var k = target; k !== i; k -= step) {
      var moving = Array.prototype.filter.call(row[k - step].querySelectorAll(".tile"), function (t) {
        return t !== item;
      })[0];
      if (moving) row[k].appendChild(moving);
    }
    row[i].appendChild(item);
  }

  function setupDropSpots() {
    markFeedable();
    retire(spotSortables);
    spotSortables = [];
    if (typeof Sortable === "undefined") return;
    // The discard the viewer may take: its top tile may be dragged onto the stand.
    document.querySelectorAll("#table-live .discard-spot.takeable").forEach(function (spot) {
      spotSortables.push(Sortable.create(spot, {
        group: { name: "rack", pull: "clone", put: false },
        sort: false,
        draggable: ".take-discard",
      }));
    });
    // Drop targets: the seat's discard spot and the finish spot.
    document.querySelectorAll("[data-drop]").forEach(function (spot) {
      spotSortables.push(Sortable.create(spot, {
        group: { name: "rack", pull: false, put: true },
        sort: false,
        onAdd: function (evt) {
          // Put the tile back in its slot: the rack (and the layout sent with a finish) stays
          // whole until the server's update takes the tile away, or refuses the move.
          var code = evt.item.dataset.tile;
          evt.from.appendChild(evt.item);
          play(spot.dataset.drop, { tile: code, slot: slotOf(evt.item) });
        },
      }));
    });
  }

  // The sort buttons carry their layouts, worked out by the server's engine for the rack they
  // came with (engine.layout.sorted_layout; "melds" on assisted tables: engine.assist).
  function sortRack(button) {
    var area = rackArea();
    if (!area) return;
    placeLayout(area, JSON.parse(button.dataset.layout));
  }

  function placeLayout(area, lay) {
    var slots = area.querySelectorAll(".rack .slot");
    var tiles = {};
    rackTiles().forEach(function (t) {
      (tiles[t.dataset.tile] = tiles[t.dataset.tile] || []).push(t);
    });
    slots.forEach(function (slot, i) {
      var code = lay[i];
      while (slot.firstChild) slot.removeChild(slot.firstChild);
      if (code && tiles[code] && tiles[code].length) slot.appendChild(tiles[code].shift());
    });
    sendArrangement();
  }

  // ------------------------------------------------------------------ moves
  function send(message, quiet) {
    if (socket) {
      try {
        socket.sendImmediately(JSON.stringify(message));
        return true;
      } catch (e) { /* fall through to HTTP */ }
    }
    if (["move", "ready", "rematch", "hide", "leave", "back", "sit"].indexOf(message.type) >= 0) {
      return sendOverHttp(message);
    }
    if (!quiet) showError(gettext("You are offline: the move was not sent."), "offline");
    return false;
  }

  function sendOverHttp(message) {
    var p = page();
    if (!p || typeof htmx === "undefined") return false;
    // Arrangements go by socket alone: a move's slot names a place on the stand as it is now.
    if (message.type === "move" && message.move.slot !== undefined && !message.move.layout) {
      message.move.layout = layout();
    }
    var url = "/tables/" + p.dataset.table + "/move/";
    htmx.ajax("POST", url, { values: { payload: JSON.stringify(message) }, swap: "none" });
    return true;
  }

  function gettext(text) { return (window.django && window.django.gettext) ? window.django.gettext(text) : text; }

  // After a move the focus goes back to the rack (where it was, or the tile nearest it), so
  // a keyboard player goes on from there; the frames that follow a move redraw the buttons
  // and the tiles, which would otherwise leave the focus nowhere.
  var rackSlotFocused = 0;
  var refocusRack = false;
  document.addEventListener("focusin", function (event) {
    var slot = event.target.closest && event.target.closest("#rack-area .slot");
    if (!slot) return;
    rackSlotFocused = Array.prototype.indexOf.call(rackArea().querySelectorAll(".rack .slot"), slot);
  });

  function backToRack() {
    if (!refocusRack) return;
    var active = document.activeElement;
    if (active && active !== document.body && document.contains(active)) return;
    var tiles = rackArea() ? rackArea().querySelectorAll(".rack .slot") : [];
    var best = null;
    var distance = Infinity;
    Array.prototype.forEach.call(tiles, function (slot, i) {
      var tile = slot.querySelector(".tile");
      if (tile && Math.abs(i - rackSlotFocused) < distance) {
        best = tile;
        distance = Math.abs(i - rackSlotFocused);
      }
    });
    if (best) {
      best.focus({ preventScroll: true });
      refocusRack = false;
    }
  }

  function play(kind, extra) {
    var hand = handId();
    if (hand === null) return;
    refocusRack = true;
    if (connection === "lost") {
      showError(gettext("You are offline: the move was not sent."), "offline");
      return;
    }
    var move = { "do": kind };
    Object.keys(extra || {}).forEach(function (k) { move[k] = extra[k]; });
    var lay = layout();
    if (lay && (kind === "finish" || kind === "open" || kind === "lay")) move.layout = lay;
    showError("");
    var id = newMoveId();
    pending = { id: id, version: version() };
    send({
      type: "move",
      hand: hand,
      move: move,
      expected_version: pending.version,
      client_move_id: id,
    });
  }

  // A move of one tile: none selected, or several, is said plainly (nothing is sent).
  function oneTile(picked) {
    if (picked.length === 1) return true;
    showError(picked.length ? gettext("Select just one tile.") : gettext("Select one tile first."));
    return false;
  }

  // The stand's places of the selected tiles: a rack holds two copies of a tile, and the place
  // says which copy was chosen (by name the server would take the first one on the rack).
  function selectedSlots() {
    return selected().map(slotOf);
  }

  function slotOf(tile) {
    var area = rackArea();
    if (!area) return -1;
    var slots = Array.prototype.slice.call(area.querySelectorAll(".rack .slot"));
    return slots.indexOf(tile.closest(".slot"));
  }

  function act(kind, button) {
    var picked = selected().map(function (t) { return t.dataset.tile; });
    switch (kind) {
      case "draw": case "take": case "give_back": case "show_indicator":
        play(kind, {});
        break;
      case "discard": case "finish":
        if (!oneTile(picked)) return;
        play(kind, { tile: picked[0], slot: selectedSlots()[0] });
        break;
      case "open": case "lay":
        if (!picked.length) { showError(gettext("Select the tiles to put on the table.")); return; }
        play(kind, { slots: selectedSlots() });
        break;
      case "lay-onto": // pairs laid onto another pairs player's row
        if (!picked.length) { showError(gettext("Select the tiles to put on the table.")); return; }
        play("lay", { slots: selectedSlots(), onto: parseInt(button.dataset.onto, 10) });
        break;
      case "add": case "swap":
        if (!oneTile(picked)) return;
        play(kind, { tile: picked[0], slot: selectedSlots()[0], meld: parseInt(button.dataset.meld, 10) });
        break;
      case "feed": // assisted: one tap feeds (or swaps) the named rack tile onto this meld
        play(button.dataset.do, { tile: button.dataset.feed, meld: parseInt(button.dataset.meld, 10) });
        break;
      case "open-suggested": { // assisted: the opening the solver found, as a ready move
        var suggested = JSON.parse(button.dataset.open);
        var fields = {};
        Object.keys(suggested).forEach(function (k) { if (k !== "do") fields[k] = suggested[k]; });
        play(suggested["do"], fields);
        break;
      }
      case "ready":
        send({ type: "ready" });
        break;
      case "hide": // hide the hand being played from spectators until it ends
        send({ type: "hide" });
        break;
      case "rematch":
        send({ type: "rematch" });
        break;
      case "leave": // during a match a bot takes the seat: the player confirms first
        if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return;
        showError("");
        leaving = true;
        send({ type: "leave" });
        break;
      case "sit": // between hands, a seat whose player left the match
        if (button.form) return; // the seat controls' own form sits (before a match)
        showError("");
        send({ type: "sit", position: parseInt(button.dataset.seat, 10) });
        break;
      case "im-back": // a bot was playing the seat: the player takes it back
        showError("");
        send({ type: "back" });
        break;
      default:
        return;
    }
  }

  // On a phone the table's melds open over the felt with one tap and close with one (or
  // Escape); they stay open across frames until closed.
  var meldsOpen = false;
  function showMelds(focus) {
    var melds = document.getElementById("table-melds");
    if (!melds) { meldsOpen = false; return; }
    melds.classList.toggle("is-open", meldsOpen);
    var opener = document.querySelector(".melds-toggle[data-melds-toggle]");
    if (opener) opener.setAttribute("aria-expanded", meldsOpen ? "true" : "false");
    if (!focus) return;
    var target = meldsOpen ? melds.querySelector(".melds-close") : opener;
    if (target) target.focus();
  }

  // "Scores": the match page's scoreboard (its hands, as the server keeps them) over the felt.
  function openScores(url) {
    var dialog = document.getElementById("scores-dialog");
    if (!dialog || typeof htmx === "undefined") return;
    htmx.ajax("GET", url, { target: "#scores-body", swap: "innerHTML" }).then(function () {
      if (!dialog.open) dialog.showModal();
    });
  }

  // ------------------------------------------------------------------ events
  document.addEventListener("click", function (event) {
    var tile = event.target.closest(".rack .tile");
    if (tile) { toggle(tile); return; }
    var scores = event.target.closest("[data-scores]");
    if (scores) { openScores(scores.dataset.scores); return; }
    if (event.target.closest("[data-scores-close]")) {
      var open = document.getElementById("scores-dialog");
      if (open && open.open) open.close();
      return;
    }
    if (event.target.closest("[data-melds-toggle]")) {
      meldsOpen = !meldsOpen;
      showMelds(true);
      return;
    }
    var sorter = event.target.closest("[data-sort]");
    if (sorter) { sortRack(sorter); return; }
    var button = event.target.closest("#table-live [data-action]");
    if (button && !button.disabled) { act(button.dataset.action, button); }
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && meldsOpen) { meldsOpen = false; showMelds(true); return; }
    if (event.target.closest("input, textarea, select")) return;
    var tile = event.target.closest && event.target.closest(".rack .tile");
    if (tile && (event.key === " " || event.key === "Enter")) {
      event.preventDefault();
      toggle(tile);
      return;
    }
    if (tile && /^Arrow/.test(event.key)) {
      event.preventDefault();
      var slots = Array.prototype.slice.call(rackArea().querySelectorAll(".rack .slot"));
      var from = slots.indexOf(tile.parentElement);
      var perRow = slots.length / 2;
      var step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -perRow, ArrowDown: perRow }[event.key];
      var to = from + step;
      if (to < 0 || to >= slots.length) return;
      if (event.shiftKey) { // move the tile (swapping with what is there)
        var other = slots[to].querySelector(".tile");
        slots[to].appendChild(tile);
        if (other) slots[from].appendChild(other);
        tile.focus();
        sendArrangement();
      } else {
        var next = slots.slice(to).concat(slots.slice(0, to)).map(function (s) { return s.querySelector(".tile"); });
        var found = step > 0 ? next.find(Boolean) :
          slots.slice(0, from).reverse().map(function (s) { return s.querySelector(".tile"); }).find(Boolean);
        if (found) found.focus();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var key = plainKey(event.key.toLowerCase());
    var button = Array.prototype.find.call(
      document.querySelectorAll("#table-live [data-key]"),
      function (b) { return plainKey(b.dataset.key) === key; }
    );
    if (button && !button.disabled) { event.preventDefault(); act(button.dataset.action, button); }
  });

  document.addEventListener("htmx:wsOpen", function (event) {
    if (!event.target.closest || !event.target.closest("#table-socket")) {
      if (event.target.id !== "table-socket") return;
    }
    var opened = event.detail.event && event.detail.event.target;
    if (newestSocket && opened && opened !== newestSocket) {
      // A socket the ws extension made and then replaced while it was connecting (its
      // wrapper keeps only the newest): it would deliver every frame twice. Closed cleanly,
      // so that nothing reopens it.
      try { opened.close(1000); } catch (e) { /* closing already */ }
      return;
    }
    socket = event.detail.socketWrapper;
    rawSocket = opened;
    if (socket && socket.queue) socket.queue.length = 0; // never replay stale moves
    heardAt = Date.now();
    pingedAt = 0;
    socket.sendImmediately(JSON.stringify({ type: "refresh" }));
    weighSoon();
  });

  // A move sent over HTTP (no socket) that never arrived, or was refused as a whole.
  document.addEventListener("htmx:sendError", function () {
    if (!pending) return;
    pending = null;
    showError(gettext("You are offline: the move was not sent."), "offline");
  });
  document.addEventListener("htmx:responseError", function (event) {
    if (!pending) return;
    pending = null;
    var xhr = event.detail && event.detail.xhr;
    var box = document.createElement("div");
    box.innerHTML = xhr ? xhr.responseText : "";
    var refusal = box.querySelector("#move-error");
    showError(refusal ? refusal.textContent : gettext("The move could not be sent."), "refused");
  });

  document.addEventListener("htmx:wsClose", function (event) {
    if (event.target.id !== "table-socket") return;
    var closed = event.detail && event.detail.event;
    // A socket given up on (a heartbeat missed) closes late, and one replaced while it was
    // connecting closes when it opens: the newest may be open, or on its way.
    if (closed && newestSocket && closed.target !== newestSocket) return;
    if (closed && rawSocket && closed.target !== rawSocket) return;
    socket = null;
    rawSocket = null;
    setConnection("lost");
    // The ws extension opens a new socket after an abnormal close; after a clean one (a
    // server that shut down) the page does it. A 4xxx close is the server's word: no retry.
    var code = closed ? closed.code : 0;
    if (code < 4000 && [1006, 1011, 1012, 1013].indexOf(code) < 0 && event.detail.socketWrapper) {
      var wrapper = event.detail.socketWrapper;
      setTimeout(function () { if (!socket) wrapper.reconnect(); }, reconnectDelay(0));
    }
    if (pending) {
      pending = null;
      showError(gettext("The connection dropped before your move was confirmed: it may not have been played. The table will refresh when the connection is back."), "dropped");
    }
  });

  // A panel the player opened (the fair deal's <details>) stays open when a frame redraws it.
  // Before the match, the seat controls on screen stay there until the frame's own are
  // fetched (its slot comes empty and loads them): no flash of an empty panel at each frame,
  // and no button gone from under a finger.
  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    var detail = event.detail;
    if (!detail || !detail.fragment || !detail.target) return;
    detail.target.querySelectorAll("details[id][open]").forEach(function (open) {
      var next = detail.fragment.querySelector("#" + CSS.escape(open.id));
      if (next) next.open = true;
    });
    var shown = detail.target.querySelector("#seat-controls-slot");
    var coming = detail.fragment.querySelector("#seat-controls-slot");
    if (shown && coming && !coming.hasChildNodes()) coming.innerHTML = shown.innerHTML;
  });

  // A new rack fragment replaces the tiles. When it holds the same tiles (a reconnect, the
  // server's copy of the arrangement), the player's selection is kept; after a move changed
  // the rack (a draw, a discard, an opening) the selection is over.
  var keptSelection = null;
  var keptTiles = null;

  function tileCodes() {
    return rackTiles().map(function (t) { return t.dataset.tile; }).sort().join(" ");
  }

  document.addEventListener("htmx:wsBeforeMessage", function (event) {
    var message = event.detail && event.detail.message;
    heardAt = Date.now();
    pingedAt = 0;
    // The first word on a new socket is the table as it is now (the refresh): back in sync.
    if (connection === "lost" && socket) setConnection("live");
    if (message === PONG) { event.preventDefault(); return; }
    if (typeof message !== "string" || message.indexOf('id="rack-area"') < 0) return;
    var area = rackArea();
    if (!area) return;
    keptSelection = [];
    keptTiles = tileCodes();
    rackBefore = rackTiles().map(function (t) { return t.dataset.tile; });
    area.querySelectorAll(".rack .slot").forEach(function (slot, i) {
      var tile = slot.querySelector('.tile[aria-pressed="true"]');
      if (tile) keptSelection.push({ slot: i, code: tile.dataset.tile });
    });
  });

  // After a take dragged onto the stand: the new tile (the one the last rack did not have) is
  // moved to the slot it was dropped on, if that is still free, and the stand is saved.
  var rackBefore = null;
  function standTaken() {
    var into = takenInto;
    takenInto = -1;
    if (into < 0 || !rackBefore) return;
    var slots = rackArea().querySelectorAll(".rack .slot");
    var left = rackBefore.slice();
    var fresh = rackTiles().filter(function (t) {
      var k = left.indexOf(t.dataset.tile);
      if (k >= 0) { left.splice(k, 1); return false; }
      return true;
    })[0];
    if (!fresh || !slots[into] || slots[into].querySelector(".tile")) return;
    slots[into].appendChild(fresh);
    sendArrangement();
  }

  function restoreSelection() {
    var area = rackArea();
    if (!keptSelection || !area) return;
    if (tileCodes() !== keptTiles) { keptSelection = null; return; }
    var slots = area.querySelectorAll(".rack .slot");
    keptSelection.forEach(function (kept) {
      var tile = slots[kept.slot] && slots[kept.slot].querySelector(".tile");
      if (tile && tile.dataset.tile === kept.code) toggle(tile, true);
    });
    keptSelection = null;
  }

  // When the match starts, a seat that was scrolled away from the felt (on a phone the chat
  // is under the rack: chatting while the table filled) is brought back to it.
  var tableStatus = live() ? live().dataset.status : "";
  function matchStarted() {
    var now = live() ? live().dataset.status : "";
    var started = tableStatus === "open" && now === "playing";
    tableStatus = now;
    if (!started || live().dataset.seat === "") return;
    var main = live().closest("main");
    if (main) main.scrollTo({ top: 0 });
    window.scrollTo({ top: 0 });
  }

  document.addEventListener("htmx:wsAfterMessage", function (event) {
    var message = event.detail && event.detail.message;
    if (typeof message === "string" && message.indexOf('id="rack-area"') >= 0) {
      restoreSelection();
      standTaken();
      setupRack();
      showTargets();
      weighSoon();
    }
    if (typeof message === "string" && message.indexOf('id="rack-weight"') >= 0) markStand();
    if (typeof message === "string" &&
        (message.indexOf('id="rack-area"') >= 0 || message.indexOf('id="table-live"') >= 0)) backToRack();
    // Only the refusal of the move in flight answers it (a chat refusal does not).
    if (typeof message === "string" && pending && message.indexOf('id="move-error"') >= 0 &&
        message.indexOf('data-move-id="' + pending.id + '"') >= 0) pending = null;
    if (typeof message === "string" && message.indexOf('id="move-error"') >= 0) leaving = false;
    if (typeof message === "string" && message.indexOf('id="table-live"') >= 0) {
      if (leaving && live() && live().dataset.seat === "") {
        leaving = false; // once: a second assign would abort the first navigation
        window.location.assign("/");
        return;
      }
      turnInTitle();
      matchStarted();
      showTargets();
      showMelds(false);
      announce();
      if (pending && version() > pending.version) pending = null;
      setupDropSpots();
      document.body.dispatchEvent(new CustomEvent("table-changed"));
    }
  });

  // Another player's move, as the log tells it, is read out from #announce (a live region
  // that frames never replace); the player's own moves are not (they made them).
  var announced = "";
  function announce() {
    var region = document.getElementById("announce");
    var newest = document.querySelector("#table-live .event-log li");
    if (!region || !newest) return;
    var line = newest.textContent.trim();
    if (line === announced) return;
    announced = line;
    if (!newest.classList.contains("is-me")) region.textContent = line;
  }

  // ------------------------------------------------------------------ the chat
  // The panel (#chat) is outside #table-live: the server appends lines to #chat-lines and
  // re-sends the list after a mute. Messages go over the socket as JSON ({type: "chat", text}
  // or {type: "chat", canned}, {type: "mute"|"unmute", user}); without an open socket they are
  // posted to the chat URL, which answers with the viewer's list.
  var chatSent = null; // the text sent last: the input is cleared when it comes back as a line
  var chatStick = true; // keep the list scrolled to the newest line unless the reader scrolled up

  function chatPanel() { return document.getElementById("chat"); }

  function sendChat(message) {
    if (socket) {
      try {
        socket.sendImmediately(JSON.stringify(message));
        return;
      } catch (e) { /* fall through to HTTP */ }
    }
    var panel = chatPanel();
    if (!panel || typeof htmx === "undefined") {
      showError(gettext("You are offline: the message was not sent."), "offline");
      return;
    }
    htmx.ajax("POST", panel.dataset.url, { values: { payload: JSON.stringify(message) }, swap: "none" });
  }

  // Lines that come while the chat is out of sight (on a phone it is under the rack) are
  // counted on a button by the table's name, which brings the chat into view.
  var chatKnown = null; // the ids of the lines already shown (null before the first look)
  var chatInSight = true;
  var chatUnread = 0;

  function showUnread() {
    var button = document.getElementById("chat-unread");
    if (!button) return;
    button.hidden = chatUnread === 0;
    button.textContent = interpolate(
      ngettext("%s new message", "%s new messages", chatUnread), [chatUnread]
    );
  }

  function chatUpdated() {
    var panel = chatPanel();
    var list = document.getElementById("chat-lines");
    if (!panel || !list) return;
    var me = panel.dataset.me;
    // A line may come twice (pushed by the socket and in a fresh list): keep the first.
    var seen = {};
    list.querySelectorAll(".chat-line[data-id]").forEach(function (line) {
      if (seen[line.dataset.id]) { line.remove(); return; }
      seen[line.dataset.id] = true;
      var mine = me && line.dataset.user === me;
      if (chatKnown && !chatKnown[line.dataset.id] && !mine && !chatInSight) chatUnread += 1;
    });
    chatKnown = seen;
    showUnread();
    // Lines pushed by the socket are the same for every reader: no mute button on one's own
    // lines, none at all for an anonymous reader.
    list.querySelectorAll('[data-action="mute"]').forEach(function (button) {
      button.hidden = !me || button.dataset.user === me;
    });
    list.querySelectorAll(".chat-time[datetime]:not([data-local])").forEach(function (time) {
      var when = new Date(time.getAttribute("datetime"));
      // In the page's language ("17:05" on a Turkish page), not the browser's.
      if (!isNaN(when)) time.textContent = when.toLocaleTimeString(document.documentElement.lang || [], { hour: "2-digit", minute: "2-digit" });
      time.dataset.local = "1";
    });
    var input = panel.querySelector('input[name="text"]');
    var last = list.querySelector('.chat-line[data-user="' + me + '"]:last-child .chat-text');
    if (input && chatSent !== null && last && last.textContent === chatSent.trim()) {
      if (input.value === chatSent) input.value = "";
      chatSent = null;
    }
    if (chatStick) list.scrollTop = list.scrollHeight;
  }

  // A form a socket frame brought ("New game" at the end of a match) was rendered without a
  // request, so without the CSRF token: it sends the page's, the one htmx sends as a header.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.closest || !form.closest("#table-live") || form.method.toLowerCase() !== "post") return;
    if (form.querySelector('input[name="csrfmiddlewaretoken"]')) return;
    var token = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"];
    if (!token) return;
    var input = document.createElement("input");
    input.type = "hidden";
    input.name = "csrfmiddlewaretoken";
    input.value = token;
    form.appendChild(input);
  }, true);

  document.addEventListener("submit", function (event) {
    var form = event.target.closest && event.target.closest("#chat [data-chat-form]");
    if (!form) return;
    event.preventDefault();
    var input = form.querySelector('input[name="text"]');
    var text = input ? input.value.trim() : "";
    if (!text) return;
    showError("");
    chatSent = input.value;
    sendChat({ type: "chat", text: text });
  });

  document.addEventListener("click", function (event) {
    var canned = event.target.closest("#chat [data-canned]");
    if (canned) { showError(""); sendChat({ type: "chat", canned: canned.dataset.canned }); return; }
    var mute = event.target.closest('#chat [data-action="mute"], #chat [data-action="unmute"]');
    if (mute) sendChat({ type: mute.dataset.action, user: parseInt(mute.dataset.user, 10) });
  });

  document.addEventListener("scroll", function (event) {
    var list = event.target;
    if (list.id !== "chat-lines") return;
    chatStick = list.scrollTop + list.clientHeight >= list.scrollHeight - 24;
  }, true);

  document.addEventListener("DOMContentLoaded", function () {
    var panel = chatPanel();
    if (!panel) return;
    chatUpdated();
    // Lines arrive by the socket and by the HTTP fallback's answer alike.
    new MutationObserver(chatUpdated).observe(panel, { childList: true, subtree: true });
    if (window.IntersectionObserver) {
      new IntersectionObserver(function (entries) {
        chatInSight = entries[entries.length - 1].intersectionRatio >= 0.25;
        if (chatInSight && chatUnread) { chatUnread = 0; showUnread(); }
      }, { threshold: [0, 0.25, 0.5] }).observe(panel);
    }
  });

  document.addEventListener("click", function (event) {
    if (!event.target.closest("[data-chat-unread]")) return;
    var panel = chatPanel();
    if (panel) panel.scrollIntoView({ block: "end" });
  });

  // ------------------------------------------------------------------ the tab's title
  // A player in another tab sees in this tab's title that it is their turn.
  var baseTitle = document.title;

  function turnInTitle() {
    var el = live();
    var mine = el && el.dataset.seat !== "" && el.dataset.turn === el.dataset.seat &&
      el.dataset.phase !== "over" && el.dataset.phase !== "";
    var want = mine && document.hidden ? "● " + gettext("Your turn") + " · " + baseTitle : baseTitle;
    if (document.title !== want) document.title = want;
  }

  document.addEventListener("visibilitychange", turnInTitle);

  // ------------------------------------------------------------------ the connection
  // A socket can die without closing (a server gone, a network that dropped): after
  // SILENCE_MS with no word from the server the page pings it, and with no answer ANSWER_MS
  // later it shows the connection as lost (within 3 s of the drop), turns the moves off and
  // keeps the countdowns running from the server's deadlines. A socket silent for GIVE_UP_MS
  // is replaced; a closed one is reopened. The first frame on the new socket (the table as it
  // is now) brings the page back. [data-connection] says "live" or "lost".
  var SILENCE_MS = 1200, ANSWER_MS = 1200, GIVE_UP_MS = 5000, FIRST_OPEN_MS = 3000;
  var PONG = "pong";
  var connection = "live";
  var rawSocket = null; // the browser's WebSocket under the extension's wrapper, once open
  // The table socket made last. The ws extension reopens a socket whenever one closes
  // abnormally, even one it has replaced: a socket given up on that closes late starts a
  // second one beside the newest, still connecting. Only the newest counts.
  var newestSocket = null;
  if (window.htmx) {
    var makeSocket = window.htmx.createWebSocket;
    window.htmx.createWebSocket = function (url) {
      var made = makeSocket ? makeSocket(url) : new WebSocket(url, []);
      if (url.indexOf("/ws/tables/") >= 0) newestSocket = made;
      return made;
    };
  }
  var heardAt = Date.now();
  var pingedAt = 0;
  var loadedAt = Date.now();

  // A lost server may come back at any moment: retry soon (with jitter, so a restarted server
  // is not met by every page at once), never more than 4 s apart.
  function reconnectDelay(retries) {
    return Math.min(4000, 500 * Math.pow(2, retries)) * (0.5 + Math.random() / 2);
  }
  if (window.htmx) window.htmx.config.wsReconnectDelay = reconnectDelay;

  function setConnection(state) {
    if (connection === state) return;
    connection = state;
    var notice = document.getElementById("connection");
    if (notice) {
      notice.dataset.connection = state;
      notice.textContent = state === "lost" ? gettext("Connection lost, reconnecting…") : "";
    }
    // The moves are off while nothing can reach the server; a frame draws them afresh.
    document.querySelectorAll("#table-live button[data-action]").forEach(function (button) {
      if (state === "lost" && !button.disabled) {
        button.disabled = true;
        button.dataset.offline = "";
      } else if (state === "live" && button.dataset.offline !== undefined) {
        button.disabled = false;
        delete button.dataset.offline;
      }
    });
  }

  function watchConnection() {
    var now = Date.now();
    if (!socket) {
      if (now - loadedAt > FIRST_OPEN_MS) setConnection("lost"); // never opened, or closed
      return;
    }
    if (pingedAt && now - heardAt > GIVE_UP_MS) {
      var wrapper = socket;
      socket = null;
      rawSocket = null; // its late close is not this page's news
      pingedAt = 0;
      setConnection("lost");
      wrapper.reconnect();
      return;
    }
    if (pingedAt && now - pingedAt > ANSWER_MS) setConnection("lost");
    if (!pingedAt && now - heardAt > SILENCE_MS) {
      pingedAt = now;
      try { socket.sendImmediately(JSON.stringify({ type: "ping" })); } catch (e) { /* closing */ }
    }
  }

  // A frame drawn while the connection was lost keeps the moves off.
  document.body.addEventListener("table-changed", function () {
    if (connection === "lost") { connection = "live"; setConnection("lost"); }
  });

  // ------------------------------------------------------------------ the countdown
  function tick() {
    document.querySelectorAll(".countdown[data-deadline]").forEach(function (bar) {
      var deadline = Date.parse(bar.dataset.deadline);
      var total = parseInt((live() && live().dataset.timer) || "0", 10);
      if (!deadline || !total) return;
      var left = Math.max(0, (deadline - Date.now()) / 1000);
      // Written only when they change: each write costs the page a style pass.
      var remaining = Math.min(1, left / total).toFixed(2);
      if (bar.style.getPropertyValue("--remaining") !== remaining) {
        bar.style.setProperty("--remaining", remaining);
      }
      if (bar.classList.contains("low") !== left < 5) bar.classList.toggle("low", left < 5);
      var label = bar.querySelector(".countdown-label");
      // Translators: the seconds left on the move timer, e.g. "12 s".
      var seconds = gettext("%s s").replace("%s", Math.ceil(left));
      if (label && label.textContent !== seconds) label.textContent = seconds;
    });
    // The seconds to the next deal, in the sentence the page gave ("... in %s s").
    document.querySelectorAll("[data-count-to]").forEach(function (line) {
      var at = Date.parse(line.dataset.countTo);
      if (!at || !line.dataset.words) return;
      var left = Math.max(0, Math.ceil((at - Date.now()) / 1000));
      var text = line.dataset.words.replace("%s", left);
      if (line.textContent !== text) line.textContent = text;
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    setupRack();
    setupDropSpots();
    setInterval(tick, 250);
    setInterval(watchConnection, 250);
  });
})();
