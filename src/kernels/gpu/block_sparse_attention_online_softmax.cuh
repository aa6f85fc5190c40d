// The forward's online softmax over one tile of scores, shared by the
// tensor-core versions (v3-v5 on mma.sync, v6 on wgmma: both leave a warp's
// 16 rows × 64 keys in mma.sync's accumulator layout, block_sparse_
// attention_mma.cuh).
#pragma once

#include "kernels/gpu/block_sparse_attention_mma.cuh"

namespace stepscope::kernels::gpu::bsa::mma {

// Where a warp's 16 query rows are, for a forward block of threads of
// CtaRows / 16 warps (grid: q_blocks × ceil(block / CtaRows), batch · heads):
// the mask row it walks, the first K/V row of its head, its lanes' rows and
// their places in q/out/lse.
template <int CtaRows = kCtaRows>
struct ForwardRows {
  int64_t mask_row, kv_base, row_at[2];
  LaneRows r;
  __device__ ForwardRows(const Dims& d, int warp, int lane) {
    const int subs = (d.block + CtaRows - 1) / CtaRows;
    const int64_t qb = blockIdx.x / subs, bh = blockIdx.y, b = bh / d.heads, h = bh % d.heads;
    const int local0 = static_cast<int>(blockIdx.x % subs) * CtaRows + warp * kRows;  // row within the query block
    const int64_t q0 = qb * d.block + local0;
    kv_base = (b * d.kv_heads + h / (d.heads / d.kv_heads)) * d.seq_k;
    r = lane_rows(q0, local0, d.block, d.seq_q, local0 < d.block && q0 < d.seq_q, lane);
#pragma unroll
    for (int x = 0; x < 2; ++x) row_at[x] = bh * d.seq_q + r.token[x];
    mask_row = group_of(d, b, h) * d.q_blocks + qb;
  }
  // Some row of the warp is in the block and the sequence.
  __device__ bool warp_live() const { return __any_sync(0xffffffffu, r.ok[0]); }
};

// A forward warp's start: its Q fragments from global memory, the output
// rows at zero, and each of the lane's rows' running max at -inf and sum at
// zero (v3, v4: the max of scaled scores, log2 units; v5 on: of raw scores,
// scaled inside the exponent's FFMA).
template <int D, int CtaRows>
__device__ __forceinline__ void start_rows(uint32_t qf[D / 16][4], float o[D / 8][4], float top[2], float sum[2],
                                           const uint16_t* q, const ForwardRows<CtaRows>& at, int lane) {
  load_a_global<D>(qf, q, at.row_at, at.r.ok, lane);
#pragma unroll
  for (int n = 0; n < D / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  top[0] = top[1] = -INFINITY;
  sum[0] = sum[1] = 0.0f;
}

// Masks the tile's scores s, moves each of the lane's two rows' running max
// `top` and sum `sum` on, turns s into P (unnormalised probabilities, 0 where
// masked) and sets `rescale`, the factor that takes the output rows to the
// new max (rescale_rows). `whole`: every score of the tile is kept for this
// lane's rows (whole_tile), so no per-element test. V: v3 and v4 scale the
// scores first (the max in log2 units); v5 on keep the max of raw scores and
// scale inside the exponent's FFMA (the scale is positive), with exponents
// by fast_exp2; v14 on test the mask through keep_bits.
template <int V>
__device__ __forceinline__ void softmax_tile(float s[kTile / 8][4], float top[2], float sum[2], const Tile& tile,
                                             const LaneRows& r, bool whole, const Dims& d, float scale2, int lane,
                                             float rescale[2]) {
  const int col2 = 2 * (lane % 4);
  // The tile's max of each row (a quad of lanes shares a row).
  float tile_top[2] = {-INFINITY, -INFINITY};
  if (whole) {
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j)
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        if (V < 5) s[j][x] *= scale2;
        tile_top[x >> 1] = fmaxf(tile_top[x >> 1], s[j][x]);
      }
  } else if constexpr (V >= 14) {
    // v14: the rule once per tile into a bit per score (keep_bits, by
    // intervals where it can), not inlined into each of the 32.
    const uint32_t keep = keep_bits<false, true>(d, tile, r, lane);
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j)
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        s[j][x] = (keep >> (4 * j + x)) & 1 ? s[j][x] : -INFINITY;
        tile_top[x >> 1] = fmaxf(tile_top[x >> 1], s[j][x]);
      }
  } else {
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j)
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const int which = x >> 1, jj = j * 8 + col2 + (x & 1);
        const bool keep = r.ok[which] && jj < tile.n && (!tile.partial || allows(d, r.token[which], tile.t0 + jj));
        s[j][x] = keep ? (V < 5 ? s[j][x] * scale2 : s[j][x]) : -INFINITY;
        tile_top[which] = fmaxf(tile_top[which], s[j][x]);
      }
  }
  float base[2];
#pragma unroll
  for (int x = 0; x < 2; ++x) {
    tile_top[x] = fmaxf(tile_top[x], __shfl_xor_sync(0xffffffffu, tile_top[x], 1));
    tile_top[x] = fmaxf(tile_top[x], __shfl_xor_sync(0xffffffffu, tile_top[x], 2));
    const float new_top = fmaxf(top[x], tile_top[x]);
    // A row with nothing live yet: exponents against 0 give exactly 0.
    base[x] = new_top == -INFINITY ? 0.0f : (V >= 5 ? new_top * scale2 : new_top);
    rescale[x] = V >= 5 ? fast_exp2(top[x] * scale2 - base[x]) : exp2f(top[x] - base[x]);
    top[x] = new_top;
  }
  float part[2] = {0.0f, 0.0f};
#pragma unroll
  for (int j = 0; j < kTile / 8; ++j)
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      s[j][x] = V >= 5 ? fast_exp2(fmaf(s[j][x], scale2, -base[x >> 1])) : exp2f(s[j][x] - base[x >> 1]);
      part[x >> 1] += s[j][x];
    }
#pragma unroll
  for (int x = 0; x < 2; ++x) {
    part[x] += __shfl_xor_sync(0xffffffffu, part[x], 1);
    part[x] += __shfl_xor_sync(0xffffffffu, part[x], 2);
    sum[x] = sum[x] * rescale[x] + part[x];
  }
}

// The output rows o taken to a tile's new max (softmax_tile's `rescale`).
template <int D>
__device__ __forceinline__ void rescale_rows(float o[D / 8][4], const float rescale[2]) {
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    o[n][0] *= rescale[0], o[n][1] *= rescale[0];
    o[n][2] *= rescale[1], o[n][3] *= rescale[1];
  }
}

// softmax_tile and rescale_rows at once, for the kernels whose products of a
// tile wait for each other (v3-v7).
template <int D, int V>
__device__ __forceinline__ void online_softmax(float s[kTile / 8][4], float o[D / 8][4], float top[2], float sum[2],
                                               const Tile& tile, const LaneRows& r, bool whole, const Dims& d,
                                               float scale2, int lane) {
  float rescale[2];
  softmax_tile<V>(s, top, sum, tile, r, whole, d, scale2, lane, rescale);
  rescale_rows<D>(o, rescale);
}

// Writes the lane's two output rows (o / sum, in T) and, from one lane of
// each quad, their logsumexp (natural log; -inf for a row with no live key).
template <class T, int D, int V>
__device__ __forceinline__ void store_rows(const float o[D / 8][4], const float top[2], const float sum[2],
                                           const LaneRows& r, const int64_t row_at[2], float scale2, uint16_t* out,
                                           float* lse, int lane) {
  const int col2 = 2 * (lane % 4);
#pragma unroll
  for (int x = 0; x < 2; ++x) {
    if (!r.ok[x]) continue;
    const float inv = sum[x] > 0.0f ? 1.0f / sum[x] : 0.0f;
    uint16_t* dst = out + row_at[x] * D + col2;
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      *reinterpret_cast<uint32_t*>(dst + n * 8) = Mma<T>::pack(o[n][2 * x] * inv, o[n][2 * x + 1] * inv);
    const float top2 = V >= 5 ? top[x] * scale2 : top[x];
    if (lane % 4 == 0) lse[row_at[x]] = sum[x] > 0.0f ? (top2 + log2f(sum[x])) * kLn2 : -INFINITY;
  }
}

// Launches a forward kernel of `threads` threads (16 query rows per warp)
// over grid (q_blocks × ceil(block / rows per block), batch · heads) with
// `bytes` of dynamic shared memory, `extra` after the common arguments (v8
// on: the tensor maps). Returns false, launching nothing, where a pointer
// is not 16-byte aligned or the shared memory is refused.
template <class Kernel, class... Extra>
bool launch_forward_rows(Kernel kernel, int threads, int bytes, const void* q, const void* k, const void* v,
                         const Dims& d, const DeviceCsr& rows, float scale, void* out, float* lse,
                         cudaStream_t stream, bool max_shared_carveout, const Extra&... extra) {
  if (!aligned16(q) || !aligned16(k) || !aligned16(v) || !aligned16(out)) return false;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) != cudaSuccess) return false;
  // Room for every block of threads the registers allow (a hint: the
  // driver may choose otherwise, and a refusal changes nothing else).
  if (max_shared_carveout)
    (void)cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
  const int cta_rows = threads / 32 * kRows;
  const int64_t subs = (d.block + cta_rows - 1) / cta_rows;
  const dim3 grid(static_cast<unsigned>(d.q_blocks * subs), static_cast<unsigned>(d.batch * d.heads));
  kernel<<<grid, threads, bytes, stream>>>(static_cast<const uint16_t*>(q), static_cast<const uint16_t*>(k),
                                           static_cast<const uint16_t*>(v), rows, d, scale,
                                           static_cast<uint16_t*>(out), lse, extra...);
  return true;
}

}  // namespace stepscope::kernels::gpu::bsa::mma
