// Split + RoPE is pure data movement with a few FLOPs per element, so the
// kernels are written for bandwidth: one block per token (b, s) reads that
// token's contiguous row of all heads once, each thread owns chunk c of one
// head and loads elements [c, c+N) and [c+h, c+h+N) (h = head_dim / 2) as two
// 16-byte vectors, so both members of every rotation pair are in registers
// and nothing is read twice. Math in fp32, one rounding to the output dtype.
#include "kernels/gpu/qkv_rope.h"

#include <algorithm>
#include <type_traits>

#include "kernels/gpu/dtype_bits.cuh"
#include "kernels/gpu/launch_error.cuh"

namespace stepscope::kernels::gpu {
namespace {

template <class T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

template <class T, int N>
__device__ __forceinline__ Vec<T, N> load_vec(const T* p) {
  return *reinterpret_cast<const Vec<T, N>*>(p);
}
template <class T, int N>
__device__ __forceinline__ void store_vec(T* p, const Vec<T, N>& x) {
  *reinterpret_cast<Vec<T, N>*>(p) = x;
}

constexpr int kMaxThreads = 256;

// Which output a head goes to, and where its row for token (b, s) starts.
template <class T>
__device__ __forceinline__ T* head_row(int n, int heads, int kv_heads, int64_t b, int64_t s, int64_t seq,
                                       int head_dim, T* q, T* k, T* v, bool* rotate) {
  if (n < heads) {
    *rotate = true;
    return q + ((b * heads + n) * seq + s) * head_dim;
  }
  n -= heads;
  if (n < kv_heads) {
    *rotate = true;
    return k + ((b * kv_heads + n) * seq + s) * head_dim;
  }
  *rotate = false;
  return v + ((b * kv_heads + (n - kv_heads)) * seq + s) * head_dim;
}

template <class E, int N>
__global__ void __launch_bounds__(kMaxThreads)
    qkv_rope_forward_kernel(const typename E::Bits* __restrict__ qkv, const float* __restrict__ cos,
                            const float* __restrict__ sin, typename E::Bits* __restrict__ q,
                            typename E::Bits* __restrict__ k, typename E::Bits* __restrict__ v, int64_t seq,
                            int heads, int kv_heads, int head_dim) {
  using T = typename E::Bits;
  const int64_t token = blockIdx.x;
  const int64_t b = token / seq;
  const int64_t s = token - b * seq;
  const int half = head_dim / 2;
  const int chunks = half / N;
  const int nh = heads + 2 * kv_heads;
  const T* row = qkv + token * nh * head_dim;
  const float* crow = cos + s * half;
  const float* srow = sin + s * half;
  for (int i = threadIdx.x; i < nh * chunks; i += blockDim.x) {
    const int n = i / chunks;
    const int c = (i - n * chunks) * N;
    const Vec<T, N> x = load_vec<T, N>(row + n * head_dim + c);
    const Vec<T, N> y = load_vec<T, N>(row + n * head_dim + half + c);
    bool rotate;
    T* out = head_row(n, heads, kv_heads, b, s, seq, head_dim, q, k, v, &rotate);
    if (!rotate) {  // v: a copy, no conversion (bit-exact, NaN payloads kept)
      store_vec<T, N>(out + c, x);
      store_vec<T, N>(out + half + c, y);
      continue;
    }
    const Vec<float, N> cv = load_vec<float, N>(crow + c);
    const Vec<float, N> sv = load_vec<float, N>(srow + c);
    Vec<T, N> lo, hi;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      const float xf = E::load(x.v[j]);
      const float yf = E::load(y.v[j]);
      lo.v[j] = E::store(fmaf(xf, cv.v[j], -(yf * sv.v[j])));
      hi.v[j] = E::store(fmaf(yf, cv.v[j], xf * sv.v[j]));
    }
    store_vec<T, N>(out + c, lo);
    store_vec<T, N>(out + half + c, hi);
  }
}

template <class E, int N>
__global__ void __launch_bounds__(kMaxThreads)
    qkv_rope_backward_kernel(const typename E::Bits* __restrict__ gq, const typename E::Bits* __restrict__ gk,
                             const typename E::Bits* __restrict__ gv, const float* __restrict__ cos,
                             const float* __restrict__ sin, typename E::Bits* __restrict__ gqkv, int64_t seq,
                             int heads, int kv_heads, int head_dim) {
  using T = typename E::Bits;
  const int64_t token = blockIdx.x;
  const int64_t b = token / seq;
  const int64_t s = token - b * seq;
  const int half = head_dim / 2;
  const int chunks = half / N;
  const int nh = heads + 2 * kv_heads;
  T* row = gqkv + token * nh * head_dim;
  const float* crow = cos + s * half;
  const float* srow = sin + s * half;
  for (int i = threadIdx.x; i < nh * chunks; i += blockDim.x) {
    const int n = i / chunks;
    const int c = (i - n * chunks) * N;
    bool rotate;
    // head_row only computes an address; the const_casts never write through gq/gk/gv.
    const T* in = head_row(n, heads, kv_heads, b, s, seq, head_dim, const_cast<T*>(gq), const_cast<T*>(gk),
                           const_cast<T*>(gv), &rotate);
    const Vec<T, N> x = load_vec<T, N>(in + c);
    const Vec<T, N> y = load_vec<T, N>(in + half + c);
    T* out = row + n * head_dim;
    if (!rotate) {
      store_vec<T, N>(out + c, x);
      store_vec<T, N>(out + half + c, y);
      continue;
    }
    const Vec<float, N> cv = load_vec<float, N>(crow + c);
    const Vec<float, N> sv = load_vec<float, N>(srow + c);
    Vec<T, N> lo, hi;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      const float gx = E::load(x.v[j]);
      const float gy = E::load(y.v[j]);
      lo.v[j] = E::store(fmaf(gx, cv.v[j], gy * sv.v[j]));
      hi.v[j] = E::store(fmaf(gy, cv.v[j], -(gx * sv.v[j])));
    }
    store_vec<T, N>(out + c, lo);
    store_vec<T, N>(out + half + c, hi);
  }
}

size_t elem_size(RopeDType t) { return t == RopeDType::kFloat32 ? 4 : 2; }

bool aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

std::string check_args(const QkvRopeDims& d, RopeDType dtype, const void* const* ptrs, int n_ptrs,
                        const float* cos, const float* sin) {
  std::string why = check_qkv_rope_dims(d);
  if (!why.empty()) return why;
  if (dtype != RopeDType::kFloat32 && dtype != RopeDType::kFloat16 && dtype != RopeDType::kBFloat16) {
    return "dtype must be float32, float16 or bfloat16";
  }
  if (d.batch * d.seq > 0x7FFFFFFF) return "batch * seq must be < 2^31 (one block per token)";
  if (d.batch * d.seq == 0) return "";
  for (int i = 0; i < n_ptrs; ++i) {
    if (ptrs[i] == nullptr) return "a tensor pointer is null";
    if (!aligned(ptrs[i], elem_size(dtype))) return "a tensor pointer is not aligned to its element size";
  }
  if (cos == nullptr || sin == nullptr) return "the cos/sin table pointer is null";
  if (!aligned(cos, 4) || !aligned(sin, 4)) return "the cos/sin tables are not 4-byte aligned";
  return "";
}

int threads_for(const QkvRopeDims& d, int n) {
  const int64_t work = (d.heads + 2 * d.kv_heads) * (d.head_dim / 2 / n);
  const int64_t warps = (work + 31) / 32;
  return static_cast<int>(std::min<int64_t>(kMaxThreads, warps * 32));
}

// Calls launch(std::integral_constant<int, N>) for N = n (8, 4, 2, else 1):
// each width is its own kernel instantiation, since the vector type must be
// known at compile time.
template <class Launch>
void with_vector_width(int n, Launch&& launch) {
  switch (n) {
    case 8: launch(std::integral_constant<int, 8>{}); break;
    case 4: launch(std::integral_constant<int, 4>{}); break;
    case 2: launch(std::integral_constant<int, 2>{}); break;
    default: launch(std::integral_constant<int, 1>{}); break;
  }
}

template <class E>
std::string launch_forward(int n, const void* qkv, const float* cos, const float* sin, const QkvRopeDims& d,
                           void* q, void* k, void* v, cudaStream_t stream) {
  using T = typename E::Bits;
  const dim3 grid(static_cast<unsigned>(d.batch * d.seq));
  const int threads = threads_for(d, n);
  const auto* in = static_cast<const T*>(qkv);
  auto* qo = static_cast<T*>(q);
  auto* ko = static_cast<T*>(k);
  auto* vo = static_cast<T*>(v);
  const int h = static_cast<int>(d.heads), kvh = static_cast<int>(d.kv_heads), hd = static_cast<int>(d.head_dim);
  with_vector_width(n, [&](auto width) {
    constexpr int N = decltype(width)::value;
    qkv_rope_forward_kernel<E, N><<<grid, threads, 0, stream>>>(in, cos, sin, qo, ko, vo, d.seq, h, kvh, hd);
  });
  return launch_error("qkv_rope_forward");
}

template <class E>
std::string launch_backward(int n, const void* gq, const void* gk, const void* gv, const float* cos,
                            const float* sin, const QkvRopeDims& d, void* gqkv, cudaStream_t stream) {
  using T = typename E::Bits;
  const dim3 grid(static_cast<unsigned>(d.batch * d.seq));
  const int threads = threads_for(d, n);
  const auto* a = static_cast<const T*>(gq);
  const auto* b = static_cast<const T*>(gk);
  const auto* c = static_cast<const T*>(gv);
  auto* out = static_cast<T*>(gqkv);
  const int h = static_cast<int>(d.heads), kvh = static_cast<int>(d.kv_heads), hd = static_cast<int>(d.head_dim);
  with_vector_width(n, [&](auto width) {
    constexpr int N = decltype(width)::value;
    qkv_rope_backward_kernel<E, N><<<grid, threads, 0, stream>>>(a, b, c, cos, sin, out, d.seq, h, kvh, hd);
  });
  return launch_error("qkv_rope_backward");
}

}  // namespace

int qkv_rope_vector_width(const QkvRopeDims& d, RopeDType dtype, const void* const* ptrs, int n_ptrs,
                          const float* cos, const float* sin) {
  const size_t es = elem_size(dtype);
  // Widest N (elements per 16-byte access at most) such that a chunk never
  // straddles the two halves of a head and every access is N-aligned.
  for (int n = static_cast<int>(16 / es); n > 1; n /= 2) {
    if ((d.head_dim / 2) % n != 0) continue;
    bool ok = aligned(cos, 4 * n) && aligned(sin, 4 * n);
    for (int i = 0; i < n_ptrs && ok; ++i) ok = aligned(ptrs[i], es * n);
    if (ok) return n;
  }
  return 1;
}

std::string qkv_rope_forward(const void* qkv, const float* cos, const float* sin, const QkvRopeDims& d,
                             RopeDType dtype, void* q, void* k, void* v, cudaStream_t stream) {
  const void* ptrs[4] = {qkv, q, k, v};
  std::string why = check_args(d, dtype, ptrs, 4, cos, sin);
  if (!why.empty()) return "qkv_rope_forward: " + why;
  if (d.batch * d.seq == 0) return "";
  const int n = qkv_rope_vector_width(d, dtype, ptrs, 4, cos, sin);
  switch (dtype) {
    case RopeDType::kFloat32: return launch_forward<F32>(n, qkv, cos, sin, d, q, k, v, stream);
    case RopeDType::kFloat16: return launch_forward<F16>(n, qkv, cos, sin, d, q, k, v, stream);
    default: return launch_forward<Bf16>(n, qkv, cos, sin, d, q, k, v, stream);
  }
}

std::string qkv_rope_backward(const void* grad_q, const void* grad_k, const void* grad_v, const float* cos,
                              const float* sin, const QkvRopeDims& d, RopeDType dtype, void* grad_qkv,
                              cudaStream_t stream) {
  const void* ptrs[4] = {grad_q, grad_k, grad_v, grad_qkv};
  std::string why = check_args(d, dtype, ptrs, 4, cos, sin);
  if (!why.empty()) return "qkv_rope_backward: " + why;
  if (d.batch * d.seq == 0) return "";
  const int n = qkv_rope_vector_width(d, dtype, ptrs, 4, cos, sin);
  switch (dtype) {
    case RopeDType::kFloat32: return launch_backward<F32>(n, grad_q, grad_k, grad_v, cos, sin, d, grad_qkv, stream);
    case RopeDType::kFloat16: return launch_backward<F16>(n, grad_q, grad_k, grad_v, cos, sin, d, grad_qkv, stream);
    default: return launch_backward<Bf16>(n, grad_q, grad_k, grad_v, cos, sin, d, grad_qkv, stream);
  }
}

}  // namespace stepscope::kernels::gpu
