// emergent-memory dashboard: progressive enhancement only (every page works without it).
// - instant search: a form with data-instant="URL" fetches that server-rendered, escaped
//   fragment as the user types and puts it in the element named by data-target;
// - confirm dialogs: a form with data-confirm="question" asks before it is sent;
// - a form with data-autosubmit is sent when one of its fields changes (the project choice);
// - "/" (outside a field) focuses the search box, or opens the search page where there is none.
(function () {
  "use strict";

  function instant(form) {
    var url = form.getAttribute("data-instant");
    var target = document.getElementById(form.getAttribute("data-target"));
    if (!url || !target) return;
    var timer = null;
    var latest = 0;
    function run() {
      var params = new URLSearchParams(new FormData(form));
      var ticket = ++latest;
      fetch(url + "?" + params.toString(), {
        credentials: "same-origin",
        headers: { "Accept": "text/html" }
      }).then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      }).then(function (html) {
        if (ticket !== latest) return; // an older answer arriving late
        target.innerHTML = html; // server-rendered with every value escaped
        history.replaceState(null, "", form.getAttribute("action") + "?" + params.toString());
      }).catch(function () { /* the form still submits normally */ });
    }
    form.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(run, 200);
    });
    form.addEventListener("change", function () {
      clearTimeout(timer);
      run();
    });
  }

  function confirming(form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) event.preventDefault();
    });
  }

  function slashToSearch(event) {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    var box = document.getElementById("q");
    var link = document.querySelector('nav[aria-label="Dashboard"] a[href$="/search"]');
    if (!box && !link) return; // signed out: no search to go to
    event.preventDefault();
    if (box) box.focus();
    else window.location.assign(link.getAttribute("href"));
  }

  document.addEventListener("keydown", slashToSearch);
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form[data-instant]").forEach(instant);
    document.querySelectorAll("form[data-confirm]").forEach(confirming);
    document.querySelectorAll("form[data-autosubmit]").forEach(function (form) {
      form.addEventListener("change", function () { form.submit(); });
    });
  });
})();
