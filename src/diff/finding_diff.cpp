#include "diff/finding_diff.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace stepscope::diff {
namespace {

using Key = std::pair<diagnose::Category, std::string>;

// Findings of one side grouped by key; within a key, reported before minor
// and larger saving first, so the k-th finding of a key on one side pairs
// with the k-th on the other (a detector that reports one cause per place,
// e.g. per rank, keeps them apart).
std::map<Key, std::vector<FindingSide>> group(const std::vector<diagnose::Finding>& reported,
                                              const std::vector<diagnose::Finding>& minor) {
  std::map<Key, std::vector<FindingSide>> out;
  auto add = [&](const diagnose::Finding& f, bool is_reported) {
    FindingSide s;
    s.present = true;
    s.reported = is_reported;
    s.title = f.title;
    s.severity = f.severity;
    s.saves_time = f.saves_time;
    s.saving_us = f.estimated_saving_us;
    s.saving_pct = f.estimated_saving_pct;
    out[{f.category, f.detector}].push_back(std::move(s));
  };
  for (const auto& f : reported) add(f, true);
  for (const auto& f : minor) add(f, false);
  for (auto& [key, sides] : out)
    std::stable_sort(sides.begin(), sides.end(), [](const FindingSide& x, const FindingSide& y) {
      return x.reported != y.reported ? x.reported : x.saving_us > y.saving_us;
    });
  return out;
}

double headline_saving(const FindingDelta& d) {
  return d.change == FindingChange::kResolved ? d.before.saving_us : d.after.saving_us;
}

}  // namespace

std::string_view to_string(FindingChange c) {
  switch (c) {
    case FindingChange::kResolved: return "resolved";
    case FindingChange::kNew: return "new";
    case FindingChange::kPersisting: return "persisting";
  }
  return "persisting";
}

std::vector<FindingDelta> diff_findings(const std::vector<diagnose::Finding>& before_reported,
                                        const std::vector<diagnose::Finding>& before_minor,
                                        const std::vector<diagnose::Finding>& after_reported,
                                        const std::vector<diagnose::Finding>& after_minor) {
  auto before = group(before_reported, before_minor);
  auto after = group(after_reported, after_minor);
  std::vector<Key> keys;
  for (const auto& [k, v] : before) keys.push_back(k);
  for (const auto& [k, v] : after)
    if (!before.count(k)) keys.push_back(k);

  std::vector<FindingDelta> out;
  static const std::vector<FindingSide> kNone;
  for (const Key& key : keys) {
    auto bi = before.find(key);
    auto ai = after.find(key);
    const auto& bs = bi == before.end() ? kNone : bi->second;
    const auto& as = ai == after.end() ? kNone : ai->second;
    for (size_t i = 0; i < std::max(bs.size(), as.size()); ++i) {
      FindingDelta d;
      d.category = key.first;
      d.detector = key.second;
      if (i < bs.size()) d.before = bs[i];
      if (i < as.size()) d.after = as[i];
      // Minor on both sides (or on one, absent on the other): never worth reporting.
      if (!d.before.reported && !d.after.reported) continue;
      d.change = d.before.reported && d.after.reported ? FindingChange::kPersisting
                 : d.before.reported                   ? FindingChange::kResolved
                                                       : FindingChange::kNew;
      d.saving_change_us = d.after.saving_us - d.before.saving_us;
      out.push_back(std::move(d));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const FindingDelta& x, const FindingDelta& y) {
    if (x.change != y.change) return x.change < y.change;
    double sx = headline_saving(x), sy = headline_saving(y);
    if (sx != sy) return sx > sy;
    return std::tie(x.category, x.detector) < std::tie(y.category, y.detector);
  });
  return out;
}

}  // namespace stepscope::diff
