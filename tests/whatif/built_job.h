// A job of ranks diagnosed from inline events or a folder, with each rank's
// timeline and replay graph and the job graph over them (whatif/job_graph.h),
// and the hand-made two-rank step the job tests share.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/gpu_timeline.h"
#include "diagnose/diagnose_fixtures.h"
#include "diagnose/replay_graph.h"
#include "whatif/job_graph.h"

namespace stepscope::whatif::testing_support {

using analysis::testing_support::kernel;
using analysis::testing_support::launch;
using analysis::testing_support::load_inline;
using analysis::testing_support::step;
using diagnose::testing_support::Diagnosed;

constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
constexpr const char* kAllGather = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
constexpr const char* kCompute = "nvjet_sm90_tst_128x256_h_bz_NNT";

// The graphs of a diagnosed run, and the job graph over them.
struct Job {
  std::unique_ptr<Diagnosed> run;
  std::vector<analysis::GpuTimeline> timelines;
  std::vector<StepGraph> graphs;
  JobGraph graph;
};

inline std::unique_ptr<Job> build_job(std::unique_ptr<Diagnosed> run) {
  auto j = std::make_unique<Job>();
  j->run = std::move(run);
  const size_t n = j->run->stores.size();
  j->timelines.resize(n);
  j->graphs.resize(n);
  std::vector<JobRankInput> in;
  for (size_t i = 0; i < n; ++i) {
    const trace::EventStore& s = *j->run->stores[i];
    j->timelines[i] = analysis::build_gpu_timeline(s, analysis::AnalysisOptions{});
    j->graphs[i] = diagnose::build_replay_graph(s, j->timelines[i], j->run->ranks[i].steps, diagnose::build_host_index(s));
  }
  for (size_t i = 0; i < n; ++i)
    in.push_back({j->run->stores[i]->rank, &j->graphs[i], &j->timelines[i], &j->run->ranks[i].collectives,
                  j->run->stores[i]->meta.base_time_ns, j->run->stores[i]->meta.world_size.value_or(0)});
  j->graph = build_job_graph(in, j->run->multi.clocks);
  return j;
}

inline std::unique_ptr<Diagnosed> diagnose_ranks(const std::vector<std::vector<std::string>>& ranks,
                                          const std::string& header = "") {
  auto out = std::make_unique<Diagnosed>();
  for (size_t r = 0; r < ranks.size(); ++r) {
    out->stores.push_back(load_inline(ranks[r], header));
    out->stores.back()->rank = static_cast<int64_t>(r);
  }
  diagnose::testing_support::run_pipeline(*out, {});
  return out;
}

// One rank of the hand-made job: a step of compute (`compute_ns` long from
// 5 us) then an all-reduce on the same stream ending at `ar_end`, a sync that
// returns 5 us after it, and step 2 from 170 us with one small kernel.
inline std::vector<std::string> two_step_rank(int64_t compute_ns, int64_t ar_end) {
  const int64_t ar_start = 5'000 + compute_ns;
  return {step(1, 0, 170'000),
          launch(1'000, 500, 1),
          kernel(kCompute, 5'000, compute_ns, 7, 1),
          launch(2'000, 500, 2),
          kernel(kAllReduce, ar_start, ar_end - ar_start, 7, 2),
          launch(3'000, ar_end + 5'000 - 3'000, 90, "cudaStreamSynchronize"),
          step(2, 170'000, 100'000),
          launch(175'000, 500, 3),
          kernel("void at::native::vectorized_elementwise_kernel<4>", 180'000, 10'000, 7, 3)};
}

}  // namespace stepscope::whatif::testing_support
