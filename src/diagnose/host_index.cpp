#include "diagnose/host_index.h"

#include <algorithm>
#include <array>

namespace stepscope::diagnose {
namespace {

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool is_host_span_kind(trace::EventKind k) {
  return k == trace::EventKind::kCpuOp || k == trace::EventKind::kUserAnnotation ||
         k == trace::EventKind::kPythonFunction;
}

}  // namespace

bool is_sync_call(std::string_view name) {
  return one_of(name, {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
                       "cudaThreadSynchronize", "cuStreamSynchronize", "cuCtxSynchronize",
                       "cuEventSynchronize", "hipStreamSynchronize", "hipDeviceSynchronize",
                       "hipEventSynchronize", "cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D",
                       "cudaMemcpyFromSymbol", "cudaMemcpyToSymbol", "cuMemcpyDtoH_v2",
                       "cuMemcpyDtoH", "cuMemcpyHtoD_v2", "cuMemcpyHtoD", "cuMemcpy", "hipMemcpy"});
}

bool is_dtoh_to_pageable(std::string_view activity_name) {
  return activity_name.starts_with("Memcpy DtoH") && activity_name.find("Pageable") != std::string_view::npos;
}

bool is_allocator_call(std::string_view name) {
  return one_of(name, {"cudaMalloc", "cudaFree", "cudaMallocHost", "cudaFreeHost", "cudaHostAlloc",
                       "cudaHostRegister", "cudaHostUnregister", "cuMemAlloc_v2", "cuMemAlloc",
                       "cuMemFree_v2", "cuMemFree", "cuMemCreate", "cuMemRelease", "cuMemMap",
                       "cuMemUnmap", "cuMemSetAccess", "cuMemAddressReserve", "cuMemAddressFree",
                       "hipMalloc", "hipFree", "hipHostMalloc", "hipHostFree"});
}

bool is_synchronising_free(std::string_view name) {
  return one_of(name, {"cudaFree", "cudaFreeHost", "cuMemFree_v2", "cuMemFree", "hipFree", "hipHostFree"});
}

bool is_graph_launch(std::string_view name) {
  return one_of(name, {"cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch", "cudaGraphLaunch_v10000"});
}

bool is_dataloader_next(std::string_view name) {
  return name.find("DataLoader") != std::string_view::npos && name.find("__next__") != std::string_view::npos;
}

bool is_optimizer_step(std::string_view name) { return name.starts_with("Optimizer.step#"); }

bool is_record_function_kind(trace::EventKind kind) {
  return kind == trace::EventKind::kUserAnnotation || kind == trace::EventKind::kCpuOp;
}

HostCalls::HostCalls(std::vector<HostCall> calls) : calls_(std::move(calls)) {
  std::sort(calls_.begin(), calls_.end(), [](const HostCall& a, const HostCall& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.row < b.row;
  });
  max_end_.reserve(calls_.size());
  int64_t m = INT64_MIN;
  for (const HostCall& c : calls_) {
    m = std::max(m, c.end_ns);
    max_end_.push_back(m);
  }
}

const HostCall* HostCalls::containing(int64_t t) const {
  auto it = std::upper_bound(calls_.begin(), calls_.end(), t,
                             [](int64_t x, const HostCall& c) { return x < c.start_ns; });
  // Walk back over calls that started at or before t while one of them may
  // still reach t (max_end_ is the bound).
  for (size_t i = static_cast<size_t>(it - calls_.begin()); i-- > 0;) {
    if (max_end_[i] < t) break;
    if (calls_[i].end_ns >= t) return &calls_[i];
  }
  return nullptr;
}

IntervalSet HostCalls::as_set() const {
  std::vector<Interval> v;
  v.reserve(calls_.size());
  for (const HostCall& c : calls_) v.push_back({c.start_ns, c.end_ns});
  return IntervalSet(std::move(v));
}

HostIndex build_host_index(const trace::EventStore& store) {
  HostIndex h;
  const auto& ev = store.events;
  std::vector<HostCall> dataloader, optimizer, syncs, alloc;
  auto call_of = [&](uint32_t row) { return HostCall{ev.ts_ns[row], ev.ts_ns[row] + std::max<int64_t>(ev.dur_ns[row], 0), row}; };
  // An asynchronous copy from the device into pageable host memory returns
  // only once the copy has completed (CUDA runtime API, "API synchronization
  // behavior"; HIP the same): its call waits for the GPU like a sync.
  // PyTorch's .item() did this before it copied into pinned memory.
  std::vector<uint32_t> waits_for_copy;  // few: sorted rows of such calls
  for (size_t k = 0; k < store.gpu_rows.size() && k < store.launch_of_gpu.size(); ++k) {
    const uint32_t launch = store.launch_of_gpu[k];
    if (launch != trace::EventStore::kNoRow && ev.kind[store.gpu_rows[k]] == trace::EventKind::kMemcpy &&
        is_dtoh_to_pageable(store.name_of(store.gpu_rows[k])))
      waits_for_copy.push_back(launch);
  }
  std::sort(waits_for_copy.begin(), waits_for_copy.end());
  for (uint32_t row : store.runtime_rows) {
    std::string_view name = store.name_of(row);
    ++h.runtime_calls;
    if (is_sync_call(name) || std::binary_search(waits_for_copy.begin(), waits_for_copy.end(), row))
      syncs.push_back(call_of(row));
    if (is_allocator_call(name)) alloc.push_back(call_of(row));
    if (is_graph_launch(name)) ++h.graph_launches;
  }
  // Decide each distinct name once, then sweep the rows by id.
  std::vector<uint8_t> name_class(store.strings.size(), 0);  // 1 DataLoader, 2 optimizer step
  for (trace::StringId id = 0; id < store.strings.size(); ++id) {
    std::string_view name = store.strings.get(id);
    if (is_dataloader_next(name)) name_class[id] = 1;
    else if (is_optimizer_step(name)) name_class[id] = 2;
  }
  for (uint32_t row = 0; row < ev.size(); ++row) {
    uint8_t c = name_class[ev.name[row]];
    if (c == 0 || !is_host_span_kind(ev.kind[row])) continue;
    if (c == 1) dataloader.push_back(call_of(row));
    if (c == 2 && is_record_function_kind(ev.kind[row])) optimizer.push_back(call_of(row));
  }
  h.dataloader = HostCalls(std::move(dataloader));
  h.optimizer_steps = HostCalls(std::move(optimizer));
  h.syncs = HostCalls(std::move(syncs));
  h.allocator = HostCalls(std::move(alloc));
  h.dataloader_set = h.dataloader.as_set();
  h.allocator_set = h.allocator.as_set();
  return h;
}

}  // namespace stepscope::diagnose
