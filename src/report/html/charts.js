// Drawing helpers of the stepscope HTML report: crisp canvases, axis ticks,
// unit-aware formatting, legends, a tooltip and a horizontal stacked-bar
// chart. Plain browser JavaScript, no library. Nothing here computes a
// metric: these functions only lay out and draw numbers they are given.
"use strict";

var SS = (function () {
  // Paul Tol's "muted" palette, readable with the common colour-vision deficiencies.
  var TOL = {
    indigo: "#332288", cyan: "#88CCEE", teal: "#44AA99", green: "#117733", olive: "#999933",
    sand: "#DDCC77", rose: "#CC6677", wine: "#882255", purple: "#AA4499", grey: "#DDDDDD",
  };

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "class") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    (children || []).forEach(function (c) { if (c != null) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }

  // A canvas of css size w x h drawn at device resolution.
  function canvas(parent, w, h) {
    var c = document.createElement("canvas");
    var dpr = window.devicePixelRatio || 1;
    c.width = Math.round(w * dpr);
    c.height = Math.round(h * dpr);
    c.style.width = w + "px";
    c.style.height = h + "px";
    parent.appendChild(c);
    var ctx = c.getContext("2d");
    ctx.scale(dpr, dpr);
    ctx.font = "12px " + getComputedStyle(document.body).fontFamily;
    return { canvas: c, ctx: ctx, w: w, h: h };
  }

  function width(parent) { return Math.max(480, Math.floor(parent.getBoundingClientRect().width)); }

  // Round tick values covering [lo, hi]: steps of 1, 2 or 5 x 10^k.
  function ticks(lo, hi, target) {
    if (!(hi > lo)) return [lo];
    var raw = (hi - lo) / Math.max(1, target);
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 5, 10].map(function (m) { return m * mag; }).find(function (s) { return s >= raw; });
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    return out;
  }

  // A time unit for an axis spanning `span_us`: µs, ms or s.
  function timeUnit(span_us) {
    if (span_us < 2000) return { name: "µs", div: 1 };
    if (span_us < 2e6) return { name: "ms", div: 1000 };
    return { name: "s", div: 1e6 };
  }

  function num(v, digits) {
    if (v == null || !isFinite(v)) return "–";
    return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }
  // A duration in µs with a unit that suits it.
  function dur(us) {
    if (us == null || !isFinite(us)) return "–";
    var a = Math.abs(us);
    if (a >= 1e6) return num(us / 1e6, 2) + " s";
    if (a >= 1000) return num(us / 1000, a >= 1e5 ? 1 : 2) + " ms";
    return num(us, a >= 100 ? 0 : 1) + " µs";
  }
  function pct(v, digits) { return v == null || !isFinite(v) ? "–" : num(v, digits == null ? 1 : digits) + "%"; }
  function bytes(b) {
    if (b == null || !isFinite(b)) return "–";
    var u = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0, v = b;
    while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return num(v, i === 0 ? 0 : 2) + " " + u[i];
  }

  function legend(parent, items) {
    parent.innerHTML = "";
    items.forEach(function (it) {
      var sw = el("span", { class: "swatch" + (it.kind ? " " + it.kind : "") });
      if (it.kind === "dashed") sw.style.borderTopColor = it.color; else sw.style.background = it.color;
      parent.appendChild(el("span", { class: "item" }, [sw, it.label]));
    });
  }

  var tip = null;
  function tooltip(html, x, y) {
    tip = tip || document.getElementById("tooltip");
    if (html == null) { tip.hidden = true; return; }
    tip.innerHTML = html;
    tip.hidden = false;
    var r = tip.getBoundingClientRect();
    var left = x + 14, top = y + 14;
    if (left + r.width > window.innerWidth - 8) left = x - r.width - 14;
    if (top + r.height > window.innerHeight - 8) top = y - r.height - 14;
    tip.style.left = Math.max(4, left) + "px";
    tip.style.top = Math.max(4, top) + "px";
  }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; });
  }
  function tipRow(color, label, value) {
    return '<div class="row"><span>' + (color ? '<span class="sw" style="background:' + color + '"></span>' : "") +
      esc(label) + "</span><span>" + esc(value) + "</span></div>";
  }

  // Bottom axis of a time chart: ticks and the unit in the title.
  function timeAxis(ctx, x0, x1, y, lo_us, hi_us, label) {
    var unit = timeUnit(hi_us - lo_us);
    var tv = ticks(lo_us / unit.div, hi_us / unit.div, Math.max(2, Math.floor((x1 - x0) / 110)));
    ctx.strokeStyle = "#c5cad4";
    ctx.fillStyle = "#4a5263";
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    ctx.beginPath();
    ctx.moveTo(x0, y + 0.5);
    ctx.lineTo(x1, y + 0.5);
    ctx.stroke();
    tv.forEach(function (v) {
      var x = x0 + (v * unit.div - lo_us) / (hi_us - lo_us) * (x1 - x0);
      ctx.beginPath();
      ctx.moveTo(Math.round(x) + 0.5, y);
      ctx.lineTo(Math.round(x) + 0.5, y + 4);
      ctx.stroke();
      ctx.fillText(num(v, Math.max(0, -Math.floor(Math.log10((tv[1] - tv[0]) || 1)))), x, y + 6);
    });
    ctx.fillText(label + " (" + unit.name + ")", (x0 + x1) / 2, y + 22);
    return tv.map(function (v) { return x0 + (v * unit.div - lo_us) / (hi_us - lo_us) * (x1 - x0); });
  }

  function clip(ctx, text, maxw) {
    if (ctx.measureText(text).width <= maxw) return text;
    while (text.length > 1 && ctx.measureText(text + "…").width > maxw) text = text.slice(0, -1);
    return text + "…";
  }

  // Horizontal stacked bars. rows: [{label, segments: [{key, value}], total, group, tip}]
  // keys: [{key, label, color}]; unit: {name, div} of the values; one bar per row.
  function stackedBars(parent, rows, keys, opts) {
    parent.innerHTML = "";
    var W = width(parent), labelW = opts.labelWidth || 150, right = opts.totalLabel ? 78 : 18;
    var rowH = opts.rowHeight || 18, gap = 5, groupGap = 10, axisH = 40, top = 4;
    var h = top + axisH, lastGroup = null;
    rows.forEach(function (r) { if (lastGroup !== null && r.group !== lastGroup) h += groupGap; h += rowH + gap; lastGroup = r.group; });
    var c = canvas(parent, W, h), ctx = c.ctx;
    var max = opts.max != null ? opts.max : Math.max.apply(null, rows.map(function (r) { return r.total; }).concat([1e-9]));
    var x0 = labelW, x1 = W - right, scale = (x1 - x0) / max;
    var tv = ticks(0, max / opts.unit.div, Math.max(2, Math.floor((x1 - x0) / 110)));
    var plotBottom = h - axisH;
    ctx.strokeStyle = "#eef0f4";
    tv.forEach(function (v) { var x = Math.round(x0 + v * opts.unit.div * scale) + 0.5; ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, plotBottom); ctx.stroke(); });
    var y = top, boxes = [];
    lastGroup = null;
    rows.forEach(function (r) {
      if (lastGroup !== null && r.group !== lastGroup) {
        y += groupGap;
        ctx.strokeStyle = "#e2e5eb";
        ctx.beginPath(); ctx.moveTo(8, y - groupGap / 2 + 0.5); ctx.lineTo(x1, y - groupGap / 2 + 0.5); ctx.stroke();
      }
      lastGroup = r.group;
      ctx.fillStyle = "#1d2330";
      ctx.textAlign = "right";
      ctx.textBaseline = "middle";
      ctx.fillText(clip(ctx, r.label, labelW - 14), labelW - 8, y + rowH / 2);
      var x = x0;
      r.segments.forEach(function (s, i) {
        var w = s.value * scale;
        if (w > 0) { ctx.fillStyle = keys[i].color; ctx.fillRect(x, y, Math.max(w, 0.5), rowH); }
        x += w;
      });
      if (opts.totalLabel) {
        ctx.fillStyle = "#4a5263";
        ctx.textAlign = "left";
        ctx.fillText(opts.totalLabel(r), x + 6, y + rowH / 2);
      }
      boxes.push({ y0: y, y1: y + rowH, row: r });
      y += rowH + gap;
    });
    ctx.fillStyle = "#4a5263";
    var unitAxis = { div: opts.unit.div };
    ctx.strokeStyle = "#c5cad4";
    ctx.beginPath(); ctx.moveTo(x0, plotBottom + 0.5); ctx.lineTo(x1, plotBottom + 0.5); ctx.stroke();
    ctx.textAlign = "center"; ctx.textBaseline = "top";
    var step = tv.length > 1 ? tv[1] - tv[0] : 1;
    tv.forEach(function (v) {
      var xx = x0 + v * unitAxis.div * scale;
      ctx.fillText(num(v, Math.max(0, -Math.floor(Math.log10(step)))), xx, plotBottom + 6);
    });
    ctx.fillText(opts.axisLabel + " (" + opts.unit.name + ")", (x0 + x1) / 2, plotBottom + 22);
    c.canvas.addEventListener("mousemove", function (ev) {
      var b = c.canvas.getBoundingClientRect(), yy = ev.clientY - b.top;
      var hit = boxes.find(function (bx) { return yy >= bx.y0 && yy < bx.y1; });
      tooltip(hit ? hit.row.tip : null, ev.clientX, ev.clientY);
    });
    c.canvas.addEventListener("mouseleave", function () { tooltip(null); });
    return c;
  }

  // The page's render status, read by the headless-browser tests: each
  // problem is listed in #render-errors and sets data-render="error" on
  // <html>; finish() sets data-render="ok" when there was none. Script errors
  // anywhere on the page count too.
  function renderStatus() {
    var errors = [];
    function report(msg) {
      errors.push(msg);
      var pre = document.getElementById("render-errors");
      pre.hidden = false;
      pre.textContent = "Rendering problems:\n" + errors.join("\n");
      document.documentElement.setAttribute("data-render", "error");
    }
    window.addEventListener("error", function (e) {
      report((e.message || "script error") + (e.lineno ? " (line " + e.lineno + ")" : ""));
    });
    return {
      report: report,
      finish: function () { if (!errors.length) document.documentElement.setAttribute("data-render", "ok"); },
    };
  }

  return {
    renderStatus: renderStatus,
    TOL: TOL, el: el, canvas: canvas, width: width, ticks: ticks, timeUnit: timeUnit, num: num, dur: dur,
    pct: pct, bytes: bytes, legend: legend, tooltip: tooltip, esc: esc, tipRow: tipRow, timeAxis: timeAxis,
    clip: clip, stackedBars: stackedBars,
  };
})();
