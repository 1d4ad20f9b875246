(function () {
  "use strict";
  var table = document.getElementById("fleet-table");
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var search = document.getElementById("search");
  var selects = { verdict: document.getElementById("filter-verdict"), "rocm-status": document.getElementById("filter-rocm"),
                  status: document.getElementById("filter-status") };
  var shown = document.getElementById("shown");
  function apply() {
    var needle = search.value.trim().toLowerCase();
    var count = 0;
    rows.forEach(function (row) {
      var visible = !needle || row.textContent.toLowerCase().indexOf(needle) >= 0;
      Object.keys(selects).forEach(function (name) {
        var wanted = selects[name].value;
        if (wanted && row.getAttribute("data-" + name) !== wanted) { visible = false; }
      });
      row.hidden = !visible;
      if (visible) { count += 1; }
    });
    shown.textContent = String(count);
  }
  search.addEventListener("input", apply);
  Object.keys(selects).forEach(function (name) { selects[name].addEventListener("change", apply); });
  var headers = Array.prototype.slice.call(table.querySelectorAll("th[data-sort]"));
  headers.forEach(function (th) {
    th.querySelector("button").addEventListener("click", function () {
      var key = "data-sort-" + th.getAttribute("data-sort");
      var numeric = th.getAttribute("data-type") === "number";
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      headers.forEach(function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      rows.sort(function (a, b) {
        var x = a.getAttribute(key), y = b.getAttribute(key);
        var order = numeric ? parseFloat(x) - parseFloat(y) : (x < y ? -1 : x > y ? 1 : 0);
        if (order === 0) {
          order = a.getAttribute("data-sort-name") < b.getAttribute("data-sort-name") ? -1 : 1;
          return order;
        }
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
}());
