// Block-sparse attention backward, v13 (block_sparse_attention.h lists the
// versions): v12 with its dQ pass on Hopper's warpgroup products too.
//
// The dQ pass has the forward's shape: a query row walks the key blocks it
// attends. v5's pass reads Q and dO as mma.sync fragments held in registers
// for the whole walk and stages K and V by cp.async from every thread
// (Nsight Compute, H100, 16k tokens, head dim 128: 1.72 ms against 0.93 for
// v11's forward, which does two products per tile where this does three).
// Here, as in v12's dK/dV pass with the roles of queries and keys swapped,
// the block's query rows of Q and dO are copied once by TMA and read by
// wgmma as A straight from shared memory, and each 64-key tile of K and V
// comes by TMA into a ring of four buffers filled two tiles ahead. Per tile
// and warpgroup (64 query rows):
//   S = Q·Kᵀ and dP = dO·Vᵀ      (m64n64, A and B from shared memory),
//   dS = P ∘ (dP − Δ), P = exp2(S·scale·log2 e − lse·log2 e) per row,
//   dQ += dS·K                  (dS packed as A; K as MN-major B).
// lse and Δ are per row here, so they live in registers: Δ = dO·O over the
// row is computed at the start and written for the dK/dV pass. Each thread
// arrives on a buffer's `empty` barrier once the product that read it is
// done, which it learns at the next tile's wait. Keys past a tile's end are
// masked (P = 0); the maps see K and V as [batch · kv_heads, seq_k, D].
#include "kernels/gpu/block_sparse_attention_wgmma_tiles.cuh"

#include <cmath>

namespace stepscope::kernels::gpu::bsa {
namespace {

using namespace mma;
using namespace wgtiles;

constexpr int kRingQ = 4;  // buffers of a K and a V tile, filled two tiles ahead

// Shared memory: W tiles of Q and of dO, the ring, 2 · kRingQ + 1 barriers.
template <int D, int W>
constexpr int kDqBytes = (2 * W + 2 * kRingQ) * kTileElems<D> * 2 + (2 * kRingQ + 1) * 8;

// Interval: v14, the mask bits by intervals where the rule allows (keep_bits).
template <class T, int D, int W, bool Interval>
__global__ void __launch_bounds__(W * 128, 1) block_sparse_attention_wgmma_dq_v13(
    const uint16_t* out, const uint16_t* dout, const float* lse, DeviceCsr rows, Dims d, float scale, uint16_t* dq,
    float* delta, const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap do_map,
    const __grid_constant__ CUtensorMap k_map, const __grid_constant__ CUtensorMap v_map) {
  constexpr int kElems = kTileElems<D>;
  extern __shared__ __align__(1024) unsigned char dq_smem[];
  uint16_t* queries = reinterpret_cast<uint16_t*>(dq_smem);  // [W] tiles of Q (this block's query rows)
  uint16_t* douts = queries + W * kElems;                     // [W] tiles of dO
  uint16_t* ring = douts + W * kElems;                        // [kRingQ][K, V] tiles
  uint64_t* full = reinterpret_cast<uint64_t*>(ring + kRingQ * 2 * kElems);
  uint64_t* empty = full + kRingQ;
  uint64_t* rows_full = empty + kRingQ;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int subs = (d.block + W * 64 - 1) / (W * 64);
  const int64_t qb = blockIdx.x / subs, bh = blockIdx.y, b = bh / d.heads, h = bh % d.heads;
  const int cta0 = static_cast<int>(blockIdx.x % subs) * W * 64;  // first query of this block of threads in its block
  const int local0 = cta0 + warp * kRows;
  const int64_t q0 = qb * d.block + local0;
  const int64_t kv_plane = b * d.kv_heads + h / (d.heads / d.kv_heads);
  // Every warp takes part in each wgmma; a warp past the block or the
  // sequence only masks its rows and stores nothing.
  const bool warp_live = local0 < d.block && q0 < d.seq_q;
  const LaneRows r = lane_rows(q0, local0, d.block, d.seq_q, warp_live, lane);

  if (threadIdx.x == 0) {
    for (int i = 0; i < kRingQ; ++i) tma::init(&full[i], 1), tma::init(&empty[i], W * 128);
    tma::init(rows_full, 1);
    tma::fence_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    tma::arrive_expect_bytes(rows_full, 2 * W * kElems * 2);  // whole boxes, rows past the sequence included
#pragma unroll
    for (int w = 0; w < W; ++w)
      load_tile_pair<D>(queries + w * kElems, douts + w * kElems, &q_map, &do_map, qb * d.block + cta0 + w * 64, bh,
                        rows_full);
  }

  // Δ and lse per row while the copies run.
  int64_t at[2];
  float lse2[2], dlt[2];
  query_row_terms<T, D>(r, bh, d, out, dout, lse, lane, at, lse2, dlt, delta);

  const int64_t row = group_of(d, b, h) * d.q_blocks + qb;
  const int tiles = tiles_of(rows, row, d.block);
  TileWalk<false> walk(rows, row, d.block, d.seq_k);
  // Tile t's K and V into buffer t % kRingQ, once every thread released the
  // tile it held (t - kRingQ).
  auto stage = [&](int t, Tile& tile) {
    tile = walk.next();
    if (threadIdx.x == 0) {
      const int buf = t % kRingQ;
      if (t >= kRingQ) tma::wait(&empty[buf], (t / kRingQ - 1) & 1);
      tma::arrive_expect_bytes(&full[buf], 2 * kElems * 2);
      uint16_t* ks = ring + buf * 2 * kElems;
      load_tile_pair<D>(ks, ks + kElems, &k_map, &v_map, tile.t0, kv_plane, &full[buf]);
    }
    __syncwarp();
  };

  float acc[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
  const float scale2 = scale * kLog2e;
  const uint16_t* my_queries = queries + warp / 4 * kElems;
  const uint16_t* my_douts = douts + warp / 4 * kElems;
  Tile now{0, 0, false}, next{0, 0, false}, after{0, 0, false};  // tiles t, t+1, t+2
  if (tiles > 0) stage(0, now);
  if (tiles > 1) stage(1, next);
  tma::wait(rows_full, 0);
  uint32_t pds[kTile / 16][4];
  for (int t = 0; t < tiles; ++t) {
    if (t + 2 < tiles) stage(t + 2, after);
    const int buf = t % kRingQ;
    const uint16_t* ks = ring + buf * 2 * kElems;
    const uint16_t* vs = ks + kElems;
    tma::wait(&full[buf], (t / kRingQ) & 1);
    float s[kTile / 8][4], dp[kTile / 8][4];
    wg::fence();
    ss_product<T, D>(s, my_queries, ks);
    ss_product<T, D>(dp, my_douts, vs);
    wg::commit();
    wg::wait<0>();  // S and dP of tile t, and tile t-1's dQ product
    wg::hold(s);
    wg::hold(dp);
    if (t > 0) tma::arrive(&empty[(t - 1) % kRingQ]);
    // dS; a masked pair takes 0 by a select (a row with no attended key
    // has lse2 0 and is masked wherever it meets a key).
    const uint32_t keep = keep_bits<false, Interval>(d, now, r, lane);
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j)
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const int which = x >> 1;
        const float p = fast_exp2(fmaf(s[j][x], scale2, -lse2[which]));
        dp[j][x] = (keep >> (4 * j + x)) & 1 ? p * (dp[j][x] - dlt[which]) : 0.0f;
      }
    pack_fragments<T>(dp, pds);
    add_rs_product<T, D>(acc, pds, ks);
    now = next;
    next = after;
  }
  wg::wait<0>();
  wg::hold(acc);
  store_grad_rows<T, D>(acc, r, at, scale, lane, dq);
}

}  // namespace

template <class T, int D>
bool launch_backward_dq_wgmma(const void* q, const void* k, const void* v, const void* out, const void* dout,
                              const float* lse, const Dims& d, const DeviceCsr& rows, float scale, void* dq,
                              float* delta, cudaStream_t stream, bool interval) {
  if (!wg::device_runs_wgmma()) return false;
  if (!aligned16(dq)) return false;
  BackwardMaps maps;
  if (!make_backward_maps<D>(d, q, k, v, dout, maps)) return false;
  const PassLaunch p = pass_launch(d, d.q_blocks);
  auto kernel = interval ? (p.two ? block_sparse_attention_wgmma_dq_v13<T, D, 2, true>
                                  : block_sparse_attention_wgmma_dq_v13<T, D, 1, true>)
                         : (p.two ? block_sparse_attention_wgmma_dq_v13<T, D, 2, false>
                                  : block_sparse_attention_wgmma_dq_v13<T, D, 1, false>);
  const int bytes = p.two ? kDqBytes<D, 2> : kDqBytes<D, 1>;
  if (!allow_shared_bytes(kernel, bytes)) return false;
  kernel<<<p.grid, p.threads, bytes, stream>>>(static_cast<const uint16_t*>(out), static_cast<const uint16_t*>(dout),
                                               lse, rows, d, scale, static_cast<uint16_t*>(dq), delta, maps.q,
                                               maps.dout, maps.k, maps.v);
  return true;
}

#define STEPSCOPE_BSA_WGMMA_DQ(T, D)                                                                                \
  template bool launch_backward_dq_wgmma<T, D>(const void*, const void*, const void*, const void*, const void*,  \
                                               const float*, const Dims&, const DeviceCsr&, float, void*, float*, \
                                               cudaStream_t, bool);
STEPSCOPE_BSA_WGMMA_DQ(Bf16, 64)
STEPSCOPE_BSA_WGMMA_DQ(Bf16, 128)
STEPSCOPE_BSA_WGMMA_DQ(F16, 64)
STEPSCOPE_BSA_WGMMA_DQ(F16, 128)
#undef STEPSCOPE_BSA_WGMMA_DQ

}  // namespace stepscope::kernels::gpu::bsa
