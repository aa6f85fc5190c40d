// Host time a cause spends while the GPU still works uses up the host's lead:
// in a host-bound step it claims the host_overhead gaps after it (up to that
// time, inside its step, after what earlier findings claimed). Hand-made
// steps with known answers, through the whole diagnosis.
#include <gtest/gtest.h>

#include "diagnose/diagnose_fixtures.h"

namespace stepscope::diagnose {
namespace {

using namespace testing_support;
using analysis::testing_support::kernel;
using analysis::testing_support::launch;
using analysis::testing_support::step;

std::string cpu_op(const std::string& name, int64_t ts_ns, int64_t dur_ns) {
  return analysis::testing_support::host_span("cpu_op", name, ts_ns, dur_ns);
}

const std::string kElementwise = "void at::native::vectorized_elementwise_kernel<4>";

// One 1 ms step (ns):
//   0-10k      host_overhead (the first launch is still to come)
//   10k-400k   a kernel the host queued early
//   `call` from 100k, blocked until the GPU drains at 400k, back at 405k:
//              300k of host time with the GPU busy, 5k with it idle
//   400k-420k  the gap the call opened (its own bucket)
//   450k-610k, 650k-810k  host_overhead gaps of 160k each (the second one
//              only when `second_gap`); then other_idle to the end.
std::vector<std::string> lead_lost_step(int n, int64_t t0, const std::string& call, bool second_gap = true) {
  std::vector<std::string> ev = {
      step(n, t0, 1'000'000),
      launch(t0 + 1'000, 5'000, n * 10 + 1), kernel(kElementwise, t0 + 10'000, 390'000, 7, n * 10 + 1),
      launch(t0 + 100'000, 305'000, n * 10 + 9, call),
      launch(t0 + 410'000, 5'000, n * 10 + 2), kernel(kElementwise, t0 + 420'000, 30'000, 7, n * 10 + 2),
      launch(t0 + 600'000, 5'000, n * 10 + 3), kernel(kElementwise, t0 + 610'000, 40'000, 7, n * 10 + 3),
  };
  if (second_gap) {
    ev.push_back(launch(t0 + 800'000, 5'000, n * 10 + 4));
    ev.push_back(kernel(kElementwise, t0 + 810'000, 40'000, 7, n * 10 + 4));
  }
  return ev;
}

TEST(HostDelay, ASyncWhileTheGpuWorksClaimsTheHostGapsAfterIt) {
  auto run = diagnose_inline(lead_lost_step(1, 0, "cudaStreamSynchronize"));
  const StepAttribution& s = run->d.attribution[0].steps[0];
  ASSERT_EQ(s.of(Bucket::kHostSync), 20'000);
  ASSERT_EQ(s.of(Bucket::kHostOverhead), 10'000 + 160'000 + 160'000);
  const Finding* sync = any_finding(run->d, Category::kHostSync);
  ASSERT_NE(sync, nullptr);
  // Its gap, and 300k of the 320k of later host gaps: the host sat blocked
  // 300k while the GPU still worked.
  EXPECT_DOUBLE_EQ(*metric(*sync, "host_time_while_gpu_busy_us_per_step"), 300.0);
  EXPECT_DOUBLE_EQ(*metric(*sync, "later_host_idle_claimed_us_per_step"), 300.0);
  EXPECT_DOUBLE_EQ(sync->bound_saving_us, 320.0);
  // The claim is from 450k on: all of the first gap, 140k of the second.
  int64_t claimed = 0;
  for (const IdleClaim& c : sync->claims) {
    EXPECT_TRUE((c.start_ns >= 450'000 && c.end_ns <= 610'000) || (c.start_ns >= 650'000 && c.end_ns <= 790'000))
        << c.start_ns << "-" << c.end_ns;
    claimed += c.end_ns - c.start_ns;
  }
  EXPECT_EQ(claimed, 300'000);
  // host_overhead keeps what nobody claimed: the 10k before the first launch
  // and the last 20k of the second gap.
  const Finding* host = any_finding(run->d, Category::kHostOverhead);
  ASSERT_NE(host, nullptr);
  EXPECT_DOUBLE_EQ(host->bound_saving_us, 30.0);
}

TEST(HostDelay, TheClaimIsBoundedByTheGapsThatFollow) {
  auto run = diagnose_inline(lead_lost_step(1, 0, "cudaStreamSynchronize", /*second_gap=*/false));
  const Finding* sync = any_finding(run->d, Category::kHostSync);
  ASSERT_NE(sync, nullptr);
  EXPECT_DOUBLE_EQ(*metric(*sync, "host_time_while_gpu_busy_us_per_step"), 300.0);
  EXPECT_DOUBLE_EQ(*metric(*sync, "later_host_idle_claimed_us_per_step"), 160.0);
  EXPECT_DOUBLE_EQ(sync->bound_saving_us, 20.0 + 160.0);
  const Finding* host = any_finding(run->d, Category::kHostOverhead);
  ASSERT_NE(host, nullptr);
  EXPECT_DOUBLE_EQ(host->bound_saving_us, 10.0);
}

// A sync asked for by a read op (.item()) counts the op's whole host time,
// since the remedy removes the op; one asked for by another op counts only
// its own wait, since that op's work stays.
TEST(HostDelay, AReadOpCountsWholeAndOtherOpsOnlyTheSync) {
  std::vector<std::string> ev = lead_lost_step(1, 0, "cudaStreamSynchronize");
  ev.push_back(cpu_op("aten::item", 60'000, 350'000));  // 60k-410k, GPU busy 60k-400k
  ev.push_back(cpu_op("aten::_local_scalar_dense", 70'000, 338'000));
  auto item = diagnose_inline(ev);
  const Finding* sync = any_finding(item->d, Category::kHostSync);
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->evidence.examples.at(0).name, "aten::item -> cudaStreamSynchronize");
  EXPECT_DOUBLE_EQ(*metric(*sync, "host_time_while_gpu_busy_us_per_step"), 340.0);
  EXPECT_DOUBLE_EQ(*metric(*sync, "later_host_idle_claimed_us_per_step"), 320.0);  // all there is

  ev.resize(ev.size() - 2);
  ev.push_back(cpu_op("aten::nonzero", 60'000, 350'000));
  auto nonzero = diagnose_inline(ev);
  sync = any_finding(nonzero->d, Category::kHostSync);
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->evidence.examples.at(0).name, "aten::nonzero -> cudaStreamSynchronize");
  EXPECT_DOUBLE_EQ(*metric(*sync, "host_time_while_gpu_busy_us_per_step"), 300.0);
}

// A sync that finds the GPU already idle costs the host no lead: nothing to claim.
TEST(HostDelay, ASyncOnAnIdleGpuClaimsNothing) {
  auto run = diagnose_inline({
      step(1, 0, 1'000'000),
      launch(1'000, 5'000, 1), kernel(kElementwise, 10'000, 40'000, 7, 1),
      launch(100'000, 5'000, 9, "cudaStreamSynchronize"),
      launch(200'000, 5'000, 2), kernel(kElementwise, 210'000, 40'000, 7, 2),
      launch(500'000, 5'000, 3), kernel(kElementwise, 510'000, 40'000, 7, 3),
  });
  EXPECT_EQ(any_finding(run->d, Category::kHostSync), nullptr);
  const Finding* host = any_finding(run->d, Category::kHostOverhead);
  ASSERT_NE(host, nullptr);
  EXPECT_DOUBLE_EQ(*metric(*host, "claimed_by_other_findings_us_per_step"), 0.0);
}

// The lead lost in one step does not reach the next step's gaps.
TEST(HostDelay, ClaimsStayInTheirStep) {
  // Step 1: the sync of lead_lost_step, then a kernel queued right after it
  // keeps the GPU busy to the step's end. Step 2: two host gaps.
  std::vector<std::string> ev = lead_lost_step(1, 0, "cudaStreamSynchronize", false);
  ev.resize(6);
  for (const std::string& e : std::vector<std::string>{
           launch(416'000, 5'000, 13), kernel(kElementwise, 450'000, 550'000, 7, 13),
           step(2, 1'000'000, 1'000'000),
           launch(1'300'000, 5'000, 31), kernel(kElementwise, 1'310'000, 40'000, 7, 31),
           launch(1'600'000, 5'000, 32), kernel(kElementwise, 1'610'000, 40'000, 7, 32)})
    ev.push_back(e);
  auto run = diagnose_inline(ev);
  ASSERT_EQ(run->d.attribution[0].steps[0].of(Bucket::kHostOverhead), 10'000);
  ASSERT_EQ(run->d.attribution[0].steps[1].of(Bucket::kHostOverhead), 310'000 + 260'000);
  const Finding* sync = any_finding(run->d, Category::kHostSync);
  ASSERT_NE(sync, nullptr);
  EXPECT_DOUBLE_EQ(*metric(*sync, "later_host_idle_claimed_us_per_step"), 0.0);
  EXPECT_TRUE(sync->claims.empty());
}

// Allocator calls claim the same way, from the second step on (the first is
// possible warm-up), and only what the earlier host_sync finding left.
TEST(HostDelay, AllocatorCallsClaimWhatEarlierFindingsLeft) {
  std::vector<std::string> ev = lead_lost_step(1, 0, "cudaMalloc");
  for (const std::string& e : lead_lost_step(2, 1'000'000, "cudaMalloc")) ev.push_back(e);
  auto run = diagnose_inline(ev);
  const Finding* alloc = any_finding(run->d, Category::kMemoryAllocator);
  ASSERT_NE(alloc, nullptr);
  EXPECT_DOUBLE_EQ(*metric(*alloc, "host_time_while_gpu_busy_us_per_step"), 300.0);
  EXPECT_DOUBLE_EQ(*metric(*alloc, "later_host_idle_claimed_us_per_step"), 300.0);
  EXPECT_DOUBLE_EQ(alloc->bound_saving_us, 5.0 + 300.0);  // its own 400k-405k, then the claim
  for (const IdleClaim& c : alloc->claims) EXPECT_GE(c.start_ns, 1'000'000) << "a claim in the warm-up step";

  // A sync before the allocator call in step 2 (1020k-1090k, GPU busy) claims
  // first: 70k of the gaps after it. Of the 335k of host gaps after the
  // allocator call (405k-420k of its own gap, then the two of 160k), 265k
  // are left for it.
  ev.push_back(launch(1'020'000, 70'000, 99, "cudaStreamSynchronize"));
  auto both = diagnose_inline(ev);
  const Finding* sync = any_finding(both->d, Category::kHostSync);
  alloc = any_finding(both->d, Category::kMemoryAllocator);
  ASSERT_NE(sync, nullptr);
  ASSERT_NE(alloc, nullptr);
  EXPECT_DOUBLE_EQ(*metric(*sync, "later_host_idle_claimed_us_per_step"), 70.0 / 2);  // over both steps
  EXPECT_DOUBLE_EQ(*metric(*alloc, "later_host_idle_claimed_us_per_step"), 265.0);   // over the steady step
}

}  // namespace
}  // namespace stepscope::diagnose
