// Block-sparse attention backward, v3 (see block_sparse_attention.h for the
// version list): FlashAttention-2's backward on the tensor cores, fragments
// in registers (layouts in block_sparse_attention_mma.cuh), in two passes as
// v1 has them, so that neither needs atomics on dQ:
//  - by query rows (the mask's rows): S = Q·Kᵀ and dP = dO·Vᵀ per 32-key half
//    of a staged K/V tile, P = exp(S·scale − lse), dS = P ∘ (dP − Δ), and
//    dQ += dS·K; Δᵢ = dOᵢ·Oᵢ is computed here and kept for the second pass;
//  - by key rows (the transposed mask): Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ per 32-query
//    half of a staged Q/dO tile, dV += Pᵀ·dO and dK += dSᵀ·Q; query heads of
//    one K/V head (GQA) add into fp32 accumulators, rounded to the dtype by
//    the caller.
// K and V (first pass) or Q and dO (second) reach shared memory through
// cp.async, double-buffered; a warp owns 16 rows, a block of threads 64.
// V is the version: v4 adds a mask-free path for whole tiles, as the forward
// has it (block_sparse_attention_mma.cu); v5 exponents by fast_exp2 and the
// walk and staging of TileWalk<5> / stage_pair<D, 5>.
#include "kernels/gpu/block_sparse_attention_mma.cuh"

#include <cmath>

namespace stepscope::kernels::gpu::bsa {
namespace {

using namespace mma;

constexpr int kHalf = 32;  // tile rows per step of S (registers: 4 accumulators of 16 × 8 for S and for dP)

// acc[j] += A · B over head dims, B being rows 32h + 8j.. of a staged tile
// read as B (rows as the MMA's N); A from registers.
template <class T, int D, int LD>
__device__ __forceinline__ void scores_from_registers(float acc[kHalf / 8][4], const uint32_t a[D / 16][4],
                                                      const uint16_t* tile, int half, int lane) {
#pragma unroll
  for (int j = 0; j < kHalf / 8; ++j) {
    acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk += 2) {
      uint32_t b[4];
      load_b_rows<LD>(b, tile, half * (kHalf / 8) + j, kk, lane);
      Mma<T>::run(acc[j], a[kk], b[0], b[1]);
      Mma<T>::run(acc[j], a[kk + 1], b[2], b[3]);
    }
  }
}
// The same with A read from shared memory (rows 16w.. of `a_tile`).
template <class T, int D, int LD>
__device__ __forceinline__ void scores_from_shared(float acc[kHalf / 8][4], const uint16_t* a_tile, int w,
                                                   const uint16_t* tile, int half, int lane) {
#pragma unroll
  for (int j = 0; j < kHalf / 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
#pragma unroll
  for (int kk = 0; kk < D / 16; kk += 2) {
    uint32_t a0[4], a1[4];
    load_a<LD>(a0, a_tile, w, kk, lane);
    load_a<LD>(a1, a_tile, w, kk + 1, lane);
#pragma unroll
    for (int j = 0; j < kHalf / 8; ++j) {
      uint32_t b[4];
      load_b_rows<LD>(b, tile, half * (kHalf / 8) + j, kk, lane);
      Mma<T>::run(acc[j], a0, b[0], b[1]);
      Mma<T>::run(acc[j], a1, b[2], b[3]);
    }
  }
}
// acc += G · X over the 32 rows of a half tile: G (16 × 32, accumulators) as
// A, rows 32h.. of the staged tile X as B (rows as the MMA's K).
template <class T, int D, int LD>
__device__ __forceinline__ void accumulate(float acc[D / 8][4], const float g[kHalf / 8][4], const uint16_t* tile,
                                           int half, int lane) {
#pragma unroll
  for (int kk = 0; kk < kHalf / 16; ++kk) {
    uint32_t a[4];
    pack_a<T>(g[2 * kk], g[2 * kk + 1], a);
#pragma unroll
    for (int n = 0; n < D / 8; n += 2) {
      uint32_t b[4];
      load_b_cols<LD>(b, tile, half * (kHalf / 16) + kk, n, lane);
      Mma<T>::run(acc[n], a, b[0], b[1]);
      Mma<T>::run(acc[n + 1], a, b[2], b[3]);
    }
  }
}

// Pass 1. grid (q_blocks × ceil(block / 64), batch · heads).
template <class T, int D, int V>
__global__ void __launch_bounds__(kWarps * 32) block_sparse_attention_mma_dq_v3(
    const uint16_t* q, const uint16_t* k, const uint16_t* v, const uint16_t* out, const uint16_t* dout,
    const float* lse, DeviceCsr rows, Dims d, float scale, uint16_t* dq, float* delta) {
  constexpr int LD = D + kPad;
  extern __shared__ __align__(128) unsigned char smem[];
  uint16_t* buffers = reinterpret_cast<uint16_t*>(smem);  // [2][K, V][kTile][LD]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, col2 = 2 * (lane % 4);
  const int subs = (d.block + kCtaRows - 1) / kCtaRows;
  const int64_t qb = blockIdx.x / subs, bh = blockIdx.y, b = bh / d.heads, h = bh % d.heads;
  const int local0 = static_cast<int>(blockIdx.x % subs) * kCtaRows + warp * kRows;
  const int64_t q0 = qb * d.block + local0;
  const int64_t kv_base = (b * d.kv_heads + h / (d.heads / d.kv_heads)) * d.seq_k;
  const bool warp_live = local0 < d.block && q0 < d.seq_q;
  const LaneRows r = lane_rows(q0, local0, d.block, d.seq_q, warp_live, lane);
  int64_t at[2];
  float lse2[2], dlt[2];
  query_row_terms<T, D>(r, bh, d, out, dout, lse, lane, at, lse2, dlt, delta);
  uint32_t qf[D / 16][4], dof[D / 16][4];
  load_a_global<D>(qf, q, at, r.ok, lane);
  load_a_global<D>(dof, dout, at, r.ok, lane);
  float acc[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
  const float scale2 = scale * kLog2e;

  const int64_t row = group_of(d, b, h) * d.q_blocks + qb;
  walk_tiles_async<D, V>(rows, row, d.block, d.seq_k, k, v, kv_base, buffers,
                         [&](const uint16_t* ks, const uint16_t* vs, const Tile& tile) {
    if (warp_live) {
      for (int half = 0; half * kHalf < tile.n; ++half) {
        float s[kHalf / 8][4], dp[kHalf / 8][4];
        scores_from_registers<T, D, LD>(s, qf, ks, half, lane);
        scores_from_registers<T, D, LD>(dp, dof, vs, half, lane);
        if (V >= 4 && whole_tile(tile, r)) {
#pragma unroll
          for (int j = 0; j < kHalf / 8; ++j)
#pragma unroll
            for (int x = 0; x < 4; ++x)
              s[j][x] = exp2_of<V>(s[j][x] * scale2 - lse2[x >> 1]) * (dp[j][x] - dlt[x >> 1]);  // dS
        } else {
#pragma unroll
          for (int j = 0; j < kHalf / 8; ++j)
#pragma unroll
            for (int x = 0; x < 4; ++x) {
              const int which = x >> 1, jj = half * kHalf + j * 8 + col2 + (x & 1);
              const bool keep =
                  r.ok[which] && jj < tile.n && (!tile.partial || allows(d, r.token[which], tile.t0 + jj));
              const float p = keep ? exp2_of<V>(s[j][x] * scale2 - lse2[which]) : 0.0f;
              s[j][x] = p * (dp[j][x] - dlt[which]);  // dS
            }
        }
        accumulate<T, D, LD>(acc, s, ks, half, lane);
      }
    }
  });
  store_grad_rows<T, D>(acc, r, at, scale, lane, dq);
}

// Pass 2. grid (k_blocks × ceil(block / 64), batch · heads): each query head
// adds its share into its K/V head's fp32 accumulators.
template <class T, int D, int V>
__global__ void __launch_bounds__(kWarps * 32) block_sparse_attention_mma_dkdv_v3(
    const uint16_t* q, const uint16_t* k, const uint16_t* v, const uint16_t* dout, const float* lse,
    const float* delta, DeviceCsr cols, Dims d, float scale, float* dk_acc, float* dv_acc) {
  constexpr int LD = D + kPad;
  extern __shared__ __align__(128) unsigned char smem[];
  uint16_t* kv = reinterpret_cast<uint16_t*>(smem);  // [K, V][kTile][LD]: this block's key rows
  uint16_t* buffers = kv + 2 * kTile * LD;            // [2][Q, dO][kTile][LD]
  float* row_terms = reinterpret_cast<float*>(buffers + 4 * kTile * LD);  // [2][lse · log2 e, Δ][kTile]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, col2 = 2 * (lane % 4);
  const int subs = (d.block + kCtaRows - 1) / kCtaRows;
  const int64_t kb = blockIdx.x / subs, bh = blockIdx.y, b = bh / d.heads, h = bh % d.heads;
  const int cta0 = static_cast<int>(blockIdx.x % subs) * kCtaRows;
  const int local0 = cta0 + warp * kRows;
  const int64_t k0 = kb * d.block + local0;
  const int64_t kv_base = (b * d.kv_heads + h / (d.heads / d.kv_heads)) * d.seq_k;
  const int64_t q_base = bh * d.seq_q;
  const bool warp_live = local0 < d.block && k0 < d.seq_k;
  const LaneRows r = lane_rows(k0, local0, d.block, d.seq_k, warp_live, lane);
  {
    const int64_t cta_first = kb * d.block + cta0;
    const int64_t left = d.seq_k - cta_first;
    const int in_block = d.block - cta0 < kCtaRows ? d.block - cta0 : kCtaRows;
    const int n = left < in_block ? static_cast<int>(left) : in_block;
    stage_pair<D, V>(k, v, kv_base, cta_first, n > 0 ? n : 0, kv, kv + kTile * LD);
  }
  float dk[D / 8][4], dv[D / 8][4];
  zero_rows<D>(dk, dv);
  const float scale2 = scale * kLog2e;

  const int64_t row = group_of(d, b, h) * d.k_blocks + kb;
  const int tiles = tiles_of(cols, row, d.block);
  const int32_t first = cols.row_offsets[row];
  // v5: TileWalk, and the tile visited is the one staged a step before; v3
  // and v4 find each tile with tile_at, twice.
  TileWalk<false> walk(cols, row, d.block, d.seq_q);
  Tile staged{0, 0, false};
  // Q and dO of a tile of queries, and their lse (in log2 units) and Δ. Not
  // walk_tiles_async: its closures cost this kernel register spills.
  auto stage = [&](int t) {
    uint16_t* to = buffers + (t & 1) * 2 * kTile * LD;
    float* terms = row_terms + (t & 1) * 2 * kTile;
    const Tile tile = V >= 5 ? (staged = walk.next()) : tile_at(cols, first, t, d.block, d.seq_q);
    stage_pair<D, V>(q, dout, q_base, tile.t0, tile.n, to, to + kTile * LD);
    for (int i = threadIdx.x; i < kTile; i += blockDim.x) {
      const bool live = i < tile.n;
      const float l = live ? lse[q_base + tile.t0 + i] : 0.0f;
      // A query with no attended key (lse = -inf) has P = 0 everywhere it is
      // masked; +inf here would only turn a masked 0 into a NaN.
      terms[i] = live && l != -INFINITY ? l * kLog2e : 0.0f;
      terms[kTile + i] = live ? delta[q_base + tile.t0 + i] : 0.0f;
    }
  };
  if (tiles > 0) stage(0);
  commit_copies();
  for (int t = 0; t < tiles; ++t) {
    const uint16_t* qs = buffers + (t & 1) * 2 * kTile * LD;
    const uint16_t* dos = qs + kTile * LD;
    const float* terms = row_terms + (t & 1) * 2 * kTile;
    Tile tile = staged;
    if (t + 1 < tiles) stage(t + 1);
    commit_copies();
    wait_copies<1>();
    __syncthreads();
    if (V < 5) tile = tile_at(cols, first, t, d.block, d.seq_q);
    if (warp_live) {
      for (int half = 0; half * kHalf < tile.n; ++half) {
        float p[kHalf / 8][4], ds[kHalf / 8][4];
        scores_from_shared<T, D, LD>(p, kv, warp, qs, half, lane);                  // Sᵀ
        scores_from_shared<T, D, LD>(ds, kv + kTile * LD, warp, dos, half, lane);  // dPᵀ
        if (V >= 4 && whole_tile(tile, r)) {
#pragma unroll
          for (int j = 0; j < kHalf / 8; ++j)
#pragma unroll
            for (int x = 0; x < 4; ++x) {
              const int ii = half * kHalf + j * 8 + col2 + (x & 1);
              p[j][x] = exp2_of<V>(p[j][x] * scale2 - terms[ii]);
              ds[j][x] = p[j][x] * (ds[j][x] - terms[kTile + ii]);
            }
        } else {
#pragma unroll
          for (int j = 0; j < kHalf / 8; ++j)
#pragma unroll
            for (int x = 0; x < 4; ++x) {
              const int which = x >> 1, ii = half * kHalf + j * 8 + col2 + (x & 1);
              const bool keep =
                  r.ok[which] && ii < tile.n && (!tile.partial || allows(d, tile.t0 + ii, r.token[which]));
              const float pt = keep ? exp2_of<V>(p[j][x] * scale2 - terms[ii]) : 0.0f;
              p[j][x] = pt;
              ds[j][x] = pt * (ds[j][x] - (keep ? terms[kTile + ii] : 0.0f));
            }
        }
        accumulate<T, D, LD>(dv, p, dos, half, lane);
        accumulate<T, D, LD>(dk, ds, qs, half, lane);
      }
    }
    __syncthreads();
  }
  wait_copies<0>();
  add_key_rows<D>(dk, dv, r, kv_base, scale, lane, dk_acc, dv_acc);
}

template <class Kernel>
bool allow_shared(Kernel kernel, int bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) == cudaSuccess;
}

}  // namespace

template <class T, int D>
KeyGrads launch_backward_mma(const void* q, const void* k, const void* v, const void* out, const void* dout,
                             const float* lse, const Dims& d, const DeviceCsr& rows, const DeviceCsr& cols,
                             float scale, void* dq, float* delta, float* dk_acc, float* dv_acc, void* dk, void* dv,
                             cudaStream_t stream, int version) {
  for (const void* p : {q, k, v, out, dout, static_cast<const void*>(dq)})
    if (!aligned16(p)) return KeyGrads::kNotRun;
  constexpr int tile_bytes = kTile * (D + kPad) * 2;
  constexpr int dq_bytes = 4 * tile_bytes;                           // two buffers of K and V
  constexpr int dkdv_bytes = 6 * tile_bytes + 2 * 2 * kTile * 4;  // K, V; two buffers of Q, dO; lse, Δ
  auto dq_kernel = version >= 5   ? block_sparse_attention_mma_dq_v3<T, D, 5>
                   : version == 4 ? block_sparse_attention_mma_dq_v3<T, D, 4>
                                  : block_sparse_attention_mma_dq_v3<T, D, 3>;
  auto dkdv_kernel = version >= 5   ? block_sparse_attention_mma_dkdv_v3<T, D, 5>
                     : version == 4 ? block_sparse_attention_mma_dkdv_v3<T, D, 4>
                                    : block_sparse_attention_mma_dkdv_v3<T, D, 3>;
  if (!allow_shared(dq_kernel, dq_bytes) || !allow_shared(dkdv_kernel, dkdv_bytes)) return KeyGrads::kNotRun;
  const int64_t subs = (d.block + kCtaRows - 1) / kCtaRows;
  const auto* B = static_cast<const uint16_t*>(q);
  const dim3 qgrid(static_cast<unsigned>(d.q_blocks * subs), static_cast<unsigned>(d.batch * d.heads));
  // v13: the dQ pass on wgmma where it runs; v5's otherwise.
  if (version < 13 || !launch_backward_dq_wgmma<T, D>(q, k, v, out, dout, lse, d, rows, scale, dq, delta, stream,
                                                                  version >= 14))
    dq_kernel<<<qgrid, kWarps * 32, dq_bytes, stream>>>(
        B, static_cast<const uint16_t*>(k), static_cast<const uint16_t*>(v), static_cast<const uint16_t*>(out),
        static_cast<const uint16_t*>(dout), lse, rows, d, scale, static_cast<uint16_t*>(dq), delta);
  // v16: dK and dV stored by the dK/dV pass where it can; v12: that pass
  // on wgmma where it runs; v5's otherwise.
  const bool interval = version >= 14;
  if (version >= 16 && dk &&
      launch_backward_dkdv_wgmma<T, D>(q, k, v, dout, lse, delta, d, cols, scale, nullptr, nullptr, dk, dv, stream,
                                       interval))
    return KeyGrads::kStored;
  cudaMemsetAsync(dk_acc, 0, 2 * d.batch * d.kv_heads * d.seq_k * D * sizeof(float), stream);  // dv_acc follows
  if (version >= 12 && launch_backward_dkdv_wgmma<T, D>(q, k, v, dout, lse, delta, d, cols, scale, dk_acc, dv_acc,
                                                        nullptr, nullptr, stream, interval))
    return KeyGrads::kAdded;
  const dim3 kgrid(static_cast<unsigned>(d.k_blocks * subs), static_cast<unsigned>(d.batch * d.heads));
  dkdv_kernel<<<kgrid, kWarps * 32, dkdv_bytes, stream>>>(
      B, static_cast<const uint16_t*>(k), static_cast<const uint16_t*>(v), static_cast<const uint16_t*>(dout), lse,
      delta, cols, d, scale, dk_acc, dv_acc);
  return KeyGrads::kAdded;
}

#define STEPSCOPE_BSA_MMA_BWD(T, D)                                                                              \
  template KeyGrads launch_backward_mma<T, D>(const void*, const void*, const void*, const void*, const void*, \
                                              const float*, const Dims&, const DeviceCsr&, const DeviceCsr&, float, \
                                              void*, float*, float*, float*, void*, void*, cudaStream_t, int);
STEPSCOPE_BSA_MMA_BWD(Bf16, 64)
STEPSCOPE_BSA_MMA_BWD(Bf16, 128)
STEPSCOPE_BSA_MMA_BWD(F16, 64)
STEPSCOPE_BSA_MMA_BWD(F16, 128)
#undef STEPSCOPE_BSA_MMA_BWD

}  // namespace stepscope::kernels::gpu::bsa
