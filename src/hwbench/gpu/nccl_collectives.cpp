#include "hwbench/gpu/nccl_collectives.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "hwbench/alpha_beta_fit.h"
#include "hwbench/collective_bandwidth.h"
#include "hwbench/gpu/cuda_check.h"
#include "hwbench/gpu/gpu_libraries.h"
#include "hwbench/gpu/element_kernels.h"
#include "hwbench/random_values.h"
#include "hwbench/sample_stats.h"

namespace stepscope::hwbench::gpu {

using model::CollectivePoint;
using model::CollectiveResult;

#ifdef STEPSCOPE_HAVE_NCCL
namespace {

using Clock = std::chrono::steady_clock;

struct Rank {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
};

// Enqueues one collective of nccl-tests "size" `bytes` on every rank.
void launch(Collective c, std::vector<Rank>& ranks, size_t bytes) {
  const size_t n = ranks.size();
  const size_t count = bytes / sizeof(float);
  SS_NCCL(nccl().GroupStart());
  for (size_t r = 0; r < n; ++r) {
    Rank& k = ranks[r];
    switch (c) {
      case Collective::kAllReduce:
        SS_NCCL(nccl().AllReduce(k.send, k.recv, count, ncclFloat, ncclSum, k.comm, k.stream));
        break;
      case Collective::kAllGather:  // size = the gathered (receive) buffer
        SS_NCCL(nccl().AllGather(k.send, k.recv, count / n, ncclFloat, k.comm, k.stream));
        break;
      case Collective::kReduceScatter:  // size = the send buffer
        SS_NCCL(nccl().ReduceScatter(k.send, k.recv, count / n, ncclFloat, ncclSum, k.comm, k.stream));
        break;
      case Collective::kAllToAll: {  // size = the send buffer, count / n to each peer
        size_t per = count / n;
        for (size_t p = 0; p < n; ++p) {
          SS_NCCL(nccl().Send(k.send + p * per, per, ncclFloat, static_cast<int>(p), k.comm, k.stream));
          SS_NCCL(nccl().Recv(k.recv + p * per, per, ncclFloat, static_cast<int>(p), k.comm, k.stream));
        }
        break;
      }
      case Collective::kBroadcast:
        SS_NCCL(nccl().Broadcast(k.send, k.recv, count, ncclFloat, 0, k.comm, k.stream));
        break;
    }
  }
  SS_NCCL(nccl().GroupEnd());
}

void sync_all(std::vector<Rank>& ranks) {
  for (Rank& k : ranks) {
    SS_CUDA(cudaSetDevice(k.device));
    SS_CUDA(cudaStreamSynchronize(k.stream));
  }
}

// All-reduce of `bytes` checked against the host's sum of every rank's
// input (the inputs are recomputed from their seeds): elements off by more
// than 1e-5 of the sum of magnitudes.
int64_t check_all_reduce(std::vector<Rank>& ranks, size_t bytes) {
  const size_t count = bytes / sizeof(float);
  launch(Collective::kAllReduce, ranks, bytes);
  sync_all(ranks);
  std::vector<float> got(count);
  SS_CUDA(cudaSetDevice(ranks[0].device));
  SS_CUDA(cudaMemcpy(got.data(), ranks[0].recv, bytes, cudaMemcpyDeviceToHost));
  int64_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    double sum = 0, mag = 0;
    for (size_t r = 0; r < ranks.size(); ++r) {
      double v = uniform_value(1000 + r, i);
      sum += v;
      mag += std::fabs(v);
    }
    if (!(std::fabs(got[i] - sum) <= 1e-5 * std::max(mag, 1e-30))) ++wrong;
  }
  return wrong;
}

}  // namespace

std::vector<CollectiveResult> run_collectives(const BenchContext& ctx, int gpus) {
  int visible = 0;
  SS_CUDA(cudaGetDeviceCount(&visible));
  int n = gpus > 0 ? std::min(gpus, visible) : visible;
  const size_t max_bytes = ctx.quick ? (size_t{256} << 20) : (size_t{4} << 30);
  const int step = ctx.quick ? 8 : 2;
  std::vector<int> devices(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) devices[static_cast<size_t>(i)] = i;
  std::vector<ncclComm_t> comms(static_cast<size_t>(n));
  SS_NCCL(nccl().CommInitAll(comms.data(), n, devices.data()));
  std::vector<Rank> ranks(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    Rank& k = ranks[static_cast<size_t>(r)];
    k.device = r;
    k.comm = comms[static_cast<size_t>(r)];
    SS_CUDA(cudaSetDevice(r));
    SS_CUDA(cudaStreamCreateWithFlags(&k.stream, cudaStreamNonBlocking));
    SS_CUDA(cudaMalloc(&k.send, max_bytes));
    SS_CUDA(cudaMalloc(&k.recv, max_bytes));
    fill_uniform(k.send, ElementType::kFp32, max_bytes / sizeof(float), 1000 + static_cast<uint64_t>(r), k.stream);
    fill_uniform(k.recv, ElementType::kFp32, max_bytes / sizeof(float), 2000 + static_cast<uint64_t>(r), k.stream);
  }
  sync_all(ranks);
  // 2 MiB: a size of both the ×2 and the ×8 sweeps, so its row carries the check.
  const size_t checked_bytes = size_t{2} << 20;
  int64_t wrong = check_all_reduce(ranks, checked_bytes);
  if (wrong > 0)
    throw BenchError(fmt::format("NCCL all_reduce check failed: {} of {} floats off the host sum over {} ranks", wrong,
                                 checked_bytes / 4, n));
  progress(fmt::format("nccl    all_reduce check passed on {} rank(s): {} floats equal the host sum", n,
                       checked_bytes / 4));

  std::vector<CollectiveResult> out;
  const int repeats = ctx.quick ? 3 : 5;
  for (Collective c : kAllCollectives) {
    CollectiveResult res;
    res.name = std::string(collective_name(c));
    res.world = n;
    std::vector<TimedSize> timed;
    for (size_t bytes = 8; bytes <= max_bytes; bytes *= static_cast<size_t>(step)) {
      // Every rank's share must be a whole float.
      if (bytes % (sizeof(float) * static_cast<size_t>(n)) != 0) continue;
      const int iters = bytes >= (size_t{64} << 20) ? 5 : 20;
      for (int w = 0; w < 2; ++w) launch(c, ranks, bytes);
      sync_all(ranks);
      std::vector<double> per_call;
      for (int r = 0; r < repeats; ++r) {
        auto t0 = Clock::now();
        for (int i = 0; i < iters; ++i) launch(c, ranks, bytes);
        sync_all(ranks);
        per_call.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / iters);
      }
      CollectivePoint p;
      p.bytes = static_cast<int64_t>(bytes);
      p.seconds = median(per_call);
      p.algbw_gbps = algbw_gbps(static_cast<double>(bytes), p.seconds);
      p.busbw_gbps = p.algbw_gbps * bus_factor(c, n);
      p.wrong = (c == Collective::kAllReduce && bytes == checked_bytes) ? wrong : -1;
      res.points.push_back(p);
      timed.push_back({p.bytes, p.seconds});
    }
    res.fits = fit_per_range(timed, default_protocol_ranges());
    const CollectivePoint& big = res.points.back();
    progress(fmt::format("nccl    {:<15} {} rank(s): {:>9.1f} GB/s algbw, {:>7.1f} GB/s busbw at {} MiB; {:.1f} µs at {} B",
                         res.name, n, big.algbw_gbps, big.busbw_gbps, big.bytes >> 20, res.points.front().seconds * 1e6,
                         res.points.front().bytes));
    out.push_back(std::move(res));
  }
  for (Rank& k : ranks) {
    SS_CUDA(cudaSetDevice(k.device));
    SS_CUDA(cudaFree(k.send));
    SS_CUDA(cudaFree(k.recv));
    SS_CUDA(cudaStreamDestroy(k.stream));
    SS_NCCL(nccl().CommDestroy(k.comm));
  }
  SS_CUDA(cudaSetDevice(ctx.device.index));
  if (n < 2)
    ctx.note("NCCL measured on 1 GPU (world size 1): local copies only, bus bandwidth 0 by definition except "
             "broadcast; no NVLink or network figure");
  return out;
}

#else

std::vector<CollectiveResult> run_collectives(const BenchContext& ctx, int) {
  ctx.note("NCCL collectives not measured: stepscope was built without NCCL (nccl.h / libnccl not found)");
  return {};
}

#endif

}  // namespace stepscope::hwbench::gpu
