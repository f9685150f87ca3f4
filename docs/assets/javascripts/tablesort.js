/* Sortable tables: click (or press Enter on) a column header to sort by it; again to reverse.
   Small and local on purpose: the site loads nothing from other hosts. Works with Material's
   instant navigation, which swaps pages without reloading scripts. */
(function () {
  "use strict";

  /* A cell's sort value: the `data-sort` the page gives (a severity's rank), else its number or text. */
  function cellValue(row, index) {
    var cell = row.cells[index];
    var given = cell && cell.querySelector("[data-sort]");
    if (given) return Number(given.getAttribute("data-sort"));
    var text = cell ? cell.textContent.trim() : "";
    var number = Number(text.replace(/,/g, ""));
    return text !== "" && !isNaN(number) ? number : text.toLowerCase();
  }

  function sortBy(table, header, index) {
    var body = table.tBodies[0];
    if (!body) return;
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      var order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(header.parentNode.cells, function (cell) { cell.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }

  function enable(table) {
    if (table.dataset.sortable || !table.tHead || !table.tBodies.length || table.tBodies[0].rows.length < 2) return;
    table.dataset.sortable = "true";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, index) {
      header.tabIndex = 0;
      header.classList.add("fe-sortable");
      header.title = "Sort by this column";
      header.addEventListener("click", function () { sortBy(table, header, index); });
      header.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(table, header, index); }
      });
    });
  }

  function enableAll() {
    Array.prototype.forEach.call(document.querySelectorAll("article table"), enable);
  }

  if (typeof document$ !== "undefined") document$.subscribe(enableAll);
  else document.addEventListener("DOMContentLoaded", enableAll);
})();
