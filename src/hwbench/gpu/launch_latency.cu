#include "hwbench/gpu/launch_latency.h"

#include <fmt/core.h>

#include <chrono>

#include "hwbench/gpu/cuda_check.h"
#include "hwbench/sample_stats.h"

namespace stepscope::hwbench::gpu {

using model::LatencyResult;
namespace {

__global__ void empty_kernel() {}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

LatencyResult make_result(const char* name, double seconds, const char* what) {
  LatencyResult r{name, seconds * 1e6};
  progress(fmt::format("launch  {:<16} {:>9.2f} µs   ({})", name, r.us, what));
  return r;
}

}  // namespace

std::vector<LatencyResult> run_launch_latency(const BenchContext& ctx) {
  cudaStream_t s = ctx.stream;
  const int batch = ctx.quick ? 2000 : 10000;  // kernels per back-to-back or graph run
  const int repeats = ctx.quick ? 5 : 15;
  std::vector<LatencyResult> out;

  for (int i = 0; i < 100; ++i) empty_kernel<<<1, 1, 0, s>>>();  // warm-up: module load
  SS_CUDA_LAUNCHED();
  SS_CUDA(cudaStreamSynchronize(s));

  std::vector<double> rt;
  for (int i = 0; i < (ctx.quick ? 200 : 1000); ++i) {
    auto t0 = Clock::now();
    empty_kernel<<<1, 1, 0, s>>>();
    SS_CUDA(cudaStreamSynchronize(s));
    rt.push_back(seconds_since(t0));
  }
  SS_CUDA_LAUNCHED();
  out.push_back(make_result("stream_roundtrip", median(rt), "launch + cudaStreamSynchronize, host clock, median"));

  cudaEvent_t start, stop;
  SS_CUDA(cudaEventCreate(&start));
  SS_CUDA(cudaEventCreate(&stop));
  std::vector<double> enqueue, device;
  for (int r = 0; r < repeats; ++r) {
    SS_CUDA(cudaEventRecord(start, s));
    auto t0 = Clock::now();
    for (int i = 0; i < batch; ++i) empty_kernel<<<1, 1, 0, s>>>();
    enqueue.push_back(seconds_since(t0) / batch);
    SS_CUDA_LAUNCHED();
    SS_CUDA(cudaEventRecord(stop, s));
    SS_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    SS_CUDA(cudaEventElapsedTime(&ms, start, stop));
    device.push_back(ms * 1e-3 / batch);
  }
  out.push_back(make_result("enqueue", median(enqueue), "host time per launch, kernels queued back to back"));
  out.push_back(make_result("back_to_back", median(device), "device time per kernel, queued back to back"));

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  SS_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < batch; ++i) empty_kernel<<<1, 1, 0, s>>>();
  SS_CUDA_LAUNCHED();
  SS_CUDA(cudaStreamEndCapture(s, &graph));
  SS_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  SS_CUDA(cudaGraphLaunch(exec, s));  // warm-up: the first replay uploads the graph
  SS_CUDA(cudaStreamSynchronize(s));
  std::vector<double> replay;
  for (int r = 0; r < repeats; ++r) {
    SS_CUDA(cudaEventRecord(start, s));
    SS_CUDA(cudaGraphLaunch(exec, s));
    SS_CUDA(cudaEventRecord(stop, s));
    SS_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    SS_CUDA(cudaEventElapsedTime(&ms, start, stop));
    replay.push_back(ms * 1e-3 / batch);
  }
  out.push_back(make_result("graph_replay", median(replay), "device time per kernel node, CUDA graph replay"));
  SS_CUDA(cudaGraphExecDestroy(exec));
  SS_CUDA(cudaGraphDestroy(graph));
  SS_CUDA(cudaEventDestroy(start));
  SS_CUDA(cudaEventDestroy(stop));
  return out;
}

}  // namespace stepscope::hwbench::gpu
