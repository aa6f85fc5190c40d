// fusion_opportunity's saving for a chain of elementwise kernels counts only
// the GPU idle that fusing removes: the time a later kernel of the chain
// waited for its own op's dispatch and launch. Host work between the chain's
// ops that launches nothing (here a 292 ms host range) stays in place when
// the chain is fused, so it is not credited (issue #26: 72.5 µs of chained
// kernels were credited with 292 ms).
#include <gtest/gtest.h>

#include "diagnose/diagnose_fixtures.h"

namespace stepscope::diagnose {
namespace {

using namespace testing_support;
using analysis::testing_support::host_span;
using analysis::testing_support::kernel;
using analysis::testing_support::launch;
using analysis::testing_support::step;

constexpr const char* kElementwise = "void at::native::vectorized_elementwise_kernel<4>";

// One op at `op_ns` (20 us) that launches (5 us, 10 us into the op) a 3 us
// elementwise kernel 1 us after its launch returns.
std::vector<std::string> elementwise_op(const std::string& name, int64_t op_ns, int corr) {
  return {host_span("cpu_op", name, op_ns, 20'000), launch(op_ns + 10'000, 5'000, corr),
          kernel(kElementwise, op_ns + 16'000, 3'000, 7, corr)};
}

// Three elementwise ops at 10 us, `b_ns` and `c_ns`; a host range that
// launches nothing fills the time between the first two when there is room.
std::unique_ptr<Diagnosed> chain_run(int64_t b_ns, int64_t c_ns) {
  std::vector<std::string> events = {step(1, 0, c_ns + 100'000)};
  auto add = [&](std::vector<std::string> v) { events.insert(events.end(), v.begin(), v.end()); };
  add(elementwise_op("aten::mul", 10'000, 1));
  if (b_ns > 100'000) add({host_span("cpu_op", "log_metrics", 40'000, b_ns - 50'000)});
  add(elementwise_op("aten::add", b_ns, 2));
  add(elementwise_op("aten::relu", c_ns, 3));
  return diagnose_inline(events);
}

TEST(FusionOpportunity, LongHostWorkInsideAChainIsNotCredited) {
  // Kernels at 26-29 us, 292.066 ms and 292.096 ms; between the first two
  // the host runs a 292 ms range that launches nothing.
  auto run = chain_run(292'050'000, 292'080'000);
  const Finding* f = any_finding(run->d, Category::kFusionOpportunity);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*metric(*f, "elementwise_chains_per_step"), 1.0);
  EXPECT_DOUBLE_EQ(*metric(*f, "elementwise_chain_gpu_us_per_step"), 9.0);
  // The typical launch interval is 30 us (the median of the two from one
  // launch call to the next). First gap: 1 us of the earlier op after its
  // launch and the 30 us before the kernel's start (its op's dispatch and
  // the Python before it); second gap: all 27 us. Before: the whole
  // 292.064 ms of idle between the first and the last kernel.
  EXPECT_DOUBLE_EQ(*metric(*f, "elementwise_chain_inner_idle_us_per_step"), 58.0);
  EXPECT_DOUBLE_EQ(f->bound_saving_us, 58.0);
}

TEST(FusionOpportunity, AChainFedOnlyByItsLaunchesKeepsItsWholeGaps) {
  // The ops run back to back: every idle us between the kernels (17 us per
  // gap) is the chain's own dispatch and launches, all of which fusing
  // removes; the bound does not undercut it.
  auto run = chain_run(30'000, 50'000);
  const Finding* f = any_finding(run->d, Category::kFusionOpportunity);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*metric(*f, "elementwise_chain_inner_idle_us_per_step"), 34.0);
}

}  // namespace
}  // namespace stepscope::diagnose
