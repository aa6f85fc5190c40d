// Renders the stepscope HTML report from the embedded data: "report" is the
// JSON of `stepscope analyze --json` (with the diagnosis), "view" the
// downsampled timeline and allocator series (html_view.cpp). When rendering
// finishes without an exception the <html> element gets data-render="ok";
// any error is listed in #render-errors and sets data-render="error" (the
// headless-browser test reads both).
"use strict";

(function () {
  var status = SS.renderStatus(), reportError = status.report;

  var el = SS.el, T = SS.TOL;
  var DATA = JSON.parse(document.getElementById("stepscope-data").textContent);
  var R = DATA.report, V = DATA.view;
  var D = R.diagnosis || null;

  // Attribution buckets (diagnose/step_attribution.h), in their JSON order.
  var BUCKETS = {
    compute_tensor_core: { label: "Tensor-core compute", color: T.green },
    compute_matmul_simt: { label: "SIMT matmul", color: T.olive },
    compute_other: { label: "Other compute", color: T.teal },
    communication_exposed: { label: "Exposed communication", color: T.indigo },
    memory_copy: { label: "Memory copy", color: T.cyan },
    data_pipeline_wait: { label: "Data pipeline wait", color: T.sand },
    host_sync: { label: "Host sync", color: T.rose },
    allocator: { label: "Allocator", color: T.wine },
    host_overhead: { label: "Host overhead", color: T.purple },
    other_idle: { label: "Other idle", color: T.grey },
  };
  var CLASS_COLORS = { computation: T.green, communication: T.indigo, memory: T.cyan, other: "#999999" };
  // Critical-path categories (whatif/critical_path.h), in the view's order.
  var PATH_CATEGORIES = {
    host_runtime: { label: "host: runtime calls", color: T.wine }, host_other: { label: "host: other CPU", color: T.purple },
    dataloader: { label: "DataLoader", color: T.sand }, launch: { label: "launch latency", color: T.rose },
    gpu_compute: { label: "GPU compute", color: T.green }, gpu_memory: { label: "GPU copies", color: T.cyan },
    gpu_communication: { label: "GPU communication", color: T.indigo }, stream_wait: { label: "stream waits", color: T.olive },
    sync: { label: "sync waits", color: "#EE7733" }, residual: { label: "unexplained", color: "#999999" },
  };
  var PATH_MARK = "#EE3377";  // a stream's work on the critical path
  var HOST_COLORS = [T.wine, T.purple];  // CPU lanes: runtime calls, other CPU ops (as the path's host categories)
  var CATEGORY_LABELS = {
    none: "none", data_pipeline: "Data pipeline", host_overhead: "Host overhead", host_sync: "Host sync",
    compute_efficiency: "Compute efficiency", memory_allocator: "Memory allocator", memory_capacity: "Memory capacity",
    communication: "Communication", load_imbalance: "Load imbalance", fusion_opportunity: "Fusion opportunity",
    unfused_optimizer: "Unfused optimizer", recomputed_constants: "Recomputed constants",
  };
  function bucketInfo(key, i) {
    return BUCKETS[key] || { label: key, color: ["#777777", "#AAAAAA", "#555555"][i % 3] };
  }
  function categoryLabel(c) { return CATEGORY_LABELS[c] || c; }
  function rankLabel(r) { return R.ranks.length > 1 ? "rank " + r.rank + " · " : ""; }

  function section(name, fn) {
    try { fn(); } catch (e) { reportError(name + ": " + (e && e.stack ? e.stack : e)); }
  }

  // ---------------------------------------------------------------- header
  function renderMeta() {
    var meta = document.getElementById("report-meta");
    var parts = [
      R.ranks.length + (R.ranks.length === 1 ? " rank" : " ranks"),
      SS.num((R.uncompressed_bytes || 0) / 1e6, 1) + " MB of trace JSON",
      "mode: " + R.mode,
      "stepscope " + R.tool_version,
    ];
    var dev = R.ranks.length && R.ranks[0].device ? R.ranks[0].device.name : null;
    if (dev) parts.splice(1, 0, dev);
    parts.forEach(function (p) { meta.appendChild(el("span", { text: p })); });
  }

  function range(values, fmt) {
    values = values.filter(function (v) { return v != null && isFinite(v); });
    if (!values.length) return "–";
    var lo = Math.min.apply(null, values), hi = Math.max.apply(null, values);
    return lo === hi ? fmt(lo) : fmt(lo) + " – " + fmt(hi);
  }

  function card(label, value, sub, cls) {
    return el("div", { class: "card" + (cls ? " " + cls : "") },
      [el("div", { class: "label", text: label }), el("div", { class: "value" + (value.indexOf("–") >= 0 ? " long" : ""), text: value }), sub ? el("div", { class: "sub", text: sub }) : null]);
  }

  function renderSummary() {
    var box = document.getElementById("summary");
    var top = D && D.findings.length ? D.findings[0] : null;
    var multi = R.ranks.length > 1 ? " (range over ranks)" : "";
    box.appendChild(card("Primary bottleneck", D ? categoryLabel(D.primary_bottleneck) : "not diagnosed",
      top ? top.title : (D ? "no finding above the reporting bar" : ""), "primary"));
    if (D) box.appendChild(card("Effective compute", SS.pct(D.effective_compute_pct), "of step time, lowest rank"));
    var stepTimes = R.ranks.map(function (r) { return r.attribution ? r.attribution.mean_step_us : null; });
    var steps = R.ranks.map(function (r) { return r.attribution ? r.attribution.steps.length : r.steps.length; });
    box.appendChild(card("Mean step time", range(stepTimes, SS.dur), range(steps, function (v) { return SS.num(v, 0); }) + (Math.max.apply(null, steps) === 1 ? " step" : " steps") + multi));
    // The report's one idle figure (docs/metrics.md, "GPU idle"): the
    // attribution's idle buckets as a share of step time, as the terminal.
    var IDLE = ["data_pipeline_wait", "host_sync", "allocator", "host_overhead", "other_idle"];
    var idleOf = function (r) {
      var t = r.attribution && r.attribution.total;
      if (!t || !t.wall_us) return null;
      return 100 * IDLE.reduce(function (a, b) { return a + (t.buckets[b] ? t.buckets[b].us : 0); }, 0) / t.wall_us;
    };
    box.appendChild(card("GPU idle", range(R.ranks.map(idleOf), SS.pct), "of step time" + multi));
    if (top && top.saves_time)
      box.appendChild(card("Largest saving", (top.saving_basis === "replay" ? "" : "≤ ") + SS.dur(top.estimated_saving_us),
        SS.pct(top.estimated_saving_pct) + " of step time per step, rank " + top.saving_rank +
        (top.saving_basis === "replay" ? " (replay without the profiler)" : " (bound)")));
    // All reported fixes replayed together without the profiler: not the
    // findings' sum (docs/whatif.md, "Savings").
    if (D && D.findings.length && D.combined_saving_rank >= 0)
      box.appendChild(card("All fixes together", SS.dur(D.combined_saving_us),
        SS.pct(D.combined_saving_pct) + " of the unprofiled step per step, rank " + D.combined_saving_rank + " (replay without the profiler)"));
  }

  // ---------------------------------------------------------------- findings
  function shiftOf(rank) {
    var t = (V.timeline || []).find(function (x) { return x.rank === rank; });
    return t ? t.clock_shift_us : null;
  }
  // A kernel or op name short enough for one table line (the full name on
  // hover): the return type, template arguments, argument list and the
  // at::native / anonymous namespaces every PyTorch kernel shares go first.
  function shortName(name, max) {
    max = max || 60;
    var s = name.replace(/^void /, "").replace(/\(anonymous namespace\)::/g, "").replace(/\bat::native::/g, "");
    for (var i = 0, prev = null; i < 8 && prev !== s; i++) { prev = s; s = s.replace(/<[^<>]*>/g, "<…>"); }
    s = s.replace(/\([^()]*\)$/, "");
    return s.length > max ? s.slice(0, max - 1) + "…" : s;
  }
  function nameCell(name, max) {
    return el("td", { class: "name", text: shortName(name, max), title: name });
  }
  function exampleTable(examples) {
    var rows = examples.map(function (e) {
      var shift = shiftOf(e.rank);
      var at = shift == null || e.ts_us == null ? "–" : SS.dur(e.ts_us + shift - V.axis.start_us);
      var inStep = e.step_offset_us == null ? "–" : "+" + SS.dur(e.step_offset_us);
      return el("tr", null, [
        el("td", { class: "num", text: String(e.rank) }), el("td", { class: "num", text: e.step == null ? "–" : String(e.step) }),
        el("td", { class: "num", text: inStep, title: e.ts_us == null ? "from a memory snapshot, not on the trace's clock" : "trace ts " + SS.num(e.ts_us, 3) + " µs" }), el("td", { class: "num", text: at }),
        el("td", { class: "num", text: SS.dur(e.dur_us) }), nameCell(e.name, 48), el("td", { class: "name", text: e.source || "–" }),
        el("td", { text: e.detail }),
      ]);
    });
    return el("table", null, [el("thead", null, [el("tr", null, [
      el("th", { class: "num", text: "rank" }), el("th", { class: "num", text: "step" }),
      el("th", { class: "num", text: "in step" }), el("th", { class: "num", text: "at (timeline)" }),
      el("th", { class: "num", text: "duration" }), el("th", { text: "name" }), el("th", { text: "your code" }),
      el("th", { text: "why it matters" }),
    ])]), el("tbody", null, rows)]);
  }
  function metricTable(metrics) {
    return el("table", null, [el("thead", null, [el("tr", null, [el("th", { text: "metric" }), el("th", { class: "num", text: "value" }), el("th", { text: "unit" })])]),
      el("tbody", null, metrics.map(function (m) {
        var digits = Math.abs(m.value) >= 100 || Number.isInteger(m.value) ? 0 : 2;
        return el("tr", null, [el("td", { class: "name", text: m.name }), el("td", { class: "num", text: SS.num(m.value, digits) }), el("td", { text: m.unit })]);
      }))]);
  }
  function findingCard(f, open) {
    var sev = "sev-" + f.severity;
    var saving = f.saves_time
      ? (f.saving_basis === "replay"
        ? el("div", { class: "saving" }, ["Estimated saving without the profiler: ", el("b", { text: SS.dur(f.estimated_saving_us) }),
          " per step (", el("b", { text: SS.pct(f.estimated_saving_pct) }), " of the unprofiled step) on rank " + f.saving_rank +
          ", by replay; the detector's bound on the profiled trace: " + SS.dur(f.bound_saving_us) + "."])
        : el("div", { class: "saving" }, ["Estimated saving: up to ", el("b", { text: SS.dur(f.estimated_saving_us) }), " per step (",
          el("b", { text: SS.pct(f.estimated_saving_pct) }), " of step time) on rank " + f.saving_rank + " (the detector's bound; not replayed)."]))
      : el("div", { class: "saving", text: "A risk rather than lost time: it costs no step time by itself." });
    var ev = el("details", open ? { open: "" } : null, [el("summary", { text: "Evidence: " + f.evidence.metrics.length + " metrics, " + f.evidence.examples.length + " examples (detector " + f.detector + ")" }),
      f.evidence.metrics.length ? metricTable(f.evidence.metrics) : null,
      f.evidence.examples.length ? exampleTable(f.evidence.examples) : null]);
    return el("div", { class: "finding " + sev }, [
      el("div", { class: "head" }, [el("span", { class: "badge " + sev, text: f.severity }), el("span", { class: "badge cat", text: f.category }),
        el("span", { class: "title", text: f.title }), el("span", { class: "badge", text: "confidence: " + f.confidence })]),
      saving,
      el("div", { class: "remedy" }, [el("span", { class: "label", text: "Remedy" }), f.remedy]),
      ev,
    ]);
  }
  function renderFindings() {
    var box = document.getElementById("findings");
    if (!D) { box.appendChild(el("p", { class: "empty", text: "The diagnosis did not run for this report." })); return; }
    if (!D.findings.length) box.appendChild(el("p", { class: "empty", text: "No finding reaches the reporting bar: primary bottleneck “" + categoryLabel(D.primary_bottleneck) + "”." }));
    // Evidence starts collapsed: the cards read as a list of causes first.
    D.findings.forEach(function (f) { box.appendChild(findingCard(f, false)); });
    if (D.minor_findings.length) {
      var det = el("details", null, [el("summary", { text: D.minor_findings.length + " minor finding(s) below the reporting bar" })]);
      D.minor_findings.forEach(function (f) { det.appendChild(findingCard(f, false)); });
      box.appendChild(det);
    }
  }

  // ------------------------------------------------------------ attribution
  function renderAttribution() {
    var chart = document.getElementById("attribution-chart"), hint = document.getElementById("attribution-hint");
    var withAttr = R.ranks.filter(function (r) { return r.attribution && r.attribution.steps.length; });
    var rows = [], keys, unit, axisLabel, max = null;
    if (withAttr.length) {
      var order = Object.keys(withAttr[0].attribution.steps[0].buckets);
      keys = order.map(function (k, i) { var b = bucketInfo(k, i); return { key: k, label: b.label, color: b.color }; });
      var perStep = withAttr.reduce(function (n, r) { return n + r.attribution.steps.length; }, 0) <= 64;
      withAttr.forEach(function (r) {
        var a = r.attribution;
        var list = perStep ? a.steps : [{ step: null, wall_us: 100, buckets: a.total.buckets, pctOnly: true }];
        list.forEach(function (s) {
          var seg = order.map(function (k) { return { key: k, value: s.pctOnly ? s.buckets[k].pct : s.buckets[k].us }; });
          var tip = '<div class="t">' + SS.esc(rankLabel(r) + (s.step == null ? "all steps" : s.step < 0 ? "GPU active span" : "step " + s.step)) +
            (s.pctOnly ? "" : " — " + SS.dur(s.wall_us)) + "</div>";
          order.forEach(function (k, i) {
            var b = s.buckets[k];
            if (b.us > 0) tip += SS.tipRow(keys[i].color, keys[i].label, (s.pctOnly ? "" : SS.dur(b.us) + "  ") + SS.pct(b.pct));
          });
          rows.push({ label: (R.ranks.length > 1 ? "rank " + r.rank + " · " : "") + (s.step == null ? "all steps" : s.step < 0 ? "active span" : "step " + s.step),
            segments: seg, total: s.wall_us, group: r.rank, tip: tip });
        });
      });
      if (perStep) {
        unit = SS.timeUnit(Math.max.apply(null, rows.map(function (r) { return r.total; })));
        axisLabel = "step wall time";
      } else {
        unit = { name: "% of step time", div: 1 }; max = 100; axisLabel = "share of all steps";
      }
      var fromSteps = withAttr.every(function (r) { return r.attribution.from_profiler_steps; });
      hint.textContent = "Every nanosecond of a step window is in exactly one bucket, so each bar adds up to the step's wall time. " +
        (fromSteps ? "A window runs from one ProfilerStep's start to the next one's." : "The trace has no ProfilerStep markers: the window is the GPU's whole active span.") +
        (perStep ? "" : " Too many steps to list: one bar per rank, over all its steps.");
    } else {
      // No diagnosis: the per-step temporal breakdown (over the GPU span of the step).
      keys = [{ key: "compute_us", label: "Compute", color: T.green }, { key: "non_compute_us", label: "Non-compute (communication, copies)", color: T.indigo },
        { key: "idle_us", label: "Idle", color: T.grey }];
      R.ranks.forEach(function (r) {
        r.steps.forEach(function (s) {
          if (!s.temporal_breakdown) return;
          var tb = s.temporal_breakdown;
          rows.push({ label: (R.ranks.length > 1 ? "rank " + r.rank + " · " : "") + "step " + s.step, group: r.rank, total: tb.kernel_time_us,
            segments: keys.map(function (k) { return { key: k.key, value: tb[k.key] }; }),
            tip: '<div class="t">step ' + s.step + " — " + SS.dur(tb.kernel_time_us) + "</div>" +
              keys.map(function (k) { return SS.tipRow(k.color, k.label, SS.dur(tb[k.key])); }).join("") });
        });
      });
      document.getElementById("attribution-title").textContent = "GPU time per step";
      hint.textContent = "Without the diagnosis: each step's GPU span split into compute, non-compute and idle.";
      unit = SS.timeUnit(Math.max.apply(null, rows.map(function (r) { return r.total; }).concat([1])));
      axisLabel = "GPU span of the step";
    }
    SS.legend(document.getElementById("attribution-legend"), keys);
    if (!rows.length) { chart.appendChild(el("p", { class: "empty", text: "No steps to attribute (no ProfilerStep markers and no GPU work)." })); return; }
    SS.stackedBars(chart, rows, keys, { unit: unit, axisLabel: axisLabel, max: max, labelWidth: R.ranks.length > 1 ? 150 : 90,
      totalLabel: max == null ? function (r) { return SS.dur(r.total); } : null });
  }

  // ---------------------------------------------------------------- timeline
  function renderTimeline() {
    var chart = document.getElementById("timeline-chart");
    chart.innerHTML = "";
    var classes = V.classes;
    var pathCats = V.path_categories || [];
    var anyPath = V.timeline.some(function (t) { return t.critical_path; });
    function pathInfo(k) { return PATH_CATEGORIES[k] || { label: k, color: "#777777" }; }
    var anyCpu = V.timeline.some(function (t) { return t.cpu_lanes && t.cpu_lanes.length; });
    SS.legend(document.getElementById("timeline-legend"), classes.map(function (c) { return { label: c, color: CLASS_COLORS[c] || "#999" }; })
      .concat(anyCpu ? [{ label: "CPU: runtime calls", color: HOST_COLORS[0] }, { label: "CPU: other ops", color: HOST_COLORS[1] }] : [])
      .concat([{ label: "step window", color: "#d5d9e2" }])
      .concat(anyPath ? [{ label: "on the critical path", color: PATH_MARK }].concat(pathCats.map(function (k) { return { label: "path: " + pathInfo(k).label, color: pathInfo(k).color }; })) : []));
    var hint = "Each stream's busy share per pixel column, stacked by kernel class: a full-height block is a stream busy the whole column. " +
      "CPU lanes (the busiest host threads) show the same for runtime calls and the other CPU ops. ";
    if (anyPath) hint += "The critical path row shows what bound each step (host CPU, launches, GPU work, waits), and a stream's work on that path is marked above its lane. ";
    if (V.ranks_drawn < V.ranks_total && !V.from_summaries) hint += "The first " + V.ranks_drawn + " of " + V.ranks_total + " ranks are drawn. ";
    hint += "Open the --perfetto export for single kernels.";
    document.getElementById("timeline-hint").textContent = hint;
    var C = V.axis.timeline_columns, span = V.axis.duration_us, colUs = span / C;
    var laneH = 26, stepH = 18, gapLane = 3, gapRank = 12, labelW = 150, right = 18, axisH = 42;
    var rows = [], y = 4;
    V.timeline.forEach(function (t, ri) {
      if (ri > 0) y += gapRank;
      rows.push({ kind: "steps", rank: t.rank, steps: t.steps, y: y, h: stepH, label: "rank " + t.rank + " · steps" });
      y += stepH + gapLane;
      if (t.critical_path) {
        var pd = pathCats.map(function () { return new Float32Array(C); });
        t.critical_path.forEach(function (c) { for (var k = 0; k < pathCats.length; k++) pd[k][c[0]] = c[k + 1] / 1000; });
        var rj = R.ranks.find(function (x) { return x.rank === t.rank; });
        var pathSteps = ((rj && rj.critical_path && rj.critical_path.steps) || []).map(function (st) {
          var a = st.start_us + t.clock_shift_us - V.axis.start_us;
          return { step: st, start: a, end: a + st.wall_us };
        });
        rows.push({ kind: "path", rank: t.rank, dense: pd, pathSteps: pathSteps, y: y, h: laneH, label: "critical path",
          colors: pathCats.map(function (k) { return pathInfo(k).color; }), names: pathCats.map(function (k) { return pathInfo(k).label; }) });
        y += laneH + gapLane;
      }
      // Host threads above the GPU streams: a host-bound step shows as a busy
      // CPU lane over an idle GPU.
      (t.cpu_lanes || []).forEach(function (l) {
        var dense = [new Float32Array(C), new Float32Array(C)];
        l.cols.forEach(function (c) { dense[0][c[0]] = c[1] / 1000; dense[1][c[0]] = c[2] / 1000; });
        rows.push({ kind: "cpu", rank: t.rank, cpu: l, dense: dense, y: y, h: laneH, label: "CPU thread " + l.tid,
          colors: HOST_COLORS, names: ["runtime calls", "other CPU ops"] });
        y += laneH + gapLane;
      });
      t.lanes.forEach(function (l) {
        var dense = classes.map(function () { return new Float32Array(C); });
        l.cols.forEach(function (c) { for (var k = 0; k < classes.length; k++) dense[k][c[0]] = c[k + 1] / 1000; });
        var onPath = null;
        if (l.path && l.path.length) { onPath = [new Float32Array(C)]; l.path.forEach(function (c) { onPath[0][c[0]] = c[1] / 1000; }); }
        rows.push({ kind: "lane", rank: t.rank, lane: l, dense: dense, onPath: onPath, y: y, h: laneH, label: "GPU " + l.device + " · stream " + l.stream,
          colors: classes.map(function (cl) { return CLASS_COLORS[cl] || "#999"; }), names: classes.map(function (cl) { return cl + " busy"; }) });
        y += laneH + gapLane;
      });
    });
    if (V.from_summaries) { chart.appendChild(el("p", { class: "empty", text: "Merged from rank summaries, which do not carry the events a timeline is drawn from: stepscope analyze draws it." })); return; }
    if (!rows.some(function (r) { return r.kind === "lane"; })) { chart.appendChild(el("p", { class: "empty", text: "The trace has no GPU activity." })); return; }
    var W = SS.width(chart), H = y + axisH;
    var c = SS.canvas(chart, W, H), ctx = c.ctx, x0 = labelW, x1 = W - right, P = Math.max(1, Math.floor(x1 - x0));
    var view = [0, span];
    var overlay = el("div", { style: "position:absolute;top:0;height:" + (H - axisH) + "px;background:rgba(51,34,136,0.12);border:1px solid rgba(51,34,136,0.4);display:none" });
    chart.style.position = "relative";
    chart.appendChild(overlay);

    // Per-pixel busy share of each class: columns weighted by their pixel overlap.
    function bins(dense) {
      var out = dense.map(function () { return new Float32Array(P); });
      var v0 = view[0], v1 = view[1], pxPerUs = P / (v1 - v0);
      var c0 = Math.max(0, Math.floor(v0 / colUs)), c1 = Math.min(C, Math.ceil(v1 / colUs));
      for (var col = c0; col < c1; col++) {
        var a = (col * colUs - v0) * pxPerUs, b = ((col + 1) * colUs - v0) * pxPerUs;
        var any = false;
        for (var k = 0; k < dense.length; k++) if (dense[k][col] > 0) { any = true; break; }
        if (!any) continue;
        for (var p = Math.max(0, Math.floor(a)); p < Math.min(P, Math.ceil(b)); p++) {
          var w = Math.min(b, p + 1) - Math.max(a, p);
          if (w <= 0) continue;
          for (var kk = 0; kk < dense.length; kk++) out[kk][p] += dense[kk][col] * w;
        }
      }
      return out;
    }
    function X(us) { return x0 + (us - view[0]) / (view[1] - view[0]) * (x1 - x0); }
    function draw() {
      ctx.clearRect(0, 0, W, H);
      rows.forEach(function (row) {
        ctx.fillStyle = "#1d2330";
        ctx.textAlign = "right";
        ctx.textBaseline = "middle";
        ctx.font = (row.kind === "steps" ? "600 " : "") + "12px " + getComputedStyle(document.body).fontFamily;
        ctx.fillText(SS.clip(ctx, row.label, labelW - 14), labelW - 8, row.y + row.h / 2);
        ctx.font = "12px " + getComputedStyle(document.body).fontFamily;
        if (row.kind === "steps") {
          row.steps.forEach(function (s, i) {
            var a = Math.max(x0, X(s.start_us)), b = Math.min(x1, X(s.end_us));
            if (b <= a) return;
            ctx.fillStyle = i % 2 ? "#e6e9ef" : "#d5d9e2";
            ctx.fillRect(a, row.y, b - a, row.h);
            if (b - a > 48) {
              ctx.fillStyle = "#1d2330";
              ctx.textAlign = "center";
              ctx.fillText(SS.clip(ctx, s.step < 0 ? "GPU span" : "step " + s.step, b - a - 6), (a + b) / 2, row.y + row.h / 2);
            }
          });
          return;
        }
        ctx.fillStyle = "#f7f8fa";
        ctx.fillRect(x0, row.y, x1 - x0, row.h);
        var bn = bins(row.dense);
        row.bins = bn;
        for (var p = 0; p < P; p++) {
          var base = row.y + row.h;
          for (var k = 0; k < bn.length; k++) {
            var f = Math.min(1, bn[k][p]);
            if (f <= 0) continue;
            var hgt = Math.max(1, f * row.h);
            ctx.fillStyle = row.colors[k];
            ctx.fillRect(x0 + p, base - hgt, 1, hgt);
            base -= hgt;
          }
        }
        // The stream's work on the critical path: a mark along the lane's top edge.
        row.pathBins = row.onPath ? bins(row.onPath)[0] : null;
        if (row.pathBins) {
          ctx.fillStyle = PATH_MARK;
          for (var q = 0; q < P; q++) if (row.pathBins[q] > 0) ctx.fillRect(x0 + q, row.y, 1, 3);
        }
      });
      ctx.clearRect(0, H - axisH, W, axisH);
      SS.timeAxis(ctx, x0, x1, H - axisH + 4, view[0], view[1], "time since the timeline start");
    }
    draw();

    var dragFrom = null;
    function localX(ev) { return ev.clientX - c.canvas.getBoundingClientRect().left; }
    function usAt(x) { return view[0] + (Math.min(x1, Math.max(x0, x)) - x0) / (x1 - x0) * (view[1] - view[0]); }
    c.canvas.addEventListener("mousedown", function (ev) { dragFrom = localX(ev); });
    c.canvas.addEventListener("mousemove", function (ev) {
      var x = localX(ev), yy = ev.clientY - c.canvas.getBoundingClientRect().top;
      if (dragFrom != null) {
        overlay.style.display = "block";
        overlay.style.left = Math.min(dragFrom, x) + "px";
        overlay.style.width = Math.abs(x - dragFrom) + "px";
      }
      var row = rows.find(function (r) { return yy >= r.y && yy < r.y + r.h; });
      if (!row || x < x0 || x > x1) { SS.tooltip(null); return; }
      var t = usAt(x), html = '<div class="t">' + SS.esc(row.label.replace(" · steps", "")) + " at " + SS.dur(t) + "</div>";
      if (row.kind === "steps") {
        var s = row.steps.find(function (s) { return t >= s.start_us && t < s.end_us; });
        html += s ? SS.tipRow(null, "step " + s.step, SS.dur(s.end_us - s.start_us)) : SS.tipRow(null, "outside steps", "");
      } else if (row.bins) {
        var p = Math.floor(x - x0);
        row.names.forEach(function (nm, k) {
          if (row.kind === "path" && !(row.bins[k][p] > 0)) return;
          html += SS.tipRow(row.colors[k], nm, SS.pct(100 * Math.min(1, row.bins[k][p] || 0), 0));
        });
        if (row.kind === "path") {
          // The step under the cursor: its longest segments on the path.
          var ps = row.pathSteps.find(function (x) { return t >= x.start && t < x.end; });
          if (ps) {
            html += SS.tipRow(null, "step " + ps.step.step + " · longest on the path", "");
            ps.step.top_segments.slice(0, 3).forEach(function (g) {
              html += SS.tipRow(pathInfo(g.category).color, g.kind + " · " + (g.name.length > 60 ? g.name.slice(0, 57) + "…" : g.name), SS.dur(g.dur_us));
            });
          }
        }
        if (row.pathBins && row.pathBins[p] > 0) html += SS.tipRow(PATH_MARK, "on the critical path", SS.pct(100 * Math.min(1, row.pathBins[p]), 0));
        if (row.lane) html += SS.tipRow(null, row.lane.activities.toLocaleString("en-US") + " activities on the stream", "");
        if (row.cpu) html += SS.tipRow(null, row.cpu.ops.toLocaleString("en-US") + " ops, " + row.cpu.calls.toLocaleString("en-US") + " runtime calls on the thread", "");
      }
      SS.tooltip(html, ev.clientX, ev.clientY);
    });
    window.addEventListener("mouseup", function (ev) {
      if (dragFrom == null) return;
      var a = usAt(dragFrom), b = usAt(localX(ev));
      dragFrom = null;
      overlay.style.display = "none";
      if (Math.abs(b - a) > (view[1] - view[0]) / P * 4) { view = [Math.min(a, b), Math.max(a, b)]; draw(); }
    });
    c.canvas.addEventListener("mouseleave", function () { SS.tooltip(null); });
    c.canvas.addEventListener("dblclick", function () { view = [0, span]; draw(); });
  }

  // --------------------------------------------------------- per-rank details
  var current = 0;
  function renderRankPicker() {
    var sel = document.getElementById("rank-select");
    R.ranks.forEach(function (r, i) { sel.appendChild(el("option", { value: String(i), text: String(r.rank) })); });
    sel.addEventListener("change", function () { current = Number(sel.value); renderRankDetails(); });
    if (R.ranks.length < 2) sel.parentNode.hidden = true;
  }
  function table(head, rows) {
    return el("table", null, [el("thead", null, [el("tr", null, head.map(function (h) { return el("th", { class: h.num ? "num" : "", text: h.t }); }))]),
      el("tbody", null, rows)]);
  }
  function td(text, cls) { return el("td", { class: cls == null ? "num" : cls, text: text }); }
  function renderRankDetails() {
    var r = R.ranks[current];
    section("idle breakdown", function () {
      var chart = document.getElementById("idle-chart"), keys = [
        { key: "host_wait_us", label: "host wait", color: T.purple }, { key: "kernel_wait_us", label: "kernel wait", color: T.sand },
        { key: "other_us", label: "other", color: "#BBBBBB" }];
      SS.legend(document.getElementById("idle-legend"), keys);
      chart.innerHTML = "";
      var tbl = document.getElementById("idle-table");
      tbl.innerHTML = "";
      if (!r.idle_breakdown.length) { chart.appendChild(el("p", { class: "empty", text: "No GPU streams on this rank." })); return; }
      var rows = r.idle_breakdown.map(function (s) {
        return { label: "GPU " + s.device + " · stream " + s.stream, group: 0, total: s.idle_us,
          segments: keys.map(function (k) { return { key: k.key, value: s[k.key] }; }),
          tip: '<div class="t">GPU ' + s.device + " · stream " + s.stream + " — idle " + SS.dur(s.idle_us) + "</div>" +
            keys.map(function (k) { return SS.tipRow(k.color, k.label, SS.dur(s[k.key])); }).join("") };
      });
      SS.stackedBars(chart, rows, keys, { unit: SS.timeUnit(Math.max.apply(null, rows.map(function (x) { return x.total; }).concat([1]))), axisLabel: "idle time", labelWidth: 150,
        totalLabel: function (r) { return SS.dur(r.total); } });
      tbl.appendChild(table([{ t: "device" }, { t: "stream" }, { t: "idle", num: 1 }, { t: "host wait", num: 1 }, { t: "kernel wait", num: 1 }, { t: "other", num: 1 }, { t: "host wait share", num: 1 }],
        r.idle_breakdown.map(function (s) {
          return el("tr", null, [td(String(s.device), ""), td(String(s.stream), ""), td(SS.dur(s.idle_us)), td(SS.dur(s.host_wait_us)), td(SS.dur(s.kernel_wait_us)), td(SS.dur(s.other_us)), td(SS.pct(100 * s.host_wait_ratio))]);
        })));
    });
    section("kernel types", function () {
      var box = document.getElementById("kernel-types");
      box.innerHTML = "";
      if (!r.kernel_types.length) { box.appendChild(el("p", { class: "empty", text: "No GPU kernels on this rank." })); return; }
      box.appendChild(table([{ t: "type" }, { t: "kernels", num: 1 }, { t: "total", num: 1 }, { t: "share of GPU kernel time", num: 1 }, { t: "" }],
        r.kernel_types.map(function (k) {
          var bar = el("div", { class: "mini-bar" }, [el("span", { style: "width:" + Math.min(100, k.pct) + "%;background:" + (CLASS_COLORS[k.type] || "#999") })]);
          return el("tr", null, [td(k.type, ""), td(k.count.toLocaleString("en-US")), td(SS.dur(k.total_us)), td(SS.pct(k.pct)), el("td", { class: "bar-cell" }, [bar])]);
        })));
    });
    section("top kernels", function () {
      var box = document.getElementById("kernel-table");
      box.innerHTML = "";
      if (!r.top_kernels.length) { box.appendChild(el("p", { class: "empty", text: "No GPU kernels on this rank." })); return; }
      box.appendChild(table([{ t: "kernel" }, { t: "type" }, { t: "family" }, { t: "count", num: 1 }, { t: "total", num: 1 }, { t: "mean", num: 1 }, { t: "max", num: 1 }, { t: "share of type", num: 1 }],
        r.top_kernels.map(function (k) {
          var name = k.distinct_names ? k.name + " (" + k.distinct_names + " names)" : k.name;
          return el("tr", null, [nameCell(name), td(k.type, ""), td(k.family, ""), td(k.count.toLocaleString("en-US")), td(SS.dur(k.total_us)), td(SS.dur(k.mean_us)), td(SS.dur(k.max_us)), td(SS.pct(k.pct_of_type))]);
        })));
    });
    section("hardware counters", renderCounters);
  }

  // "1.23 G" for counts up to 1e12 (FLOPs, instructions); "–" when not recorded.
  function large(v) {
    if (v == null) return "–";
    var units = [[1e12, " T"], [1e9, " G"], [1e6, " M"], [1e3, " k"]];
    for (var i = 0; i < units.length; i++) if (v >= units[i][0]) return (v / units[i][0]).toFixed(2) + units[i][1];
    return String(Math.round(v));
  }
  function counterTable(groups, first) {
    return table([{ t: first }, { t: "ranges", num: 1 }, { t: "CUDA-core FLOP", num: 1 }, { t: "fp32 share", num: 1 }, { t: "tensor-core inst", num: 1 }, { t: "DRAM bytes", num: 1 }],
      groups.slice(0, 25).map(function (g) {
        var share = g.cuda_core_flops > 0 && g.fp32_flops != null ? SS.pct(100 * g.fp32_flops / g.cuda_core_flops) : "–";
        return el("tr", null, [nameCell(g.name), td(g.ranges.toLocaleString("en-US")), td(large(g.cuda_core_flops)), td(share), td(large(g.tensor_core_insts)),
          td(g.dram_bytes == null ? "–" : SS.bytes(g.dram_bytes))]);
      }));
  }
  function renderCounters() {
    var c = R.ranks[current].hardware_counters, box = document.getElementById("counters-box");
    var kernels = document.getElementById("counter-kernels"), ops = document.getElementById("counter-ops");
    kernels.innerHTML = ""; ops.innerHTML = "";
    box.hidden = !c;
    if (!c) return;
    kernels.appendChild(counterTable(c.kernels, "kernel (range)"));
    if (c.matched_to_launches) ops.appendChild(counterTable(c.top_level_ops, "top-level operator"));
    else ops.appendChild(el("p", { class: "empty", text: "Not tied to operators: " + c.match_note }));
  }

  // ------------------------------------------------------------------ memory
  function renderMemory() {
    var box = document.getElementById("memory-charts");
    box.innerHTML = "";
    SS.legend(document.getElementById("memory-legend"), [
      { label: "Total Reserved (held by the caching allocator)", color: T.sand },
      { label: "Total Allocated (in live tensors)", color: T.indigo, kind: "line" },
      { label: "device capacity", color: T.rose, kind: "dashed" }]);
    // GPUs first (what runs out), then the host; rank order within each.
    // A device whose allocator never held 1 MiB (the host's few bytes under
    // profile_memory) has nothing to chart: it is named below, not drawn.
    var peakOf = function (s) {
      var m = s.initial ? Math.max(s.initial[0], s.initial[1]) : 0;
      s.cols.forEach(function (c) { m = Math.max(m, c[1], c[2]); });
      return m;
    };
    var tiny = V.memory.filter(function (s) { return (s.cols.length || s.initial) && peakOf(s) < 1048576; });
    var series = V.memory.filter(function (s) { return (s.cols.length || s.initial) && peakOf(s) >= 1048576; })
      .sort(function (a, b) { return (b.device_type === 1) - (a.device_type === 1) || a.rank - b.rank || a.device_id - b.device_id; });
    document.getElementById("memory-hint").textContent = series.length
      ? "From the profiler's [memory] samples (profile_memory=True): the largest value in each time column, held until the next sample. Same time axis as the GPU timeline."
      : "";
    var deviceName = function (s) {
      return (R.ranks.length > 1 ? "rank " + s.rank + " · " : "") + (s.device_type === 1 ? "GPU " + s.device_id : s.device_type === 0 ? "CPU" : "device type " + s.device_type + " id " + s.device_id);
    };
    if (tiny.length)
      box.appendChild(el("p", { class: "hint", text: "Not charted, the allocator never held 1 MiB there: " +
        tiny.map(function (s) { return deviceName(s) + " (peak " + SS.bytes(peakOf(s)) + ")"; }).join(", ") + "." }));
    if (!series.length) {
      if (!tiny.length) box.appendChild(el("p", { class: "empty", text: "No allocator samples: record with torch.profiler.profile(profile_memory=True) to see the allocator over time." }));
      return;
    }
    var M = V.axis.memory_columns, span = V.axis.duration_us, colUs = span / M;
    series.forEach(function (s) {
      var title = deviceName(s) + " — " + s.samples.toLocaleString("en-US") + " samples" + (s.capacity_bytes ? ", capacity " + SS.bytes(s.capacity_bytes) : "");
      box.appendChild(el("h3", { text: title }));
      var holder = el("div", { class: "chart" });
      box.appendChild(holder);
      // Step function over columns: a column's value holds until the next sampled column.
      var alloc = new Float64Array(M), res = new Float64Array(M), have = new Uint8Array(M);
      var byCol = {};
      s.cols.forEach(function (c) { byCol[c[0]] = c; });
      var cur = s.initial ? [s.initial[0], s.initial[1]] : null, peak = 0;
      for (var i = 0; i < M; i++) {
        if (byCol[i]) cur = [byCol[i][1], byCol[i][2]];
        if (cur) { alloc[i] = cur[0]; res[i] = cur[1]; have[i] = 1; peak = Math.max(peak, cur[0], cur[1]); }
      }
      var showCap = s.capacity_bytes > 0 && s.capacity_bytes <= peak * 1.6;
      var ymax = Math.max(showCap ? s.capacity_bytes : 0, peak) * 1.08 || 1;
      var unit = ymax >= Math.pow(1024, 3) ? { n: "GiB", d: Math.pow(1024, 3) } : ymax >= Math.pow(1024, 2) ? { n: "MiB", d: Math.pow(1024, 2) } : { n: "KiB", d: 1024 };
      var W = SS.width(holder), H = 210, left = 150, right = 18, top = 8, axisH = 42;
      var c = SS.canvas(holder, W, H), ctx = c.ctx, x0 = left, x1 = W - right, y0 = top, y1 = H - axisH;
      function X(col) { return x0 + col / M * (x1 - x0); }
      function Y(b) { return y1 - b / ymax * (y1 - y0); }
      var tv = SS.ticks(0, ymax / unit.d, 4);
      ctx.textAlign = "right"; ctx.textBaseline = "middle";
      tv.forEach(function (v) {
        var yy = Math.round(Y(v * unit.d)) + 0.5;
        ctx.strokeStyle = "#eef0f4"; ctx.beginPath(); ctx.moveTo(x0, yy); ctx.lineTo(x1, yy); ctx.stroke();
        ctx.fillStyle = "#4a5263"; ctx.fillText(SS.num(v, v < 10 && v % 1 ? 1 : 0), x0 - 8, yy);
      });
      ctx.save(); ctx.translate(16, (y0 + y1) / 2); ctx.rotate(-Math.PI / 2); ctx.textAlign = "center"; ctx.fillText("memory (" + unit.n + ")", 0, 0); ctx.restore();
      function path(arr) {
        ctx.beginPath();
        var started = false;
        for (var i = 0; i < M; i++) {
          if (!have[i]) continue;
          if (!started) { ctx.moveTo(X(i), Y(arr[i])); started = true; } else ctx.lineTo(X(i), Y(arr[i]));
          ctx.lineTo(X(i + 1), Y(arr[i]));
        }
        return started;
      }
      var firstCol = have.indexOf(1);
      if (path(res)) {
        ctx.lineTo(X(M), y1); ctx.lineTo(X(firstCol), y1); ctx.closePath();
        ctx.fillStyle = "rgba(221,204,119,0.45)"; ctx.fill();
        path(res); ctx.strokeStyle = "#b8a44a"; ctx.lineWidth = 1; ctx.stroke();
      }
      if (path(alloc)) { ctx.strokeStyle = T.indigo; ctx.lineWidth = 1.6; ctx.stroke(); ctx.lineWidth = 1; }
      if (showCap) {
        ctx.setLineDash([5, 4]); ctx.strokeStyle = T.rose; ctx.beginPath(); ctx.moveTo(x0, Y(s.capacity_bytes)); ctx.lineTo(x1, Y(s.capacity_bytes)); ctx.stroke(); ctx.setLineDash([]);
      }
      SS.timeAxis(ctx, x0, x1, y1 + 4, 0, span, "time since the timeline start");
      c.canvas.addEventListener("mousemove", function (ev) {
        var x = ev.clientX - c.canvas.getBoundingClientRect().left;
        if (x < x0 || x > x1) { SS.tooltip(null); return; }
        var col = Math.min(M - 1, Math.floor((x - x0) / (x1 - x0) * M));
        if (!have[col]) { SS.tooltip(null); return; }
        SS.tooltip('<div class="t">' + SS.esc(title.split(" — ")[0]) + " at " + SS.dur(col * colUs) + "</div>" +
          SS.tipRow(T.sand, "reserved", SS.bytes(res[col])) + SS.tipRow(T.indigo, "allocated", SS.bytes(alloc[col])), ev.clientX, ev.clientY);
      });
      c.canvas.addEventListener("mouseleave", function () { SS.tooltip(null); });
    });
  }

  // ------------------------------------------------------------------- notes
  function renderNotes() {
    var box = document.getElementById("notes");
    var items = [];
    (R.warnings || []).forEach(function (w) { items.push("warning: " + w); });
    (R.notes || []).forEach(function (n) { items.push("note: " + n); });
    R.ranks.forEach(function (r) {
      var imp = r.import;
      if (imp.skipped_records > 0) items.push("rank " + r.rank + ": " + imp.skipped_records + " malformed records skipped" +
        (imp.log.length ? " (first: " + imp.log[0].message + " at byte " + imp.log[0].byte_offset + ")" : ""));
      var repaired = imp.counters.invalid_utf8_repaired || 0;
      if (repaired > 0) items.push("rank " + r.rank + ": " + repaired + " records with invalid UTF-8 kept, the bad bytes replaced by U+FFFD");
    });
    if (D) {
      D.not_assessed.forEach(function (n) { items.push("not assessed — " + n.what + ": " + n.reason); });
      D.validation_errors.forEach(function (v) { items.push("rejected detector output: " + v); });
    }
    var files = R.ranks.map(function (r) { return "rank " + r.rank + ": " + r.file + " (" + r.import.events.toLocaleString("en-US") + " events, " + r.import.gpu_activities.toLocaleString("en-US") + " GPU activities)"; });
    box.appendChild(el("h3", { text: "Trace files" }));
    box.appendChild(el("ul", { class: "notes" }, files.map(function (f) { return el("li", { text: f }); })));
    box.appendChild(el("h3", { text: "Warnings and what could not be judged" }));
    box.appendChild(items.length ? el("ul", { class: "notes" }, items.map(function (t) { return el("li", { text: t }); }))
      : el("p", { class: "empty", text: "None: every record was read and every check could run." }));
    if (D && D.detectors.length) {
      box.appendChild(el("details", null, [el("summary", { text: "Detectors run (" + D.detectors.length + ")" }),
        table([{ t: "detector" }, { t: "category" }, { t: "enabled" }, { t: "findings", num: 1 }, { t: "time", num: 1 }],
          D.detectors.map(function (d) { return el("tr", null, [td(d.name, "name"), td(d.category, ""), td(d.enabled ? "yes" : "no", ""), td(String(d.findings)), td(SS.dur(d.seconds * 1e6))]); }))]));
    }
    document.getElementById("footer").textContent = "Generated by stepscope " + R.tool_version + " (" + R.schema + " schema v" + R.schema_version +
      "). The data behind this page is embedded in it as JSON (script#stepscope-data).";
  }

  section("header", renderMeta);
  section("summary", renderSummary);
  section("findings", renderFindings);
  section("attribution", renderAttribution);
  section("timeline", renderTimeline);
  section("rank picker", renderRankPicker);
  renderRankDetails();
  section("memory", renderMemory);
  section("notes", renderNotes);

  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      section("attribution", function () { document.getElementById("attribution-chart").innerHTML = ""; renderAttribution(); });
      section("timeline", renderTimeline);
      renderRankDetails();
      section("memory", renderMemory);
    }, 200);
  });
  status.finish();
})();
