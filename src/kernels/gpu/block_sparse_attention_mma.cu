// Block-sparse attention forward, v3 (see block_sparse_attention.h for the
// version list): FlashAttention-2's loop on the tensor cores with the
// fragments in registers. A block of 4 warps owns up to 64 query rows of one
// query block of the mask (a 128-token block takes two), a warp 16 rows.
// Each warp keeps its Q fragments, the scores S of a 64-key tile and its
// output rows in registers: mma.sync m16n8k16 (16-bit in, fp32 out) leaves
// every accumulator at a documented (row, column) (block_sparse_attention_
// mma.cuh), so the online softmax runs on the registers with two shuffles per
// row, and P goes straight back into the next MMA as its A operand. K and V
// tiles reach shared memory through cp.async, double-buffered (the next tile
// loads while this one is used), and the MMAs read them with ldmatrix.
//
// What v2 (WMMA) lacked: WMMA hides the fragment layout, so S and O made a
// round trip through shared memory at every tile; that traffic is gone here.
//
// v4 is the same kernel with a mask-free path for whole tiles (a tile of 64
// keys of a block the mask keeps whole, every row of the warp in the
// sequence): there each score is scaled and exponentiated with no per-element
// test. Nsight Compute on v3 (H100, 16k tokens, head dim 64) found the
// integer/logic pipeline the busiest (44%) and issue slots 48% busy: the
// per-element keep test costs more instructions than the softmax itself.
#include "kernels/gpu/block_sparse_attention_online_softmax.cuh"

#include <cmath>

namespace stepscope::kernels::gpu::bsa {
namespace {

using namespace mma;

// grid (q_blocks × ceil(block / 64), batch · heads); block: 32 · kWarps threads.
// V: the version, 3, 4 or 5. v4 adds the mask-free path for whole tiles, and
// at head dim 64 asks for 4 blocks of threads per SM (128 registers a thread;
// v3 took 132, which left room for 3: 18.75% occupancy), with the shared
// memory carveout to match. v5 (the instruction counts of Nsight Compute's
// source view of v4: 853 instructions per warp and tile, 64 of them MMAs):
// the scale folded into the exponent's FFMA (the running max is kept on raw
// scores: the scale is positive), exponents by fast_exp2, the whole-tile
// scores without a per-column test, and the walk and staging of
// TileWalk<5> / stage_pair<D, 5>.
// v5 makes no ask: its head-dim-64 forward takes 137 registers (3 blocks per
// SM), and held to 128 it spilled 122 bytes (ptxas -v, sm_90).
template <int D, int V>
constexpr int kFwdBlocksPerSm = V == 4 && D == 64 ? 4 : 0;  // 0: no ask

// S = Q · Kᵀ for 16 rows × 64 keys: 8 accumulators of 16 × 8. Checked: the
// tile may hold fewer than 64 keys (n), whose columns are left at 0.
template <class T, int D, bool Checked>
__device__ __forceinline__ void tile_scores(float s[kTile / 8][4], const uint32_t qf[D / 16][4], const uint16_t* ks,
                                            int n, int lane) {
  constexpr int LD = D + kPad;
#pragma unroll
  for (int j = 0; j < kTile / 8; ++j) {
    s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
    if (Checked && j * 8 >= n) continue;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk += 2) {
      uint32_t bk[4];
      load_b_rows<LD>(bk, ks, j, kk, lane);
      Mma<T>::run(s[j], qf[kk], bk[0], bk[1]);
      Mma<T>::run(s[j], qf[kk + 1], bk[2], bk[3]);
    }
  }
}

template <class T, int D, int V>
__global__ void __launch_bounds__(kWarps * 32, kFwdBlocksPerSm<D, V>) block_sparse_attention_mma_fwd_v3(
    const uint16_t* q, const uint16_t* k, const uint16_t* v, DeviceCsr rows, Dims d, float scale, uint16_t* out,
    float* lse) {
  constexpr int LD = D + kPad;
  extern __shared__ __align__(128) unsigned char smem[];
  uint16_t* buffers = reinterpret_cast<uint16_t*>(smem);  // [2][K, V][kTile][LD]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const ForwardRows<> at(d, warp, lane);
  const LaneRows& r = at.r;
  const bool warp_live = at.warp_live();
  uint32_t qf[D / 16][4];
  float o[D / 8][4], top[2], sum[2];
  start_rows<D>(qf, o, top, sum, q, at, lane);
  const float scale2 = scale * kLog2e;

  walk_tiles_async<D, V>(rows, at.mask_row, d.block, d.seq_k, k, v, at.kv_base, buffers,
                         [&](const uint16_t* ks, const uint16_t* vs, const Tile& tile) {
    if (warp_live && tile.n > 0) {
      const bool whole = V >= 4 && whole_tile(tile, r);
      float s[kTile / 8][4];
      // mma.sync needs the whole warp on one path: the unchecked scores only
      // where every lane's tile is whole (rows past the block or the
      // sequence make a lane's differ).
      if (V >= 5 && __all_sync(0xffffffffu, whole))
        tile_scores<T, D, false>(s, qf, ks, tile.n, lane);
      else
        tile_scores<T, D, true>(s, qf, ks, tile.n, lane);
      online_softmax<D, V>(s, o, top, sum, tile, r, whole, d, scale2, lane);
      // O += P · V, P's accumulators of keys 16kk..16kk+15 as the A operand.
#pragma unroll
      for (int kk = 0; kk < kTile / 16; ++kk) {
        if (kk * 16 >= tile.n) continue;
        uint32_t pa[4];
        pack_a<T>(s[2 * kk], s[2 * kk + 1], pa);
#pragma unroll
        for (int n = 0; n < D / 8; n += 2) {
          uint32_t bv[4];
          load_b_cols<LD>(bv, vs, kk, n, lane);
          Mma<T>::run(o[n], pa, bv[0], bv[1]);
          Mma<T>::run(o[n + 1], pa, bv[2], bv[3]);
        }
      }
    }
  });
  store_rows<T, D, V>(o, top, sum, r, at.row_at, scale2, out, lse, lane);
}

}  // namespace

template <class T, int D>
bool launch_forward_mma(const void* q, const void* k, const void* v, const Dims& d, const DeviceCsr& rows,
                        float scale, void* out, float* lse, cudaStream_t stream, int version) {
  constexpr int bytes = 2 * 2 * kTile * (D + kPad) * 2;  // two buffers of a K and a V tile
  auto kernel = version >= 5   ? block_sparse_attention_mma_fwd_v3<T, D, 5>
                : version == 4 ? block_sparse_attention_mma_fwd_v3<T, D, 4>
                               : block_sparse_attention_mma_fwd_v3<T, D, 3>;
  return launch_forward_rows(kernel, kWarps * 32, bytes, q, k, v, d, rows, scale, out, lse, stream, version >= 4);
}

#define STEPSCOPE_BSA_MMA(T, D)                                                                                   \
  template bool launch_forward_mma<T, D>(const void*, const void*, const void*, const Dims&, const DeviceCsr&, \
                                         float, void*, float*, cudaStream_t, int);
STEPSCOPE_BSA_MMA(Bf16, 64)
STEPSCOPE_BSA_MMA(Bf16, 128)
STEPSCOPE_BSA_MMA(F16, 64)
STEPSCOPE_BSA_MMA(F16, 128)
#undef STEPSCOPE_BSA_MMA

}  // namespace stepscope::kernels::gpu::bsa
