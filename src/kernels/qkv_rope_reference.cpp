#include "kernels/qkv_rope_reference.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/bf16.h"
#include "kernels/fp16.h"

namespace stepscope::kernels {

RopeTables rope_tables_reference(int64_t max_len, int64_t head_dim, double base) {
  if (max_len < 0 || head_dim < 2 || head_dim % 2 != 0) {
    throw std::invalid_argument("rope tables: max_len must be >= 0 and head_dim even and >= 2");
  }
  if (!(base > 1.0)) throw std::invalid_argument("rope tables: base must be > 1");
  const int64_t half = head_dim / 2;
  RopeTables t;
  t.cos.resize(static_cast<size_t>(max_len * half));
  t.sin.resize(t.cos.size());
  for (int64_t i = 0; i < half; ++i) {
    const double inv_freq = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
    for (int64_t s = 0; s < max_len; ++s) {
      const double a = static_cast<double>(s) * inv_freq;
      t.cos[static_cast<size_t>(s * half + i)] = static_cast<float>(std::cos(a));
      t.sin[static_cast<size_t>(s * half + i)] = static_cast<float>(std::sin(a));
    }
  }
  return t;
}

namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("qkv_rope reference: ") + what);
}

void check_common(const QkvRopeDims& d, size_t cos_size, size_t sin_size) {
  const std::string why = check_qkv_rope_dims(d);
  if (!why.empty()) throw std::invalid_argument("qkv_rope reference: " + why);
  const auto table = static_cast<size_t>(d.table_len * (d.head_dim / 2));
  require(cos_size >= table && sin_size >= table, "cos/sin hold fewer than table_len * head_dim / 2 values");
}

// Where head n (of all heads + 2 * kv_heads) of token (b, s) lives in q, k or v.
struct HeadSlot {
  int which;  // 0 q, 1 k, 2 v
  int64_t offset;
};

HeadSlot slot(const QkvRopeDims& d, int64_t b, int64_t s, int64_t n) {
  if (n < d.heads) return {0, ((b * d.heads + n) * d.seq + s) * d.head_dim};
  if (n < d.heads + d.kv_heads) return {1, ((b * d.kv_heads + (n - d.heads)) * d.seq + s) * d.head_dim};
  return {2, ((b * d.kv_heads + (n - d.heads - d.kv_heads)) * d.seq + s) * d.head_dim};
}

// One pass over every (token, head, i < head_dim / 2) pair. Load/Store convert
// between the storage type and float; Rotate maps (x, y, c, n) to the pair
// written, or is skipped for v (a copy).
template <class In, class Out, class Load, class Store>
void forward_impl(const In* qkv, const float* cos, const float* sin, const QkvRopeDims& d, Out* q, Out* k, Out* v,
                  Load load, Store store) {
  const int64_t nh = d.heads + 2 * d.kv_heads;
  const int64_t half = d.head_dim / 2;
  Out* dst[3] = {q, k, v};
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t s = 0; s < d.seq; ++s) {
      const In* row = qkv + (b * d.seq + s) * nh * d.head_dim;
      for (int64_t n = 0; n < nh; ++n) {
        const HeadSlot hs = slot(d, b, s, n);
        Out* out = dst[hs.which] + hs.offset;
        const In* in = row + n * d.head_dim;
        for (int64_t i = 0; i < half; ++i) {
          const float x = load(in[i]);
          const float y = load(in[i + half]);
          if (hs.which == 2) {
            out[i] = store(x);
            out[i + half] = store(y);
          } else {
            const float c = cos[s * half + i];
            const float n_ = sin[s * half + i];
            out[i] = store(std::fma(x, c, -(y * n_)));
            out[i + half] = store(std::fma(y, c, x * n_));
          }
        }
      }
    }
  }
}

template <class In, class Out, class Load, class Store>
void backward_impl(const In* gq, const In* gk, const In* gv, const float* cos, const float* sin, const QkvRopeDims& d,
                   Out* gqkv, Load load, Store store) {
  const int64_t nh = d.heads + 2 * d.kv_heads;
  const int64_t half = d.head_dim / 2;
  const In* src[3] = {gq, gk, gv};
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t s = 0; s < d.seq; ++s) {
      Out* row = gqkv + (b * d.seq + s) * nh * d.head_dim;
      for (int64_t n = 0; n < nh; ++n) {
        const HeadSlot hs = slot(d, b, s, n);
        const In* in = src[hs.which] + hs.offset;
        Out* out = row + n * d.head_dim;
        for (int64_t i = 0; i < half; ++i) {
          const float gx = load(in[i]);
          const float gy = load(in[i + half]);
          if (hs.which == 2) {
            out[i] = store(gx);
            out[i + half] = store(gy);
          } else {
            const float c = cos[s * half + i];
            const float n_ = sin[s * half + i];
            out[i] = store(std::fma(gx, c, gy * n_));
            out[i + half] = store(std::fma(gy, c, -(gx * n_)));
          }
        }
      }
    }
  }
}

void check_sizes(const QkvRopeDims& d, size_t qkv, size_t q, size_t k, size_t v) {
  require(qkv == static_cast<size_t>(d.qkv_numel()),
          "qkv must hold batch * seq * (heads + 2 * kv_heads) * head_dim values");
  require(q == static_cast<size_t>(d.q_numel()), "q must hold batch * heads * seq * head_dim values");
  require(k == static_cast<size_t>(d.kv_numel()) && v == static_cast<size_t>(d.kv_numel()),
          "k and v must hold batch * kv_heads * seq * head_dim values");
}

float f32_load(float x) { return x; }
float f32_store(float x) { return x; }

}  // namespace

void qkv_rope_forward_reference(std::span<const float> qkv, std::span<const float> cos, std::span<const float> sin,
                                const QkvRopeDims& d, std::span<float> q, std::span<float> k, std::span<float> v) {
  check_common(d, cos.size(), sin.size());
  check_sizes(d, qkv.size(), q.size(), k.size(), v.size());
  forward_impl(qkv.data(), cos.data(), sin.data(), d, q.data(), k.data(), v.data(), f32_load, f32_store);
}

void qkv_rope_backward_reference(std::span<const float> grad_q, std::span<const float> grad_k,
                                 std::span<const float> grad_v, std::span<const float> cos,
                                 std::span<const float> sin, const QkvRopeDims& d, std::span<float> grad_qkv) {
  check_common(d, cos.size(), sin.size());
  check_sizes(d, grad_qkv.size(), grad_q.size(), grad_k.size(), grad_v.size());
  backward_impl(grad_q.data(), grad_k.data(), grad_v.data(), cos.data(), sin.data(), d, grad_qkv.data(), f32_load,
                f32_store);
}

void qkv_rope_forward_reference_16(bool bf16, std::span<const uint16_t> qkv, std::span<const float> cos,
                                   std::span<const float> sin, const QkvRopeDims& d, std::span<uint16_t> q,
                                   std::span<uint16_t> k, std::span<uint16_t> v) {
  check_common(d, cos.size(), sin.size());
  check_sizes(d, qkv.size(), q.size(), k.size(), v.size());
  if (bf16) {
    forward_impl(qkv.data(), cos.data(), sin.data(), d, q.data(), k.data(), v.data(), bf16_to_float, float_to_bf16_rne);
  } else {
    forward_impl(qkv.data(), cos.data(), sin.data(), d, q.data(), k.data(), v.data(), fp16_to_float, float_to_fp16_rne);
  }
}

void qkv_rope_backward_reference_16(bool bf16, std::span<const uint16_t> grad_q, std::span<const uint16_t> grad_k,
                                    std::span<const uint16_t> grad_v, std::span<const float> cos,
                                    std::span<const float> sin, const QkvRopeDims& d, std::span<uint16_t> grad_qkv) {
  check_common(d, cos.size(), sin.size());
  check_sizes(d, grad_qkv.size(), grad_q.size(), grad_k.size(), grad_v.size());
  if (bf16) {
    backward_impl(grad_q.data(), grad_k.data(), grad_v.data(), cos.data(), sin.data(), d, grad_qkv.data(),
                  bf16_to_float, float_to_bf16_rne);
  } else {
    backward_impl(grad_q.data(), grad_k.data(), grad_v.data(), cos.data(), sin.data(), d, grad_qkv.data(),
                  fp16_to_float, float_to_fp16_rne);
  }
}

}  // namespace stepscope::kernels
