// EngramDB dashboard: pan, zoom and click-to-open on the graph the server drew (svg#graph).
// It changes only the drawing's viewBox and a class; the nodes' places come from the server.
(function () {
  "use strict";
  var NEAR = 0.7;  // from this many screen pixels per unit, every node's name is shown (below it, only hubs')
  var LARGEST = 1.3;  // a small graph is not drawn larger than this many pixels per unit

  function box(svg) { return svg.getAttribute("viewBox").split(" ").map(Number); }

  function show(svg, b) {
    svg.setAttribute("viewBox", b.map(function (v) { return v.toFixed(1); }).join(" "));
    var rect = svg.getBoundingClientRect();
    svg.classList.toggle("far", rect.width / b[2] < NEAR);
  }

  // The server's box around every node, widened so that a small graph keeps its names at their size.
  function fitted(svg) {
    var b = svg.getAttribute("data-fit").split(" ").map(Number);
    var rect = svg.getBoundingClientRect();
    var scale = Math.min(rect.width / b[2], rect.height / b[3]);
    if (scale <= LARGEST) { return b; }
    var w = rect.width / LARGEST;
    var h = rect.height / LARGEST;
    return [b[0] - (w - b[2]) / 2, b[1] - (h - b[3]) / 2, w, h];
  }

  // Zoom by ``factor`` (below 1: in) keeping the drawing's point under (px, py) of the frame in place.
  function zoom(svg, factor, px, py) {
    var b = box(svg);
    var rect = svg.getBoundingClientRect();
    var fx = rect.width ? px / rect.width : 0.5;
    var fy = rect.height ? py / rect.height : 0.5;
    var w = Math.max(60, b[2] * factor);
    var h = b[3] * w / b[2];
    show(svg, [b[0] + (b[2] - w) * fx, b[1] + (b[3] - h) * fy, w, h]);
  }

  function focusOn(svg, node) {
    var x = Number(node.getAttribute("data-x"));
    var y = Number(node.getAttribute("data-y"));
    var b = box(svg);
    var w = Math.min(b[2], 700);
    var h = b[3] * w / b[2];
    show(svg, [x - w / 2, y - h / 2, w, h]);
  }

  function start(svg) {
    if (svg.hasAttribute("data-ready")) { return; }
    svg.setAttribute("data-ready", "");
    var fit = fitted(svg);
    var drag = null;
    show(svg, fit);
    var wanted = svg.getAttribute("data-focus");
    var target = wanted ? document.getElementById("node-" + wanted) : null;
    if (target) { focusOn(svg, target); }

    svg.addEventListener("wheel", function (event) {
      event.preventDefault();
      var rect = svg.getBoundingClientRect();
      zoom(svg, event.deltaY < 0 ? 0.8 : 1.25, event.clientX - rect.left, event.clientY - rect.top);
    }, { passive: false });

    svg.addEventListener("pointerdown", function (event) {
      drag = { x: event.clientX, y: event.clientY, b: box(svg), moved: false };
      svg.setPointerCapture(event.pointerId);
    });
    svg.addEventListener("pointermove", function (event) {
      if (!drag) { return; }
      var dx = event.clientX - drag.x;
      var dy = event.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; }
      if (!drag.moved) { return; }
      var scale = drag.b[2] / (svg.getBoundingClientRect().width || 1);
      show(svg, [drag.b[0] - dx * scale, drag.b[1] - dy * scale, drag.b[2], drag.b[3]]);
    });
    svg.addEventListener("pointerup", function (event) {
      var moved = drag && drag.moved;
      drag = null;
      svg.releasePointerCapture(event.pointerId);
      if (moved) { return; }
      var hit = document.elementFromPoint(event.clientX, event.clientY);
      var node = hit ? hit.closest("[data-href]") : null;
      if (node) { location.assign(node.getAttribute("data-href")); }
    });

    function centre(factor) {
      var frame = svg.getBoundingClientRect();
      zoom(svg, factor, frame.width / 2, frame.height / 2);
    }
    document.getElementById("zoom-in").addEventListener("click", function () { centre(0.7); });
    document.getElementById("zoom-out").addEventListener("click", function () { centre(1 / 0.7); });
    document.getElementById("zoom-fit").addEventListener("click", function () { show(svg, fit); });
  }

  function found() {
    var svg = document.getElementById("graph");
    if (svg) { start(svg); }
  }

  document.addEventListener("DOMContentLoaded", found);
  document.addEventListener("htmx:afterSettle", found);
}());
