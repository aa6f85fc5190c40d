// Dimensions of the fused QKV split + RoPE and their validation, shared by the
// CPU reference (C++20) and the CUDA kernels (nvcc, C++17; also compiled into
// the torch extension, which links no libstepscope): header-only on purpose.
#pragma once

#include <cstdint>
#include <string>

namespace stepscope::kernels {

struct QkvRopeDims {
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  int64_t table_len = 0;  // rows of the cos/sin tables: seq <= table_len

  int64_t qkv_numel() const { return batch * seq * (heads + 2 * kv_heads) * head_dim; }
  int64_t q_numel() const { return batch * heads * seq * head_dim; }
  int64_t kv_numel() const { return batch * kv_heads * seq * head_dim; }
};

inline constexpr int64_t kMaxRopeHeadDim = 256;

// "" when the dimensions are usable, otherwise one sentence naming the field:
// every dimension >= 0 (batch or seq 0 is an empty problem), heads and
// kv_heads >= 1, heads a multiple of kv_heads (GQA), head_dim even and in
// [2, 256], seq <= table_len.
inline std::string check_qkv_rope_dims(const QkvRopeDims& d) {
  if (d.batch < 0) return "batch must be >= 0, got " + std::to_string(d.batch);
  if (d.seq < 0) return "seq must be >= 0, got " + std::to_string(d.seq);
  if (d.heads < 1) return "heads must be >= 1, got " + std::to_string(d.heads);
  if (d.kv_heads < 1) return "kv_heads must be >= 1, got " + std::to_string(d.kv_heads);
  if (d.heads % d.kv_heads != 0) {
    return "heads (" + std::to_string(d.heads) + ") must be a multiple of kv_heads (" + std::to_string(d.kv_heads) +
           ")";
  }
  if (d.head_dim < 2 || d.head_dim % 2 != 0 || d.head_dim > kMaxRopeHeadDim) {
    return "head_dim must be even and in [2, " + std::to_string(kMaxRopeHeadDim) + "], got " +
           std::to_string(d.head_dim);
  }
  if (d.seq > d.table_len) {
    return "seq (" + std::to_string(d.seq) + ") exceeds the RoPE table length (" + std::to_string(d.table_len) + ")";
  }
  return "";
}

}  // namespace stepscope::kernels
