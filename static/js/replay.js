// Hand replay (templates/games/hand_replay.html): the arrow keys, Home and End click the
// First/Previous/Next/Last links of #replay-step, which htmx turns into a fragment swap.
(function () {
  "use strict";
  var KEYS = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" };
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.shiftKey) return;
    if (event.target.closest && event.target.closest("input, textarea, select, [contenteditable]")) return;
    var which = KEYS[event.key];
    if (!which) return;
    var link = document.querySelector('#replay-step a[data-replay="' + which + '"]');
    if (!link) return;
    event.preventDefault();
    // A held key repeats faster than htmx takes over a freshly swapped link (it does so as
    // the swap settles): process it now, or the click would load the whole page.
    if (window.htmx) window.htmx.process(link);
    link.click();
  });
})();
