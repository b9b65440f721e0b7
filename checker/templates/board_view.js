/* boardready's board view: draws a board from the checker's geometry
   (checker/board_view.py, checker/board_diff.py) as SVG, with the change
   against the base commit marked, layer toggles, zoom and pan (mouse wheel
   and drag, keyboard, touch), fit-to-change, a changes-only view and the
   findings pinned where they are.

   The same file runs inline in the checker's self-contained HTML report and,
   served from the service's own origin, on the run page (no inline script
   there). It builds every element with DOM calls and sets text with
   textContent: the geometry is content a repository produced. */
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var COLOURS = {"F.Cu": "#c83434", "B.Cu": "#3b6fd1"};
  var INNER = ["#c9a23a", "#4aa37a", "#a05ac8", "#d17a3b", "#5ab0c8", "#8a8f3a"];
  var SEVERITIES = ["error", "high", "medium", "low", "info"];
  var PIN_PX = 9;
  var TRACK_XY = 4;   // a track is [layer, width, net, uuid, x0, y0, x1, y1, ...]

  function node(name, attrs, parent, ns) {
    var el = ns ? document.createElementNS(SVG, name) : document.createElement(name);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") { el.textContent = attrs[key]; } else { el.setAttribute(key, String(attrs[key])); }
    });
    if (parent) { parent.appendChild(el); }
    return el;
  }
  function svg(name, attrs, parent) { return node(name, attrs, parent, true); }
  function dict() { return Object.create(null); }
  function num(value) { return typeof value === "number" && isFinite(value) ? value : 0; }
  function pairs(flat, from, scale) {
    var out = [];
    scale = scale || 1;
    for (var i = from || 0; i + 1 < flat.length; i += 2) { out.push(num(flat[i]) / scale + "," + num(flat[i + 1]) / scale); }
    return out.join(" ");
  }
  function box() { return {x0: Infinity, y0: Infinity, x1: -Infinity, y1: -Infinity}; }
  function grow(b, x, y, r) {
    r = r || 0;
    b.x0 = Math.min(b.x0, x - r); b.y0 = Math.min(b.y0, y - r);
    b.x1 = Math.max(b.x1, x + r); b.y1 = Math.max(b.y1, y + r);
    return b;
  }
  function growFlat(b, flat, from, r) {
    for (var i = from || 0; i + 1 < flat.length; i += 2) { grow(b, num(flat[i]), num(flat[i + 1]), r); }
    return b;
  }
  function empty(b) { return !(b.x1 >= b.x0 && b.y1 >= b.y0); }
  function padsBox(fp) {
    var b = box();
    (fp.pads || []).forEach(function (p) { grow(b, num(p[0]), num(p[1]), Math.max(num(p[2]), num(p[3])) / 2); });
    if (empty(b)) { grow(b, num(fp.at[0]), num(fp.at[1]), 1); }
    return b;
  }

  function drawPad(parent, p, cls) {
    var x = num(p[0]), y = num(p[1]), w = num(p[2]), h = num(p[3]), shape = p[5];
    if (shape === "circle") {
      return svg("circle", {cx: x, cy: y, r: w / 2, "class": cls}, parent);
    }
    var rx = shape === "oval" ? Math.min(w, h) / 2 : shape === "roundrect" ? Math.min(w, h) / 4 : 0;
    return svg("rect", {x: x - w / 2, y: y - h / 2, width: w, height: h, rx: rx, "class": cls,
      transform: "rotate(" + (-num(p[4])) + " " + x + " " + y + ")"}, parent);
  }

  function mount(root, doc) {
    root.textContent = "";
    root.classList.add("bv");
    var board = doc && doc.board;
    var diff = doc && doc.diff;
    var findings = (doc && doc.findings) || [];
    var summary = (doc && doc.summary) || null;
    if (summary) {
      var sum = node("ul", {"class": "bv-summary", "aria-label": "What this change did"}, root);
      summary.forEach(function (line) { node("li", {text: line}, sum); });
    }
    var tools = node("div", {"class": "bv-tools", role: "toolbar", "aria-label": "Board view"}, root);
    var stage = node("div", {"class": "bv-stage"}, root);
    var side = node("div", {"class": "bv-side"}, root);
    var state = {layers: {}, selected: null};
    var drawing = null;

    if (!board) {
      node("p", {"class": "bv-note", text: "This project has no board to draw."}, stage);
    } else if (board.tooLarge) {
      node("p", {"class": "bv-note", role: "note", text: "This board is too large to draw here (" + num(board.items) +
        " items); the findings are all listed."}, stage);
    } else {
      drawing = draw(stage, board, diff);
    }
    if (drawing) { toolbar(tools, drawing, board, diff, state); }
    // Every drawing by the file it draws: the board and the schematic sheets the change touched.
    var drawings = dict();
    if (drawing) { drawings[board.file] = drawing; }
    var sheets = (doc && doc.sheets) || [];
    if (sheets.length) {
      var part = node("div", {"class": "bv-sheets"}, root);
      node("h3", {text: "Schematic sheets this change touched"}, part);
      sheets.forEach(function (sheet) {
        var v = sheet.view || {};
        node("h4", {text: v.file || "sheet"}, part);
        if (v.tooLarge) {
          node("p", {"class": "bv-note", text: "This sheet is too large to draw here (" + num(v.items) + " items)."}, part);
          return;
        }
        var bar = node("div", {"class": "bv-tools"}, part);
        var sheetDrawing = drawSheet(node("div", {"class": "bv-stage"}, part), sheet);
        var fit = node("button", {type: "button", text: "Fit sheet", title: "Show the whole sheet (0)"}, bar);
        fit.addEventListener("click", function () { sheetDrawing.fit(sheetDrawing.boardBox); });
        if (sheetDrawing.changes.length) {
          var changes = node("ul", {"class": "bv-changes", "aria-label": "Changes on " + (v.file || "the sheet")}, bar);
          sheetDrawing.changes.forEach(function (c) {
            var li = node("li", {"data-change": c.kind}, changes);
            node("button", {type: "button", "class": "bv-link", text: c.label}, li)
              .addEventListener("click", function () { sheetDrawing.fit(c.box, 10); });
          });
        }
        drawings[v.file] = sheetDrawing;
        sheetDrawing.fit(sheetDrawing.boardBox);
      });
    }
    var list = findingsList(side, findings, drawings, state, tools);
    if (drawing) { drawing.fit(drawing.boardBox); }
    root.boardView = {select: function (fp) { list.select(fp, false); }, drawing: drawing, drawings: drawings};
    root.setAttribute("data-ready", "true");
    return root.boardView;
  }

  function draw(stage, board, diff) {
    var layers = board.layers || [];
    // Keys below come from the data (layer names, uuids): maps without a prototype.
    var colour = dict();
    layers.forEach(function (name, i) { colour[name] = COLOURS[name] || INNER[i % INNER.length]; });
    var root = svg("svg", {"class": "bv-svg", role: "img", tabindex: "0", focusable: "true",
      "aria-label": "Board drawing: arrow keys pan, + and - zoom, 0 fits the board, c fits the change"}, stage);
    var defs = svg("defs", {}, root);
    [["bv-hatch-added", "#1a9e4a", 45], ["bv-hatch-removed", "#d0342c", -45]].forEach(function (h) {
      var pat = svg("pattern", {id: h[0], width: 0.6, height: 0.6, patternUnits: "userSpaceOnUse",
        patternTransform: "rotate(" + h[2] + ")"}, defs);
      svg("line", {x1: 0, y1: 0, x2: 0, y2: 0.6, stroke: h[1], "stroke-width": 0.2}, pat);
    });
    var arrow = svg("marker", {id: "bv-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 6,
      markerHeight: 6, orient: "auto-start-reverse"}, defs);
    svg("path", {d: "M0,0 L10,5 L0,10 z", fill: "#e08a00"}, arrow);
    var world = svg("g", {"class": diff ? "bv-world bv-has-diff" : "bv-world"}, root);
    var groups = dict();
    var named = dict();   // KiCad uuid -> the elements that draw that item
    function name(id, el) { if (id) { (named[id] = named[id] || []).push(el); } return el; }
    function group(key, label) {
      if (!groups[key]) { groups[key] = svg("g", {"class": "bv-layer", "data-layer": key}, world); groups[key].label = label; }
      return groups[key];
    }
    var addedFp = dict(), movedFp = dict(), addedTracks = dict(), addedVias = dict(), addedZones = dict();
    if (diff) {
      (diff.footprints.added || []).forEach(function (i) { addedFp[i] = true; });
      (diff.footprints.moved || []).forEach(function (m) { movedFp[m.head] = m; });
      (diff.tracks.added || []).forEach(function (i) { addedTracks[i] = true; });
      (diff.vias.added || []).forEach(function (i) { addedVias[i] = true; });
      (diff.zones.added || []).forEach(function (i) { addedZones[i] = true; });
    }
    // Bottom to top: zones, the base's removed items, copper per layer (B.Cu under F.Cu), vias, outline, references.
    var zonesGroup = group("zones", "Zones");
    (board.zones || []).forEach(function (z, i) {
      var first = (z.layers || []).filter(function (l) { return colour[l]; })[0] || (z.layers || [])[0];
      var cls = "bv-zone " + (addedZones[i] ? "bv-added" : "bv-unchanged");
      if (!(z.fills || []).length) {   // never filled, or a board too big for its fills: the outline
        name(z.id, svg("polygon", {points: pairs(z.pts || []), fill: colour[first] || "#888", "class": cls,
          "data-net": z.net || ""}, zonesGroup));
        return;
      }
      // The copper the last fill poured, per layer (one fractured outline each, in micrometres), and the outline drawn.
      var g = name(z.id, svg("g", {"class": cls + " bv-zone-filled", "data-net": z.net || ""}, zonesGroup));
      z.fills.forEach(function (f) {
        svg("polygon", {points: pairs(f, 1, 1000), fill: colour[f[0]] || colour[first] || "#888", "class": "bv-zone-fill"}, g);
      });
      svg("polygon", {points: pairs(z.pts || []), stroke: colour[first] || "#888", "class": "bv-zone-outline"}, g);
    });
    var baseGroup = diff ? group("base", "Base (removed, moved from)") : null;
    layers.slice().reverse().forEach(function (name) { group(name, name); });
    (board.tracks || []).forEach(function (t, i) {
      var g = groups[t[0]] || group(t[0], t[0]);
      name(t[3], svg("polyline", {points: pairs(t, TRACK_XY), stroke: colour[t[0]] || "#999", "stroke-width": num(t[1]),
        "class": "bv-track " + (addedTracks[i] ? "bv-added" : "bv-unchanged")}, g));
    });
    var through = group("through", "Through-hole pads");
    (board.footprints || []).forEach(function (fp, i) {
      var cls = addedFp[i] ? "bv-added" : movedFp[i] ? "bv-moved" : "bv-unchanged";
      (fp.pads || []).forEach(function (p) {
        var g = p[6] === "B" ? groups["B.Cu"] : p[6] === "F" ? groups["F.Cu"] : through;
        name(fp.id, name(p[10], drawPad(g || through, p, "bv-pad " + cls)));
        if (num(p[7]) > 0) { svg("circle", {cx: num(p[0]), cy: num(p[1]), r: num(p[7]) / 2, "class": "bv-hole"}, through); }
      });
    });
    var viasGroup = group("vias", "Vias");
    (board.vias || []).forEach(function (v, i) {
      name(v[5], svg("circle", {cx: num(v[0]), cy: num(v[1]), r: num(v[2]) / 2, "class": "bv-via " +
        (addedVias[i] ? "bv-added" : "bv-unchanged")}, viasGroup));
      svg("circle", {cx: num(v[0]), cy: num(v[1]), r: num(v[3]) / 2, "class": "bv-hole"}, viasGroup);
    });
    var outline = group("outline", "Outline");
    var boardBox = box();
    (board.outline || []).forEach(function (flat) {
      svg("polyline", {points: pairs(flat), "class": "bv-outline"}, outline);
      growFlat(boardBox, flat);
    });
    var refs = group("references", "References");
    (board.footprints || []).forEach(function (fp) {
      var b = padsBox(fp);
      var size = Math.max(0.5, Math.min(1.5, (b.x1 - b.x0) / 4));
      svg("text", {x: num(fp.at[0]), y: num(fp.at[1]), "font-size": size, "text-anchor": "middle",
        "dominant-baseline": "central", "class": "bv-ref", text: fp.ref || ""}, refs);
    });
    if (empty(boardBox)) {
      boardBox = box();
      grow(boardBox, num(board.bounds[0]), num(board.bounds[1]));
      grow(boardBox, num(board.bounds[2]), num(board.bounds[3]));
    }
    var marks = svg("g", {"class": "bv-marks"}, world);
    var changes = diff ? markChanges(board, diff, baseGroup, marks) : [];
    var changeBox = box();
    changes.forEach(function (c) { grow(grow(changeBox, c.box.x0, c.box.y0), c.box.x1, c.box.y1); });
    var pins = svg("g", {"class": "bv-pins"}, world);
    var api = view(root, world, groups, boardBox, changeBox, changes, pins);
    api.named = named;
    return api;
  }

  function drawSheet(stage, sheet) {
    var v = sheet.view;
    var root = svg("svg", {"class": "bv-svg bv-sheet", role: "img", tabindex: "0", focusable: "true",
      "aria-label": "Schematic sheet " + v.file + ": arrow keys pan, + and - zoom, 0 fits the sheet"}, stage);
    var world = svg("g", {"class": "bv-world bv-has-diff"}, root);
    var named = dict(), added = dict(), changed = dict();
    (sheet.added || []).forEach(function (u) { added[u] = true; });
    (sheet.changed || []).forEach(function (u) { changed[u] = true; });
    var wires = svg("g", {"class": "bv-sch-wires"}, world);
    (v.wires || []).forEach(function (flat) { svg("polyline", {points: pairs(flat), "class": "bv-sch-wire"}, wires); });
    (v.buses || []).forEach(function (flat) { svg("polyline", {points: pairs(flat), "class": "bv-sch-bus"}, wires); });
    (v.junctions || []).forEach(function (p) {
      svg("circle", {cx: num(p[0]), cy: num(p[1]), r: 0.45, "class": "bv-sch-junction"}, wires);
    });
    (v.noConnects || []).forEach(function (p) {
      var x = num(p[0]), y = num(p[1]), d = 0.6;
      svg("path", {d: "M" + (x - d) + "," + (y - d) + "L" + (x + d) + "," + (y + d) + "M" + (x - d) + "," + (y + d) +
        "L" + (x + d) + "," + (y - d), "class": "bv-sch-nc"}, wires);
    });
    var text = svg("g", {"class": "bv-sch-text"}, world);
    (v.labels || []).forEach(function (l) {
      svg("text", {x: num(l[0]), y: num(l[1]) - 0.4, "font-size": 1.27, "class": "bv-sch-label", text: String(l[2])}, text);
    });
    var marks = svg("g", {"class": "bv-marks"}, world);
    var changes = [];
    var symbols = svg("g", {"class": "bv-sch-symbols"}, world);
    (v.symbols || []).forEach(function (s) {
      var b = grow(box(), num(s.at[0]), num(s.at[1]), 1.27);
      (s.pins || []).forEach(function (p) { grow(b, num(p[0]), num(p[1])); });
      var shapes = s.body || [];
      shapes.forEach(function (g) { growFlat(b, g, 2, g[0] === "c" ? num(g[g.length - 1]) : 0); });
      var state = added[s.id] ? "bv-added" : changed[s.id] ? "bv-changed" : "bv-unchanged";
      // With its library graphics the symbol is drawn as the sheet shows it; the frame around it
      // then only shows when a finding names it. Without them, the frame is the symbol.
      named[s.id] = [svg("rect", {x: b.x0, y: b.y0, width: b.x1 - b.x0, height: b.y1 - b.y0,
        "class": "bv-sch-symbol " + state + (shapes.length ? " bv-sch-frame" : "")}, symbols)];
      if (shapes.length) {
        var body = svg("g", {"class": "bv-sch-body " + state}, symbols);
        shapes.forEach(function (g) {
          var look = "bv-sch-shape bv-sch-fill-" + (g[1] === 1 ? "line" : g[1] === 2 ? "body" : "none");
          if (g[0] === "c") {
            svg("circle", {cx: num(g[2]), cy: num(g[3]), r: num(g[4]), "class": look}, body);
          } else {
            svg(g[0] === "g" ? "polygon" : "polyline", {points: pairs(g.length > 2 ? g : [], 2), "class": look}, body);
          }
        });
      }
      (s.pins || []).forEach(function (p) {
        svg("circle", {cx: num(p[0]), cy: num(p[1]), r: 0.25, "class": "bv-sch-pin"}, symbols);
      });
      var power = String(s.ref || "").charAt(0) === "#";
      if (!power) { svg("text", {x: b.x0, y: b.y0 - 0.5, "font-size": 1.27, "class": "bv-sch-ref", text: s.ref || ""}, text); }
      svg("text", {x: b.x0, y: b.y1 + 1.6, "font-size": 1.27, "class": "bv-sch-value", text: s.value || ""}, text);
      if (state !== "bv-unchanged") {
        var kind = state === "bv-added" ? "added" : "changed";
        var el = svg("rect", {x: b.x0 - 1, y: b.y0 - 1, width: b.x1 - b.x0 + 2, height: b.y1 - b.y0 + 2, rx: 0.5,
          "class": "bv-mark bv-mark-" + kind + " bv-change", "data-change": "symbol-" + kind}, marks);
        changes.push({kind: "symbol-" + kind, label: (s.ref || "symbol") + " " + kind, box: b, el: el});
      }
    });
    // Wires and labels the change added or removed (the removed ones drawn from the base).
    function wireChange(flat, kind) {
      var el = svg("polyline", {points: pairs(flat), "class": "bv-mark bv-mark-" + kind + " bv-sch-wire-" + kind + " bv-change",
        "data-change": "wire-" + kind}, marks);
      changes.push({kind: "wire-" + kind, label: "Wire " + kind, box: growFlat(box(), flat, 0, 1), el: el});
    }
    (sheet.wiresAdded || []).forEach(function (flat) { wireChange(flat, "added"); });
    (sheet.wiresRemoved || []).forEach(function (flat) { wireChange(flat, "removed"); });
    function labelChange(l, kind) {
      var b = grow(box(), num(l[0]), num(l[1]), 1.5);
      var el = svg("rect", {x: b.x0, y: b.y0, width: b.x1 - b.x0, height: b.y1 - b.y0,
        "class": "bv-mark bv-mark-" + kind + " bv-change", "data-change": "label-" + kind}, marks);
      if (kind === "removed") {
        svg("text", {x: num(l[0]), y: num(l[1]) - 0.4, "font-size": 1.27, "class": "bv-sch-label bv-removed-text", text: String(l[2])}, marks);
      }
      changes.push({kind: "label-" + kind, label: "Label " + String(l[2]) + " " + kind, box: b, el: el});
    }
    (sheet.labelsAdded || []).forEach(function (l) { labelChange(l, "added"); });
    (sheet.labelsRemoved || []).forEach(function (l) { labelChange(l, "removed"); });
    (v.sheets || []).forEach(function (h) {
      var b = box();
      (h.pins || []).forEach(function (p) { grow(b, num(p[0]), num(p[1])); });
      if (empty(b)) { return; }
      svg("rect", {x: b.x0, y: b.y0, width: Math.max(b.x1 - b.x0, 2), height: Math.max(b.y1 - b.y0, 2), "class": "bv-sch-sheet"}, symbols);
      svg("text", {x: b.x0, y: b.y0 - 0.5, "font-size": 1.27, "class": "bv-sch-ref", text: h.name || ""}, text);
    });
    var bounds = v.bounds || [0, 0, 10, 10];
    var sheetBox = grow(grow(box(), num(bounds[0]), num(bounds[1]), 2), num(bounds[2]), num(bounds[3]), 2);
    var changeBox = box();
    changes.forEach(function (c) { grow(grow(changeBox, c.box.x0, c.box.y0), c.box.x1, c.box.y1); });
    var pins = svg("g", {"class": "bv-pins"}, world);
    var api = view(root, world, dict(), sheetBox, changeBox, changes, pins);
    api.named = named;
    api.closest = 40;   // a finding on a sheet is shown with the symbols around it
    return api;
  }

  function markChanges(board, diff, baseGroup, marks) {
    var changes = [];
    function note(kind, label, b, el) {
      el.setAttribute("class", (el.getAttribute("class") || "") + " bv-change");
      el.setAttribute("data-change", kind);
      changes.push({kind: kind, label: label, box: b, el: el});
    }
    function frame(b, cls, pad) {
      return svg("rect", {x: b.x0 - pad, y: b.y0 - pad, width: b.x1 - b.x0 + 2 * pad, height: b.y1 - b.y0 + 2 * pad,
        rx: 0.3, "class": cls}, marks);
    }
    (diff.footprints.added || []).forEach(function (i) {
      var fp = board.footprints[i]; var b = padsBox(fp);
      note("footprint-added", (fp.ref || "footprint") + " added", b, frame(b, "bv-mark bv-mark-added", 0.6));
    });
    (diff.footprints.removed || []).forEach(function (fp) {
      var b = padsBox(fp);
      (fp.pads || []).forEach(function (p) { drawPad(baseGroup, p, "bv-pad bv-removed"); });
      note("footprint-removed", (fp.ref || "footprint") + " removed", b, frame(b, "bv-mark bv-mark-removed", 0.6));
    });
    (diff.footprints.moved || []).forEach(function (m) {
      var fp = board.footprints[m.head]; var was = m.base; var b = padsBox(fp); var a = padsBox(was);
      (was.pads || []).forEach(function (p) { drawPad(baseGroup, p, "bv-pad bv-moved-from"); });
      frame(a, "bv-mark bv-mark-moved-from", 0.6);
      var g = svg("g", {}, marks);
      svg("line", {x1: num(was.at[0]), y1: num(was.at[1]), x2: num(fp.at[0]), y2: num(fp.at[1]),
        "class": "bv-arrow", "marker-end": "url(#bv-arrow)"}, g);
      frame(b, "bv-mark bv-mark-moved", 0.6);
      g.appendChild(marks.lastChild);
      var both = grow(grow(box(), a.x0, a.y0), a.x1, a.y1); grow(grow(both, b.x0, b.y0), b.x1, b.y1);
      note("footprint-moved", (m.ref || "footprint") + " moved " + num(m.distance) + " mm", both, g);
    });
    (diff.footprints.changed || []).forEach(function (c) {
      var fp = board.footprints[c.head]; var b = padsBox(fp);
      note("footprint-changed", c.ref + ": " + c.field + " " + c.from + " \u2192 " + c.to, b,
        frame(b, "bv-mark bv-mark-changed", 0.8));
    });
    (diff.footprints.pads || []).forEach(function (c) {
      // A pad edit inside a footprint: the base pad drawn under the head's, the pad framed.
      var fp = board.footprints[c.head]; var now = c.index !== undefined ? fp.pads[c.index] : null;
      var b = box();
      [now, c.base].forEach(function (p) { if (p) { grow(b, num(p[0]), num(p[1]), Math.max(num(p[2]), num(p[3])) / 2); } });
      if (c.base) { drawPad(baseGroup, c.base, "bv-pad " + (now ? "bv-moved-from" : "bv-removed")); }
      var cls = c.change === "added" ? "bv-mark-added" : c.change === "removed" ? "bv-mark-removed" : "bv-mark-changed";
      note("pad-" + c.change, c.ref + " pad " + (c.pad || "(unnumbered)") + " " + c.change +
        (c.fields ? ": " + Object.keys(c.fields).join(", ") : ""), b, frame(b, "bv-mark " + cls, 0.3));
    });
    (diff.tracks.added || []).forEach(function (i) {
      var t = board.tracks[i];
      var el = svg("polyline", {points: pairs(t, TRACK_XY), "stroke-width": num(t[1]) + 0.5, "class": "bv-mark bv-mark-added bv-line"}, marks);
      note("track-added", "Track added on " + t[0] + (t[2] ? " (" + t[2] + ")" : ""), growFlat(box(), t, TRACK_XY, num(t[1])), el);
    });
    (diff.tracks.removed || []).forEach(function (t) {
      svg("polyline", {points: pairs(t, TRACK_XY), "stroke-width": num(t[1]), "class": "bv-track bv-removed"}, baseGroup);
      var el = svg("polyline", {points: pairs(t, TRACK_XY), "stroke-width": num(t[1]) + 0.5, "class": "bv-mark bv-mark-removed bv-line"}, marks);
      note("track-removed", "Track removed on " + t[0] + (t[2] ? " (" + t[2] + ")" : ""), growFlat(box(), t, TRACK_XY, num(t[1])), el);
    });
    (diff.vias.added || []).forEach(function (i) {
      var v = board.vias[i];
      var el = svg("circle", {cx: num(v[0]), cy: num(v[1]), r: num(v[2]) / 2 + 0.4, "class": "bv-mark bv-mark-added"}, marks);
      note("via-added", "Via added" + (v[4] ? " (" + v[4] + ")" : ""), grow(box(), num(v[0]), num(v[1]), num(v[2])), el);
    });
    (diff.vias.removed || []).forEach(function (v) {
      svg("circle", {cx: num(v[0]), cy: num(v[1]), r: num(v[2]) / 2, "class": "bv-via bv-removed"}, baseGroup);
      var el = svg("circle", {cx: num(v[0]), cy: num(v[1]), r: num(v[2]) / 2 + 0.4, "class": "bv-mark bv-mark-removed"}, marks);
      note("via-removed", "Via removed" + (v[4] ? " (" + v[4] + ")" : ""), grow(box(), num(v[0]), num(v[1]), num(v[2])), el);
    });
    (diff.zones.added || []).forEach(function (i) {
      var z = board.zones[i];
      var el = svg("polygon", {points: pairs(z.pts || []), "class": "bv-mark bv-mark-added"}, marks);
      note("zone-added", "Zone added" + (z.net ? " (" + z.net + ")" : ""), growFlat(box(), z.pts || []), el);
    });
    (diff.zones.removed || []).forEach(function (z) {
      var el = svg("polygon", {points: pairs(z.pts || []), "class": "bv-mark bv-mark-removed"}, marks);
      note("zone-removed", "Zone removed" + (z.net ? " (" + z.net + ")" : ""), growFlat(box(), z.pts || []), el);
    });
    return changes;
  }

  function view(root, world, groups, boardBox, changeBox, changes, pins) {
    var v = {x: 0, y: 0, w: 10, h: 10};
    var api = {groups: groups, boardBox: boardBox, changeBox: changeBox, changes: changes, svg: root, pinsGroup: pins};
    function pxPerMm() {
      var rect = root.getBoundingClientRect();
      return Math.min((rect.width || 600) / v.w, (rect.height || 400) / v.h);
    }
    function apply() {
      root.setAttribute("viewBox", [v.x, v.y, v.w, v.h].join(" "));
      var r = PIN_PX / pxPerMm();
      Array.prototype.forEach.call(pins.childNodes, function (pin) {
        pin.firstChild.setAttribute("r", r);
        pin.lastChild.setAttribute("r", r * 0.45);
      });
      root.setAttribute("data-zoom", (pxPerMm()).toFixed(3));
    }
    api.fit = function (b, minimum) {
      if (empty(b)) { b = boardBox; }
      var w = Math.max(b.x1 - b.x0, minimum || 1), h = Math.max(b.y1 - b.y0, minimum || 1);
      var m = 0.08 * Math.max(w, h);
      v = {x: (b.x0 + b.x1) / 2 - w / 2 - m, y: (b.y0 + b.y1) / 2 - h / 2 - m, w: w + 2 * m, h: h + 2 * m};
      apply();
    };
    api.zoom = function (factor, cx, cy) {
      if (cx === undefined) { cx = v.x + v.w / 2; cy = v.y + v.h / 2; }
      var w = Math.min(Math.max(v.w / factor, 0.002), 5000), k = w / v.w;   // down to 2 µm across: a 1 µm clearance is visible
      v = {x: cx - (cx - v.x) * k, y: cy - (cy - v.y) * k, w: w, h: v.h * k};
      apply();
    };
    api.pan = function (fx, fy) { v.x += fx * v.w; v.y += fy * v.h; apply(); };
    api.view = function () { return {x: v.x, y: v.y, w: v.w, h: v.h}; };
    api.apply = apply;
    function toWorld(clientX, clientY) {
      var m = root.getScreenCTM();
      if (!m) { return {x: v.x + v.w / 2, y: v.y + v.h / 2}; }
      var p = root.createSVGPoint(); p.x = clientX; p.y = clientY;
      p = p.matrixTransform(m.inverse());
      return {x: p.x, y: p.y};
    }
    root.addEventListener("wheel", function (e) {
      e.preventDefault();
      var at = toWorld(e.clientX, e.clientY);
      api.zoom(e.deltaY < 0 ? 1.25 : 0.8, at.x, at.y);
    }, {passive: false});
    // Pointer events: a mouse drag or one finger pans, two fingers pinch.
    var pointers = {}, last = null;
    root.addEventListener("pointerdown", function (e) {
      if (e.target.closest && e.target.closest(".bv-pin")) { return; }
      pointers[e.pointerId] = {x: e.clientX, y: e.clientY};
      try { root.setPointerCapture(e.pointerId); } catch (err) { /* synthetic events have no capture */ }
      last = null;
    });
    root.addEventListener("pointermove", function (e) {
      if (!pointers[e.pointerId]) { return; }
      var ids = Object.keys(pointers);
      if (ids.length === 1) {
        var mm = 1 / pxPerMm();
        v.x -= (e.clientX - pointers[e.pointerId].x) * mm;
        v.y -= (e.clientY - pointers[e.pointerId].y) * mm;
        pointers[e.pointerId] = {x: e.clientX, y: e.clientY};
        apply();
      } else if (ids.length === 2) {
        pointers[e.pointerId] = {x: e.clientX, y: e.clientY};
        var a = pointers[ids[0]], b = pointers[ids[1]];
        var d = Math.hypot(a.x - b.x, a.y - b.y);
        if (last) {
          var at = toWorld((a.x + b.x) / 2, (a.y + b.y) / 2);
          api.zoom(d / last, at.x, at.y);
        }
        last = d;
      }
    });
    function release(e) { delete pointers[e.pointerId]; last = null; }
    root.addEventListener("pointerup", release);
    root.addEventListener("pointercancel", release);
    root.addEventListener("keydown", function (e) {
      var handled = true;
      switch (e.key) {
        case "+": case "=": api.zoom(1.5); break;
        case "-": case "_": api.zoom(1 / 1.5); break;
        case "ArrowLeft": api.pan(-0.1, 0); break;
        case "ArrowRight": api.pan(0.1, 0); break;
        case "ArrowUp": api.pan(0, -0.1); break;
        case "ArrowDown": api.pan(0, 0.1); break;
        case "0": case "f": api.fit(boardBox); break;
        case "c": api.fit(changeBox, 4); break;
        default: handled = false;
      }
      if (handled) { e.preventDefault(); }
    });
    if (window.ResizeObserver) { new ResizeObserver(function () { apply(); }).observe(root); }
    return api;
  }

  function toolbar(tools, drawing, board, diff, state) {
    function button(label, title, action) {
      var b = node("button", {type: "button", title: title, text: label}, tools);
      b.addEventListener("click", action);
      return b;
    }
    button("Fit board", "Show the whole board (0)", function () { drawing.fit(drawing.boardBox); });
    if (diff) {
      var fc = button("Fit to change", "Zoom to what changed (c)", function () { drawing.fit(drawing.changeBox, 4); });
      fc.setAttribute("data-action", "fit-change");
    }
    button("Zoom in", "Zoom in (+)", function () { drawing.zoom(1.5); }).setAttribute("aria-label", "Zoom in");
    button("Zoom out", "Zoom out (-)", function () { drawing.zoom(1 / 1.5); }).setAttribute("aria-label", "Zoom out");
    var layerSet = node("fieldset", {"class": "bv-layers"}, tools);
    node("legend", {text: "Layers"}, layerSet);
    Object.keys(drawing.groups).reverse().forEach(function (key) {
      var g = drawing.groups[key];
      var label = node("label", {}, layerSet);
      var box = node("input", {type: "checkbox", "data-layer-toggle": key}, label);
      box.checked = true;
      label.appendChild(document.createTextNode(" " + g.label));
      box.addEventListener("change", function () {
        if (box.checked) { g.removeAttribute("display"); } else { g.setAttribute("display", "none"); }
        state.layers[key] = box.checked;
      });
    });
    if (diff) {
      var only = node("label", {"class": "bv-only"}, tools);
      var check = node("input", {type: "checkbox", "data-action": "changes-only"}, only);
      only.appendChild(document.createTextNode(" Changes only"));
      check.addEventListener("change", function () {
        drawing.svg.classList.toggle("bv-changes-only", check.checked);
      });
      var legend = node("ul", {"class": "bv-legend", "aria-label": "Legend"}, tools);
      [["added", "added: green, solid outline, hatched"], ["removed", "removed: red, dashed"],
       ["moved", "moved: orange, dotted, arrow from the base place"]].forEach(function (l) {
        var li = node("li", {}, legend);
        node("span", {"class": "bv-key bv-key-" + l[0], "aria-hidden": "true"}, li);
        li.appendChild(document.createTextNode(" " + l[1]));
      });
      var list = node("ul", {"class": "bv-changes", "aria-label": "Changes on the board"}, tools);
      drawing.changes.forEach(function (c) {
        var li = node("li", {"data-change": c.kind}, list);
        var b = node("button", {type: "button", "class": "bv-link", text: c.label}, li);
        b.addEventListener("click", function () { drawing.fit(c.box, 4); });
      });
    }
  }

  function findingsList(side, findings, drawings, state, tools) {
    var bar = node("div", {"class": "bv-filter"}, side);
    var sevLabel = node("label", {text: "Severity "}, bar);
    var sev = node("select", {"data-action": "severity"}, sevLabel);
    node("option", {value: "", text: "all"}, sev);
    SEVERITIES.forEach(function (s) { node("option", {value: s, text: s + " and worse"}, sev); });
    var hasBase = findings.some(function (f) { return f.baseline; });
    var newOnly = null;
    if (hasBase) {
      var nl = node("label", {}, bar);
      newOnly = node("input", {type: "checkbox", "data-action": "new-only"}, nl);
      nl.appendChild(document.createTextNode(" New in this change only"));
    }
    var count = node("p", {"class": "bv-count", "aria-live": "polite"}, side);
    var list = node("ul", {"class": "bv-findings"}, side);
    var items = dict(), pins = dict();
    findings.forEach(function (f) {
      var li = node("li", {"data-fingerprint": f.fingerprint, "data-severity": f.severity}, list);
      var b = node("button", {type: "button", "class": "bv-finding", "aria-pressed": "false"}, li);
      node("span", {"class": "sev sev-" + f.severity, text: f.severity}, b);
      if (f.baseline === "new") { node("span", {"class": "bv-new", text: "new"}, b); }
      if (f.waived) { node("span", {"class": "bv-waived", text: "waived"}, b); }
      node("strong", {text: " " + (f.title || f.ruleId)}, b);
      node("span", {"class": "bv-msg", text: " " + f.message}, b);
      var drawing = typeof f.path === "string" ? drawings[f.path] : undefined;
      var placed = drawing && typeof f.x === "number" && typeof f.y === "number";
      if (!placed) { node("span", {"class": "bv-unplaced", text: " (not drawn here)"}, b); }
      b.addEventListener("click", function () { select(f.fingerprint, false); });
      items[f.fingerprint] = {li: li, button: b, finding: f, drawing: drawing};
      if (placed) {
        var pin = svg("g", {"class": "bv-pin sev-" + f.severity + (f.baseline === "new" ? " bv-pin-new" : ""),
          "data-fingerprint": f.fingerprint, id: "marker-" + f.fingerprint}, drawing.pinsGroup);
        svg("circle", {cx: f.x, cy: f.y, r: 1, "class": "bv-pin-ring"}, pin);
        svg("title", {text: f.severity + ": " + (f.title || f.ruleId)}, pin);
        svg("circle", {cx: f.x, cy: f.y, r: 0.5, "class": "bv-pin-dot"}, pin);
        pin.addEventListener("click", function (e) { e.stopPropagation(); select(f.fingerprint, true); });
        pins[f.fingerprint] = pin;
      }
    });
    Object.keys(drawings).forEach(function (k) { drawings[k].apply(); });
    function filter() {
      var limit = sev.value ? SEVERITIES.indexOf(sev.value) : SEVERITIES.length;
      var shown = 0;
      findings.forEach(function (f) {
        var visible = SEVERITIES.indexOf(f.severity) <= limit && !(newOnly && newOnly.checked && f.baseline !== "new");
        items[f.fingerprint].li.hidden = !visible;
        if (pins[f.fingerprint]) {
          if (visible) { pins[f.fingerprint].removeAttribute("display"); } else { pins[f.fingerprint].setAttribute("display", "none"); }
        }
        shown += visible ? 1 : 0;
      });
      count.textContent = shown + " of " + findings.length + " findings";
    }
    sev.addEventListener("change", filter);
    if (newOnly) { newOnly.addEventListener("change", filter); }
    filter();
    function select(fp, fromPin) {
      var item = items[fp];
      if (!item) { return; }
      Object.keys(items).forEach(function (k) {
        items[k].li.classList.toggle("active", k === fp);
        items[k].button.setAttribute("aria-pressed", k === fp ? "true" : "false");
      });
      Object.keys(pins).forEach(function (k) { pins[k].classList.toggle("active", k === fp); });
      state.selected = fp;
      var pin = pins[fp], drawing = item.drawing;
      Object.keys(drawings).forEach(function (k) {
        Array.prototype.forEach.call(drawings[k].svg.querySelectorAll(".bv-named"), function (el) {
          el.classList.remove("bv-named");
        });
      });
      if (pin) {
        pin.parentNode.appendChild(pin);   // on top of the other pins
        // Outline the items the finding names, and show them with the pin.
        var f = item.finding, around = grow(box(), f.x, f.y, 3);
        (f.uuids || []).forEach(function (id) {
          (drawing.named[id] || []).forEach(function (el) {
            el.classList.add("bv-named");
            var b = el.getBBox();
            if (b.width < 50 && b.height < 50) { grow(grow(around, b.x, b.y), b.x + b.width, b.y + b.height); }
          });
        });
        if (!fromPin) {
          drawing.fit(around, drawing.closest || 6);
          if (drawing !== drawings[Object.keys(drawings)[0]]) { drawing.svg.scrollIntoView({block: "nearest"}); }
        }
      }
      if (fromPin) { item.li.scrollIntoView({block: "nearest"}); item.button.focus({preventScroll: true}); }
    }
    return {select: select};
  }

  function say(root, text) {
    root.textContent = "";
    node("p", {"class": "bv-note", role: "note", text: text}, root);
  }

  window.BoardView = {mount: mount};
  Array.prototype.forEach.call(document.querySelectorAll("[data-board-view]"), function (root) {
    var src = root.getAttribute("data-board-src");
    var inline = root.getAttribute("data-board-data");
    if (inline) {
      var data = document.getElementById(inline);
      try {
        if (data) { mount(root, JSON.parse(data.textContent)); }
      } catch (err) {
        say(root, "The board could not be drawn from this report's data; the findings are listed in the report.");
      }
      return;
    }
    if (!src) { return; }
    fetch(src, {credentials: "same-origin", headers: {Accept: "application/json"}})
      .then(function (r) {
        if (r.status === 404) { say(root, "This run's report carries no board drawing; the findings are listed on this page."); return null; }
        return r.ok ? r.json() : Promise.reject(new Error(String(r.status)));
      })
      .then(function (doc) { if (doc) { mount(root, doc); } })
      .catch(function () { say(root, "The board drawing could not be loaded; the findings are listed on this page."); });
  });
}());
