"use strict";
(function () {
  var list = document.getElementById("groups");
  var search = document.getElementById("search");
  var sort = document.getElementById("sort");
  var said = document.getElementById("matches");
  if (!list || !search || !sort || !said) { return; }
  document.getElementById("tools").hidden = false;
  var groups = Array.prototype.slice.call(list.querySelectorAll("details.group"));
  var rows = Array.prototype.slice.call(list.querySelectorAll("tbody.finding"));
  var texts = null;
  var timer = 0;

  function apply() {
    var terms = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    if (texts === null) {
      texts = rows.map(function (row) { return row.textContent.toLowerCase(); });
    }
    var hits = 0;
    rows.forEach(function (row, i) {
      var ok = terms.every(function (t) { return texts[i].indexOf(t) !== -1; });
      row.classList.toggle("nomatch", !ok);
      if (ok) { hits += 1; }
    });
    groups.forEach(function (group) {
      var any = group.querySelector("tbody.finding:not(.nomatch)") !== null;
      group.classList.toggle("nomatch", !any);
      if (terms.length && any) { group.open = true; }
    });
    said.textContent = terms.length ? hits + " of " + rows.length + " findings match" : "";
    document.body.classList.toggle("searching", terms.length > 0);
  }

  function number(el, key) { return parseFloat(el.getAttribute(key)) || 0; }

  function reorder() {
    var bySaving = sort.value === "saving";
    groups.sort(function (a, b) {
      if (bySaving) {
        return number(b, "data-saving") - number(a, "data-saving") ||
          number(a, "data-order") - number(b, "data-order");
      }
      return number(a, "data-order") - number(b, "data-order");
    });
    groups.forEach(function (group) {
      list.appendChild(group);
      var table = group.querySelector("table.findings");
      var own = Array.prototype.slice.call(group.querySelectorAll("tbody.finding"));
      own.sort(function (a, b) {
        if (bySaving) {
          return number(b, "data-saving") - number(a, "data-saving") ||
            number(a, "data-order") - number(b, "data-order");
        }
        return number(a, "data-rank") - number(b, "data-rank") ||
          number(a, "data-order") - number(b, "data-order");
      });
      own.forEach(function (row) { table.appendChild(row); });
    });
  }

  search.addEventListener("input", function () {
    window.clearTimeout(timer);
    timer = window.setTimeout(apply, 120);
  });
  search.addEventListener("keydown", function (event) {
    if (event.key === "Enter") { window.clearTimeout(timer); apply(); }
  });
  sort.addEventListener("change", reorder);
})();
