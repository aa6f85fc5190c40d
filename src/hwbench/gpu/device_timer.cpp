#include "hwbench/gpu/device_timer.h"

#include <algorithm>

#include "hwbench/gpu/cuda_check.h"
#include "hwbench/sample_stats.h"

namespace stepscope::hwbench::gpu {

L2Flusher::L2Flusher(size_t l2_bytes) : bytes_(std::max<size_t>(2 * l2_bytes, size_t{64} << 20)) {
  SS_CUDA(cudaMalloc(&buffer_, bytes_));
}

L2Flusher::~L2Flusher() { cudaFree(buffer_); }

void L2Flusher::flush(cudaStream_t stream) {
  // A different byte each time, so no layer can skip a write of equal data.
  pattern_ = (pattern_ + 1) & 0xff;
  SS_CUDA(cudaMemsetAsync(buffer_, pattern_, bytes_, stream));
}

std::vector<double> time_repeats(const std::function<void(cudaStream_t)>& work, cudaStream_t stream,
                                 const TimingPlan& plan) {
  for (int i = 0; i < plan.warmup; ++i) work(stream);
  SS_CUDA(cudaStreamSynchronize(stream));
  std::vector<cudaEvent_t> events(2 * static_cast<size_t>(plan.repeats));
  for (auto& e : events) SS_CUDA(cudaEventCreate(&e));
  for (int i = 0; i < plan.repeats; ++i) {
    if (plan.flusher) plan.flusher->flush(stream);
    SS_CUDA(cudaEventRecord(events[2 * i], stream));
    work(stream);
    SS_CUDA(cudaEventRecord(events[2 * i + 1], stream));
  }
  SS_CUDA(cudaStreamSynchronize(stream));
  std::vector<double> seconds;
  for (int i = 0; i < plan.repeats; ++i) {
    float ms = 0;
    SS_CUDA(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
    seconds.push_back(ms * 1e-3);
  }
  for (auto& e : events) SS_CUDA(cudaEventDestroy(e));
  return seconds;
}

double median_seconds(const std::function<void(cudaStream_t)>& work, cudaStream_t stream, const TimingPlan& plan) {
  return median(time_repeats(work, stream, plan));
}

}  // namespace stepscope::hwbench::gpu
