// Block-sparse attention, v1 (see block_sparse_attention.h for the version
// list): one thread per row of a block, tiles of K/V (forward, dQ) or Q/dO
// (dK, dV) through shared memory in fp32, online softmax. Only live blocks
// are visited; inside a partial block each pair is checked against the rule.
// The kernels' names carry "attention" and "simt" so that `stepscope
// analyze` files them as attention on the CUDA-core path (analysis/
// kernel_class, diagnose/matmul_path), which is what v1 runs.
#include "kernels/gpu/block_sparse_attention.h"

#include <cuda_runtime.h>

#include <cmath>
#include <limits>
#include <string>

#include "kernels/gpu/block_sparse_attention_rule.cuh"
#include "kernels/gpu/dtype_bits.cuh"
#include "kernels/gpu/launch_error.cuh"

namespace stepscope::kernels::gpu {
namespace {

using bsa::allows;
using bsa::Dims;
using bsa::group_of;

constexpr int kTile = 32;  // keys (or queries) staged per shared-memory tile
// What version 0 runs: the fastest version measured (block_sparse_attention.h,
// docs/kernels.md): v17, forward and backward, at both head dims (on an
// H100, 2026-12-06, in one raw benchmark run: forward 1.09-2.40x v11's on
// windows and 1.9-2.5x on unaligned documents, backward 1.10-2.89x v13's;
// outputs bit for bit v5's); v5 where wgmma does not run.
constexpr int kFastestForward = 17;
constexpr int kFastestBackward = 17;
// The newest version (block_sparse_attention.h lists them all).
constexpr int kLastVersion = 17;

// Stage rows [t0, t0 + n) of a [.., seq, D] tensor at `base` into `dst` as fp32.
template <class T, int D>
__device__ __forceinline__ void stage(const typename T::Bits* src, int64_t base, int64_t t0, int n, float* dst) {
  for (int idx = threadIdx.x; idx < n * D; idx += blockDim.x)
    dst[idx] = T::load(src[(base + t0 + idx / D) * D + idx % D]);
}

// Walks the live blocks of one CSR row, tile by tile: every thread of the
// block takes part in staging (the __syncthreads are uniform), then each
// thread visits the tile for its own row. `limit` is the length of the
// walked sequence (keys for a query row, queries for a key row).
template <class Stage, class Visit>
__device__ __forceinline__ void walk_tiles(const DeviceCsr& csr, int64_t row, int block, int64_t limit, Stage stage,
                                           Visit visit) {
  for (int32_t e = csr.row_offsets[row]; e < csr.row_offsets[row + 1]; ++e) {
    const int64_t begin = static_cast<int64_t>(csr.col_indices[e]) * block;
    const int64_t end = limit < begin + block ? limit : begin + block;
    const bool partial = csr.partial[e] != 0;
    for (int64_t t0 = begin; t0 < end; t0 += kTile) {
      const int n = end - t0 < kTile ? static_cast<int>(end - t0) : kTile;
      __syncthreads();
      stage(t0, n);
      __syncthreads();
      visit(t0, n, partial);
    }
  }
}

// walk_tiles over a query row's live key blocks, staging each tile of K and
// V (rows from kv_base) into ks and vs: what the forward and dQ passes share.
template <class T, int D, class Visit>
__device__ __forceinline__ void walk_kv_tiles(const DeviceCsr& rows, int64_t row, const Dims& d,
                                              const typename T::Bits* k, const typename T::Bits* v,
                                              int64_t kv_base, float* ks, float* vs, Visit visit) {
  walk_tiles(
      rows, row, d.block, d.seq_k,
      [&](int64_t t0, int n) {
        stage<T, D>(k, kv_base, t0, n, ks);
        stage<T, D>(v, kv_base, t0, n, vs);
      },
      visit);
}

// grid (q_blocks, batch · heads), block threads = mask block: thread = query row.
template <class T, int D>
__global__ void block_sparse_attention_simt_fwd_v1(const typename T::Bits* q, const typename T::Bits* k, const typename T::Bits* v,
                           DeviceCsr rows, Dims d, float scale, typename T::Bits* out, float* lse) {
  extern __shared__ float smem[];
  float* ks = smem;
  float* vs = smem + kTile * D;
  const int64_t qb = blockIdx.x, bh = blockIdx.y, b = bh / d.heads, h = bh % d.heads;
  const int64_t i = qb * d.block + threadIdx.x;
  const bool active = i < d.seq_q;
  const int64_t kv_base = (b * d.kv_heads + h / (d.heads / d.kv_heads)) * d.seq_k;
  float qreg[D], acc[D];
  float top = -INFINITY, sum = 0;
  for (int x = 0; x < D; ++x) {
    qreg[x] = active ? T::load(q[(bh * d.seq_q + i) * D + x]) : 0.0f;
    acc[x] = 0;
  }
  const int64_t row = group_of(d, b, h) * d.q_blocks + qb;
  walk_kv_tiles<T, D>(
      rows, row, d, k, v, kv_base, ks, vs,
      [&](int64_t t0, int n, bool partial) {
        if (!active) return;
        for (int jj = 0; jj < n; ++jj) {
          if (partial && !allows(d, i, t0 + jj)) continue;
          float s = 0;
          for (int x = 0; x < D; ++x) s = fmaf(qreg[x], ks[jj * D + x], s);
          s *= scale;
          if (s > top) {
            const float rescale = __expf(top - s);  // top = -inf: 0
            sum *= rescale;
            for (int x = 0; x < D; ++x) acc[x] *= rescale;
            top = s;
          }
          const float p = __expf(s - top);
          sum += p;
          for (int x = 0; x < D; ++x) acc[x] = fmaf(p, vs[jj * D + x], acc[x]);
        }
      });
  if (!active) return;
  const int64_t o = (bh * d.seq_q + i) * D;
  if (sum == 0) {
    for (int x = 0; x < D; ++x) out[o + x] = T::store(0.0f);
    lse[bh * d.seq_q + i] = -INFINITY;
    return;
  }
  const float inv = 1.0f / sum;
  for (int x = 0; x < D; ++x) out[o + x] = T::store(acc[x] * inv);
  lse[bh * d.seq_q + i] = top + logf(sum);
}

// dQ, and D_i = dO_i · O_i into `delta` for the key pass. Same grid as forward.
template <class T, int D>
__global__ void block_sparse_attention_simt_dq_v1(const typename T::Bits* q, const typename T::Bits* k, const typename T::Bits* v,
                      const typename T::Bits* out, const typename T::Bits* dout, const float* lse, DeviceCsr rows,
                      Dims d, float scale, typename T::Bits* dq, float* delta) {
  extern __shared__ float smem[];
  float* ks = smem;
  float* vs = smem + kTile * D;
  const int64_t qb = blockIdx.x, bh = blockIdx.y, b = bh / d.heads, h = bh % d.heads;
  const int64_t i = qb * d.block + threadIdx.x;
  const bool active = i < d.seq_q;
  const int64_t kv_base = (b * d.kv_heads + h / (d.heads / d.kv_heads)) * d.seq_k;
  const int64_t at = (bh * d.seq_q + i) * D;
  float qreg[D], dor[D], acc[D];
  float dot_o = 0;
  for (int x = 0; x < D; ++x) {
    qreg[x] = active ? T::load(q[at + x]) : 0.0f;
    dor[x] = active ? T::load(dout[at + x]) : 0.0f;
    dot_o = fmaf(dor[x], active ? T::load(out[at + x]) : 0.0f, dot_o);
    acc[x] = 0;
  }
  const float row_lse = active ? lse[bh * d.seq_q + i] : 0.0f;
  if (active) delta[bh * d.seq_q + i] = dot_o;
  const int64_t row = group_of(d, b, h) * d.q_blocks + qb;
  walk_kv_tiles<T, D>(
      rows, row, d, k, v, kv_base, ks, vs,
      [&](int64_t t0, int n, bool partial) {
        if (!active) return;
        for (int jj = 0; jj < n; ++jj) {
          if (partial && !allows(d, i, t0 + jj)) continue;
          float s = 0, dp = 0;
          for (int x = 0; x < D; ++x) {
            s = fmaf(qreg[x], ks[jj * D + x], s);
            dp = fmaf(dor[x], vs[jj * D + x], dp);
          }
          const float p = __expf(s * scale - row_lse);
          const float ds = p * (dp - dot_o) * scale;
          for (int x = 0; x < D; ++x) acc[x] = fmaf(ds, ks[jj * D + x], acc[x]);
        }
      });
  if (!active) return;
  for (int x = 0; x < D; ++x) dq[at + x] = T::store(acc[x]);
}

// dK, dV: grid (k_blocks, batch · heads), thread = key row; walks the query
// blocks of the transposed mask and adds into fp32 accumulators (the heads
// of a GQA group add into the same K/V head).
template <class T, int D>
__global__ void block_sparse_attention_simt_dkdv_v1(const typename T::Bits* q, const typename T::Bits* k, const typename T::Bits* v,
                        const typename T::Bits* dout, const float* lse, const float* delta, DeviceCsr cols, Dims d,
                        float scale, float* dk_acc, float* dv_acc) {
  extern __shared__ float smem[];
  float* qs = smem;
  float* dos = smem + kTile * D;
  float* lses = smem + 2 * kTile * D;
  float* deltas = lses + kTile;
  const int64_t kb = blockIdx.x, bh = blockIdx.y, b = bh / d.heads, h = bh % d.heads;
  const int64_t j = kb * d.block + threadIdx.x;
  const bool active = j < d.seq_k;
  const int64_t kv_at = ((b * d.kv_heads + h / (d.heads / d.kv_heads)) * d.seq_k + j) * D;
  float kreg[D], vreg[D], dk[D], dv[D];
  for (int x = 0; x < D; ++x) {
    kreg[x] = active ? T::load(k[kv_at + x]) : 0.0f;
    vreg[x] = active ? T::load(v[kv_at + x]) : 0.0f;
    dk[x] = dv[x] = 0;
  }
  const int64_t row = group_of(d, b, h) * d.k_blocks + kb;
  const int64_t q_base = bh * d.seq_q;
  walk_tiles(
      cols, row, d.block, d.seq_q,
      [&](int64_t t0, int n) {
        stage<T, D>(q, q_base, t0, n, qs);
        stage<T, D>(dout, q_base, t0, n, dos);
        for (int idx = threadIdx.x; idx < n; idx += blockDim.x) {
          lses[idx] = lse[q_base + t0 + idx];
          deltas[idx] = delta[q_base + t0 + idx];
        }
      },
      [&](int64_t t0, int n, bool partial) {
        if (!active) return;
        for (int ii = 0; ii < n; ++ii) {
          if (partial && !allows(d, t0 + ii, j)) continue;
          float s = 0, dp = 0;
          for (int x = 0; x < D; ++x) {
            s = fmaf(qs[ii * D + x], kreg[x], s);
            dp = fmaf(dos[ii * D + x], vreg[x], dp);
          }
          const float p = __expf(s * scale - lses[ii]);
          const float ds = p * (dp - deltas[ii]) * scale;
          for (int x = 0; x < D; ++x) {
            dv[x] = fmaf(p, dos[ii * D + x], dv[x]);
            dk[x] = fmaf(ds, qs[ii * D + x], dk[x]);
          }
        }
      });
  if (!active) return;
  for (int x = 0; x < D; ++x) {
    atomicAdd(dk_acc + kv_at + x, dk[x]);
    atomicAdd(dv_acc + kv_at + x, dv[x]);
  }
}

template <class T>
__global__ void block_sparse_attention_store_v1(const float* src, int64_t n, typename T::Bits* dst) {
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < n;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[idx] = T::store(src[idx]);
}

std::string check(const AttentionShape& s, const DeviceBlockMask& m, AttnDType dtype) {
  if (s.batch < 1 || s.heads < 1 || s.kv_heads < 1 || s.seq_q < 1 || s.seq_k < 1 || s.heads % s.kv_heads != 0)
    return "block_sparse_attention: batch, heads, kv_heads and sequence lengths must be positive, heads a multiple "
           "of kv_heads";
  if (s.head_dim != 64 && s.head_dim != 128)
    return "block_sparse_attention: head_dim " + std::to_string(s.head_dim) + " is not supported (64 or 128)";
  if (m.block < 16 || m.block > 128 || m.block % 16 != 0)
    return "block_sparse_attention: block " + std::to_string(m.block) + " is not supported (16..128, steps of 16)";
  if (m.groups != 1 && m.groups != s.heads && m.groups != s.batch * s.heads)
    return "block_sparse_attention: mask groups must be 1, heads or batch × heads";
  if (dtype != AttnDType::kFloat16 && dtype != AttnDType::kBFloat16)
    return "block_sparse_attention: dtype must be float16 or bfloat16";
  if (s.batch * s.heads > 65535) return "block_sparse_attention: batch × heads above 65535";
  return "";
}

// The kernels' view of the shape and rule for `version` (resolved: not 0);
// documents as spans from v17 only, so that earlier versions keep their
// own mask path.
Dims dims(const AttentionShape& s, const DeviceBlockMask& m, int version) {
  return {s.batch,  s.heads,  s.kv_heads, s.seq_q,   s.seq_k,        (s.seq_q + m.block - 1) / m.block,
          (s.seq_k + m.block - 1) / m.block, m.groups, m.block, m.causal, m.window, m.global_tokens, m.doc_ids,
          version >= 17 && m.doc_ids ? m.doc_spans : nullptr};
}

template <class T, int D>
void launch_forward(const void* q, const void* k, const void* v, const Dims& d, const DeviceBlockMask& m,
                    float scale, void* out, float* lse, int version, cudaStream_t stream) {
  using B = typename T::Bits;
  // v1 where the tensor-core kernels do not apply.
  if (version == 2 && bsa::launch_forward_wmma<T, D>(q, k, v, d, m.rows, scale, out, lse, stream)) return;
  // v6 to v11 where wgmma runs (Hopper), v5 elsewhere.
  if (version >= 6 && bsa::launch_forward_wgmma<T, D>(q, k, v, d, m.rows, scale, out, lse, stream, version))
    return;
  if (version >= 3 && bsa::launch_forward_mma<T, D>(q, k, v, d, m.rows, scale, out, lse, stream, version))
    return;
  const dim3 grid(static_cast<unsigned>(d.q_blocks), static_cast<unsigned>(d.batch * d.heads));
  block_sparse_attention_simt_fwd_v1<T, D><<<grid, d.block, 2 * kTile * D * sizeof(float), stream>>>(
      static_cast<const B*>(q), static_cast<const B*>(k), static_cast<const B*>(v), m.rows, d, scale,
      static_cast<B*>(out), lse);
}

// v1's two passes: dQ and Δ by query rows, dK and dV by key rows.
template <class T, int D>
void launch_backward_v1(const void* q, const void* k, const void* v, const void* out, const void* dout,
                        const float* lse, const Dims& d, const DeviceBlockMask& m, float scale, void* dq,
                        float* dk_acc, float* dv_acc, float* delta, cudaStream_t stream) {
  using B = typename T::Bits;
  const dim3 qgrid(static_cast<unsigned>(d.q_blocks), static_cast<unsigned>(d.batch * d.heads));
  block_sparse_attention_simt_dq_v1<T, D><<<qgrid, d.block, 2 * kTile * D * sizeof(float), stream>>>(
      static_cast<const B*>(q), static_cast<const B*>(k), static_cast<const B*>(v), static_cast<const B*>(out),
      static_cast<const B*>(dout), lse, m.rows, d, scale, static_cast<B*>(dq), delta);
  const dim3 kgrid(static_cast<unsigned>(d.k_blocks), static_cast<unsigned>(d.batch * d.heads));
  block_sparse_attention_simt_dkdv_v1<T, D><<<kgrid, d.block, (2 * kTile * D + 2 * kTile) * sizeof(float), stream>>>(
      static_cast<const B*>(q), static_cast<const B*>(k), static_cast<const B*>(v), static_cast<const B*>(dout), lse,
      delta, m.cols, d, scale, dk_acc, dv_acc);
}

template <class T, int D>
void launch_backward(const void* q, const void* k, const void* v, const void* out, const void* dout,
                     const float* lse, const Dims& d, const DeviceBlockMask& m, float scale, void* dq, void* dk,
                     void* dv, float* ws, int version, cudaStream_t stream) {
  using B = typename T::Bits;
  const int64_t nkv = d.batch * d.kv_heads * d.seq_k * D;
  float* dk_acc = ws;
  float* dv_acc = ws + nkv;
  float* delta = ws + 2 * nkv;
  const bsa::KeyGrads grads =
      version >= 3 ? bsa::launch_backward_mma<T, D>(q, k, v, out, dout, lse, d, m.rows, m.cols, scale, dq, delta,
                                                    dk_acc, dv_acc, dk, dv, stream, version)
                   : bsa::KeyGrads::kNotRun;
  if (grads == bsa::KeyGrads::kStored) return;
  if (grads == bsa::KeyGrads::kNotRun) {
    cudaMemsetAsync(ws, 0, 2 * nkv * sizeof(float), stream);
    launch_backward_v1<T, D>(q, k, v, out, dout, lse, d, m, scale, dq, dk_acc, dv_acc, delta, stream);
  }
  const unsigned blocks = static_cast<unsigned>((nkv + 255) / 256 < 4096 ? (nkv + 255) / 256 : 4096);
  block_sparse_attention_store_v1<T><<<blocks, 256, 0, stream>>>(dk_acc, nkv, static_cast<B*>(dk));
  block_sparse_attention_store_v1<T><<<blocks, 256, 0, stream>>>(dv_acc, nkv, static_cast<B*>(dv));
}

template <template <class, int> class Body, class... Args>
void dispatch(AttnDType dtype, int64_t head_dim, Args&&... args) {
  if (dtype == AttnDType::kBFloat16) {
    if (head_dim == 64) Body<Bf16, 64>::run(args...);
    else Body<Bf16, 128>::run(args...);
  } else {
    if (head_dim == 64) Body<F16, 64>::run(args...);
    else Body<F16, 128>::run(args...);
  }
}

template <class T, int D>
struct Forward {
  template <class... A>
  static void run(A&&... a) { launch_forward<T, D>(a...); }
};
template <class T, int D>
struct Backward {
  template <class... A>
  static void run(A&&... a) { launch_backward<T, D>(a...); }
};

}  // namespace

int64_t block_sparse_attention_workspace_bytes(const AttentionShape& s) {
  return static_cast<int64_t>(sizeof(float)) *
         (2 * s.batch * s.kv_heads * s.seq_k * s.head_dim + s.batch * s.heads * s.seq_q);
}

std::string block_sparse_attention_forward(const void* q, const void* k, const void* v, const AttentionShape& s,
                                           const DeviceBlockMask& m, float scale, AttnDType dtype, void* out,
                                           float* lse, cudaStream_t stream, int version) {
  if (std::string bad = check(s, m, dtype); !bad.empty()) return bad;
  if (!q || !k || !v || !out || !lse || !m.rows.row_offsets || !m.rows.col_indices || !m.rows.partial)
    return "block_sparse_attention_forward: a null pointer";
  if (version < 0 || version > kLastVersion)
    return "block_sparse_attention_forward: version must be 0 (fastest) or 1 to " + std::to_string(kLastVersion);
  if (version == 0) version = kFastestForward;
  const Dims d = dims(s, m, version);
  dispatch<Forward>(dtype, s.head_dim, q, k, v, d, m, scale, out, lse, version, stream);
  return launch_error("block_sparse_attention_forward");
}

std::string block_sparse_attention_backward(const void* q, const void* k, const void* v, const void* out,
                                            const void* dout, const float* lse, const AttentionShape& s,
                                            const DeviceBlockMask& m, float scale, AttnDType dtype, void* dq,
                                            void* dk, void* dv, void* workspace, cudaStream_t stream,
                                            int version) {
  if (std::string bad = check(s, m, dtype); !bad.empty()) return bad;
  if (!q || !k || !v || !out || !dout || !lse || !dq || !dk || !dv || !workspace || !m.rows.row_offsets ||
      !m.rows.col_indices || !m.rows.partial || !m.cols.row_offsets || !m.cols.col_indices || !m.cols.partial)
    return "block_sparse_attention_backward: a null pointer";
  if (version < 0 || version == 2 || version > kLastVersion)
    return "block_sparse_attention_backward: version must be 0 (fastest), 1 or 3 to " + std::to_string(kLastVersion) +
           " (v6's to v11's backward is v5's)";
  if (version == 0) version = kFastestBackward;
  const Dims d = dims(s, m, version);
  dispatch<Backward>(dtype, s.head_dim, q, k, v, out, dout, lse, d, m, scale, dq, dk, dv,
                     static_cast<float*>(workspace), version, stream);
  return launch_error("block_sparse_attention_backward");
}

}  // namespace stepscope::kernels::gpu
