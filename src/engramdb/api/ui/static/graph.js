// EngramDB dashboard: draws the graph the server placed (JSON in its data-graph) on canvas#graph;
// pans, zooms and opens a node on click; fills the nodes' table when it is first opened. Every name
// is written as canvas text or as textContent, never as markup. The view (the part of the drawing
// shown, as x y width height) is kept in the canvas's data-view; data-drawn says how many nodes the
// last frame drew.
(function () {
  "use strict";
  var NEAR = 0.7;  // from this many screen pixels per unit, every node's name is shown (below it, only hubs')
  var LARGEST = 1.3;  // a small graph is not drawn larger than this many pixels per unit
  var PAGES = ["records", "episodes", "facts"];  // a node's page, by its kind
  var X = 0, Y = 1, DEGREE = 2, LABEL = 3, KIND = 4, ID = 5, NAME = 6;

  function radius(node) { return 6 + Math.floor(Math.min(node[DEGREE], 9) / 2); }

  function href(graph, node) {
    var base = document.documentElement.getAttribute("data-base") || "/ui";
    return base + "/" + PAGES[node[KIND]] + "/" + node[ID] + "?scope=" + graph.scope;
  }

  // Each label's colour, read from the legend's dots: the stylesheet keeps them in one place.
  function colours(labels) {
    return labels.map(function (label) {
      var dot = document.querySelector(".legend circle.n-" + label);
      return dot ? getComputedStyle(dot).fill : "#888";
    });
  }

  // The view that shows ``box`` whole in the canvas, at most LARGEST pixels per unit, centred.
  function fitted(graph, box) {
    var scale = Math.min(graph.width / box[2], graph.height / box[3], LARGEST);
    var w = graph.width / scale;
    var h = graph.height / scale;
    return [box[0] - (w - box[2]) / 2, box[1] - (h - box[3]) / 2, w, h];
  }

  function draw(graph) {
    var canvas = graph.canvas;
    var ratio = window.devicePixelRatio || 1;
    var v = graph.view;
    var scale = graph.width / v[2];
    var ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, graph.width, graph.height);
    ctx.setTransform(ratio * scale, 0, 0, ratio * scale, -v[0] * scale * ratio, -v[1] * scale * ratio);
    var nodes = graph.data.nodes;
    ctx.beginPath();
    graph.data.edges.forEach(function (e) {
      ctx.moveTo(nodes[e[0]][X], nodes[e[0]][Y]);
      ctx.lineTo(nodes[e[1]][X], nodes[e[1]][Y]);
    });
    ctx.strokeStyle = "#8a96a3";
    ctx.lineWidth = 1.2 / Math.max(scale, 0.2);
    ctx.stroke();
    var shown = nodes.filter(function (n) {
      return n[X] > v[0] - 30 && n[X] < v[0] + v[2] + 30 && n[Y] > v[1] - 30 && n[Y] < v[1] + v[3] + 30;
    });
    graph.colours.forEach(function (colour, label) {  // one path per colour
      ctx.beginPath();
      shown.forEach(function (n) {
        if (n[LABEL] !== label) { return; }
        ctx.moveTo(n[X] + radius(n), n[Y]);
        ctx.arc(n[X], n[Y], radius(n), 0, 2 * Math.PI);
      });
      ctx.fillStyle = colour;
      ctx.fill();
      ctx.strokeStyle = "#1b1f24";
      ctx.lineWidth = 1;
      ctx.stroke();
    });
    if (graph.focus) {
      ctx.beginPath();
      ctx.arc(graph.focus[X], graph.focus[Y], radius(graph.focus) + 2, 0, 2 * Math.PI);
      ctx.strokeStyle = "#ff9900";
      ctx.lineWidth = 4;
      ctx.stroke();
    }
    ctx.fillStyle = "#1b1f24";
    ctx.font = "11px system-ui, sans-serif";
    ctx.textAlign = "center";
    shown.forEach(function (n) {
      if (scale >= NEAR || n[DEGREE] >= 4) { ctx.fillText(n[NAME].slice(0, 28), n[X], n[Y] + 20); }
    });
    canvas.setAttribute("data-view", v.map(function (x) { return x.toFixed(1); }).join(" "));
    canvas.setAttribute("data-drawn", String(shown.length));
  }

  function resize(graph) {
    var rect = graph.canvas.getBoundingClientRect();
    var ratio = window.devicePixelRatio || 1;
    var ready = graph.width > 0;
    var old = [graph.width, graph.height];
    graph.width = rect.width || 1;
    graph.height = rect.height || 1;
    graph.canvas.width = Math.round(graph.width * ratio);
    graph.canvas.height = Math.round(graph.height * ratio);
    if (ready) {  // the same scale, the same centre
      var v = graph.view;
      var w = v[2] * graph.width / old[0];
      var h = v[3] * graph.height / old[1];
      graph.view = [v[0] + (v[2] - w) / 2, v[1] + (v[3] - h) / 2, w, h];
    }
  }

  // Zoom by ``factor`` (below 1: in) keeping the drawing's point under (px, py) of the canvas in place.
  function zoom(graph, factor, px, py) {
    var v = graph.view;
    var w = Math.max(60, v[2] * factor);
    var h = v[3] * w / v[2];
    graph.view = [v[0] + (v[2] - w) * px / graph.width, v[1] + (v[3] - h) * py / graph.height, w, h];
    draw(graph);
  }

  // The node under (px, py) of the canvas, if any: the nearest whose circle (and a little more) holds it.
  function hit(graph, px, py) {
    var v = graph.view;
    var x = v[0] + px * v[2] / graph.width;
    var y = v[1] + py * v[3] / graph.height;
    var best = null;
    var bestDistance = Infinity;
    graph.data.nodes.forEach(function (n) {
      var d = Math.hypot(n[X] - x, n[Y] - y);
      if (d <= radius(n) + 3 && d < bestDistance) { best = n; bestDistance = d; }
    });
    return best;
  }

  function fillTable(graph) {
    var body = document.querySelector("#graph-nodes tbody");
    if (!body || body.children.length) { return; }
    var rows = document.createDocumentFragment();
    graph.data.nodes.forEach(function (n) {
      var row = document.createElement("tr");
      var label = document.createElement("td");
      label.textContent = graph.data.labels[n[LABEL]];
      var cell = document.createElement("td");
      var link = document.createElement("a");
      link.href = href(graph, n);
      link.textContent = n[NAME];
      cell.appendChild(link);
      var links = document.createElement("td");
      links.textContent = String(n[DEGREE]);
      row.append(label, cell, links);
      rows.appendChild(row);
    });
    body.appendChild(rows);
  }

  function listen(graph) {
    var canvas = graph.canvas;
    var drag = null;
    canvas.addEventListener("wheel", function (event) {
      event.preventDefault();
      zoom(graph, event.deltaY < 0 ? 0.8 : 1.25, event.offsetX, event.offsetY);
    }, { passive: false });
    canvas.addEventListener("pointerdown", function (event) {
      drag = { x: event.clientX, y: event.clientY, v: graph.view.slice(), moved: false };
      canvas.setPointerCapture(event.pointerId);
    });
    canvas.addEventListener("pointermove", function (event) {
      if (!drag) { return; }
      var dx = event.clientX - drag.x;
      var dy = event.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; }
      if (!drag.moved) { return; }
      var scale = drag.v[2] / graph.width;
      graph.view = [drag.v[0] - dx * scale, drag.v[1] - dy * scale, drag.v[2], drag.v[3]];
      draw(graph);
    });
    canvas.addEventListener("pointerup", function (event) {
      var moved = drag && drag.moved;
      drag = null;
      canvas.releasePointerCapture(event.pointerId);
      if (moved) { return; }
      var node = hit(graph, event.offsetX, event.offsetY);
      if (node) { location.assign(href(graph, node)); }
    });
    function centre(factor) { zoom(graph, factor, graph.width / 2, graph.height / 2); }
    document.getElementById("zoom-in").addEventListener("click", function () { centre(0.7); });
    document.getElementById("zoom-out").addEventListener("click", function () { centre(1 / 0.7); });
    document.getElementById("zoom-fit").addEventListener("click", function () {
      graph.view = fitted(graph, graph.data.box);
      draw(graph);
    });
    document.getElementById("node-table").addEventListener("toggle", function () { fillTable(graph); });
    new ResizeObserver(function () { resize(graph); draw(graph); }).observe(canvas);
  }

  function start(canvas) {
    if (canvas.hasAttribute("data-ready")) { return; }
    canvas.setAttribute("data-ready", "");
    var data = JSON.parse(canvas.getAttribute("data-graph"));
    var graph = { canvas: canvas, data: data, scope: canvas.getAttribute("data-scope"), width: 0, height: 0 };
    graph.colours = colours(data.labels);
    graph.focus = data.nodes.filter(function (n) { return n[ID] === data.focus; })[0] || null;
    resize(graph);
    graph.view = fitted(graph, data.box);
    if (graph.focus) {  // centred on the node asked for, at most 700 units wide
      var w = Math.min(graph.view[2], 700);
      var h = graph.view[3] * w / graph.view[2];
      graph.view = [graph.focus[X] - w / 2, graph.focus[Y] - h / 2, w, h];
    }
    draw(graph);
    listen(graph);
  }

  function found() {
    var canvas = document.getElementById("graph");
    if (canvas && canvas.tagName === "CANVAS") { start(canvas); }
  }

  document.addEventListener("DOMContentLoaded", found);
  document.addEventListener("htmx:afterSettle", found);
}());
