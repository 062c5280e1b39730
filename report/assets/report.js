// planlint HTML report: zoom, fit and pan the operator graphs, select
// operators (click, keyboard, table row, finding), show their details and
// tooltips, sort operator tables.
(function () {
  "use strict";
  var views = new Map(); // .graph element -> {s, x, y}
  var current = null;
  var MIN = 0.05, MAX = 3;

  function canvas(graph) { return graph.querySelector("g.canvas"); }
  function size(graph) { return { w: +graph.getAttribute("data-width"), h: +graph.getAttribute("data-height") }; }

  function apply(graph) {
    var v = views.get(graph);
    canvas(graph).setAttribute("transform", "translate(" + v.x.toFixed(1) + " " + v.y.toFixed(1) + ") scale(" + v.s.toFixed(4) + ")");
    var label = graph.parentNode.querySelector(".zoom-level");
    if (label) { label.textContent = Math.round(v.s * 100) + "%"; }
  }

  function fitScale(graph) {
    var sz = size(graph);
    return Math.min(graph.clientWidth / sz.w, graph.clientHeight / sz.h, 1);
  }

  function fit(graph) {
    var sz = size(graph), s = fitScale(graph);
    views.set(graph, { s: s, x: (graph.clientWidth - sz.w * s) / 2, y: (graph.clientHeight - sz.h * s) / 2 });
    apply(graph);
  }

  // zoomAt scales by factor keeping the point (px, py) of the viewport still.
  function zoomAt(graph, factor, px, py) {
    var v = views.get(graph);
    var s = Math.min(MAX, Math.max(MIN, v.s * factor));
    if (px === undefined) { px = graph.clientWidth / 2; py = graph.clientHeight / 2; }
    v.x = px - (px - v.x) * s / v.s;
    v.y = py - (py - v.y) * s / v.s;
    v.s = s;
    apply(graph);
  }

  // The first view: actual size for plans that fit, else as small as
  // needed but no smaller than 80% (still legible), from the root at the
  // top left; the viewport is no taller than the graph.
  function initial(graph) {
    var s = Math.max(fitScale(graph), 0.8);
    graph.style.height = Math.min(size(graph).h * s + 2, 560) + "px";
    views.set(graph, { s: s, x: 0, y: 0 });
    apply(graph);
  }

  // reveal pans so the operator is in view, centring it when it is not.
  function reveal(node) {
    var graph = node.closest(".graph");
    if (!graph) { return; }
    var v = views.get(graph);
    var m = /translate\(([-\d.]+) ([-\d.]+)\)/.exec(node.getAttribute("transform"));
    var r = node.querySelector("rect.box");
    var nx = +m[1], ny = +m[2], nw = +r.getAttribute("width"), nh = +r.getAttribute("height");
    var left = v.x + nx * v.s, top = v.y + ny * v.s;
    if (left < 0 || top < 0 || left + nw * v.s > graph.clientWidth || top + nh * v.s > graph.clientHeight) {
      v.x = graph.clientWidth / 2 - (nx + nw / 2) * v.s;
      v.y = graph.clientHeight / 2 - (ny + nh / 2) * v.s;
      apply(graph);
    }
  }

  function select(id, scroll) {
    var node = document.getElementById(id);
    if (!node) { return; }
    if (current) {
      current.classList.remove("selected");
      var old = document.getElementById("d-" + current.id);
      if (old) { old.hidden = true; }
      document.querySelectorAll("tr.selected").forEach(function (tr) { tr.classList.remove("selected"); });
    }
    current = node;
    node.classList.add("selected");
    var details = document.getElementById("d-" + id);
    if (details) {
      details.hidden = false;
      var panel = details.closest(".panel");
      var hint = panel && panel.querySelector(".hint");
      if (hint) { hint.hidden = true; }
      var side = details.closest("aside");
      if (side) { side.scrollTop = 0; }
    }
    document.querySelectorAll('tr[data-target="' + id + '"]').forEach(function (tr) { tr.classList.add("selected"); });
    reveal(node);
    if (scroll) {
      var graph = node.closest(".graph");
      if (graph && graph.scrollIntoView) { graph.scrollIntoView({ block: "nearest" }); }
    }
  }

  function showFinding(id) {
    var li = document.getElementById(id);
    if (!li) { return; }
    li.scrollIntoView({ block: "nearest" });
    li.classList.add("flash");
    setTimeout(function () { li.classList.remove("flash"); }, 1200);
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

  // sortBy sorts a table by a column: numbers largest first on the first
  // click, text A to Z; a second click reverses.
  function sortBy(th) {
    var table = th.closest("table");
    var body = table.tBodies[0];
    var col = Array.prototype.indexOf.call(th.parentNode.children, th);
    var numeric = th.getAttribute("data-type") === "num";
    var asc;
    if (th.classList.contains("asc")) { asc = false; } else if (th.classList.contains("desc")) { asc = true; } else { asc = !numeric; }
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
    var zoom = t.closest("[data-zoom]");
    if (zoom) {
      var graph = zoom.closest(".plan-block").querySelector(".graph");
      var how = zoom.getAttribute("data-zoom");
      if (how === "fit") { fit(graph); } else if (how === "one") { zoomAt(graph, 1 / views.get(graph).s); } else { zoomAt(graph, how === "in" ? 1.25 : 0.8); }
      return;
    }
    var g = t.closest("g.node");
    if (g) { if (!g.dataset.dragged) { select(g.id, false); g.focus({ preventScroll: true }); } return; }
    var fl = t.closest("[data-finding]");
    if (fl) { e.preventDefault(); showFinding(fl.getAttribute("data-finding")); return; }
    var link = t.closest("[data-target]");
    if (link && link.tagName !== "TR") { e.preventDefault(); select(link.getAttribute("data-target"), true); return; }
    var th = t.closest("table.ops th");
    if (th) { sortBy(th); return; }
    var tr = t.closest("table.ops tbody tr");
    if (tr) { select(tr.getAttribute("data-target"), true); }
  });

  function move(node, key) {
    var to = null;
    if (key === "ArrowLeft") { to = node.getAttribute("data-parent"); }
    if (key === "ArrowRight") { to = (node.getAttribute("data-children") || "").split(" ")[0]; }
    if (key === "ArrowUp" || key === "ArrowDown") {
      var parent = document.getElementById(node.getAttribute("data-parent") || "");
      var sibs = parent ? (parent.getAttribute("data-children") || "").split(" ") : [];
      var i = sibs.indexOf(node.id) + (key === "ArrowUp" ? -1 : 1);
      if (i >= 0 && i < sibs.length) { to = sibs[i]; }
    }
    var next = to && document.getElementById(to);
    if (next) { select(next.id, false); next.focus({ preventScroll: true }); }
  }

  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (!t.closest) { return; }
    var graph = t.closest(".graph");
    if (!graph) { return; }
    if (e.key === "+" || e.key === "=") { zoomAt(graph, 1.25); e.preventDefault(); return; }
    if (e.key === "-") { zoomAt(graph, 0.8); e.preventDefault(); return; }
    if (e.key === "0") { fit(graph); e.preventDefault(); return; }
    if (e.key === "1") { zoomAt(graph, 1 / views.get(graph).s); e.preventDefault(); return; }
    var node = t.closest("g.node");
    if (!node) { return; }
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(node.id, false); return; }
    if (e.key.indexOf("Arrow") === 0) { e.preventDefault(); move(node, e.key); }
  });

  // Pan by dragging; zoom with Ctrl (or ⌘) and the wheel.
  var drag = null;
  document.addEventListener("pointerdown", function (e) {
    var graph = e.target.closest && e.target.closest(".graph");
    if (!graph || e.button !== 0) { return; }
    var v = views.get(graph);
    drag = { graph: graph, x: e.clientX, y: e.clientY, vx: v.x, vy: v.y, moved: false, node: e.target.closest("g.node") };
  });
  document.addEventListener("pointermove", function (e) {
    if (!drag) { return; }
    var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) { return; }
    drag.moved = true;
    drag.graph.classList.add("panning");
    var v = views.get(drag.graph);
    v.x = drag.vx + dx; v.y = drag.vy + dy;
    apply(drag.graph);
  });
  document.addEventListener("pointerup", function () {
    if (!drag) { return; }
    drag.graph.classList.remove("panning");
    if (drag.moved && drag.node) { var n = drag.node; n.dataset.dragged = "1"; setTimeout(function () { delete n.dataset.dragged; }, 0); }
    drag = null;
  });
  document.addEventListener("wheel", function (e) {
    var graph = e.target.closest && e.target.closest(".graph");
    if (!graph || !(e.ctrlKey || e.metaKey)) { return; }
    e.preventDefault();
    var r = graph.getBoundingClientRect();
    zoomAt(graph, e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });

  // Tooltips for operators.
  var tip = document.getElementById("tip");
  document.addEventListener("mouseover", function (e) {
    var g = e.target.closest && e.target.closest("g.node");
    if (!g || !tip) { return; }
    tip.textContent = g.getAttribute("data-tip");
    tip.hidden = false;
  });
  document.addEventListener("mousemove", function (e) {
    if (!tip || tip.hidden) { return; }
    var x = e.clientX + 14, y = e.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) { x = Math.max(0, e.clientX - tip.offsetWidth - 10); }
    if (y + tip.offsetHeight > window.innerHeight) { y = Math.max(0, e.clientY - tip.offsetHeight - 10); }
    tip.style.left = x + "px"; tip.style.top = y + "px";
  });
  document.addEventListener("mouseout", function (e) {
    var g = e.target.closest && e.target.closest("g.node");
    if (g && tip && !(e.relatedTarget && g.contains(e.relatedTarget))) { tip.hidden = true; }
  });

  // An address naming an operator or a finding opens it.
  function follow() {
    if (location.hash.length < 2) { return; }
    var id = decodeURIComponent(location.hash.slice(1));
    var el = document.getElementById(id);
    if (el && el.matches("g.node")) { select(id, true); } else if (el && el.matches("li.finding")) { showFinding(id); }
  }
  document.querySelectorAll(".graph").forEach(initial);
  window.addEventListener("hashchange", follow);
  follow();
  document.body.setAttribute("data-ready", "1");
})();
