// Block-sparse attention forward, v2 (see block_sparse_attention.h for the
// version list): FlashAttention-2's loop on the tensor cores through WMMA.
// A block of threads owns one query block of the mask, a warp 16 of its
// rows; for each live key block, tiles of 64 keys of K and V are staged in
// shared memory as 16-bit values, the warp computes S = Q·Kᵀ (16 × 64) with
// 16×16×16 MMAs into fp32, applies the rule of a partial block and the
// online softmax on S in shared memory (the warp's lanes across one row at
// a time), writes P as 16-bit and adds P·V into its fp32 output rows,
// rescaled per row.
//
// Why shared memory for S and O: WMMA fragments do not say which row an
// accumulator element belongs to, and the softmax is per row. Staging them
// costs shared-memory bandwidth that mma.sync with known fragment layouts
// (or wgmma) would not; that is the next version's work.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <cmath>

#include "kernels/gpu/block_sparse_attention_rule.cuh"
#include "kernels/gpu/dtype_bits.cuh"

namespace stepscope::kernels::gpu::bsa {
namespace {

using namespace nvcuda;

constexpr int kKeys = 64;  // keys per tile: two per lane in the softmax
constexpr int kRows = 16;  // query rows per warp (the MMA's M)
// Row padding of the shared-memory tiles, in elements (16 bytes): rows of
// 128 or 256 bytes would put every row of a 16×16 fragment in the same banks.
constexpr int kPadH = 8;  // 16-bit tiles
constexpr int kPadF = 4;  // fp32 tiles

template <class T>
struct Element;
template <>
struct Element<Bf16> {
  using Type = __nv_bfloat16;
  static __device__ __forceinline__ Type from(float f) { return __float2bfloat16_rn(f); }
};
template <>
struct Element<F16> {
  using Type = __half;
  static __device__ __forceinline__ Type from(float f) { return __float2half_rn(f); }
};

// Shared memory of one block of `warps` warps, in bytes: Q rows, a K and a V
// tile (16-bit), and per warp S (fp32), P (16-bit) and its output rows (fp32).
template <int D>
constexpr int64_t shared_bytes(int warps) {
  return static_cast<int64_t>(warps) * kRows * (D + kPadH) * 2 + 2 * kKeys * (D + kPadH) * 2 +
         static_cast<int64_t>(warps) * kRows * ((kKeys + kPadF) * 4 + (kKeys + kPadH) * 2 + (D + kPadF) * 4);
}

// Copies rows [row0, row0 + n) of a [.., D] 16-bit tensor at `src` (row
// `base` first) into `dst` (`rows` rows of D + kPadH), 16 bytes at a time;
// rows from n on are zeros, so a masked P of 0 never meets a NaN of stale
// memory.
template <int D>
__device__ __forceinline__ void stage_rows(const uint16_t* src, int64_t base, int64_t row0, int n, int rows,
                                           uint16_t* dst) {
  constexpr int kVec = 8;  // 16-bit values per 16 bytes
  const int total = rows * D / kVec;
  for (int idx = threadIdx.x; idx < total; idx += blockDim.x) {
    const int r = idx / (D / kVec), c = idx % (D / kVec);
    uint4 word = make_uint4(0, 0, 0, 0);
    if (r < n) word = reinterpret_cast<const uint4*>(src + (base + row0 + r) * D)[c];
    reinterpret_cast<uint4*>(dst + r * (D + kPadH))[c] = word;
  }
}

__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}
__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

// grid (q_blocks, batch · heads); block: 32 · ceil(mask block / 16) threads.
template <class T, int D>
__global__ void __launch_bounds__(256) block_sparse_attention_wmma_fwd_v2(
    const uint16_t* q, const uint16_t* k, const uint16_t* v, DeviceCsr rows, Dims d, float scale, uint16_t* out,
    float* lse) {
  using E = typename Element<T>::Type;
  extern __shared__ __align__(128) unsigned char smem[];
  const int warps = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  uint16_t* qs = reinterpret_cast<uint16_t*>(smem);
  constexpr int QD = D + kPadH, SK = kKeys + kPadF, PK = kKeys + kPadH, OD = D + kPadF;  // row strides
  uint16_t* ks = qs + warps * kRows * QD;
  uint16_t* vs = ks + kKeys * QD;
  unsigned char* per_warp = reinterpret_cast<unsigned char*>(vs + kKeys * QD);
  float* ss = reinterpret_cast<float*>(per_warp) + warp * kRows * SK;
  E* ps = reinterpret_cast<E*>(per_warp + warps * kRows * SK * 4) + warp * kRows * PK;
  float* os = reinterpret_cast<float*>(per_warp + warps * kRows * (SK * 4 + PK * 2)) + warp * kRows * OD;

  const int64_t qb = blockIdx.x, bh = blockIdx.y, b = bh / d.heads, h = bh % d.heads;
  const int64_t q0 = qb * d.block;
  const int q_rows = static_cast<int>(d.seq_q - q0 < warps * kRows ? d.seq_q - q0 : warps * kRows);
  const int64_t kv_base = (b * d.kv_heads + h / (d.heads / d.kv_heads)) * d.seq_k;
  stage_rows<D>(q, bh * d.seq_q, q0, q_rows < d.block ? q_rows : d.block, warps * kRows, qs);
  for (int x = lane; x < kRows * OD; x += 32) os[x] = 0.0f;
  // Each row's running max and sum, the same in every lane: lanes sweep one
  // row at a time across its columns, so shared memory is read without bank
  // conflicts and the output is written coalesced.
  float top[kRows], sum[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) top[r] = -INFINITY, sum[r] = 0.0f;
  const bool warp_live = warp * kRows < d.block && q0 + warp * kRows < d.seq_q;

  const int64_t row = group_of(d, b, h) * d.q_blocks + qb;
  for (int32_t e = rows.row_offsets[row]; e < rows.row_offsets[row + 1]; ++e) {
    const int64_t begin = static_cast<int64_t>(rows.col_indices[e]) * d.block;
    const int64_t end = d.seq_k < begin + d.block ? d.seq_k : begin + d.block;
    const bool partial = rows.partial[e] != 0;
    for (int64_t t0 = begin; t0 < end; t0 += kKeys) {
      const int n = end - t0 < kKeys ? static_cast<int>(end - t0) : kKeys;
      __syncthreads();  // the previous tile is read by every warp
      stage_rows<D>(k, kv_base, t0, n, kKeys, ks);
      stage_rows<D>(v, kv_base, t0, n, kKeys, vs);
      __syncthreads();
      if (!warp_live) continue;
      const int col_frags = (n + 15) / 16;
      // S = Q · Kᵀ for this warp's 16 rows.
      for (int c = 0; c < col_frags; ++c) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
        wmma::fill_fragment(acc, 0.0f);
        for (int kk = 0; kk < D / 16; ++kk) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, E, wmma::row_major> a;
          wmma::fragment<wmma::matrix_b, 16, 16, 16, E, wmma::col_major> bk;
          wmma::load_matrix_sync(a, reinterpret_cast<const E*>(qs + warp * kRows * QD + kk * 16), QD);
          wmma::load_matrix_sync(bk, reinterpret_cast<const E*>(ks + c * 16 * QD + kk * 16), QD);
          wmma::mma_sync(acc, a, bk, acc);
        }
        wmma::store_matrix_sync(ss + c * 16, acc, SK, wmma::mem_row_major);
      }
      __syncwarp();
      // Online softmax, row by row; lane holds columns lane and lane + 32.
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const int64_t i = q0 + warp * kRows + r;
        const bool row_live = warp * kRows + r < d.block && i < d.seq_q;
        float s[2];
#pragma unroll
        for (int h2 = 0; h2 < 2; ++h2) {
          const int jj = lane + 32 * h2;
          s[h2] = -INFINITY;
          if (row_live && jj < n && (!partial || allows(d, i, t0 + jj))) s[h2] = ss[r * SK + jj] * scale;
        }
        const float tile_top = warp_max(fmaxf(s[0], s[1]));
        const float new_top = fmaxf(top[r], tile_top);
        // A row with nothing live yet keeps top = -inf and adds nothing.
        const float rescale =
            new_top == -INFINITY ? 1.0f : (top[r] == -INFINITY ? 0.0f : __expf(top[r] - new_top));
        float part = 0.0f;
#pragma unroll
        for (int h2 = 0; h2 < 2; ++h2) {
          const float p = s[h2] == -INFINITY ? 0.0f : __expf(s[h2] - new_top);
          part += p;
          ps[r * PK + lane + 32 * h2] = Element<T>::from(p);
        }
        sum[r] = sum[r] * rescale + warp_sum(part);
        top[r] = new_top;
        if (rescale != 1.0f)
          for (int x = lane; x < D; x += 32) os[r * OD + x] *= rescale;
      }
      __syncwarp();
      // O += P · V.
      for (int c = 0; c < D / 16; ++c) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
        wmma::load_matrix_sync(acc, os + c * 16, OD, wmma::mem_row_major);
        for (int kk = 0; kk < col_frags; ++kk) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, E, wmma::row_major> a;
          wmma::fragment<wmma::matrix_b, 16, 16, 16, E, wmma::row_major> bv;
          wmma::load_matrix_sync(a, ps + kk * 16, PK);
          wmma::load_matrix_sync(bv, reinterpret_cast<const E*>(vs + kk * 16 * QD + c * 16), QD);
          wmma::mma_sync(acc, a, bv, acc);
        }
        wmma::store_matrix_sync(os + c * 16, acc, OD, wmma::mem_row_major);
      }
      __syncwarp();
    }
  }
  if (!warp_live) return;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int64_t i = q0 + warp * kRows + r;
    if (warp * kRows + r >= d.block || i >= d.seq_q) break;
    const int64_t o = (bh * d.seq_q + i) * D;
    const float inv = sum[r] > 0.0f ? 1.0f / sum[r] : 0.0f;
    for (int x = lane; x < D; x += 32) out[o + x] = T::store(os[r * OD + x] * inv);
    if (lane == 0) lse[bh * d.seq_q + i] = sum[r] > 0.0f ? top[r] + logf(sum[r]) : -INFINITY;
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace

template <class T, int D>
bool launch_forward_wmma(const void* q, const void* k, const void* v, const Dims& d, const DeviceCsr& rows,
                         float scale, void* out, float* lse, cudaStream_t stream) {
  if (!aligned16(q) || !aligned16(k) || !aligned16(v) || !aligned16(out)) return false;
  const int warps = (d.block + kRows - 1) / kRows;
  const int64_t bytes = shared_bytes<D>(warps);
  int device = 0, limit = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess ||
      bytes > limit)
    return false;
  auto kernel = block_sparse_attention_wmma_fwd_v2<T, D>;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)) !=
      cudaSuccess)
    return false;
  const dim3 grid(static_cast<unsigned>(d.q_blocks), static_cast<unsigned>(d.batch * d.heads));
  kernel<<<grid, 32 * warps, static_cast<size_t>(bytes), stream>>>(
      static_cast<const uint16_t*>(q), static_cast<const uint16_t*>(k), static_cast<const uint16_t*>(v), rows, d,
      scale, static_cast<uint16_t*>(out), lse);
  return true;
}

template bool launch_forward_wmma<Bf16, 64>(const void*, const void*, const void*, const Dims&, const DeviceCsr&,
                                            float, void*, float*, cudaStream_t);
template bool launch_forward_wmma<Bf16, 128>(const void*, const void*, const void*, const Dims&, const DeviceCsr&,
                                             float, void*, float*, cudaStream_t);
template bool launch_forward_wmma<F16, 64>(const void*, const void*, const void*, const Dims&, const DeviceCsr&,
                                           float, void*, float*, cudaStream_t);
template bool launch_forward_wmma<F16, 128>(const void*, const void*, const void*, const Dims&, const DeviceCsr&,
                                            float, void*, float*, cudaStream_t);

}  // namespace stepscope::kernels::gpu::bsa
