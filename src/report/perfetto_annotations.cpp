// The "stepscope" process of the Perfetto trace: attribution per step and the
// findings, drawn on the same clock as the events they explain.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "diagnose/diagnose.h"
#include "report/json_text.h"
#include "report/perfetto_layout.h"
#include "report/perfetto_report.h"

namespace stepscope::report {

namespace {

using diagnose::Bucket;
using diagnose::Category;
using diagnose::Finding;

// Track ids inside the stepscope process. Per rank: its attribution track.
// Per category: example lanes, then per rank the time attributed to it.
constexpr int64_t kAttributionTid = 1;                    // + rank index
constexpr int64_t kCriticalPathTid = 500'000'000;         // + rank index
constexpr int64_t kCategoryTid = 1'000'000'000;           // + category * kCategoryStride + lane
constexpr int64_t kAttributedTid = 2'000'000'000;         // + category * kCategoryStride + rank index
constexpr int64_t kCategoryStride = 10'000'000;

// The attribution bucket whose time a category explains, if it owns one.
std::optional<Bucket> bucket_of(Category c) {
  switch (c) {
    case Category::kDataPipeline: return Bucket::kDataPipeline;
    case Category::kHostOverhead: return Bucket::kHostOverhead;
    case Category::kHostSync: return Bucket::kHostSync;
    case Category::kMemoryAllocator: return Bucket::kAllocator;
    case Category::kCommunication: return Bucket::kCommunication;
    default: return std::nullopt;
  }
}

struct Tracks {
  TraceEventWriter& w;
  int32_t pid;
  uint64_t events = 0;

  void metadata(int64_t tid, std::string_view what, std::string_view arg, const std::string& value_json) {
    std::string& out = w.begin_event();
    out += "\"ph\":\"M\",\"name\":";
    append_json_string(out, what);
    fmt::format_to(std::back_inserter(out), ",\"pid\":{},\"tid\":{},\"args\":{{", pid, tid);
    append_json_string(out, arg);
    out += ':';
    out += value_json;
    out += '}';
    w.end_event();
  }
  void name_thread(int64_t tid, const std::string& name, int64_t sort) {
    std::string v;
    append_json_string(v, name);
    metadata(tid, "thread_name", "name", v);
    metadata(tid, "thread_sort_index", "sort_index", std::to_string(sort));
  }
  // Starts a slice ("X") or instant ("i"); append ",\"args\":{...}" and call end().
  std::string& begin(char phase, int64_t tid, std::string_view name, std::string_view cat, int64_t ts_ns,
                     int64_t dur_ns) {
    std::string& out = w.begin_event();
    out += phase == 'X' ? "\"ph\":\"X\"" : "\"ph\":\"i\",\"s\":\"t\"";
    out += ",\"cat\":";
    append_json_string(out, cat);
    out += ",\"name\":";
    append_json_string(out, name);
    fmt::format_to(std::back_inserter(out), ",\"pid\":{},\"tid\":{},\"ts\":", pid, tid);
    append_us_from_ns(out, ts_ns);
    if (phase == 'X') {
      out += ",\"dur\":";
      append_us_from_ns(out, dur_ns);
    }
    return out;
  }
  void end() {
    w.end_event();
    ++events;
  }
};

// Appends the `"args":{...}` member of one event, a pair at a time.
class Args {
 public:
  explicit Args(std::string& out) : out_(out) { out_ += ",\"args\":{"; }
  void close() { out_ += '}'; }
  Args& str(std::string_view k, std::string_view v) {
    key(k);
    append_json_string(out_, v);
    return *this;
  }
  Args& num(std::string_view k, double v) {
    key(k);
    append_json_number(out_, v);
    return *this;
  }
  Args& integer(std::string_view k, int64_t v) {
    key(k);
    fmt::format_to(std::back_inserter(out_), "{}", v);
    return *this;
  }

 private:
  void key(std::string_view k) {
    if (!first_) out_ += ',';
    first_ = false;
    append_json_string(out_, k);
    out_ += ':';
  }
  std::string& out_;
  bool first_ = true;
};

// One slice ("X") or instant ("i") on a stepscope track, args from `fill`.
template <typename Fill>
void emit(Tracks& t, char phase, int64_t tid, std::string_view name, std::string_view cat, int64_t ts_ns,
          int64_t dur_ns, Fill&& fill) {
  std::string& out = t.begin(phase, tid, name, cat, ts_ns, dur_ns);
  Args args(out);
  fill(args);
  args.close();
  t.end();
}

void finding_args(Args& a, const Finding& f, bool minor) {
  a.str("finding", f.title)
      .str("category", diagnose::to_string(f.category))
      .str("detector", f.detector)
      .str("severity", diagnose::to_string(f.severity))
      .str("confidence", diagnose::to_string(f.confidence))
      .num("estimated_saving_us", f.estimated_saving_us)
      .num("estimated_saving_pct", f.estimated_saving_pct)
      .integer("saving_rank", f.saving_rank)
      .str("remedy", f.remedy)
      .str("reported", minor ? "minor (below the reporting bar)" : "yes");
}

// Per rank: one slice per step window (buckets in args), and inside it the
// non-compute spans of that step as child slices.
void write_attribution(Tracks& t, const AnalyzeReport& report, const diagnose::Diagnosis& d, const TraceLayout& layout) {
  for (size_t r = 0; r < d.attribution.size() && r < layout.ranks.size(); ++r) {
    const auto& a = d.attribution[r];
    const int64_t tid = kAttributionTid + static_cast<int64_t>(r);
    const int64_t shift = layout.ranks[r].shift_ns;
    t.name_thread(tid, fmt::format("step attribution · rank {}", a.rank), static_cast<int64_t>(r));
    size_t next_span = 0;
    for (size_t s = 0; s < a.steps.size(); ++s) {
      const auto& st = a.steps[s];
      std::string name = st.step >= 0 ? fmt::format("step {}", st.step) : std::string("GPU active span");
      emit(t, 'X', tid, name, "stepscope.attribution", st.start_ns + shift, st.wall_ns(), [&](Args& args) {
        args.integer("rank", a.rank).integer("step", st.step).num("wall_us", static_cast<double>(st.wall_ns()) / 1e3);
        for (int b = 0; b < diagnose::kBucketCount; ++b) {
          auto bucket = static_cast<Bucket>(b);
          args.num(fmt::format("{}_us", diagnose::to_string(bucket)), static_cast<double>(st.of(bucket)) / 1e3);
        }
        for (int b = 0; b < diagnose::kBucketCount; ++b) {
          auto bucket = static_cast<Bucket>(b);
          args.num(fmt::format("{}_pct", diagnose::to_string(bucket)), st.pct(bucket));
        }
      });
      // Spans are in time order with their step index; clamp to the window so
      // they nest under the step slice.
      while (next_span < a.spans.size() && a.spans[next_span].step_index <= s) {
        const auto& sp = a.spans[next_span++];
        if (sp.step_index != s) continue;
        const int64_t lo = std::max(sp.start_ns, st.start_ns), hi = std::min(sp.end_ns, st.end_ns);
        if (hi <= lo) continue;
        emit(t, 'X', tid, diagnose::to_string(sp.bucket), "stepscope.attribution", lo + shift, hi - lo, [&](Args& args) {
          args.str("bucket", diagnose::to_string(sp.bucket));
          if (sp.cause_row != trace::EventStore::kNoRow && r < report.stores.size())
            args.str("cause", report.stores[r]->name_of(sp.cause_row));
        });
      }
    }
  }
}

// Per rank: one slice per step window (the path's time by category in args),
// and inside it the path as runs of one category (docs/whatif.md).
void write_critical_path(Tracks& t, const diagnose::Diagnosis& d, const TraceLayout& layout) {
  for (size_t r = 0; r < d.critical_path.size() && r < layout.ranks.size(); ++r) {
    const auto& cp = d.critical_path[r];
    if (cp.steps.empty()) continue;
    const int64_t tid = kCriticalPathTid + static_cast<int64_t>(r);
    const int64_t shift = layout.ranks[r].shift_ns;
    t.name_thread(tid, fmt::format("critical path · rank {}", cp.rank),
                  static_cast<int64_t>(layout.ranks.size() + r));
    for (const auto& st : cp.steps) {
      emit(t, 'X', tid, fmt::format("step {}", st.step), "stepscope.critical_path", st.start_ns + shift, st.wall_ns(),
           [&](Args& args) {
             args.integer("rank", cp.rank).integer("step", st.step).num("wall_us", static_cast<double>(st.wall_ns()) / 1e3);
             for (int c = 0; c < whatif::kPathCategoryCount; ++c)
               args.num(fmt::format("{}_us", whatif::to_string(static_cast<whatif::PathCategory>(c))),
                        static_cast<double>(st.by_category_ns[static_cast<size_t>(c)]) / 1e3);
           });
      for (const auto& sp : st.spans)
        emit(t, 'X', tid, whatif::to_string(sp.category), "stepscope.critical_path", sp.start_ns + shift,
             sp.end_ns - sp.start_ns, [&](Args& args) {
               if (sp.device >= 0) args.integer("device", sp.device).integer("stream", sp.stream);
             });
    }
  }
}

struct Placed {
  const Finding* finding;
  const diagnose::Example* example;
  bool minor;
  int64_t ts_ns;  // on the merged clock
};

// Per category: every example as a slice (and an instant at its start), in
// lanes so slices on one track never overlap; then the time the category's
// bucket holds, per rank.
void write_findings(Tracks& t, const diagnose::Diagnosis& d, const TraceLayout& layout) {
  std::map<Category, std::vector<Placed>> by_category;
  std::map<Category, std::pair<const Finding*, bool>> first_of;
  auto collect = [&](const std::vector<Finding>& list, bool minor) {
    for (const auto& f : list) {
      first_of.try_emplace(f.category, &f, minor);
      auto& v = by_category[f.category];
      for (const auto& e : f.evidence.examples) {
        if (!e.timed) continue;  // from a memory snapshot, not on the trace's clock
        int64_t idx = layout.index_of_rank(e.rank);
        int64_t shift = idx >= 0 ? layout.ranks[static_cast<size_t>(idx)].shift_ns : 0;
        v.push_back({&f, &e, minor, e.ts_ns + shift});
      }
    }
  };
  collect(d.findings, false);
  collect(d.minor, true);

  int64_t sort = 1000;
  for (auto& [cat, placed] : by_category) {
    const int64_t c = static_cast<int64_t>(cat);
    std::stable_sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) { return a.ts_ns < b.ts_ns; });
    std::vector<int64_t> lane_end;  // end of the last slice in each lane
    for (const auto& p : placed) {
      const int64_t end = p.ts_ns + std::max<int64_t>(0, p.example->dur_ns);
      size_t lane = 0;
      while (lane < lane_end.size() && lane_end[lane] > p.ts_ns) ++lane;
      if (lane == lane_end.size()) {
        lane_end.push_back(end);
        t.name_thread(kCategoryTid + c * kCategoryStride + static_cast<int64_t>(lane),
                      lane == 0 ? fmt::format("finding · {}", diagnose::to_string(cat))
                                : fmt::format("finding · {} ({})", diagnose::to_string(cat), lane + 1),
                      sort++);
      } else {
        lane_end[lane] = std::max(lane_end[lane], end);
      }
      const int64_t tid = kCategoryTid + c * kCategoryStride + static_cast<int64_t>(lane);
      const std::string cat_name = fmt::format("stepscope.finding.{}", diagnose::to_string(cat));
      for (char phase : {'X', 'i'}) {
        emit(t, phase, tid, phase == 'X' ? p.example->name : p.finding->title, cat_name, p.ts_ns,
             std::max<int64_t>(0, p.example->dur_ns), [&](Args& args) {
               finding_args(args, *p.finding, p.minor);
               args.str("example", p.example->name)
                   .str("detail", p.example->detail)
                   .integer("rank", p.example->rank)
                   .integer("step", p.example->step)
                   .num("example_ts_us", static_cast<double>(p.example->ts_ns) / 1e3)
                   .num("example_dur_us", static_cast<double>(p.example->dur_ns) / 1e3);
             });
      }
    }
    auto bucket = bucket_of(cat);
    if (!bucket) continue;
    const Finding* finding = first_of.at(cat).first;
    for (size_t r = 0; r < d.attribution.size() && r < layout.ranks.size(); ++r) {
      const auto& a = d.attribution[r];
      const int64_t tid = kAttributedTid + c * kCategoryStride + static_cast<int64_t>(r);
      bool named = false;
      for (const auto& sp : a.spans) {
        if (sp.bucket != *bucket || sp.end_ns <= sp.start_ns) continue;
        if (!named) {
          t.name_thread(tid, fmt::format("finding · {} · attributed time · rank {}", diagnose::to_string(cat), a.rank),
                        sort++);
          named = true;
        }
        emit(t, 'X', tid, diagnose::to_string(*bucket), fmt::format("stepscope.attributed.{}", diagnose::to_string(cat)),
             sp.start_ns + layout.ranks[r].shift_ns, sp.end_ns - sp.start_ns, [&](Args& args) {
               args.str("finding", finding->title).str("bucket", diagnose::to_string(*bucket)).integer("rank", a.rank);
               if (sp.step_index < a.steps.size()) args.integer("step", a.steps[sp.step_index].step);
             });
      }
    }
  }
}

}  // namespace

uint64_t write_stepscope_tracks(TraceEventWriter& w, const AnalyzeReport& report, const diagnose::Diagnosis& diagnosis,
                                const TraceLayout& layout) {
  Tracks t{w, layout.stepscope_pid};
  {
    std::string& out = w.begin_event();
    fmt::format_to(std::back_inserter(out), "\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":",
                   layout.stepscope_pid);
    append_json_string(out, fmt::format("{} (primary bottleneck: {})", kStepscopeProcessName, diagnosis.primary_bottleneck));
    out += '}';
    w.end_event();
    std::string& sort = w.begin_event();
    fmt::format_to(std::back_inserter(sort),
                   "\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},\"tid\":0,\"args\":{{\"sort_index\":-1}}",
                   layout.stepscope_pid);
    w.end_event();
  }
  write_attribution(t, report, diagnosis, layout);
  write_critical_path(t, diagnosis, layout);
  write_findings(t, diagnosis, layout);
  return t.events;
}

}  // namespace stepscope::report
