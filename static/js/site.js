// Okey platform: site-wide behaviour. Loaded after htmx and its WebSocket extension.
(function () {
  "use strict";

  // htmx under the Content-Security-Policy: no eval (hx-on, js: values), no <style> element of
  // its own (site.css styles .htmx-indicator), no scripts run from swapped-in markup. Set
  // before the page is ready, when htmx reads its config and would add the <style>.
  htmx.config.allowEval = false;
  htmx.config.includeIndicatorStyles = false;
  htmx.config.allowScriptTags = false;

  // The ws extension queues messages sent while the socket is down and replays them on
  // reconnect, where they may be stale moves: drop the queue whenever a socket opens.
  // Views that show game state re-fetch it on htmx:wsOpen.
  document.addEventListener("htmx:wsOpen", function (event) {
    var socket = event.detail && event.detail.socketWrapper;
    if (socket && socket.queue) {
      socket.queue.length = 0;
    }
  });

  // A private table's invite link: "Copy" puts it on the clipboard (and says so on the
  // button), "Share" hands it to the device's share sheet where there is one.
  function inviteOf(button) {
    var box = button.closest(".invite");
    var field = box && box.querySelector("[data-invite]");
    return field ? field.value : "";
  }
  function showShare() {
    document.querySelectorAll("[data-share-invite]").forEach(function (b) {
      b.hidden = typeof navigator.share !== "function";
    });
  }
  document.addEventListener("DOMContentLoaded", showShare);
  document.addEventListener("htmx:afterSettle", showShare);
  document.addEventListener("click", function (event) {
    var copy = event.target.closest && event.target.closest("[data-copy-invite]");
    if (copy) {
      var url = inviteOf(copy);
      var done = function () {
        copy.dataset.label = copy.dataset.label || copy.textContent;
        copy.textContent = copy.dataset.copied;
        setTimeout(function () { copy.textContent = copy.dataset.label; }, 2000);
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(url).then(done, function () {});
      } else {
        var field = copy.closest(".invite").querySelector("[data-invite]");
        field.select();
        if (document.execCommand("copy")) done();
      }
      return;
    }
    var share = event.target.closest && event.target.closest("[data-share-invite]");
    if (share && typeof navigator.share === "function") {
      navigator.share({ title: share.dataset.title, url: inviteOf(share) }).catch(function () {});
    }
  });

  // A <select data-autosubmit> (the language menu) sends its form when changed: the
  // Content-Security-Policy runs no inline onchange handler.
  document.addEventListener("change", function (event) {
    var field = event.target;
    if (field.matches && field.matches("select[data-autosubmit]") && field.form) {
      field.form.submit();
    }
  });

  // The New-table form: an option the rules ignore under another option's choice (a number
  // of hands under a countdown) carries data-idle-when="name=value" and is hidden while that
  // value is chosen (the server ignores it then too).
  function showIdleOptions(form) {
    form.querySelectorAll("[data-idle-when]").forEach(function (row) {
      var rule = row.dataset.idleWhen.split("=");
      var field = form.elements[rule[0]];
      row.hidden = Boolean(field) && field.value === rule[1];
    });
  }
  document.addEventListener("change", function (event) {
    var form = event.target.form;
    if (form && form.querySelector("[data-idle-when]")) showIdleOptions(form);
  });
})();
