#include "analysis/multi_rank.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "analysis/collective_matching.h"

namespace stepscope::analysis {
namespace {

struct RankValue {
  int64_t rank;
  int64_t value_ns;
};

RankSpread spread_of(std::vector<RankValue> values) {
  RankSpread s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end(), [](const RankValue& a, const RankValue& b) {
    return a.value_ns != b.value_ns ? a.value_ns < b.value_ns : a.rank < b.rank;
  });
  s.ranks = static_cast<int64_t>(values.size());
  s.min_ns = values.front().value_ns;
  s.max_ns = values.back().value_ns;
  s.median_ns = values[(values.size() - 1) / 2].value_ns;
  s.spread_ns = s.max_ns - s.min_ns;
  s.fastest_rank = values.front().rank;
  // Lowest rank among those sharing the maximum.
  auto first_max = std::lower_bound(values.begin(), values.end(), s.max_ns,
                                    [](const RankValue& v, int64_t x) { return v.value_ns < x; });
  s.slowest_rank = first_max->rank;
  return s;
}

std::vector<StepAcrossRanks> step_spread(const std::vector<const RankAnalysis*>& ranks) {
  // step number -> (rank, span); the first span of a repeated number wins.
  std::map<int64_t, std::vector<std::pair<int64_t, const StepSpan*>>> by_step;
  for (const RankAnalysis* r : ranks) {
    std::unordered_map<int64_t, bool> seen;
    for (const StepSpan& s : r->steps.steps) {
      if (!seen.emplace(s.step, true).second) continue;
      by_step[s.step].emplace_back(r->rank, &s);
    }
  }
  std::vector<StepAcrossRanks> out;
  for (const auto& [step, spans] : by_step) {
    if (spans.size() < 2) continue;
    std::vector<RankValue> cpu, gpu;
    for (const auto& [rank, s] : spans) {
      cpu.push_back({rank, s->cpu_duration_ns});
      if (s->gpu_activities > 0) gpu.push_back({rank, s->gpu_duration_ns});
    }
    out.push_back({step, spread_of(std::move(cpu)), spread_of(std::move(gpu))});
  }
  return out;
}

CollectiveSkew collective_skew(const std::vector<const RankAnalysis*>& ranks, const ClockAlignment& clocks,
                               const AnalysisOptions& options) {
  CollectiveSkew out;
  const size_t n = ranks.size();
  out.ranks.resize(n);
  for (size_t i = 0; i < n; ++i) out.ranks[i].rank = ranks[i]->rank;
  bool gpu = false, host = false;
  for (const RankAnalysis* r : ranks) {
    gpu = gpu || r->collectives.source == CollectiveSource::kGpuKernels;
    host = host || r->collectives.source == CollectiveSource::kHostOps;
  }
  out.source = gpu && host ? "mixed" : gpu ? "gpu_kernels" : host ? "host_ops" : "none";
  if (clocks.status == "refused") {
    out.withheld = true;
    return out;
  }
  std::vector<const CollectiveSequence*> seqs;
  for (const RankAnalysis* r : ranks) seqs.push_back(&r->collectives);
  const CollectiveMatching matching = match_collectives(seqs);
  out.unmatched_calls = matching.unmatched_calls;
  // Onto the reference clock (0 unless this rank's clock was found off).
  std::vector<int64_t> shift(n, 0);
  for (size_t i = 0; i < n && i < clocks.ranks.size(); ++i)
    if (clocks.ranks[i].corrected) shift[i] = clocks.ranks[i].offset_ns;
  std::vector<long double> lateness_sum(n, 0);
  long double skew_sum = 0;
  std::vector<int64_t> start(n);
  for (const MatchedCollective& m : matching.matched) {
    int64_t earliest = INT64_MAX, latest = INT64_MIN;
    size_t last_rank = 0;
    for (size_t i = 0; i < n; ++i) {
      start[i] = saturating_sub(ranks[i]->collectives.calls[m.call[i]].start_ns, shift[i]);
      earliest = std::min(earliest, start[i]);
      if (start[i] > latest) {
        latest = start[i];
        last_rank = i;
      }
    }
    ++out.matched_calls;
    skew_sum += static_cast<long double>(saturating_sub(latest, earliest));
    out.max_skew_ns = std::max(out.max_skew_ns, saturating_sub(latest, earliest));
    ++out.ranks[last_rank].times_last;
    for (size_t i = 0; i < n; ++i) {
      const int64_t late = saturating_sub(start[i], earliest);
      lateness_sum[i] += static_cast<long double>(late);
      ++out.ranks[i].collectives;
      out.ranks[i].max_lateness_ns = std::max(out.ranks[i].max_lateness_ns, late);
    }
  }
  if (out.matched_calls > 0) out.mean_skew_us = static_cast<double>(skew_sum / out.matched_calls / 1000.0L);
  std::vector<double> means;
  for (size_t i = 0; i < n; ++i) {
    RankLateness& r = out.ranks[i];
    if (r.collectives == 0) continue;
    r.mean_lateness_us = static_cast<double>(lateness_sum[i] / r.collectives / 1000.0L);
    means.push_back(r.mean_lateness_us);
  }
  if (means.empty()) return out;
  // Judged against the typical rank, not against zero: in a collective every
  // rank but the first is "late" by some jitter; a straggler is late beyond it.
  std::sort(means.begin(), means.end());
  out.median_lateness_us = means[(means.size() - 1) / 2];
  // Host-side ranges (gloo on CPU) start with millisecond jitter from thread
  // scheduling, so lateness alone flags ranks at random; there a straggler
  // must also start last in more than half of the calls (by chance a rank is
  // last in 1 of n).
  const bool host_ops = out.source == "host_ops";
  for (RankLateness& r : out.ranks) {
    r.straggler = r.collectives > 0 &&
                  (r.mean_lateness_us - out.median_lateness_us) * 1000.0 > static_cast<double>(options.straggler_lateness_ns) &&
                  (!host_ops || 2 * r.times_last > r.collectives);
    if (r.straggler) out.stragglers.push_back(r.rank);
  }
  std::stable_sort(out.stragglers.begin(), out.stragglers.end(), [&](int64_t a, int64_t b) {
    auto late = [&](int64_t rank) {
      for (const auto& r : out.ranks)
        if (r.rank == rank) return r.mean_lateness_us;
      return 0.0;
    };
    return late(a) > late(b);
  });
  return out;
}

GpuTimeVariance gpu_time_variance(const std::vector<const RankAnalysis*>& ranks) {
  GpuTimeVariance out;
  std::vector<RankValue> compute, busy;
  long double sum = 0;
  for (const RankAnalysis* r : ranks) {
    const TemporalBreakdown& t = r->temporal.rank;
    out.ranks.push_back({r->rank, t.kernel_time_ns, t.busy_time_ns, t.compute_time_ns, t.communication_time_ns});
    compute.push_back({r->rank, t.compute_time_ns});
    busy.push_back({r->rank, t.busy_time_ns});
    sum += t.compute_time_ns;
  }
  if (!ranks.empty()) {
    const long double mean = sum / ranks.size();
    long double sq = 0;
    for (const auto& rt : out.ranks) sq += (rt.compute_time_ns - mean) * (rt.compute_time_ns - mean);
    const long double stddev = std::sqrt(sq / ranks.size());
    out.mean_compute_us = static_cast<double>(mean / 1000.0L);
    out.stddev_compute_us = static_cast<double>(stddev / 1000.0L);
    out.cv_compute = mean > 0 ? static_cast<double>(stddev / mean) : 0.0;
  }
  out.compute = spread_of(std::move(compute));
  out.busy = spread_of(std::move(busy));
  return out;
}

}  // namespace

MultiRankAnalysis analyze_ranks(const std::vector<const RankAnalysis*>& ranks, const AnalysisOptions& options) {
  MultiRankAnalysis out;
  std::vector<const RankAnalysis*> sorted = ranks;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const RankAnalysis* a, const RankAnalysis* b) { return a->rank < b->rank; });
  out.ranks = static_cast<int64_t>(sorted.size());
  out.steps = step_spread(sorted);
  // Clocks first: every figure below that compares absolute times across
  // ranks uses the aligned times (durations need no alignment).
  out.clocks = align_clocks(sorted);
  if (!out.clocks.warning.empty()) out.warnings.push_back(out.clocks.warning);
  out.collectives = collective_skew(sorted, out.clocks, options);
  out.gpu_time = gpu_time_variance(sorted);
  out.kernels = job_kernels(sorted, options);
  return out;
}

MultiRankAnalysis analyze_ranks(const std::vector<const trace::EventStore*>& stores,
                                const AnalysisOptions& options) {
  std::vector<RankAnalysis> results;
  results.reserve(stores.size());
  for (const trace::EventStore* s : stores) results.push_back(analyze_rank(*s, options));
  std::vector<const RankAnalysis*> ptrs;
  for (const auto& r : results) ptrs.push_back(&r);
  return analyze_ranks(ptrs, options);
}

}  // namespace stepscope::analysis
