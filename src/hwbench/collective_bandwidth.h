// nccl-tests' bandwidth definitions (NVIDIA/nccl-tests doc/PERFORMANCE.md):
// algbw = size / time, where size is the largest buffer of the call; busbw
// scales it by the share of that size each rank must send over its links in
// the optimal algorithm, so busbw is comparable with link speed for every
// collective and every rank count.
#pragma once

#include <string_view>

namespace stepscope::hwbench {

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast };

inline constexpr Collective kAllCollectives[] = {Collective::kAllReduce, Collective::kAllGather,
                                                 Collective::kReduceScatter, Collective::kAllToAll,
                                                 Collective::kBroadcast};

std::string_view collective_name(Collective c);  // all_reduce, all_gather, ...

// busbw / algbw for `ranks` ranks: all-reduce 2(n−1)/n; all-gather,
// reduce-scatter and all-to-all (n−1)/n; broadcast 1. 0 for n = 1 except
// broadcast (nothing crosses a link).
double bus_factor(Collective c, int ranks);

// algbw in GB/s (1e9 B/s) of `bytes` moved in `seconds`; 0 when seconds <= 0.
double algbw_gbps(double bytes, double seconds);

}  // namespace stepscope::hwbench
