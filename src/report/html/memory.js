// Renders the page of `stepscope memory --html` from the embedded JSON
// report (docs/json_schema.md, "stepscope memory"): per device, active memory
// over the history stacked by allocation site with reserved memory on top
// and the OOMs marked, the allocator's events by step and op when a trace
// was joined, then the live memory at the peak and each OOM's state. Nothing here computes a metric. When rendering finishes without an
// exception <html> gets data-render="ok"; errors go to #render-errors
// (the headless-browser test reads both).
"use strict";

(function () {
  var status = SS.renderStatus(), reportError = status.report;

  var el = SS.el, T = SS.TOL;
  var R = JSON.parse(document.getElementById("stepscope-data").textContent);
  var BAND_COLORS = [T.indigo, T.teal, T.olive, T.rose, T.purple, T.cyan, T.green, T.wine, T.grey];

  function card(label, value, sub) {
    return el("div", { class: "card" }, [el("div", { class: "label", text: label }),
      el("div", { class: "value", text: value }), sub ? el("div", { class: "sub", text: sub }) : null]);
  }

  function table(headers, rows) {
    var t = el("table", { class: "data" });
    t.appendChild(el("thead", null, [el("tr", null, headers.map(function (h) {
      return el("th", { text: h.label, class: h.num ? "num" : "" });
    }))]));
    var body = el("tbody");
    rows.forEach(function (r) {
      body.appendChild(el("tr", r.title ? { title: r.title } : null, r.cells.map(function (c, i) {
        return el("td", { text: c, class: headers[i].num ? "num" : "" });
      })));
    });
    t.appendChild(body);
    return t;
  }

  function sitesTable(sites) {
    if (!sites.length) return el("p", { class: "empty", text: "Nothing live." });
    return table([{ label: "live", num: true }, { label: "blocks", num: true }, { label: "allocated at" }],
      sites.map(function (s) {
        return { cells: [SS.bytes(s.bytes), SS.num(s.blocks, 0), s.site], title: s.stack };
      }));
  }

  // x position of a point: its time from the first event (ms) when the file
  // has times, else its event number.
  function xOf(row, t0) { return row[1] != null && t0 != null ? (row[1] - t0) / 1000 : row[0]; }

  // Active bytes stacked by allocation site, reserved bytes as a line, OOMs
  // as vertical marks.
  function memoryChart(parent, legendBox, dev) {
    var ss = dev.site_series, rows = ss.rows;
    if (!rows.length) { parent.appendChild(el("p", { class: "empty", text: "No recorded history: only the snapshot's state is known." })); return; }
    var t0 = rows[0][1] != null ? R.first_time_us : null;
    if (t0 == null && rows[0][1] != null) t0 = rows[0][1];
    var xs = rows.map(function (r) { return xOf(r, t0); });
    var reserved = dev.series.map(function (r) { return [xOf(r, t0), r[4]]; });
    var ymax = Math.max.apply(null, reserved.map(function (p) { return p[1]; }).concat(rows.map(function (r) {
      var s = 0; for (var i = 2; i < r.length; ++i) s += r[i]; return s; })).concat([1]));
    var w = SS.width(parent), h = 280, x0 = 70, x1 = w - 16, y0 = 16, y1 = h - 34;
    var c = SS.canvas(parent, w, h), ctx = c.ctx;
    var xlo = xs[0], xhi = xs[xs.length - 1] > xlo ? xs[xs.length - 1] : xlo + 1;
    function X(v) { return x0 + (v - xlo) / (xhi - xlo) * (x1 - x0); }
    function Y(v) { return y1 - v / ymax * (y1 - y0); }
    ctx.strokeStyle = "#e2e5eb";
    ctx.fillStyle = "#4a5263";
    SS.ticks(0, ymax, 4).forEach(function (v) {
      var y = Math.round(Y(v)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x0, y); ctx.lineTo(x1, y); ctx.stroke();
      ctx.fillText(SS.bytes(v), 4, y + 4);
    });
    SS.ticks(xlo, xhi, 6).forEach(function (v) {
      var x = X(v);
      ctx.fillText(SS.num(v, 0), x - 10, h - 16);
    });
    ctx.fillText(t0 != null ? "ms from the first recorded event" : "event", x1 - 190, h - 2);
    // Bands, bottom to top.
    var nb = ss.sites.length, base = rows.map(function () { return 0; });
    for (var b = 0; b < nb; ++b) {
      ctx.beginPath();
      rows.forEach(function (r, i) { var v = base[i] + r[2 + b]; (i ? ctx.lineTo : ctx.moveTo).call(ctx, X(xs[i]), Y(v)); });
      for (var i = rows.length - 1; i >= 0; --i) ctx.lineTo(X(xs[i]), Y(base[i]));
      ctx.closePath();
      ctx.fillStyle = BAND_COLORS[b % BAND_COLORS.length];
      ctx.globalAlpha = 0.85;
      ctx.fill();
      ctx.globalAlpha = 1;
      rows.forEach(function (r, i) { base[i] += r[2 + b]; });
    }
    ctx.strokeStyle = T.sand;
    ctx.lineWidth = 2;
    ctx.beginPath();
    reserved.forEach(function (p, i) { (i ? ctx.lineTo : ctx.moveTo).call(ctx, X(p[0]), Y(p[1])); });
    ctx.stroke();
    ctx.lineWidth = 1;
    ctx.strokeStyle = T.wine;
    dev.ooms.forEach(function (o) {
      var x = X(o.time_us != null && t0 != null ? (o.time_us - t0) / 1000 : o.event);
      ctx.beginPath(); ctx.moveTo(x + 0.5, y0); ctx.lineTo(x + 0.5, y1); ctx.stroke();
      ctx.fillStyle = T.wine;
      ctx.fillText("OOM", x + 30 > x1 ? x - 30 : x + 3, y0 + 10);  // left of the mark at the right edge
    });
    c.canvas.addEventListener("mousemove", function (ev) {
      var rect = c.canvas.getBoundingClientRect(), xv = xlo + (ev.clientX - rect.left - x0) / (x1 - x0) * (xhi - xlo);
      var i = 0;
      while (i + 1 < xs.length && xs[i + 1] <= xv) ++i;
      var r = rows[i], html = "<b>event " + r[0] + "</b>";
      for (var b = nb - 1; b >= 0; --b)
        if (r[2 + b] > 0) html += SS.tipRow(BAND_COLORS[b % BAND_COLORS.length], ss.sites[b], SS.bytes(r[2 + b]));
      SS.tooltip(html, ev.clientX, ev.clientY);
    });
    c.canvas.addEventListener("mouseleave", function () { SS.tooltip(null); });
    SS.legend(legendBox, ss.sites.map(function (s, i) {
      return { label: s, color: BAND_COLORS[i % BAND_COLORS.length] };
    }).concat([{ label: "reserved (held by the caching allocator)", color: T.sand }]));
  }

  function stateLine(s) {
    return "allocated " + SS.bytes(s.allocated_bytes) + ", reserved " + SS.bytes(s.reserved_bytes) +
      ", free inside segments " + SS.bytes(s.free_bytes) + " in " + s.segments + " segments (" + s.empty_segments +
      " empty), largest free block " + SS.bytes(s.largest_free_block_bytes) + ", fragmentation " +
      SS.num(s.fragmentation, 2);
  }

  // One finding: severity, title, remedy, and its numbers.
  function finding(f) {
    var sev = "sev-" + f.severity;
    return el("div", { class: "finding " + sev }, [
      el("div", { class: "head" }, [el("span", { class: "badge " + sev, text: f.severity }),
        el("span", { class: "badge cat", text: f.category }), el("span", { class: "title", text: f.title })]),
      el("div", { class: "remedy" }, [el("span", { class: "label", text: "Remedy" }), f.remedy]),
      table([{ label: "metric" }, { label: "value", num: true }, { label: "unit" }], f.evidence.metrics.map(function (m) {
        return { cells: [m.name, m.unit === "B" ? SS.bytes(m.value) : SS.num(m.value, Number.isInteger(m.value) ? 0 : 2),
          m.unit === "B" ? "" : m.unit] };
      })),
    ]);
  }

  // Builds the device's section inside `box` (attached first, so the chart
  // is as wide as the page).
  function device(box, dev) {
    var sec = el("section", { class: "device", id: "device-" + dev.device });
    box.appendChild(sec);
    sec.appendChild(el("h2", { text: "Device " + dev.device + " · " + SS.num(dev.events, 0) + " events recorded" }));
    if (dev.inconsistency) sec.appendChild(el("p", { class: "hint", text: "Warning: " + dev.inconsistency }));
    sec.appendChild(el("div", { class: "cards" }, [
      card("Peak allocated", SS.bytes(dev.peak.allocated_bytes)),
      card("Peak reserved", SS.bytes(dev.peak.reserved_bytes)),
      card("Fragmentation now", SS.num(dev.at_snapshot.fragmentation, 2),
        "largest free block " + SS.bytes(dev.at_snapshot.largest_free_block_bytes)),
      card("cudaMalloc / cudaFree", SS.num(dev.churn.segment_allocs, 0) + " / " + SS.num(dev.churn.segment_frees, 0)),
      card("OOMs", SS.num(dev.churn.ooms, 0)),
    ]));
    sec.appendChild(el("h3", { text: "Active memory by allocation site, and reserved memory" }));
    var legendBox = el("div", { class: "legend" }), chart = el("div", { class: "chart memory-chart" });
    sec.appendChild(legendBox);
    sec.appendChild(chart);
    memoryChart(chart, legendBox, dev);
    var tj = dev.trace_join;
    if (tj) {
      var jb = el("div", { class: "trace-join" });
      jb.appendChild(el("h3", { text: "Joined with the trace" }));
      jb.appendChild(el("p", { class: "hint", text: tj.note + " · " + SS.num(tj.events_in_trace, 0) +
        " events inside the trace (" + SS.num(tj.events_in_steps, 0) + " in steps), " +
        SS.num(tj.events_outside, 0) + " outside it" }));
      if (tj.steps.length)
        jb.appendChild(table([{ label: "step", num: true }, { label: "allocs", num: true }, { label: "allocated", num: true },
          { label: "frees", num: true }, { label: "cudaMalloc", num: true }, { label: "cudaFree", num: true },
          { label: "OOMs", num: true }], tj.steps.map(function (st) {
          return { cells: [String(st.step), SS.num(st.allocs, 0), SS.bytes(st.alloc_bytes), SS.num(st.frees, 0),
            SS.num(st.segment_allocs, 0), SS.num(st.segment_frees, 0), SS.num(st.ooms, 0)] };
        })));
      if (tj.ops.length)
        jb.appendChild(table([{ label: "allocated", num: true }, { label: "allocs", num: true }, { label: "in op" }],
          tj.ops.map(function (o) { return { cells: [SS.bytes(o.alloc_bytes), SS.num(o.allocs, 0), o.op] }; })));
      sec.appendChild(jb);
    }
    sec.appendChild(el("h3", { text: "At the peak of allocated memory" }));
    sec.appendChild(el("p", { class: "hint", text: stateLine(dev.at_peak_allocated) }));
    sec.appendChild(sitesTable(dev.at_peak_allocated.live_by_site));
    sec.appendChild(el("h3", { text: "At the snapshot" }));
    sec.appendChild(el("p", { class: "hint", text: stateLine(dev.at_snapshot) }));
    dev.ooms.forEach(function (o) {
      var oomBox = el("div", { class: "oom" });
      oomBox.appendChild(el("h3", { text: "OOM at event " + o.event + " (" + o.cause + ")" }));
      oomBox.appendChild(el("p", { text: o.explanation }));
      oomBox.appendChild(el("p", { class: "hint", text: "Just before: " + stateLine(o.before) }));
      oomBox.appendChild(sitesTable(o.before.live_by_site));
      if (o.before.freed_before.length)
        oomBox.appendChild(table([{ label: "freed just before", num: true }, { label: "event", num: true }, { label: "allocated at" }],
          o.before.freed_before.map(function (f) { return { cells: [SS.bytes(f.bytes), String(f.event), f.site] }; })));
      sec.appendChild(oomBox);
    });
  }

  try {
    var meta = document.getElementById("report-meta");
    var a = R.allocator_settings;
    [["pickle protocol", String(R.pickle_protocol)], ["size", SS.bytes(R.file_bytes)],
     ["expandable_segments", a ? (a.expandable_segments == null ? "not given" : String(a.expandable_segments)) : "not in the file"]]
      .forEach(function (kv) { meta.appendChild(el("span", { text: kv[0] + ": " + kv[1] })); });
    if (R.findings.length) {
      var fbox = document.getElementById("findings");
      R.findings.forEach(function (f) { fbox.appendChild(finding(f)); });
      document.getElementById("findings-section").hidden = false;
    }
    var box = document.getElementById("devices");
    R.devices.forEach(function (d) { device(box, d); });
    if (!R.devices.length) box.appendChild(el("section", null, [el("p", { class: "empty", text: "No device has segments or recorded events." })]));
    var notes = document.getElementById("notes");
    notes.appendChild(el("p", { text: R.file + (a && a.conf ? " · PYTORCH_CUDA_ALLOC_CONF=" + a.conf : "") }));
    R.warnings.forEach(function (w) {
      notes.appendChild(el("p", { class: "hint", text: w.what + " ×" + w.count + " (first at offset " + w.first_offset + ")" }));
    });
    document.getElementById("footer").textContent = "stepscope memory · definitions: docs/metrics.md, \"Memory snapshots\"";
    status.finish();
  } catch (e) {
    reportError(String(e && e.stack || e));
  }
})();
