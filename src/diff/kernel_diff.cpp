#include "diff/kernel_diff.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace stepscope::diff {
namespace {

KernelSide side_of(const KernelUse& k) { return {k.count_per_step, k.us_per_step, k.mean_us}; }

double change_pct(double before, double after) { return before > 0 ? 100.0 * (after - before) / before : 0.0; }

// The change of a kernel present on both sides, or false when none passes
// the thresholds. A changed mean wins over a changed count: it says the
// kernel itself behaves differently, not only how often it is called.
bool classify(const KernelDelta& d, const DiffOptions& o, KernelChange& out) {
  double mean_delta = d.after.mean_us - d.before.mean_us;
  if (std::abs(mean_delta) > o.kernel_mean_change_us && std::abs(d.mean_change_pct) > o.kernel_mean_change_pct) {
    out = mean_delta > 0 ? KernelChange::kSlower : KernelChange::kFaster;
    return true;
  }
  double count_pct = change_pct(d.before.count_per_step, d.after.count_per_step);
  if (std::abs(count_pct) > o.kernel_count_change_pct) {
    out = count_pct > 0 ? KernelChange::kCalledMore : KernelChange::kCalledLess;
    return true;
  }
  return false;
}

}  // namespace

std::string_view to_string(KernelChange c) {
  static constexpr std::array<std::string_view, kKernelChangeCount> kNames = {
      "removed", "added", "slower", "faster", "called_more", "called_less"};
  return kNames[static_cast<size_t>(c)];
}

KernelDiff diff_kernels(const RunSummary& before, const RunSummary& after, const DiffOptions& options) {
  KernelDiff out;
  out.count_per_step = change_of(before.kernels_per_step, after.kernels_per_step);
  out.us_per_step = change_of(before.kernel_us_per_step, after.kernel_us_per_step);
  out.lists.resize(kKernelChangeCount);
  for (size_t c = 0; c < out.lists.size(); ++c) out.lists[c].change = static_cast<KernelChange>(c);

  auto add = [&](KernelDelta d) {
    d.us_per_step_change = d.after.us_per_step - d.before.us_per_step;
    KernelChangeList& l = out.lists[static_cast<size_t>(d.change)];
    ++l.kernels;
    l.us_per_step_change += d.us_per_step_change;
    l.top.push_back(std::move(d));
  };
  // Merge of two name-sorted lists.
  size_t i = 0, j = 0;
  const auto& b = before.kernels;
  const auto& a = after.kernels;
  while (i < b.size() || j < a.size()) {
    int cmp = i == b.size() ? 1 : j == a.size() ? -1 : b[i].name.compare(a[j].name);
    KernelDelta d;
    if (cmp < 0) {
      d.name = b[i].name;
      d.cls = b[i].cls;
      d.family = b[i].family;
      d.before = side_of(b[i++]);
      d.change = KernelChange::kRemoved;
      add(std::move(d));
    } else if (cmp > 0) {
      d.name = a[j].name;
      d.cls = a[j].cls;
      d.family = a[j].family;
      d.after = side_of(a[j++]);
      d.change = KernelChange::kAdded;
      add(std::move(d));
    } else {
      d.name = b[i].name;
      d.cls = b[i].cls;
      d.family = b[i].family;
      d.before = side_of(b[i++]);
      d.after = side_of(a[j++]);
      d.mean_change_pct = change_pct(d.before.mean_us, d.after.mean_us);
      if (classify(d, options, d.change)) {
        add(std::move(d));
      } else {
        ++out.unchanged;
      }
    }
  }
  for (KernelChangeList& l : out.lists) {
    std::sort(l.top.begin(), l.top.end(), [](const KernelDelta& x, const KernelDelta& y) {
      double ax = std::abs(x.us_per_step_change), ay = std::abs(y.us_per_step_change);
      return ax != ay ? ax > ay : x.name < y.name;
    });
    if (l.top.size() > options.top_kernels) l.top.resize(options.top_kernels);
  }
  return out;
}

}  // namespace stepscope::diff
