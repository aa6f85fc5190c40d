// Kernel statistics: moments by hand (sample standard deviation, as HTA),
// the top-N + others partition on every shared trace, and class totals
// against HTA on a whole-µs single-stream trace.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/kernel_stats.h"
#include "analysis/rank_analysis.h"
#include "analysis_fixtures.h"

namespace stepscope::analysis {
namespace {

using namespace testing_support;

const ClassKernels& cls(const KernelStatsResult& r, KernelClass c) { return r.classes[static_cast<int>(c)]; }

TEST(KernelStats, MomentsAndTopByHand) {
  // gemm: 1000, 2000, 6000 ns; elementwise: 500, 500; allreduce 4000; memset 100.
  auto store = load_inline({
      kernel("volta_sgemm_128x64_nn", 0, 1000, 7, -1),
      kernel("volta_sgemm_128x64_nn", 2000, 2000, 7, -1),
      kernel("volta_sgemm_128x64_nn", 5000, 6000, 7, -1),
      kernel("void at::native::vectorized_elementwise_kernel<4>", 12000, 500, 7, -1),
      kernel("void at::native::vectorized_elementwise_kernel<4>", 13000, 500, 7, -1),
      kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 0, 4000, 20, -1),
      kernel("Memset (Device)", 20000, 100, 7, -1, "gpu_memset"),
  });
  AnalysisOptions o;
  o.top_kernels = 1;
  KernelStatsResult r = analyze_kernels(*store, build_gpu_timeline(*store, o), o);
  EXPECT_EQ(r.total_ns, 9000 + 1000 + 4000 + 100);
  const ClassKernels& comp = cls(r, KernelClass::kComputation);
  EXPECT_EQ(comp.duration.count, 5);
  EXPECT_EQ(comp.duration.total_ns, 10000);
  EXPECT_EQ(comp.distinct_names, 2);
  ASSERT_EQ(comp.top.size(), 1u);
  const KernelStat& gemm = comp.top[0];
  EXPECT_EQ(gemm.name, "volta_sgemm_128x64_nn");
  EXPECT_EQ(gemm.family, KernelFamily::kGemm);
  EXPECT_EQ(gemm.duration.count, 3);
  EXPECT_EQ(gemm.duration.total_ns, 9000);
  EXPECT_EQ(gemm.duration.min_ns, 1000);
  EXPECT_EQ(gemm.duration.max_ns, 6000);
  EXPECT_DOUBLE_EQ(gemm.duration.mean_us, 3.0);
  // Sample std of {1, 2, 6} µs: sqrt(((2)^2 + 1^2 + 3^2) / 2) = sqrt(7).
  EXPECT_NEAR(gemm.duration.stddev_us, std::sqrt(7.0), 1e-12);
  EXPECT_DOUBLE_EQ(gemm.pct_of_class, 90.0);
  EXPECT_EQ(comp.others.name, "others");
  EXPECT_EQ(comp.others.distinct_names, 1);
  EXPECT_EQ(comp.others.duration.count, 2);
  EXPECT_EQ(comp.others.duration.total_ns, 1000);
  EXPECT_EQ(comp.others.duration.stddev_us, 0.0);
  EXPECT_EQ(cls(r, KernelClass::kCommunication).duration.total_ns, 4000);
  EXPECT_EQ(cls(r, KernelClass::kMemory).duration.total_ns, 100);
  EXPECT_DOUBLE_EQ(cls(r, KernelClass::kMemory).pct_of_all, 100.0 * 100 / 14100);
  ASSERT_EQ(r.families.size(), 2u);
  EXPECT_EQ(r.families[0].family, KernelFamily::kGemm);
  EXPECT_DOUBLE_EQ(r.families[0].pct_of_compute, 90.0);
  EXPECT_EQ(r.families[1].family, KernelFamily::kElementwise);
}

TEST(KernelStats, TopPlusOthersEqualsClassOnEverySharedTrace) {
  SKIP_WITHOUT_SHARED();
  for_each_shared_rank([&](const std::string& folder, const RankAnalysis& a) {
    int64_t all = 0, all_count = 0;
    for (const ClassKernels& c : a.kernels.classes) {
      SCOPED_TRACE(folder + " " + std::string(to_string(c.cls)));
      int64_t sum = c.others.duration.total_ns, count = c.others.duration.count;
      int64_t names = c.others.distinct_names;
      for (size_t i = 0; i < c.top.size(); ++i) {
        sum += c.top[i].duration.total_ns;
        count += c.top[i].duration.count;
        if (i > 0) {
          EXPECT_GE(c.top[i - 1].duration.total_ns, c.top[i].duration.total_ns);
        }
        EXPECT_LE(c.top[i].duration.min_ns, c.top[i].duration.max_ns);
      }
      names += static_cast<int64_t>(c.top.size());
      EXPECT_EQ(sum, c.duration.total_ns);
      EXPECT_EQ(count, c.duration.count);
      EXPECT_EQ(names, c.distinct_names);
      EXPECT_LE(c.top.size(), 10u);
      all += c.duration.total_ns;
      all_count += c.duration.count;
    }
    EXPECT_EQ(all, a.kernels.total_ns);
    EXPECT_EQ(all_count, a.gpu_activities);
    int64_t family_sum = 0;
    for (const auto& f : a.kernels.families) family_sum += f.duration.total_ns;
    EXPECT_EQ(family_sum, a.kernels.classes[0].duration.total_ns);
  });
}

TEST(KernelStats, ClassTotalsMatchHtaOnSingleStreamTrace) {
  SKIP_WITHOUT_SHARED();
  // One stream and whole µs: HTA's overlap-aware type sums equal plain sums.
  const std::string folder = "conformance/param/linear";
  trace::LoadResult lr = load_shared(folder);
  RankAnalysis a = analyze_rank(*lr.set.ranks.at(0), AnalysisOptions{});
  nlohmann::json hta = hta_expected(folder);
  for (const auto& row : hta["kernel_type_breakdown"]) {
    const std::string type = row["kernel_type"].get<std::string>();
    const int64_t ns = row["sum"].get<int64_t>() * 1000;
    if (type == "COMPUTATION") {
      EXPECT_EQ(cls(a.kernels, KernelClass::kComputation).duration.total_ns, ns);
    } else if (type == "MEMORY") {
      EXPECT_EQ(cls(a.kernels, KernelClass::kMemory).duration.total_ns, ns);
    } else {
      ADD_FAILURE() << "unexpected type " << type;
    }
  }
  // A kernel HTA lists by name has the same count-free sum, max and min.
  int found = 0;
  for (const auto& row : hta["kernel_breakdown_top"]) {
    const std::string name = row["name"].get<std::string>();
    for (const ClassKernels& c : a.kernels.classes)
      for (const KernelStat& k : c.top)
        if (k.name == name) {
          EXPECT_EQ(k.duration.total_ns, static_cast<int64_t>(row["sum (us)"].get<double>() * 1000)) << name;
          ++found;
        }
  }
  EXPECT_GE(found, 3);
}

}  // namespace
}  // namespace stepscope::analysis
