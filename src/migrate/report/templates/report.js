(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("#findings-table tbody tr"));
  var boxes = Array.prototype.slice.call(document.querySelectorAll(".filter-severity"));
  var category = document.getElementById("filter-category");
  var component = document.getElementById("filter-component");
  var search = document.getElementById("search");
  var shown = document.getElementById("shown");
  var rowsShown = document.getElementById("rows-shown");
  var texts = null;  // each row's text, read at the first search: opening the report stays fast
  function apply() {
    var severities = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    var cat = category ? category.value : "";
    var comp = component ? component.value : "";
    var needle = search ? search.value.trim().toLowerCase() : "";
    var count = 0, visibleRows = 0;
    if (needle && texts === null) { texts = rows.map(function (row) { return row.textContent.toLowerCase(); }); }
    rows.forEach(function (row, index) {
      var visible = severities.indexOf(row.dataset.severity) >= 0 &&
        (!cat || row.dataset.category === cat) &&
        (!comp || row.dataset.component === comp) &&
        (!needle || texts[index].indexOf(needle) >= 0);
      row.hidden = !visible;
      if (visible) { count += Number(row.dataset.count || 1); visibleRows += 1; }
    });
    if (shown) { shown.textContent = String(count); }
    if (rowsShown) { rowsShown.textContent = String(visibleRows); }
  }
  boxes.forEach(function (b) { b.addEventListener("change", apply); });
  [category, component].forEach(function (select) { if (select) { select.addEventListener("change", apply); } });
  if (search) { search.addEventListener("input", apply); }
  document.addEventListener("keydown", function (event) {
    var typing = /^(INPUT|SELECT|TEXTAREA)$/.test(document.activeElement ? document.activeElement.tagName : "");
    if (event.key === "/" && search && !typing) { event.preventDefault(); search.focus(); }
    if (event.key === "Escape" && search && document.activeElement === search) { search.value = ""; apply(); }
  });
  window.addEventListener("beforeprint", function () {
    Array.prototype.forEach.call(document.querySelectorAll("details"), function (d) { d.open = true; });
  });
  Array.prototype.forEach.call(document.querySelectorAll("button.copy"), function (button) {
    button.addEventListener("click", function () {
      var text = button.nextElementSibling.textContent;
      var done = function () { button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy"; }, 1500); };
      var fallback = function () {
        var area = document.createElement("textarea");
        area.value = text; document.body.appendChild(area); area.select();
        document.execCommand("copy"); document.body.removeChild(area); done();
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, fallback);
      } else {
        fallback();
      }
    });
  });
}());
