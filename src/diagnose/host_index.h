// The host-side spans diagnosis reads, found once per rank by name: DataLoader
// iterations, optimizer steps, synchronising runtime calls and allocator
// calls. The name rules live here so the attribution and every detector agree
// on what counts as a sync or an allocator call.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "diagnose/interval_set.h"
#include "trace/event_store.h"

namespace stepscope::diagnose {

// Runtime/driver calls that block the calling thread until the GPU (a stream,
// an event or the whole device) has finished: cudaStreamSynchronize,
// cudaDeviceSynchronize, cudaEventSynchronize, their driver and HIP twins, and
// the blocking (non-Async) cudaMemcpy family.
bool is_sync_call(std::string_view name);
// A GPU copy from the device into pageable host memory ("Memcpy DtoH (Device
// -> Pageable)"): the runtime call that issued it, even an Async one, waits
// for it, so the index counts that call among the syncs.
bool is_dtoh_to_pageable(std::string_view activity_name);
// Caching-allocator traffic to the driver: cudaMalloc/cudaFree, host pinned
// alloc/free, the virtual-memory calls of expandable segments, HIP twins.
bool is_allocator_call(std::string_view name);
// Allocator calls that also synchronise the device (cudaFree, cudaFreeHost,
// cuMemFree, hipFree: documented to wait for all outstanding work).
bool is_synchronising_free(std::string_view name);
// cudaGraphLaunch / cuGraphLaunch / hipGraphLaunch: a replayed CUDA graph.
bool is_graph_launch(std::string_view name);
// A DataLoader iteration: torch.utils.data wraps __next__ in
// "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" (or the
// multi-process iterator).
bool is_dataloader_next(std::string_view name);
// "Optimizer.step#AdamW.step": torch.optim wraps every step in this annotation.
bool is_optimizer_step(std::string_view name);
// The kinds a record_function range (Optimizer.step#..., enumerate(DataLoader)#...)
// has on the host: user_annotation since PyTorch 1.10; PyTorch 1.8/1.9 wrote
// every such range with category "Operator", as ops (cpu_op here). The
// TensorBoard plugin takes both (pytorch/kineto tb_plugin
// torch_tb_profiler/profiler/event_parser.py, _parse_step: OPERATOR or
// USER_ANNOTATION).
bool is_record_function_kind(trace::EventKind kind);

struct HostCall {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t row = 0;  // event row in the store
};

// Host calls sorted by start, with "which call was running at time t".
class HostCalls {
 public:
  HostCalls() = default;
  explicit HostCalls(std::vector<HostCall> calls);
  const std::vector<HostCall>& calls() const { return calls_; }
  size_t size() const { return calls_.size(); }
  bool empty() const { return calls_.empty(); }
  // A call with start <= t <= end (the latest-starting one), or nullptr.
  const HostCall* containing(int64_t t) const;
  IntervalSet as_set() const;

 private:
  std::vector<HostCall> calls_;
  std::vector<int64_t> max_end_;  // max_end_[i] = max end over calls_[0..i]
};

struct HostIndex {
  HostCalls dataloader;      // DataLoader __next__ spans (any host row kind)
  HostCalls optimizer_steps; // Optimizer.step#... host annotations
  HostCalls syncs;           // is_sync_call runtime calls, and calls that issued a copy into pageable memory
  HostCalls allocator;       // is_allocator_call runtime calls
  IntervalSet dataloader_set;
  IntervalSet allocator_set;
  int64_t graph_launches = 0;  // is_graph_launch runtime calls
  int64_t runtime_calls = 0;   // all runtime/driver calls
};

HostIndex build_host_index(const trace::EventStore& store);

}  // namespace stepscope::diagnose
