// Kernels pooled over a job's ranks: counts, totals and extremes exact, the
// rank of the longest launch, percentiles within the sketch's bound of the
// exact order statistic of all launches; on two hand-made ranks and on
// PARAM's 8-rank DLRM trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/gpu_timeline.h"
#include "analysis/job_kernels.h"
#include "analysis/rank_analysis.h"
#include "analysis_fixtures.h"
#include "test_paths.h"

namespace stepscope::analysis {
namespace {

using testing_support::kernel;
using testing_support::load_inline;

double order_statistic(std::vector<int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[static_cast<size_t>(std::floor(q * static_cast<double>(v.size() - 1)))]);
}

TEST(JobKernels, TwoRanksPooled) {
  auto r0 = load_inline({kernel("gemm", 0, 10'000, 7, -1), kernel("gemm", 20'000, 20'000, 7, -1),
                         kernel("gemm", 50'000, 30'000, 7, -1), kernel("relu", 90'000, 1'000, 7, -1)});
  auto r1 = load_inline({kernel("gemm", 0, 40'000, 7, -1), kernel("gemm", 50'000, 50'000, 7, -1)});
  r1->rank = 1;
  RankAnalysis a0 = analyze_rank(*r0, {}), a1 = analyze_rank(*r1, {});
  const JobKernels j = job_kernels({&a1, &a0}, {});  // any order in, rank order used
  ASSERT_EQ(j.top.size(), 2u);
  const JobKernel& g = j.top[0];
  EXPECT_EQ(g.name, "gemm");
  EXPECT_EQ(g.ranks, 2);
  EXPECT_EQ(g.count, 5);
  EXPECT_EQ(g.total_ns, 150'000);
  EXPECT_EQ(g.min_ns, 10'000);
  EXPECT_EQ(g.max_ns, 50'000);
  EXPECT_EQ(g.max_rank, 1);
  EXPECT_NEAR(g.p50_ns, 30'000, 300);  // the 3rd of 5
  EXPECT_NEAR(g.p90_ns, 40'000, 400);  // rank floor(0.9 * 4) = 3
  EXPECT_NEAR(g.pct_of_class, 100.0 * 150 / 151, 1e-9);
  EXPECT_EQ(j.top[1].name, "relu");
  EXPECT_EQ(j.top[1].max_rank, 0);
}

TEST(JobKernels, Dlrm8RanksAgainstEveryLaunch) {
  SKIP_WITHOUT_SHARED();
  trace::LoadResult set = testing_support::load_shared("conformance/param/dlrm_8rank");
  ASSERT_EQ(set.set.ranks.size(), 8u);
  std::vector<RankAnalysis> ranks;
  std::map<std::pair<KernelClass, std::string>, std::vector<int64_t>> launches;
  for (const auto& s : set.set.ranks) {
    ranks.push_back(analyze_rank(*s, {}));
    const GpuTimeline t = build_gpu_timeline(*s, {});
    for (const GpuActivity& a : t.activities) launches[{a.cls, std::string(s->strings.get(a.name))}].push_back(a.duration_ns());
  }
  std::vector<const RankAnalysis*> ptrs;
  for (const auto& r : ranks) ptrs.push_back(&r);
  const JobKernels j = job_kernels(ptrs, {});
  ASSERT_FALSE(j.top.empty());
  for (const JobKernel& k : j.top) {
    const std::vector<int64_t>& v = launches.at({k.cls, k.name});
    int64_t total = 0;
    for (int64_t d : v) total += d;
    EXPECT_EQ(k.count, static_cast<int64_t>(v.size())) << k.name;
    EXPECT_EQ(k.total_ns, total) << k.name;
    EXPECT_EQ(k.min_ns, *std::min_element(v.begin(), v.end())) << k.name;
    EXPECT_EQ(k.max_ns, *std::max_element(v.begin(), v.end())) << k.name;
    for (auto [q, got] : {std::pair{0.5, k.p50_ns}, {0.9, k.p90_ns}, {0.99, k.p99_ns}}) {
      const double want = order_statistic(v, q);
      EXPECT_LE(std::abs(got - want), QuantileSketch::kRelativeError * want + 1e-9) << k.name << " q " << q;
    }
  }
  // Largest total first within a class.
  for (size_t i = 1; i < j.top.size(); ++i)
    if (j.top[i].cls == j.top[i - 1].cls) EXPECT_GE(j.top[i - 1].total_ns, j.top[i].total_ns);
}

}  // namespace
}  // namespace stepscope::analysis
