#include "report/critical_path_json.h"

#include <algorithm>
#include <string>

namespace stepscope::report {

namespace {
double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

// A step's crossings listed in the JSON at most (crossing_count has them all).
constexpr size_t kMaxCrossingsListed = 16;

nlohmann::ordered_json by_category_us(const std::array<int64_t, whatif::kPathCategoryCount>& ns) {
  nlohmann::ordered_json by = nlohmann::ordered_json::object();
  for (int c = 0; c < whatif::kPathCategoryCount; ++c)
    by[std::string(whatif::to_string(static_cast<whatif::PathCategory>(c)))] = us(ns[static_cast<size_t>(c)]);
  return by;
}

// [{rank, us}] for the ranks with time on the path, most first.
nlohmann::ordered_json by_rank_us(const std::vector<int64_t>& ranks, const std::vector<int64_t>& ns) {
  std::vector<size_t> order;
  for (size_t i = 0; i < ranks.size() && i < ns.size(); ++i)
    if (ns[i] > 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ns[a] > ns[b]; });
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i : order) out.push_back({{"rank", ranks[i]}, {"us", us(ns[i])}});
  return out;
}
}  // namespace

void emit_critical_path(JsonEmit& e, const whatif::RankCriticalPath& r) {
  e.begin_object();
  e.key("steps");
  e.begin_array();
  for (const whatif::StepCriticalPath& s : r.steps) {
    e.begin_object();
    e.member("step", s.step);
    e.member("start_us", us(s.start_ns));
    e.member("wall_us", us(s.wall_ns()));
    e.key("by_category");
    e.begin_object();
    for (int c = 0; c < whatif::kPathCategoryCount; ++c) {
      e.member(whatif::to_string(static_cast<whatif::PathCategory>(c)), us(s.by_category_ns[static_cast<size_t>(c)]));
    }
    e.end();
    e.key("share_pct");
    e.begin_object();
    for (int c = 0; c < whatif::kPathCategoryCount; ++c) {
      const auto cat = static_cast<whatif::PathCategory>(c);
      e.member(whatif::to_string(cat), s.share_pct(cat));
    }
    e.end();
    e.key("top_segments");
    e.begin_array();
    for (const whatif::NamedSegment& n : s.top) {
      e.begin_object();
      e.member("kind", n.kind);
      e.member("category", whatif::to_string(n.category));
      e.member("name", n.name.str());
      e.member("start_us", us(n.start_ns));
      e.member("dur_us", us(n.dur_ns));
      e.end();
    }
    e.end();
    e.end();
  }
  e.end();
  e.member("notes", r.notes);
  e.end();
}

nlohmann::ordered_json critical_path_json(const whatif::RankCriticalPath& r) {
  TreeEmit t;
  emit_critical_path(t, r);
  return t.take();
}

nlohmann::ordered_json job_critical_path_json(const whatif::JobCriticalPath& p) {
  using nlohmann::ordered_json;
  ordered_json steps = ordered_json::array();
  for (const whatif::JobStepSummary& s : p.steps) {
    ordered_json crossings = ordered_json::array();
    for (size_t k = 0; k < s.crossings.size() && k < kMaxCrossingsListed; ++k) {
      const whatif::JobCrossing& c = s.crossings[k];
      crossings.push_back({{"collective", c.op},
                           {"instance", c.ordinal},
                           {"from_rank", c.from_rank},
                           {"to_rank", c.to_rank},
                           {"at_us", us(c.at_ns)},
                           {"wait_us", us(c.wait_ns)},
                           {"max_wait_us", us(c.max_wait_ns)}});
    }
    ordered_json top = ordered_json::array();
    for (const whatif::JobPathTop& t : s.top)
      top.push_back({{"rank", t.rank},
                     {"category", std::string(whatif::to_string(t.category))},
                     {"start_us", us(t.start_ns)},
                     {"dur_us", us(t.dur_ns)}});
    steps.push_back({{"step", s.step},
                     {"end_rank", s.end_rank},
                     {"start_us", us(s.start_ns)},
                     {"wall_us", us(s.wall_ns)},
                     {"by_category_us", by_category_us(s.by_category_ns)},
                     {"by_rank_us", by_rank_us(p.ranks, s.by_rank_ns)},
                     {"crossing_count", s.crossings.size()},
                     {"crossings", crossings},
                     {"top_segments", top}});
  }
  ordered_json crossed = ordered_json::array();
  for (size_t i = 0; i < p.ranks.size() && i < p.crossed_to.size(); ++i)
    if (p.crossed_to[i] > 0) crossed.push_back({{"rank", p.ranks[i]}, {"crossings", p.crossed_to[i]}});
  return {{"ranks", p.ranks},
          {"wall_us", us(p.wall_ns)},
          {"by_category_us", by_category_us(p.total_ns)},
          {"by_rank_us", by_rank_us(p.ranks, p.total_by_rank_ns)},
          {"crossing_count", p.crossings},
          {"crossed_to", crossed},
          {"steps", steps},
          {"notes", p.notes}};
}

}  // namespace stepscope::report
