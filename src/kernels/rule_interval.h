// The tokens one token meets under a rule without documents or global
// tokens (block_mask.h's ElementRule: causal, key ≤ query; a window w > 0,
// query − key < w under causal, |query − key| < w otherwise): always one
// interval of the other side. The wgmma kernels build a tile's mask bits
// from it (gpu/block_sparse_attention_mma.cuh, keep_bits) instead of testing
// the rule pair by pair; tests/kernels/rule_interval_test.cpp holds it to
// ElementRule::allows. Plain C++ and CUDA alike.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define STEPSCOPE_HOST_DEVICE __host__ __device__
#else
#define STEPSCOPE_HOST_DEVICE
#endif

namespace stepscope::kernels {

struct TokenInterval {
  int64_t first, last;  // inclusive; unbounded ends at int64's limits
};

// The other side's tokens `token` meets: keys of a query, or (token_is_key)
// queries of a key.
STEPSCOPE_HOST_DEVICE inline TokenInterval rule_interval(int64_t token, bool token_is_key, bool causal,
                                                         int64_t window) {
  constexpr int64_t kMin = INT64_MIN, kMax = INT64_MAX;  // the macros: std::numeric_limits is host-only in CUDA
  const bool w = window > 0;
  if (token_is_key) return {causal ? token : (w ? token - window + 1 : kMin), w ? token + window - 1 : kMax};
  return {w ? token - window + 1 : kMin, causal ? token : (w ? token + window - 1 : kMax)};
}

}  // namespace stepscope::kernels
