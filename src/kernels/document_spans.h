// Where documents are packed whole (each document's tokens one run, as the
// document builders and FlexAttention's document masks lay them out), the
// tokens a token meets under the document rule are one interval: its run.
// The kernels from v17 intersect it with rule_interval's window interval to
// build a tile's mask bits (gpu/block_sparse_attention_mma.cuh, keep_bits)
// instead of comparing document ids pair by pair. Host code; plain C++17 so
// that the CUDA benchmark sources can include it too.
#pragma once

#include <cstdint>
#include <unordered_set>
#include <vector>

namespace stepscope::kernels {

// [first, last] of each token's run of equal ids (2 · n entries), or empty
// where the runs are not the documents: an id that comes back after another
// id's tokens (its document is two intervals), or more tokens than int32
// positions hold.
inline std::vector<int32_t> document_spans(const int32_t* doc_ids, int64_t n) {
  if (n <= 0 || n > INT32_MAX) return {};
  std::vector<int32_t> spans(2 * static_cast<size_t>(n));
  std::unordered_set<int32_t> ended;  // ids whose run is over
  int64_t first = 0;
  for (int64_t t = 1; t <= n; ++t) {
    if (t < n && doc_ids[t] == doc_ids[first]) continue;
    // Tokens [first, t) are one run of doc_ids[first].
    if (!ended.insert(doc_ids[first]).second) return {};
    for (int64_t u = first; u < t; ++u) {
      spans[2 * u] = static_cast<int32_t>(first);
      spans[2 * u + 1] = static_cast<int32_t>(t - 1);
    }
    first = t;
  }
  return spans;
}

}  // namespace stepscope::kernels
