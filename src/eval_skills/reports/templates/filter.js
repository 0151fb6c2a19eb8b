(function () {
  "use strict";
  var text = document.getElementById("filter-text");
  var status = document.getElementById("filter-status");
  var skill = document.getElementById("filter-skill");
  var count = document.getElementById("filter-count");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#tasks tbody tr"));
  if (!text || !status || !skill || !count) { return; }
  function apply() {
    var needle = text.value.trim().toLowerCase();
    var shown = 0;
    rows.forEach(function (row) {
      var ok = (!status.value || row.getAttribute("data-status") === status.value) &&
               (!skill.value || row.getAttribute("data-skill") === skill.value) &&
               (!needle || row.textContent.toLowerCase().indexOf(needle) !== -1);
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " task results shown";
  }
  [text, status, skill].forEach(function (el) {
    el.addEventListener("input", apply);
    el.addEventListener("change", apply);
  });
  document.getElementById("filters").hidden = false;
  apply();
}());
