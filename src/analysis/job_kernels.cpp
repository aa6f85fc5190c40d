#include "analysis/job_kernels.h"

#include <algorithm>
#include <map>
#include <utility>

#include "analysis/saturating.h"

namespace stepscope::analysis {

namespace {

struct Pooled {
  KernelFamily family = KernelFamily::kOther;
  int64_t ranks = 0;
  int64_t total_ns = 0;
  int64_t max_rank = -1;
  QuantileSketch sketch;
};

}  // namespace

JobKernels job_kernels(const std::vector<const RankAnalysis*>& ranks, const AnalysisOptions& options) {
  JobKernels out;
  // Ranks in rank order: sums and "the lowest rank on ties" do not depend on
  // how the per-rank results arrived.
  std::vector<const RankAnalysis*> ordered = ranks;
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const RankAnalysis* a, const RankAnalysis* b) { return a->rank < b->rank; });
  std::map<std::pair<KernelClass, std::string>, Pooled> pooled;
  std::array<int64_t, kKernelClassCount> class_total{};
  for (const RankAnalysis* r : ordered) {
    for (const KernelNameSketch& k : r->kernels.by_name) {
      Pooled& p = pooled[{k.cls, k.name}];
      if (p.ranks == 0) p.family = k.family;
      ++p.ranks;
      p.total_ns = saturating_add(p.total_ns, k.total_ns);
      if (k.durations.count() > 0 && (p.sketch.count() == 0 || k.durations.max() > p.sketch.max())) p.max_rank = r->rank;
      p.sketch.merge(k.durations);
      const auto c = static_cast<size_t>(k.cls);
      class_total[c] = saturating_add(class_total[c], k.total_ns);
    }
  }
  std::array<std::vector<const std::pair<const std::pair<KernelClass, std::string>, Pooled>*>, kKernelClassCount> by_class;
  for (const auto& entry : pooled) by_class[static_cast<size_t>(entry.first.first)].push_back(&entry);
  const size_t top_n = static_cast<size_t>(std::max(options.top_kernels, 0));
  for (size_t c = 0; c < kKernelClassCount; ++c) {
    auto& v = by_class[c];
    std::stable_sort(v.begin(), v.end(), [](const auto* a, const auto* b) {
      return a->second.total_ns != b->second.total_ns ? a->second.total_ns > b->second.total_ns
                                                       : a->first.second < b->first.second;
    });
    for (size_t i = 0; i < v.size() && i < top_n; ++i) {
      const auto& [key, p] = *v[i];
      JobKernel k;
      k.name = key.second;
      k.cls = key.first;
      k.family = p.family;
      k.ranks = p.ranks;
      k.count = static_cast<int64_t>(std::min<uint64_t>(p.sketch.count(), INT64_MAX));
      k.total_ns = p.total_ns;
      k.min_ns = p.sketch.min();
      k.max_ns = p.sketch.max();
      k.max_rank = p.max_rank;
      k.p50_ns = p.sketch.quantile(0.50);
      k.p90_ns = p.sketch.quantile(0.90);
      k.p99_ns = p.sketch.quantile(0.99);
      k.pct_of_class = class_total[c] > 0 ? 100.0 * static_cast<double>(p.total_ns) / static_cast<double>(class_total[c])
                                          : 0.0;
      out.top.push_back(std::move(k));
    }
  }
  return out;
}

}  // namespace stepscope::analysis
