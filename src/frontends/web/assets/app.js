// Live pages: on each ref change the server announces on /events, fetch this page again and swap its
// <main>. The server is the only renderer; this file is the only script (the CSP allows no other).
// Progressive enhancement only: every link and form works without it (sorting, filtering and paging are
// query parameters the server reads); here a filter box also hides the rows of the page shown as one types.
(function () {
  "use strict";
  var body = document.body;
  var busy = false, again = false;
  function filterRows(input) {
    var table = document.querySelector(input.getAttribute("data-filter"));
    if (!table) { return; }
    var q = input.value.trim().toLowerCase();
    table.querySelectorAll("tbody tr").forEach(function (tr) {
      if (tr.querySelector("td.empty")) { return; }
      tr.hidden = q !== "" && tr.textContent.toLowerCase().indexOf(q) < 0;
    });
  }
  document.addEventListener("input", function (e) {
    var t = e.target;
    if (t && t.hasAttribute && t.hasAttribute("data-filter")) { filterRows(t); }
  });
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("live");
        var cur = document.getElementById("live");
        if (fresh && cur) {
          // Keep what is being typed into a filter box (and its focus) across the swap.
          var active = document.activeElement;
          var typing = active && active.hasAttribute && active.hasAttribute("data-filter") && cur.contains(active) ? active : null;
          var adopted = document.adoptNode(fresh);
          if (typing) {
            var twin = adopted.querySelector("[data-filter='" + typing.getAttribute("data-filter") + "']");
            if (twin) { twin.replaceWith(typing); }
          }
          cur.replaceWith(adopted);
          if (typing) { typing.focus(); filterRows(typing); }
          body.dataset.updates = String(Number(body.dataset.updates || "0") + 1);
        }
      })
      .catch(function () {})
      .finally(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }
  if (!window.EventSource) { return; }
  var es = new EventSource("/events");
  es.onopen = function () { body.dataset.live = "open"; };
  es.onerror = function () { body.dataset.live = "reconnecting"; };
  es.addEventListener("refs", refresh);
})();
