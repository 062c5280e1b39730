// planlint HTML report: select operators, show their details, sort tables.
(function () {
  "use strict";
  var current = null;

  function select(id, scroll) {
    var node = document.getElementById(id);
    if (!node) { return; }
    if (current) {
      current.classList.remove("selected");
      var old = document.getElementById("d-" + current.id);
      if (old) { old.hidden = true; }
      document.querySelectorAll('tr.selected').forEach(function (tr) { tr.classList.remove("selected"); });
    }
    current = node;
    node.classList.add("selected");
    var details = document.getElementById("d-" + id);
    if (details) { details.hidden = false; }
    var hint = document.querySelector("#panel .hint");
    if (hint) { hint.hidden = true; }
    document.querySelectorAll('tr[data-target="' + id + '"]').forEach(function (tr) { tr.classList.add("selected"); });
    if (scroll && node.scrollIntoView) {
      node.scrollIntoView({ block: "center", inline: "center", behavior: "smooth" });
    }
  }

  function cellValue(tr, col, numeric) {
    var td = tr.children[col];
    if (!td) { return numeric ? -Infinity : ""; }
    if (numeric) {
      var v = parseFloat(td.getAttribute("data-v"));
      return isNaN(v) ? -Infinity : v;
    }
    return td.textContent.toLowerCase();
  }

  function sortBy(th) {
    var table = th.closest("table");
    var body = table.tBodies[0];
    var col = Array.prototype.indexOf.call(th.parentNode.children, th);
    var numeric = th.getAttribute("data-type") === "num";
    var asc = !th.classList.contains("asc");
    th.parentNode.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
    th.classList.add(asc ? "asc" : "desc");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, col, numeric), y = cellValue(b, col, numeric);
      if (x < y) { return asc ? -1 : 1; }
      if (x > y) { return asc ? 1 : -1; }
      return 0;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  document.addEventListener("click", function (e) {
    var t = e.target;
    if (!t.closest) { return; }
    var g = t.closest("g.node");
    if (g) { select(g.id, false); return; }
    var link = t.closest("[data-target]");
    if (link && link.tagName !== "TR") { e.preventDefault(); select(link.getAttribute("data-target"), true); return; }
    var th = t.closest("table.ops th");
    if (th) { sortBy(th); return; }
    var tr = t.closest("table.ops tbody tr");
    if (tr) { select(tr.getAttribute("data-target"), true); }
  });

  document.addEventListener("keydown", function (e) {
    if ((e.key === "Enter" || e.key === " ") && e.target.matches && e.target.matches("g.node")) {
      e.preventDefault();
      select(e.target.id, false);
    }
  });

  if (location.hash.length > 1) { select(decodeURIComponent(location.hash.slice(1)), true); }
  document.body.setAttribute("data-ready", "1");
})();
