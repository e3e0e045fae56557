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
}());
