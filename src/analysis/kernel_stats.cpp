#include "analysis/kernel_stats.h"
#include "analysis/saturating.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace stepscope::analysis {
namespace {

// Exact moments of a group of ns durations: sums in integers (squares in
// 128 bits), so merging groups and the variance lose nothing.
struct Moments {
  int64_t count = 0;
  int64_t sum = 0;
  __int128 sum_sq = 0;
  int64_t min = 0;
  int64_t max = 0;

  void add(int64_t d) {
    if (count == 0 || d < min) min = d;
    if (count == 0 || d > max) max = d;
    ++count;
    sum = saturating_add(sum, d);
    sum_sq = saturating_add(sum_sq, static_cast<__int128>(d) * d);
  }
  void merge(const Moments& o) {
    if (o.count == 0) return;
    if (count == 0 || o.min < min) min = o.min;
    if (count == 0 || o.max > max) max = o.max;
    count += o.count;
    sum = saturating_add(sum, o.sum);
    sum_sq = saturating_add(sum_sq, o.sum_sq);
  }
  DurationStats stats() const {
    DurationStats s;
    s.count = count;
    s.total_ns = sum;
    s.min_ns = min;
    s.max_ns = max;
    if (count > 0) s.mean_us = static_cast<double>(sum) / static_cast<double>(count) / 1000.0;
    if (count > 1) {
      // n*Σx² - (Σx)² is exact in 128 bits; divide once at the end.
      // Past that (durations near the 2^61 ns limit) the product would
      // overflow: the same formula in long double.
      __int128 n = count;
      constexpr __int128 kMax = static_cast<__int128>(~static_cast<unsigned __int128>(0) >> 1);
      long double num_ld;
      if (sum_sq <= kMax / n) {
        num_ld = static_cast<long double>(n * sum_sq - static_cast<__int128>(sum) * sum);
      } else {
        num_ld = static_cast<long double>(n) * static_cast<long double>(sum_sq) -
                 static_cast<long double>(sum) * static_cast<long double>(sum);
      }
      long double var_ns2 = num_ld / (static_cast<long double>(n) * static_cast<long double>(n - 1));
      s.stddev_us = static_cast<double>(std::sqrt(std::max<long double>(var_ns2, 0)) / 1000.0L);
    }
    return s;
  }
};

struct NameGroup {
  trace::StringId name = 0;
  KernelFamily family = KernelFamily::kOther;
  Moments m;
  QuantileSketch sketch;
};

double pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

KernelStatsResult analyze_kernels(const trace::EventStore& store, const GpuTimeline& timeline,
                                  const AnalysisOptions& options) {
  KernelStatsResult r;
  std::array<Moments, kKernelClassCount> class_moments;
  std::array<Moments, kKernelFamilyCount> family_moments;
  std::array<std::vector<NameGroup>, kKernelClassCount> groups;
  std::array<std::unordered_map<trace::StringId, uint32_t>, kKernelClassCount> group_of_name;

  for (const GpuActivity& a : timeline.activities) {
    const int64_t d = a.duration_ns();
    const auto c = static_cast<size_t>(a.cls);
    class_moments[c].add(d);
    if (a.cls == KernelClass::kComputation) family_moments[static_cast<size_t>(a.family)].add(d);
    auto [it, inserted] = group_of_name[c].emplace(a.name, static_cast<uint32_t>(groups[c].size()));
    if (inserted) groups[c].push_back({a.name, a.family, {}});
    groups[c][it->second].m.add(d);
    groups[c][it->second].sketch.add(d);
  }

  for (const auto& m : class_moments) r.total_ns = saturating_add(r.total_ns, m.sum);
  const size_t top_n = static_cast<size_t>(std::max(options.top_kernels, 0));
  for (size_t c = 0; c < kKernelClassCount; ++c) {
    ClassKernels& out = r.classes[c];
    out.cls = static_cast<KernelClass>(c);
    out.duration = class_moments[c].stats();
    out.distinct_names = static_cast<int64_t>(groups[c].size());
    out.pct_of_all = pct(out.duration.total_ns, r.total_ns);
    auto& g = groups[c];
    std::sort(g.begin(), g.end(), [&](const NameGroup& x, const NameGroup& y) {
      if (x.m.sum != y.m.sum) return x.m.sum > y.m.sum;
      return store.strings.get(x.name) < store.strings.get(y.name);
    });
    Moments rest;
    int64_t rest_names = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      if (i < top_n) {
        KernelStat k;
        k.name = std::string(store.strings.get(g[i].name));
        k.cls = out.cls;
        k.family = g[i].family;
        k.duration = g[i].m.stats();
        k.pct_of_class = pct(k.duration.total_ns, out.duration.total_ns);
        out.top.push_back(std::move(k));
      } else {
        rest.merge(g[i].m);
        ++rest_names;
      }
    }
    out.others.name = "others";
    out.others.cls = out.cls;
    out.others.family = KernelFamily::kOther;
    out.others.distinct_names = rest_names;
    out.others.duration = rest.stats();
    out.others.pct_of_class = pct(rest.sum, out.duration.total_ns);
  }

  for (size_t c = 0; c < kKernelClassCount; ++c)
    for (const NameGroup& g : groups[c])
      r.by_name.push_back({std::string(store.strings.get(g.name)), static_cast<KernelClass>(c), g.family, g.m.sum,
                           g.sketch});
  std::sort(r.by_name.begin(), r.by_name.end(), [](const KernelNameSketch& a, const KernelNameSketch& b) {
    return a.cls != b.cls ? a.cls < b.cls : a.name < b.name;
  });

  const int64_t compute_total = class_moments[static_cast<size_t>(KernelClass::kComputation)].sum;
  for (size_t f = 0; f < kKernelFamilyCount; ++f) {
    if (family_moments[f].count == 0) continue;
    FamilyTotal ft;
    ft.family = static_cast<KernelFamily>(f);
    ft.duration = family_moments[f].stats();
    ft.pct_of_compute = pct(ft.duration.total_ns, compute_total);
    r.families.push_back(ft);
  }
  std::stable_sort(r.families.begin(), r.families.end(), [](const FamilyTotal& a, const FamilyTotal& b) {
    return a.duration.total_ns > b.duration.total_ns;
  });
  return r;
}

}  // namespace stepscope::analysis
