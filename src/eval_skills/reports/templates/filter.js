(function () {
  "use strict";
  // The task table's filter. A page of 10,000 results stays usable: at most LIMIT matching rows are shown
  // until "Show all" is pressed (laying out every row is what costs), each row's text is read once, and a
  // row's hidden state is touched only when it changes.
  var LIMIT = 500;
  var text = document.getElementById("filter-text");
  var status = document.getElementById("filter-status");
  var skill = document.getElementById("filter-skill");
  var count = document.getElementById("filter-count");
  var more = document.getElementById("filter-more");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#tasks tbody tr"));
  if (!text || !status || !skill || !count || !more) { return; }
  var texts = null;
  var showAll = false;
  function apply() {
    var needle = text.value.trim().toLowerCase();
    if (needle && texts === null) {
      texts = rows.map(function (row) { return row.textContent.toLowerCase(); });
    }
    var matching = 0;
    var shown = 0;
    rows.forEach(function (row, index) {
      var ok = (!status.value || row.getAttribute("data-status") === status.value) &&
               (!skill.value || row.getAttribute("data-skill") === skill.value) &&
               (!needle || texts[index].indexOf(needle) !== -1);
      if (ok) { matching += 1; }
      var visible = ok && (showAll || matching <= LIMIT);
      if (visible) { shown += 1; }
      if (row.hidden === visible) { row.hidden = !visible; }
    });
    if (shown < matching) {
      count.textContent = shown + " of " + matching + " matching task results shown (" + rows.length + " in all)";
      more.textContent = "Show all " + matching;
      more.hidden = false;
    } else {
      count.textContent = shown + " of " + rows.length + " task results shown";
      more.hidden = true;
    }
  }
  [text, status, skill].forEach(function (el) {
    el.addEventListener("input", apply);
    el.addEventListener("change", apply);
  });
  more.addEventListener("click", function () { showAll = true; apply(); });
  document.getElementById("filters").hidden = false;
  apply();
}());
