// emergent-memory dashboard: progressive enhancement only (every page works without it).
// - instant search: a form with data-instant="URL" fetches that server-rendered, escaped
//   fragment as the user types and puts it in the element named by data-target;
// - confirm dialogs: a form with data-confirm="question" asks before it is sent;
// - a form with data-autosubmit is sent when one of its fields changes (the project choice);
// - "/" (outside a field) focuses the search box, or opens the search page where there is none.
// - the list's bulk form (data-bulk): "all on this page" ticks every row, and each action asks
//   first with its verb and count ("Delete 12 memories?"); confirmed, the form says so and
//   the count it showed (the server asks again on its own page if the count differs).
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

  function hidden(form, name, value) {
    var input = form.querySelector("input[type=hidden][name='" + name + "']");
    if (!input) {
      input = document.createElement("input");
      input.type = "hidden";
      input.name = name;
      form.appendChild(input);
    }
    input.value = value;
  }

  function bulk(form) {
    var page = form.querySelector("#select-page");
    var matching = form.querySelector("#select-matching");
    var rows = form.querySelectorAll("input.select[name=ids]");
    if (page) {
      page.addEventListener("change", function () {
        rows.forEach(function (row) { row.checked = page.checked; });
        if (page.checked && matching) matching.checked = false;
      });
    }
    if (matching && page) {
      matching.addEventListener("change", function () {
        if (matching.checked) page.checked = false;
      });
    }
    rows.forEach(function (row) {
      row.addEventListener("change", function () {
        if (!row.checked && page) page.checked = false;
      });
    });
    form.addEventListener("submit", function (event) {
      var button = event.submitter;
      if (!button || !button.getAttribute("data-verb")) return;
      var count;
      if (matching && matching.checked) {
        count = parseInt(form.getAttribute("data-matching"), 10);
      } else if (page && page.checked) {
        count = parseInt(form.getAttribute("data-on-page"), 10);
      } else {
        count = form.querySelectorAll("input.select[name=ids]:checked").length;
      }
      if (!count) return; // the server says to select some first
      var question = button.getAttribute("data-verb") + " " + count.toLocaleString("en") +
        (count === 1 ? " memory?" : " memories?");
      var note = button.getAttribute("data-note");
      if (!window.confirm(note ? question + " " + note : question)) {
        event.preventDefault();
        return;
      }
      hidden(form, "confirmed", "yes");
      hidden(form, "expected", String(count));
    });
  }

  document.addEventListener("keydown", slashToSearch);
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form[data-instant]").forEach(instant);
    document.querySelectorAll("form[data-confirm]").forEach(confirming);
    document.querySelectorAll("form[data-autosubmit]").forEach(function (form) {
      form.addEventListener("change", function () { form.submit(); });
    });
    document.querySelectorAll("form[data-bulk]").forEach(bulk);
  });
})();
