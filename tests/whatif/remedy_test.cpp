// Remedies as graph changes: exact answers on hand-made steps (a sync no
// longer waited for, host time removed, GPU work scaled, a chain fused), and
// on every example trace the replay savings' invariants: none above the
// unprofiled step, the combined saving at most the step, and the detectors'
// bounds above the replay's savings (within 5% of the step).
#include <gtest/gtest.h>

#include <filesystem>

#include "diagnose/diagnose_fixtures.h"
#include "whatif/built_graph.h"
#include "whatif/remedy.h"

namespace stepscope::whatif {
namespace {

using analysis::testing_support::host_span;
using analysis::testing_support::kernel;
using analysis::testing_support::launch;
using analysis::testing_support::step;
using testing_support::build_graph;

int64_t mean_wall(const StepGraph& g, const ReplayInput& in) {
  const ReplayResult r = replay(g, in);
  return r.windows.empty() ? 0 : r.total_ns / static_cast<int64_t>(r.windows.size());
}

// One 100 us step: a 40 us kernel, a sync that waits for it, then 20 us of
// host work and a 10 us kernel, a second sync.
std::vector<std::string> sync_step() {
  return {step(1, 0, 100'000),
          launch(1'000, 2'000, 1),
          kernel("void at::native::vectorized_elementwise_kernel<4>", 4'000, 40'000, 7, 1),
          launch(5'000, 40'000, 100, "cudaStreamSynchronize"),
          host_span("cpu_op", "aten::add", 46'000, 20'000),
          launch(67'000, 2'000, 2),
          kernel("void at::native::vectorized_elementwise_kernel<4>", 70'000, 10'000, 7, 2),
          launch(70'000, 11'000, 101, "cudaStreamSynchronize")};
}

TEST(Remedy, AnEmptyRemedyChangesNothing) {
  auto b = build_graph(sync_step());
  const ReplayInput base = recorded_input(b.graph);
  const ReplayInput same = apply_remedy(b.graph, b.timeline, Remedy{}, base);
  EXPECT_EQ(same.edge_w_ns, base.edge_w_ns);
  EXPECT_EQ(same.gpu_dur_ns, base.gpu_dur_ns);
  EXPECT_EQ(mean_wall(b.graph, same), 100'000);
}

TEST(Remedy, AnUnblockedSyncLetsTheHostRunAhead) {
  auto b = build_graph(sync_step());
  ASSERT_TRUE(b.graph.usable());
  const ReplayInput base = recorded_input(b.graph);
  Remedy r;
  r.unblock_rows.push_back(b.graph.marks[0].row);  // no mark of a sync: nothing changes
  EXPECT_EQ(mean_wall(b.graph, apply_remedy(b.graph, b.timeline, r, base)), 100'000);
  // The first sync's return: unblocked, the host starts its 20 us of work at
  // once, overlapping the 40 us kernel; the step ends when the second sync
  // returns after the second kernel.
  Remedy first;
  for (const HostMark& m : b.graph.marks)
    if (m.kind == MarkKind::kCallEnd && m.blocking) {
      first.unblock_rows.push_back(m.row);
      break;
    }
  const int64_t after = mean_wall(b.graph, apply_remedy(b.graph, b.timeline, first, base));
  EXPECT_LT(after, 100'000);
  EXPECT_GE(after, 4'000 + 40'000 + 10'000);  // the GPU work stays
}

TEST(Remedy, RemovedHostTimeShortensAHostBoundStep) {
  auto b = build_graph(sync_step());
  const ReplayInput base = recorded_input(b.graph);
  Remedy r;
  r.host_removed.push_back({46'000, 66'000});  // the 20 us op after the first sync
  const int64_t after = mean_wall(b.graph, apply_remedy(b.graph, b.timeline, r, base));
  EXPECT_NEAR(static_cast<double>(after), 80'000.0, 1'500.0);
}

TEST(Remedy, ScaledAndFusedGpuWork) {
  // A GPU-bound step: three 30 us kernels queued back to back with 2 us gaps.
  std::vector<std::string> ev = {step(1, 0, 100'000)};
  for (int k = 0; k < 3; ++k) {
    ev.push_back(launch(1'000 + 1'000 * k, 800, k + 1));
    ev.push_back(kernel("void at::native::vectorized_elementwise_kernel<4>", 5'000 + 32'000 * k, 30'000, 7, k + 1));
  }
  ev.push_back(launch(4'000, 95'000, 100, "cudaDeviceSynchronize"));
  auto b = build_graph(ev);
  const ReplayInput base = recorded_input(b.graph);
  const int64_t before = mean_wall(b.graph, base);
  std::vector<uint32_t> rows;
  for (const auto& a : b.timeline.activities) rows.push_back(a.row);
  ASSERT_EQ(rows.size(), 3u);

  Remedy half;
  for (uint32_t row : rows) half.gpu_scale.push_back({row, 0.5});
  EXPECT_NEAR(static_cast<double>(before - mean_wall(b.graph, apply_remedy(b.graph, b.timeline, half, base))),
              45'000.0, 1'000.0);

  Remedy fused;
  fused.fused_chains.push_back(rows);
  const ReplayInput f = apply_remedy(b.graph, b.timeline, fused, base);
  EXPECT_EQ(f.gpu_dur_ns[0], 90'000);
  EXPECT_EQ(f.gpu_dur_ns[1], 0);
  // The two 2 us gaps between the kernels go; the work stays.
  EXPECT_NEAR(static_cast<double>(before - mean_wall(b.graph, f)), 4'000.0, 500.0);
}

// Every example and every shared H200 trace (one rank each).
TEST(ReplaySavings, EveryExampleKeepsTheInvariants) {
  namespace fs = std::filesystem;
  int checked = 0;
  std::vector<fs::path> dirs;
  for (const std::string& root :
       {diagnose::testing_support::examples_dir(), diagnose::testing_support::shared_h200_dir()})
    if (fs::is_directory(root))
      for (const auto& dir : fs::directory_iterator(root))
        if (dir.is_directory()) dirs.push_back(dir);
  for (const fs::path& dir : dirs) {
    auto run = diagnose::testing_support::diagnose_folder(dir.string());
    const auto& d = run->d;
    ASSERT_EQ(d.replay.size(), 1u);
    const auto& u = d.replay[0].unprofiled;
    ASSERT_TRUE(u.estimated) << dir;
    EXPECT_LE(u.unprofiled_step_ns, u.profiled_step_ns) << dir;
    const double step_us = static_cast<double>(u.unprofiled_step_ns) / 1000.0;
    for (const auto* list : {&d.findings, &d.minor})
      for (const auto& f : *list) {
        if (!f.saves_time) continue;
        // A finding with a remedy model on a faithful replay is replayed.
        if (!f.remedies.empty())
          EXPECT_EQ(f.saving_basis, diagnose::SavingBasis::kReplay) << dir << " " << f.detector;
        if (f.saving_basis != diagnose::SavingBasis::kReplay) continue;
        ++checked;
        EXPECT_LE(f.estimated_saving_us, step_us + 1e-3) << dir << " " << f.detector;
        // The cross-check: the detector's bound (on the profiled run) stays
        // above the replay's saving, within 5% of the step: the bound reads
        // the attribution's buckets, the replay moves work between them.
        EXPECT_LE(f.estimated_saving_us, f.bound_saving_us + 0.05 * step_us) << dir << " " << f.detector;
      }
    ASSERT_GE(d.replay[0].combined_saving_ns, 0) << dir;
    const double combined = static_cast<double>(d.replay[0].combined_saving_ns) / 1000.0;
    EXPECT_LE(combined, step_us + 1e-3) << dir;
    // Not compared with the sum: remedies can hide each other's saving (a
    // step bound by both the host and a sync saves little from either alone).
  }
  EXPECT_GE(checked, 20);  // 27 replayed findings on the 10 examples alone
}

}  // namespace
}  // namespace stepscope::whatif

namespace stepscope::whatif {
namespace {

using diagnose::testing_support::diagnose_folder;
using diagnose::testing_support::examples_dir;

// A kernel's fixed cost is read from the trace: on the H200 examples the
// shortest kernels take about 0.8 us whatever their work.
TEST(FixedKernelCost, IsTheShortestKernelsDuration) {
  auto run = diagnose_folder(examples_dir() + "/foreach_off_adamw");
  const analysis::GpuTimeline tl = analysis::build_gpu_timeline(*run->stores.front(), {});
  const int64_t fixed = fixed_kernel_cost_ns(tl);
  EXPECT_GT(fixed, 300);
  EXPECT_LT(fixed, 2'000);
  analysis::GpuTimeline few;
  few.activities.assign(tl.activities.begin(), tl.activities.begin() + 10);
  EXPECT_EQ(fixed_kernel_cost_ns(few), 0);  // too few kernels to tell
}

// Fusion, communication and load imbalance carry remedy models: their
// savings are replayed, and stay under their bounds (plus 5% of the step).
TEST(RemedyModels, FusionChainsAreReplayed) {
  auto run = diagnose_folder(examples_dir() + "/eager_bf16_baseline");
  const diagnose::Finding* f = diagnose::testing_support::any_finding(run->d, diagnose::Category::kFusionOpportunity);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->remedies.size(), 1u);
  const double chains = *diagnose::testing_support::metric(*f, "elementwise_chains_per_step");
  const double groups = *diagnose::testing_support::metric(*f, "shared_input_matmul_groups_per_step");
  const double steps = static_cast<double>(run->d.attribution[0].steps.size());
  // One fused kernel per chain and one per lane of each matmul group.
  EXPECT_GE(static_cast<double>(f->remedies[0].remedy.fused_chains.size()), (chains + groups) * steps);
  EXPECT_FALSE(f->remedies[0].remedy.host_removed.empty());  // the groups' extra calls
  EXPECT_EQ(f->saving_basis, diagnose::SavingBasis::kReplay);
  EXPECT_GT(f->estimated_saving_us, 0);
}

TEST(RemedyModels, ExposedCollectivesAreHidden) {
  const std::string dir = stepscope::testing::shared_dir() + "/conformance/param/dlrm_8rank";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " not found";
  auto run = diagnose_folder(dir);
  const diagnose::Finding* f = diagnose::testing_support::any_finding(run->d, diagnose::Category::kCommunication);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->remedies.size(), 8u);  // every rank runs collectives
  for (const diagnose::RankRemedy& rr : f->remedies)
    for (const auto& [row, factor] : rr.remedy.gpu_scale) {
      EXPECT_GE(factor, 0.0);
      EXPECT_LT(factor, 1.0);
    }
  EXPECT_EQ(f->saving_basis, diagnose::SavingBasis::kReplay);
  EXPECT_GT(f->estimated_saving_pct, 10.0);
  EXPECT_LE(f->estimated_saving_pct, f->bound_saving_pct + 5.0);
}

}  // namespace
}  // namespace stepscope::whatif
