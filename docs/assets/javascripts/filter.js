/* The filter box of the index and hub pages (templates/_macros.md.j2, filter_box): keeps the
   table rows that contain every word typed, hides a group whose tables are left empty, and says
   how many rows remain. Without script the box stays hidden and every row shows. */
(function () {
  "use strict";

  function words(text) {
    return text.toLowerCase().split(/\s+/).filter(Boolean);
  }

  function setUp(box) {
    var input = box.querySelector("input");
    var count = box.querySelector(".fe-filter__count");
    var article = box.closest("article") || document.body;
    var rows = Array.prototype.slice.call(article.querySelectorAll(".fe-table tbody tr"));
    var texts = rows.map(function (row) { return row.textContent.toLowerCase(); });
    var groups = Array.prototype.slice.call(article.querySelectorAll(".fe-filter-group"));
    var tables = Array.prototype.slice.call(article.querySelectorAll(".fe-table"));
    box.hidden = false;

    function apply() {
      var wanted = words(input.value);
      var shown = 0;
      rows.forEach(function (row, index) {
        var keep = wanted.every(function (word) { return texts[index].indexOf(word) !== -1; });
        row.hidden = !keep;
        if (keep) shown += 1;
      });
      tables.forEach(function (table) {
        table.hidden = wanted.length > 0 && !table.querySelector("tbody tr:not([hidden])");
      });
      groups.forEach(function (group) {
        group.hidden = wanted.length > 0 && !group.querySelector("tbody tr:not([hidden])");
      });
      count.textContent = wanted.length ? shown + " of " + rows.length + " rows" : "";
    }

    input.addEventListener("input", apply);
    if (input.value) apply();  // a value the browser restored on "back"
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll("[data-fe-filter]"), setUp);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
