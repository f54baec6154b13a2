// Hand replay (templates/games/hand_replay.html): the arrow keys, Home and End go to the
// previous, next, first and last step by clicking that step's link in the move list of
// #replay-step, which htmx turns into a fragment swap that pushes the step's address.
//
// Presses faster than a step loads are not lost: they move the step wanted, and when the
// step being loaded is in, the page goes on to the one wanted (four quick → are four steps).
(function () {
  "use strict";
  var KEYS = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" };
  var wanted = null; // the step the keys asked for, while another loads
  var loading = false;

  function box() { return document.getElementById("replay-step"); }

  function go(step) {
    var link = document.querySelector('#replay-step a[data-step-link="' + step + '"]');
    if (!link) { wanted = null; return; }
    loading = true;
    // htmx takes over a freshly swapped link as the swap settles: process it now, or the
    // click would load the whole page.
    if (window.htmx) window.htmx.process(link);
    link.click();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.shiftKey) return;
    if (event.target.closest && event.target.closest("input, textarea, select, [contenteditable]")) return;
    var which = KEYS[event.key];
    var step = box();
    if (!which || !step) return;
    event.preventDefault();
    var last = parseInt(step.dataset.last, 10);
    var from = wanted !== null ? wanted : parseInt(step.dataset.step, 10);
    var to = { prev: from - 1, next: from + 1, first: 0, last: last }[which];
    to = Math.max(0, Math.min(last, to));
    if (to === from) return;
    wanted = to;
    if (!loading) go(to);
  });

  document.addEventListener("htmx:afterSettle", function () {
    var step = box();
    if (!loading || !step) return;
    loading = false;
    if (wanted !== null && parseInt(step.dataset.step, 10) !== wanted) go(wanted);
    else wanted = null;
  });

  // A step that failed to load ends the run of presses: the page shows where it is.
  ["htmx:responseError", "htmx:sendError"].forEach(function (name) {
    document.addEventListener(name, function () { loading = false; wanted = null; });
  });
})();
