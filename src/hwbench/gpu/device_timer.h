// Timing of device work the same way for every benchmark: warm-up runs
// first (module load, handle and algorithm set-up stay out), then each
// repeat between its own pair of CUDA events, the L2 cache flushed before
// each timed repeat so no repeat reads what the last one left in cache, and
// the median of the repeats.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <vector>

namespace stepscope::hwbench::gpu {

// A device buffer larger than L2; overwriting it evicts everything else.
class L2Flusher {
 public:
  explicit L2Flusher(size_t l2_bytes);  // allocates 2 × l2_bytes (at least 64 MiB)
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  void flush(cudaStream_t stream);

 private:
  void* buffer_ = nullptr;
  size_t bytes_ = 0;
  int pattern_ = 0;
};

struct TimingPlan {
  int warmup = 2;
  int repeats = 10;
  L2Flusher* flusher = nullptr;  // nullptr: no flush (cache-resident benchmarks, NCCL)
};

// Seconds of each timed repeat of `work` (which enqueues on `stream`).
std::vector<double> time_repeats(const std::function<void(cudaStream_t)>& work, cudaStream_t stream,
                                 const TimingPlan& plan);

// Median seconds of time_repeats.
double median_seconds(const std::function<void(cudaStream_t)>& work, cudaStream_t stream, const TimingPlan& plan);

}  // namespace stepscope::hwbench::gpu
