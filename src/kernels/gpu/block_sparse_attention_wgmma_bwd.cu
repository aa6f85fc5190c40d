// Block-sparse attention backward, v12 (block_sparse_attention.h lists the
// versions): v5's dK/dV pass on Hopper's warpgroup products, its tiles
// copied by the tensor memory accelerator. v5's dQ pass runs before it
// unchanged (it computes the Δ this pass reads).
//
// Why this pass first: Nsight Compute on v3 (H100, head dim 64, 16k
// tokens) timed the dK/dV pass at 815 µs against 434 µs for dQ. Its warps
// read K and V as mma.sync A fragments through ldmatrix for every 32 queries
// and stage Q and dO by cp.async from every thread; here the warpgroup's
// 64 key rows of K and V stay in shared memory, copied once, and are read by
// wgmma as A straight from there, so a thread's registers hold only the
// accumulators.
//
// One block of threads is W warpgroups (W · 64 key rows: 2 for blocks of
// more than 64 keys) walking the query blocks that attend its key block
// (the transposed mask) in tiles of 64 queries. Per tile and warpgroup:
//   Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ   (m64n64, A and B from shared memory),
//   Pᵀ = exp2(Sᵀ·scale·log2 e − lse·log2 e) per query column,
//   dSᵀ = Pᵀ ∘ (dPᵀ − Δ),
//   dV += Pᵀ·dO and dK += dSᵀ·Q (Pᵀ and dSᵀ packed to 16 bits as A from
//   registers; dO and Q as MN-major B, the forward's V form).
// Thread 0 copies each tile's Q and dO (D/64 boxes of 64 × 64 each, the
// 128-byte swizzle) into a ring of four buffers, two tiles ahead, and warp
// 0's lanes copy the tile's lse and Δ beside them by cp.async; both complete
// on the buffer's `full` barrier, so no thread waits for a global load on
// the way to its products. Each thread arrives on the buffer's `empty`
// barrier once the products that read it are done, which it learns at the
// next tile's wait: so a tile's dV/dK products run while the thread waits
// for and issues the next tile's Sᵀ and dPᵀ, and dV's while it computes dS.
// Queries past a tile's end are masked (P = 0); the maps see Q and dO as
// [batch · heads, seq_q, D], so rows past the sequence come as zeros.
//
// v16: without GQA (as many K/V heads as query heads) a block of threads
// holds the whole sum of its key rows, so it stores dK and dV in the dtype
// itself. Through v15 every pass added into fp32 workspace rows by atomics,
// which the backward zeroed first and copied to the dtype after: at 4k
// tokens, 16 heads of 128, 67 MB zeroed, 67 MB read back and 34 MB written
// besides the pass, against a pass of about 150 µs at a 5% window.
#include "kernels/gpu/block_sparse_attention_wgmma_tiles.cuh"

#include <cmath>

namespace stepscope::kernels::gpu::bsa {
namespace {

using namespace mma;
using namespace wgtiles;

constexpr int kRingB = 4;  // buffers of a Q and a dO tile, filled two tiles ahead

// Bytes of shared memory the kernel takes: W tiles of K and of V, the ring,
// its lse/Δ terms, and 2 · kRingB + 1 barriers.
template <int D, int W>
constexpr int kDkdvBytes = (2 * W + 2 * kRingB) * kTileElems<D> * 2 + kRingB * 2 * kTile * 4 + (2 * kRingB + 1) * 8;

// Interval: v14, the mask bits by intervals where the rule allows (keep_bits).
template <class T, int D, int W, bool Interval>
__global__ void __launch_bounds__(W * 128, 1) block_sparse_attention_wgmma_dkdv_v12(
    const float* lse, const float* delta, DeviceCsr cols, Dims d, float scale, float* dk_acc, float* dv_acc,
    uint16_t* dk_out, uint16_t* dv_out, const __grid_constant__ CUtensorMap k_map, const __grid_constant__ CUtensorMap v_map,
    const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap do_map) {
  constexpr int kElems = kTileElems<D>;
  extern __shared__ __align__(1024) unsigned char dkdv_smem[];
  uint16_t* keys = reinterpret_cast<uint16_t*>(dkdv_smem);  // [W] tiles of K (this block's key rows)
  uint16_t* values = keys + W * kElems;                      // [W] tiles of V
  uint16_t* ring = values + W * kElems;                      // [kRingB][Q, dO] tiles
  float* terms = reinterpret_cast<float*>(ring + kRingB * 2 * kElems);  // [kRingB][lse, Δ][kTile]
  uint64_t* full = reinterpret_cast<uint64_t*>(terms + kRingB * 2 * kTile);
  uint64_t* empty = full + kRingB;
  uint64_t* kv_full = empty + kRingB;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, col2 = 2 * (lane % 4);
  const int subs = (d.block + W * 64 - 1) / (W * 64);
  const int64_t kb = blockIdx.x / subs, bh = blockIdx.y, b = bh / d.heads, h = bh % d.heads;
  const int cta0 = static_cast<int>(blockIdx.x % subs) * W * 64;  // first key of this block of threads in its block
  const int local0 = cta0 + warp * kRows;
  const int64_t k0 = kb * d.block + local0;
  const int64_t kv_plane = b * d.kv_heads + h / (d.heads / d.kv_heads);
  const int64_t q_base = bh * d.seq_q;
  // Every warp takes part in each wgmma; a warp past the block or the
  // sequence only masks its rows and stores nothing.
  const bool warp_live = local0 < d.block && k0 < d.seq_k;
  const LaneRows r = lane_rows(k0, local0, d.block, d.seq_k, warp_live, lane);

  if (threadIdx.x == 0) {
    for (int i = 0; i < kRingB; ++i) tma::init(&full[i], 1 + 32), tma::init(&empty[i], W * 128);  // TMA + warp 0's copies
    tma::init(kv_full, 1);
    tma::fence_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    tma::arrive_expect_bytes(kv_full, 2 * W * kElems * 2);  // whole boxes, rows past the sequence included
#pragma unroll
    for (int w = 0; w < W; ++w)
      load_tile_pair<D>(keys + w * kElems, values + w * kElems, &k_map, &v_map, kb * d.block + cta0 + w * 64, kv_plane,
                        kv_full);
  }

  const int64_t row = group_of(d, b, h) * d.k_blocks + kb;
  const int tiles = tiles_of(cols, row, d.block);
  TileWalk<false> walk(cols, row, d.block, d.seq_q);
  // Tile t's Q, dO, lse and Δ into buffer t % kRingB, once every thread
  // released the tile it held (t - kRingB). Queries past the tile get lse
  // and Δ 0; they are masked.
  auto stage = [&](int t, Tile& tile) {
    tile = walk.next();
    if (warp != 0) return;
    const int buf = t % kRingB;
    if (lane == 0) {
      if (t >= kRingB) tma::wait(&empty[buf], (t / kRingB - 1) & 1);
      tma::arrive_expect_bytes(&full[buf], 2 * kElems * 2);
      uint16_t* qs = ring + buf * 2 * kElems;
      load_tile_pair<D>(qs, qs + kElems, &q_map, &do_map, tile.t0, bh, &full[buf]);
    }
    __syncwarp();  // the buffer's terms are free once lane 0 saw it released
    float* to = terms + buf * 2 * kTile;
#pragma unroll
    for (int i = lane; i < kTile; i += 32) {
      const bool live = i < tile.n;
      const int64_t at = live ? q_base + tile.t0 + i : q_base;
      tma::copy4_async(to + i, lse + at, live ? 4 : 0);
      tma::copy4_async(to + kTile + i, delta + at, live ? 4 : 0);
    }
    tma::arrive_when_copied(&full[buf]);
  };

  float dk[D / 8][4], dv[D / 8][4];
  zero_rows<D>(dk, dv);
  const float scale2 = scale * kLog2e;
  const uint16_t* my_keys = keys + warp / 4 * kElems;
  const uint16_t* my_values = values + warp / 4 * kElems;
  Tile now{0, 0, false}, next{0, 0, false}, after{0, 0, false};  // tiles t, t+1, t+2
  if (tiles > 0) stage(0, now);
  if (tiles > 1) stage(1, next);
  tma::wait(kv_full, 0);
  uint32_t pp[kTile / 16][4], pds[kTile / 16][4];
  for (int t = 0; t < tiles; ++t) {
    if (t + 2 < tiles) stage(t + 2, after);
    const int buf = t % kRingB;
    const uint16_t* qs = ring + buf * 2 * kElems;
    const uint16_t* dos = qs + kElems;
    const float* term = terms + buf * 2 * kTile;
    tma::wait(&full[buf], (t / kRingB) & 1);
    float s[kTile / 8][4], dp[kTile / 8][4];
    wg::fence();
    ss_product<T, D>(s, my_keys, qs);
    ss_product<T, D>(dp, my_values, dos);
    wg::commit();
    wg::wait<0>();  // Sᵀ and dPᵀ of tile t, and tile t-1's dV/dK products
    wg::hold(s);
    wg::hold(dp);
    if (t > 0) tma::arrive(&empty[(t - 1) % kRingB]);
    // Pᵀ, then dV += Pᵀ·dO issued before dSᵀ is computed. A masked pair
    // takes 0 by a select, so a query with no attended key (lse = -inf:
    // masked wherever it meets this block) gives no inf; a whole tile has
    // none such. A lane's columns come in pairs (2(lane % 4) + 0, 1): one
    // 8-byte load of lse and one of Δ per pair.
    const uint32_t keep = keep_bits<true, Interval>(d, now, r, lane);
    float2 lse_pair[kTile / 8], delta_pair[kTile / 8];
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j) {
      lse_pair[j] = *reinterpret_cast<const float2*>(term + j * 8 + col2);
      delta_pair[j] = *reinterpret_cast<const float2*>(term + kTile + j * 8 + col2);
    }
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j)
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const float l = x & 1 ? lse_pair[j].y : lse_pair[j].x;
        const float p = fast_exp2(fmaf(s[j][x], scale2, -l * kLog2e));
        s[j][x] = (keep >> (4 * j + x)) & 1 ? p : 0.0f;
      }
    pack_fragments<T>(s, pp);
    add_rs_product<T, D>(dv, pp, dos);
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j)
#pragma unroll
      for (int x = 0; x < 4; ++x) dp[j][x] = s[j][x] * (dp[j][x] - (x & 1 ? delta_pair[j].y : delta_pair[j].x));  // dSᵀ
    pack_fragments<T>(dp, pds);
    add_rs_product<T, D>(dk, pds, qs);
    now = next;
    next = after;
  }
  wg::wait<0>();
  wg::hold(dk);
  wg::hold(dv);
  if (dk_out) {  // v16: the rows are this block's alone
    const int64_t at[2] = {kv_plane * d.seq_k + r.token[0], kv_plane * d.seq_k + r.token[1]};
    store_grad_rows<T, D>(dk, r, at, scale, lane, dk_out);
    store_grad_rows<T, D>(dv, r, at, 1.0f, lane, dv_out);
  } else {
    add_key_rows<D>(dk, dv, r, kv_plane * d.seq_k, scale, lane, dk_acc, dv_acc);
  }
}

}  // namespace

template <class T, int D>
bool launch_backward_dkdv_wgmma(const void* q, const void* k, const void* v, const void* dout, const float* lse,
                                const float* delta, const Dims& d, const DeviceCsr& cols, float scale, float* dk_acc,
                                float* dv_acc, void* dk, void* dv, cudaStream_t stream, bool interval) {
  if (!wg::device_runs_wgmma()) return false;
  if (dk && (d.kv_heads != d.heads || !aligned16(dk) || !aligned16(dv))) return false;
  BackwardMaps maps;
  if (!make_backward_maps<D>(d, q, k, v, dout, maps)) return false;
  const PassLaunch p = pass_launch(d, d.k_blocks);
  auto kernel = interval ? (p.two ? block_sparse_attention_wgmma_dkdv_v12<T, D, 2, true>
                                  : block_sparse_attention_wgmma_dkdv_v12<T, D, 1, true>)
                         : (p.two ? block_sparse_attention_wgmma_dkdv_v12<T, D, 2, false>
                                  : block_sparse_attention_wgmma_dkdv_v12<T, D, 1, false>);
  const int bytes = p.two ? kDkdvBytes<D, 2> : kDkdvBytes<D, 1>;
  if (!allow_shared_bytes(kernel, bytes)) return false;
  kernel<<<p.grid, p.threads, bytes, stream>>>(lse, delta, cols, d, scale, dk_acc, dv_acc, static_cast<uint16_t*>(dk),
                                               static_cast<uint16_t*>(dv), maps.k, maps.v, maps.q, maps.dout);
  return true;
}

#define STEPSCOPE_BSA_WGMMA_BWD(T, D)                                                                              \
  template bool launch_backward_dkdv_wgmma<T, D>(const void*, const void*, const void*, const void*, const float*, \
                                                 const float*, const Dims&, const DeviceCsr&, float, float*, float*, \
                                                 void*, void*, cudaStream_t, bool);
STEPSCOPE_BSA_WGMMA_BWD(Bf16, 64)
STEPSCOPE_BSA_WGMMA_BWD(Bf16, 128)
STEPSCOPE_BSA_WGMMA_BWD(F16, 64)
STEPSCOPE_BSA_WGMMA_BWD(F16, 128)
#undef STEPSCOPE_BSA_WGMMA_BWD

}  // namespace stepscope::kernels::gpu::bsa
