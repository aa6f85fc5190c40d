#include "report/critical_path_json.h"

#include <string>

namespace stepscope::report {

namespace {
double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }
}  // namespace

nlohmann::ordered_json critical_path_json(const whatif::RankCriticalPath& r) {
  using nlohmann::ordered_json;
  ordered_json steps = ordered_json::array();
  for (const whatif::StepCriticalPath& s : r.steps) {
    ordered_json by = ordered_json::object(), share = ordered_json::object();
    for (int c = 0; c < whatif::kPathCategoryCount; ++c) {
      const auto cat = static_cast<whatif::PathCategory>(c);
      const std::string key(whatif::to_string(cat));
      by[key] = us(s.by_category_ns[static_cast<size_t>(c)]);
      share[key] = s.share_pct(cat);
    }
    ordered_json top = ordered_json::array();
    for (const whatif::NamedSegment& n : s.top)
      top.push_back({{"kind", n.kind},
                     {"category", std::string(whatif::to_string(n.category))},
                     {"name", n.name},
                     {"start_us", us(n.start_ns)},
                     {"dur_us", us(n.dur_ns)}});
    steps.push_back({{"step", s.step},
                     {"start_us", us(s.start_ns)},
                     {"wall_us", us(s.wall_ns())},
                     {"by_category", by},
                     {"share_pct", share},
                     {"top_segments", top}});
  }
  return {{"steps", steps}, {"notes", r.notes}};
}

}  // namespace stepscope::report
