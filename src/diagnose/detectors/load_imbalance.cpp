// load_imbalance: in synchronous data-parallel training every rank waits at
// the next collective for the slowest one. Per step, each rank's own GPU work
// (compute and copies: its wall minus idle and exposed communication) is
// compared across ranks; the slowest rank's excess over the mean is time the
// others spend waiting, and what balancing could recover. Stragglers from
// collective start skew and the step-time spread are evidence.
// The remedy for the replay (docs/whatif.md, "Remedies"): in each step, the
// slowest rank's compute and copies shrink to the mean rank's own work. It
// is replayed on that rank alone (its own step gets shorter; the others'
// shorter waits at the collectives would need the job replay).
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>

#include "diagnose/detector_support.h"
#include "diagnose/detectors/detectors.h"
#include "diagnose/example_place.h"
#include "diagnose/part_json.h"
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;
namespace {

constexpr const char* kName = "load_imbalance";

int64_t own_work_ns(const StepAttribution& s) {
  return s.wall_ns() - s.idle_ns() - s.of(Bucket::kCommunication);
}

// One step of one rank: what comparing ranks step by step needs.
struct StepWork {
  int64_t step = 0;  // N of ProfilerStep#N
  int64_t start_ns = 0, end_ns = 0;
  int64_t own_work_ns = 0;
  // The user's line its example (ProfilerStep#N on this rank) ran under,
  // found where the store is (example_place.h); "" without one.
  std::string source;
};

struct RankSteps {
  int64_t rank = 0;
  int64_t mean_step_ns = 0;
  std::vector<StepWork> steps;  // attribution order
};

// Every rank's steps, in rank order: imbalance is a comparison of ranks, so
// the finding is made only when all are merged.
struct Part {
  std::vector<RankSteps> ranks;
  void merge(const Part& later_rank) { ranks.insert(ranks.end(), later_rank.ranks.begin(), later_rank.ranks.end()); }
  void set_rank(int64_t rank) {
    for (RankSteps& r : ranks) r.rank = rank;
  }
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StepWork, step, start_ns, end_ns, own_work_ns, source)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankSteps, rank, mean_step_ns, steps)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Part, ranks)

// The example of a step: its ProfilerStep span's window on the rank.
Example step_example(int64_t rank, int64_t step, int64_t start_ns, int64_t end_ns) {
  Example e;
  e.rank = rank;
  e.step = step;
  e.ts_ns = start_ns;
  e.dur_ns = end_ns - start_ns;
  e.name = "ProfilerStep#" + std::to_string(step);
  return e;
}

Part collect(const RankContext& rc) {
  const RankView& r = *rc.view;
  const RankAttribution& a = *r.attribution;
  RankSteps rs;
  rs.rank = r.store->rank;
  rs.mean_step_ns = a.mean_step_ns();
  std::optional<ExamplePlacer> placer;
  if (!a.steps.empty() && r.tree && r.analysis) placer.emplace(*r.store, *r.tree, r.analysis->steps);
  for (const StepAttribution& s : a.steps) {
    Example e = step_example(rs.rank, s.step, s.start_ns, s.end_ns);
    if (placer) placer->place(e);
    rs.steps.push_back({s.step, s.start_ns, s.end_ns, own_work_ns(s), std::move(e.source)});
  }
  return Part{{std::move(rs)}};
}

DetectorOutput finish(const Part& p, const JobContext& job) {
  DetectorOutput out;
  const size_t n_ranks = p.ranks.size();
  if (n_ranks < 2) {
    out.not_assessed.push_back({kName, "load balance across ranks",
                                "one rank's trace: imbalance needs the traces of at least two ranks"});
    return out;
  }
  // step number -> per rank: (step index, own work)
  std::map<int64_t, std::vector<std::pair<int32_t, int64_t>>> by_step;
  for (size_t ri = 0; ri < n_ranks; ++ri) {
    const auto& steps = p.ranks[ri].steps;
    for (size_t k = 0; k < steps.size(); ++k) {
      auto& v = by_step[steps[k].step];
      v.resize(n_ranks, {-1, 0});
      v[ri] = {static_cast<int32_t>(k), steps[k].own_work_ns};
    }
  }
  std::vector<std::vector<int64_t>> saving(n_ranks);
  for (size_t ri = 0; ri < n_ranks; ++ri) saving[ri].assign(p.ranks[ri].steps.size(), 0);
  std::vector<WeightedExample> examples;
  std::vector<double> rank_work(n_ranks, 0);
  std::vector<int64_t> rank_steps(n_ranks, 0);
  int64_t compared = 0;
  double total_excess = 0;
  std::map<size_t, RankRemedy> fixes;  // rank index -> its remedy
  for (const auto& [step, v] : by_step) {
    int64_t n = 0, sum = 0, best = -1;
    size_t slow = 0;
    for (size_t ri = 0; ri < v.size(); ++ri) {
      if (v[ri].first < 0) continue;
      ++n;
      add_into(sum, v[ri].second);
      rank_work[ri] += static_cast<double>(v[ri].second);
      ++rank_steps[ri];
      if (v[ri].second > best) best = v[ri].second, slow = ri;
    }
    if (n < 2) continue;
    ++compared;
    int64_t excess = best - sum / n;
    total_excess += static_cast<double>(excess);
    for (size_t ri = 0; ri < v.size(); ++ri)
      if (v[ri].first >= 0) saving[ri][static_cast<size_t>(v[ri].first)] = excess;
    const RankSteps& r = p.ranks[slow];
    const StepWork& s = r.steps[static_cast<size_t>(v[slow].first)];
    // The remedy: the slow rank's GPU work in this step (communication
    // aside) takes the mean rank's time.
    if (excess > 0 && best > 0) {
      RankRemedy& fix = fixes.try_emplace(slow, RankRemedy{r.rank, {}}).first->second;
      const double factor = static_cast<double>(sum / n) / static_cast<double>(best);
      fix.remedy.gpu_scale_windows.push_back({s.start_ns, s.end_ns, factor});
    }
    Example e = step_example(r.rank, step, s.start_ns, s.end_ns);
    e.source = s.source;
    e.detail = fmt::format("slowest rank: {} of GPU work against a mean of {} over {} ranks",
                           human_time(static_cast<double>(best)), human_time(static_cast<double>(sum / n)), n);
    examples.push_back({static_cast<double>(excess), std::move(e)});
  }
  if (compared == 0) {
    out.not_assessed.push_back({kName, "load balance across ranks", "no ProfilerStep number is shared by two ranks"});
    return out;
  }
  if (total_excess <= 0) return out;

  Finding f;
  f.category = Category::kLoadImbalance;
  f.detector = kName;
  f.confidence = Confidence::kMedium;
  RankSaving best;
  for (size_t ri = 0; ri < n_ranks; ++ri) {
    const RankSteps& r = p.ranks[ri];
    std::vector<int64_t> walls;
    for (const StepWork& s : r.steps) walls.push_back(s.end_ns - s.start_ns);
    best.merge(RankSaving::of_steps(r.rank, walls, r.mean_step_ns, saving[ri]));
  }
  best.apply_to(f);
  for (auto& [ri, fix] : fixes) f.remedies.push_back(std::move(fix));
  const auto& multi = *job.multi;
  double lo = 1e300, hi = 0;
  for (size_t ri = 0; ri < rank_work.size(); ++ri) {
    if (rank_steps[ri] == 0) continue;
    double w = rank_work[ri] / static_cast<double>(rank_steps[ri]);
    lo = std::min(lo, w);
    hi = std::max(hi, w);
  }
  f.title = fmt::format("Ranks wait for the slowest: {} per step of GPU-work imbalance ({:.0f}% of the step)",
                        human_time(f.estimated_saving_us * 1e3), f.estimated_saving_pct);
  auto& m = f.evidence.metrics;
  m.push_back({"ranks", static_cast<double>(n_ranks), "count"});
  m.push_back({"steps_compared", static_cast<double>(compared), "count"});
  m.push_back({"slowest_minus_mean_work_us_per_step", total_excess / static_cast<double>(compared) / 1e3, "us"});
  m.push_back({"min_rank_work_us_per_step", lo / 1e3, "us"});
  m.push_back({"max_rank_work_us_per_step", hi / 1e3, "us"});
  m.push_back({"compute_time_cv_across_ranks", multi.gpu_time.cv_compute, "ratio"});
  // Skew and stragglers compare clocks; left out when they could not be
  // aligned (multi_rank.h, CollectiveSkew::withheld), never shown as 0.
  if (!multi.collectives.withheld) {
    m.push_back({"collective_start_skew_mean_us", multi.collectives.mean_skew_us, "us"});
    m.push_back({"straggler_ranks", static_cast<double>(multi.collectives.stragglers.size()), "count"});
  }
  for (int64_t s : multi.collectives.stragglers) {
    for (const auto& rl : multi.collectives.ranks) {
      if (rl.rank != s) continue;
      Example e;
      e.rank = s;
      e.name = "straggler rank " + std::to_string(s);
      e.detail = fmt::format("starts collectives {:.1f} us after the first rank on average, last in {} calls",
                             rl.mean_lateness_us, rl.times_last);
      examples.push_back({1e18, std::move(e)});  // stragglers first
    }
  }
  f.evidence.examples = top_examples(std::move(examples));
  f.remedy = "Give every rank the same work per step: pack or bucket sequences to equal token counts (a "
             "length-grouped sampler) instead of padding-free batches of varying size, split uneven pipeline or "
             "expert loads evenly, and check the slowest rank's host (data loading, CPU contention) and GPU (clocks, "
             "thermal throttling).";
  out.findings.push_back(std::move(f));
  return out;
}

}  // namespace

Detector load_imbalance_detector() { return split_detector<Part>(kName, Category::kLoadImbalance, collect, finish); }

}  // namespace stepscope::diagnose
