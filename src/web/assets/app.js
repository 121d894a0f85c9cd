// Live pages: on each ref change the server announces on /events, fetch this page again and swap its
// <main>. The server is the only renderer; this file is the only script (the CSP allows no other).
(function () {
  "use strict";
  var body = document.body;
  var busy = false, again = false;
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
          cur.replaceWith(document.adoptNode(fresh));
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
