#include "diagnose/detector_support.h"

#include "diagnose/detector_part.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;

double mean_us(const std::vector<int64_t>& per_step) {
  if (per_step.empty()) return 0;
  double sum = 0;
  for (int64_t v : per_step) sum += static_cast<double>(v);
  return sum / static_cast<double>(per_step.size()) / 1000.0;
}

int32_t step_index_at(const RankAttribution& a, int64_t t) {
  auto it = std::upper_bound(a.steps.begin(), a.steps.end(), t,
                             [](int64_t x, const StepAttribution& s) { return x < s.start_ns; });
  if (it == a.steps.begin()) return -1;
  --it;
  return t < it->end_ns ? static_cast<int32_t>(it - a.steps.begin()) : -1;
}

int64_t step_number_at(const RankAttribution& a, int64_t t) {
  int32_t i = step_index_at(a, t);
  return i < 0 ? -1 : a.steps[static_cast<size_t>(i)].step;
}

Example example_of_row(const RankView& r, uint32_t row, std::string detail) {
  const auto& ev = r.store->events;
  Example e;
  e.rank = r.store->rank;
  e.ts_ns = ev.ts_ns[row];
  e.dur_ns = ev.dur_ns[row];
  e.name = std::string(r.store->name_of(row));
  e.step = step_number_at(*r.attribution, e.ts_ns);
  e.detail = std::move(detail);
  return e;
}

std::vector<int64_t> unclaimed_host_idle(const RankContext& rc, const IntervalSet* within,
                                         std::vector<Interval>* counted) {
  const RankView& r = *rc.view;
  std::vector<int64_t> out(r.attribution->steps.size(), 0);
  const IntervalSet& claimed = rc.claimed;
  std::vector<Interval> in_claim, free_parts, inside, outside;
  for (const BucketSpan& s : r.attribution->spans) {
    if (s.bucket != Bucket::kHostOverhead) continue;
    in_claim.clear();
    free_parts.clear();
    claimed.split(s.start_ns, s.end_ns, in_claim, free_parts);
    for (const Interval& p : free_parts) {
      if (within) {
        inside.clear();
        outside.clear();
        within->split(p.start_ns, p.end_ns, inside, outside);
        for (const Interval& i : inside) {
          add_into(out[s.step_index], i.end_ns - i.start_ns);
          if (counted) counted->push_back(i);
        }
      } else {
        add_into(out[s.step_index], p.end_ns - p.start_ns);
        if (counted) counted->push_back(p);
      }
    }
  }
  return out;
}

std::vector<Example> top_examples(std::vector<WeightedExample> candidates, size_t n) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const WeightedExample& a, const WeightedExample& b) { return a.weight > b.weight; });
  std::vector<Example> out;
  for (size_t i = 0; i < candidates.size() && i < n; ++i) out.push_back(std::move(candidates[i].example));
  return out;
}

std::string metric_key(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

std::string human_time(double ns) {
  double a = ns < 0 ? -ns : ns;
  if (a >= 1e9) return fmt::format("{:.2f} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.2f} ms", ns / 1e6);
  if (a >= 1e3) return fmt::format("{:.1f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

}  // namespace stepscope::diagnose
