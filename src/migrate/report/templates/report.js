(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("#findings-table tbody tr"));
  var boxes = Array.prototype.slice.call(document.querySelectorAll(".filter-severity"));
  var category = document.getElementById("filter-category");
  var search = document.getElementById("search");
  var shown = document.getElementById("shown");
  function apply() {
    var severities = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    var cat = category ? category.value : "";
    var needle = search ? search.value.trim().toLowerCase() : "";
    var count = 0;
    rows.forEach(function (row) {
      var visible = severities.indexOf(row.dataset.severity) >= 0 &&
        (!cat || row.dataset.category === cat) &&
        (!needle || row.textContent.toLowerCase().indexOf(needle) >= 0);
      row.hidden = !visible;
      if (visible) { count += 1; }
    });
    if (shown) { shown.textContent = String(count); }
  }
  boxes.forEach(function (b) { b.addEventListener("change", apply); });
  if (category) { category.addEventListener("change", apply); }
  if (search) { search.addEventListener("input", apply); }
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
