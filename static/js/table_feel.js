// The table's sounds and motion: what makes it feel alive, and nothing it needs to work.
// - Sounds, made with the Web Audio API (no files): a tile placed (any seat's move), your turn,
//   each of the last 5 seconds of your timer, and a finish. One control (#sound-toggle) turns
//   them off and on; the choice is remembered in this browser (localStorage "okey-sound").
//   Each sound is announced as an "okey-sound" event on document (detail: its name), played
//   or not, so that a page (and its tests) can tell what the table would say.
// - Motion: a tile drawn from the pile or taken from a discard slides from there onto the
//   stand, and a thrown tile slides from the stand onto its discard spot; nothing moves for a
//   player who asked their system for less motion (prefers-reduced-motion).
// It reads the table as the server drew it (#table-live's data- attributes, the rack) and
// decides nothing about the game.
(function () {
  "use strict";

  var KEY = "okey-sound";
  var audio = null;

  function soundOn() {
    try { return window.localStorage.getItem(KEY) !== "off"; } catch (e) { return true; }
  }

  function showToggle() {
    var button = document.getElementById("sound-toggle");
    if (!button) return;
    var on = soundOn();
    button.setAttribute("aria-pressed", on ? "true" : "false");
    button.title = on ? button.dataset.titleOn : button.dataset.titleOff;
    button.setAttribute("aria-label", button.title);
  }

  // Browsers start audio only after a gesture: the first click or key wakes it.
  function wake() {
    if (audio || !(window.AudioContext || window.webkitAudioContext)) return;
    audio = new (window.AudioContext || window.webkitAudioContext)();
  }
  document.addEventListener("pointerdown", wake, true);
  document.addEventListener("keydown", wake, true);

  // Notes as [frequency in Hz, start in s, length in s, volume].
  var SOUNDS = {
    placed: [[520, 0, 0.06, 0.18]],
    "your-turn": [[660, 0, 0.12, 0.22], [880, 0.12, 0.18, 0.22]],
    "time-low": [[990, 0, 0.08, 0.2]],
    finish: [[523, 0, 0.14, 0.25], [659, 0.14, 0.14, 0.25], [784, 0.28, 0.3, 0.25]],
  };

  function play(name) {
    var on = soundOn();
    document.dispatchEvent(new CustomEvent("okey-sound", { detail: { name: name, on: on } }));
    if (!on || !audio || !SOUNDS[name]) return;
    if (audio.state === "suspended") audio.resume();
    var now = audio.currentTime;
    SOUNDS[name].forEach(function (note) {
      var osc = audio.createOscillator();
      var gain = audio.createGain();
      osc.type = "sine";
      osc.frequency.value = note[0];
      gain.gain.setValueAtTime(0.0001, now + note[1]);
      gain.gain.exponentialRampToValueAtTime(note[3], now + note[1] + 0.01);
      gain.gain.exponentialRampToValueAtTime(0.0001, now + note[1] + note[2]);
      osc.connect(gain).connect(audio.destination);
      osc.start(now + note[1]);
      osc.stop(now + note[1] + note[2] + 0.02);
    });
  }

  document.addEventListener("click", function (event) {
    if (!event.target.closest || !event.target.closest("#sound-toggle")) return;
    try { window.localStorage.setItem(KEY, soundOn() ? "off" : "on"); } catch (e) { /* private mode */ }
    showToggle();
  });

  // ---------------------------------------------------------------- what the table says
  function board() {
    var el = document.getElementById("table-live");
    if (!el) return null;
    return {
      version: parseInt(el.dataset.version || "0", 10),
      hand: el.dataset.hand,
      mine: el.dataset.seat !== "" && el.dataset.turn === el.dataset.seat && el.dataset.phase !== "over",
      over: el.dataset.phase === "over",
    };
  }

  var seen = null;
  function listen() {
    var now = board();
    if (!now) return;
    var last = seen;
    seen = now;
    if (!last || now.hand !== last.hand || now.version <= last.version) return;
    if (now.over && !last.over) { play("finish"); return; }
    if (now.mine && !last.mine) { play("your-turn"); return; }
    play("placed");
  }

  // The last 5 seconds of the player's own timer: one short note each second.
  var lastSecond = null;
  function countdown() {
    var bar = document.querySelector(".countdown.is-mine[data-deadline]");
    if (!bar) { lastSecond = null; return; }
    var left = Math.ceil((Date.parse(bar.dataset.deadline) - Date.now()) / 1000);
    if (left > 0 && left <= 5 && left !== lastSecond) play("time-low");
    lastSecond = left;
  }

  // ---------------------------------------------------------------- motion
  function still() {
    return Boolean(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
  }

  // Where things stood as a frame arrived (taken before it is swapped in): the stand's tiles,
  // the pile, the top of each discard spot.
  var before = null;
  function snapshot() {
    var rack = {};
    document.querySelectorAll("#rack-area .rack .slot").forEach(function (slot, i) {
      var tile = slot.querySelector(".tile");
      if (tile) rack[i] = { code: tile.dataset.tile, box: tile.getBoundingClientRect() };
    });
    var pile = document.querySelector("#table-live .pile");
    var spots = {};
    document.querySelectorAll("#table-live .discard-spot").forEach(function (spot) {
      var top = topTile(spot);
      spots[spot.dataset.seat] = { code: top ? top.dataset.tile : null, box: spot.getBoundingClientRect() };
    });
    return { rack: rack, pile: pile ? pile.getBoundingClientRect() : null, spots: spots };
  }

  // The tile on top of a discard spot (inside its take button when the viewer may take it).
  function topTile(spot) {
    var button = spot.querySelector(".take-discard");
    if (button) return button.querySelector(".tile");
    var tiles = spot.querySelectorAll(":scope > .tile");
    return tiles.length ? tiles[tiles.length - 1] : null;
  }

  function slide(element, from) {
    if (!element || !from || !element.animate) return;
    var to = element.getBoundingClientRect();
    var dx = from.left + from.width / 2 - (to.left + to.width / 2);
    var dy = from.top + from.height / 2 - (to.top + to.height / 2);
    if (Math.abs(dx) + Math.abs(dy) < 4) return;
    element.animate(
      [{ transform: "translate(" + dx + "px, " + dy + "px)" }, { transform: "none" }],
      { duration: 280, easing: "ease-out" }
    );
  }

  function move() {
    var was = before;
    if (!was || still()) return;
    var now = snapshot();
    var seat = (document.getElementById("table-live") || { dataset: {} }).dataset.seat;
    // A tile new on the stand came from the pile, or from the discard spot it left.
    var had = {};
    Object.keys(was.rack).forEach(function (i) { had[was.rack[i].code] = (had[was.rack[i].code] || 0) + 1; });
    document.querySelectorAll("#rack-area .rack .slot").forEach(function (slot) {
      var tile = slot.querySelector(".tile");
      if (!tile) return;
      var code = tile.dataset.tile;
      if (had[code]) { had[code] -= 1; return; }
      var from = was.pile;
      Object.keys(was.spots).forEach(function (s) {
        var after = now.spots[s];
        if (was.spots[s].code === code && (!after || after.code !== code)) from = was.spots[s].box;
      });
      slide(tile, from);
    });
    // The tile now on top of the player's own discard spot came off their stand.
    var mine = document.querySelector('#table-live .discard-spot[data-seat="' + seat + '"]');
    var top = mine && topTile(mine);
    if (top && was.spots[seat] && was.spots[seat].code !== top.dataset.tile) {
      var left = Object.keys(was.rack).filter(function (i) { return was.rack[i].code === top.dataset.tile; });
      if (left.length) slide(top, was.rack[left[0]].box);
    }
  }

  document.addEventListener("htmx:wsBeforeMessage", function (event) {
    var message = event.detail && event.detail.message;
    if (typeof message === "string" && message.indexOf('id="table-live"') >= 0) before = snapshot();
  });
  document.addEventListener("htmx:wsAfterMessage", function (event) {
    var message = event.detail && event.detail.message;
    if (typeof message !== "string" || message.indexOf('id="table-live"') < 0) return;
    listen();
    move();
  });

  document.addEventListener("DOMContentLoaded", function () {
    showToggle();
    seen = board();
    setInterval(countdown, 250);
  });
})();
