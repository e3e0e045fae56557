(function () {
  "use strict";
  function openDetails(id, scroll) {
    var el = document.getElementById(id);
    if (!el || el.tagName !== "DETAILS") { return; }
    el.open = true;
    if (scroll) { el.scrollIntoView({block: "start"}); }
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest("a[data-open]");
    if (link) { openDetails(link.getAttribute("data-open"), false); }
    var toggle = event.target.closest("button[data-toggle-all]");
    if (toggle) {
      var open = toggle.getAttribute("data-toggle-all") === "open";
      document.querySelectorAll("details.lane").forEach(function (d) { d.open = open; });
    }
  });
  function fromHash() {
    if (location.hash.length > 1) { openDetails(decodeURIComponent(location.hash.slice(1)), true); }
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();

  // The matrix filter: text (id, title, library, tags), library, verdict ("attention": any cell not ok). A library
  // heading row stays only while one of its cases does.
  function rowMatches(row, text, library, verdict, ok) {
    if (text && (row.getAttribute("data-text") || "").indexOf(text) === -1) { return false; }
    if (library && row.getAttribute("data-library") !== library) { return false; }
    if (!verdict) { return true; }
    return Array.prototype.some.call(row.querySelectorAll("td.cell"), function (cell) {
      var v = cell.getAttribute("data-verdict");
      return verdict === "attention" ? ok.indexOf(v) === -1 : v === verdict;
    });
  }
  function applyFilter(form) {
    var table = document.getElementById(form.getAttribute("data-for"));
    if (!table || !table.tBodies.length) { return; }
    var text = form.elements.text.value.trim().toLowerCase();
    var library = form.elements.library ? form.elements.library.value : "";
    var verdict = form.elements.verdict.value;
    var ok = (form.getAttribute("data-ok") || "").split(" ");
    var shown = 0, total = 0, heading = null, headingKept = false;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      if (row.classList.contains("group")) {
        if (heading) { heading.hidden = !headingKept; }
        heading = row;
        headingKept = false;
        return;
      }
      var match = rowMatches(row, text, library, verdict, ok);
      row.hidden = !match;
      total += 1;
      if (match) { shown += 1; headingKept = true; }
    });
    if (heading) { heading.hidden = !headingKept; }
    form.elements.shown.value = shown === total ? total + " cases" : shown + " of " + total + " cases";
  }
  document.querySelectorAll("form.filter[data-for]").forEach(function (form) {
    form.hidden = false;
    form.addEventListener("input", function () { applyFilter(form); });
    form.addEventListener("change", function () { applyFilter(form); });
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    applyFilter(form);
  });
}());
