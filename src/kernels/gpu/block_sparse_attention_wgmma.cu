// Block-sparse attention forward, v6 (block_sparse_attention.h lists the
// versions): v5's loop with Hopper's warpgroup products (wgmma.cuh). The
// block of threads is one warpgroup owning 64 query rows, as v5's four warps
// are; where v5's warps each issue 32 (head dim 64) or 64 (128) mma.sync
// m16n8k16 per 64-key tile for S = Q·Kᵀ, each fed by ldmatrix, the
// warpgroup issues D/16 wgmma m64n64k16 reading K straight from shared
// memory, and 4 m64nDk16 for O += P·V. Q and P stay A operands in
// registers (the fragment layouts are mma.sync's), so the online softmax is
// v5's. K and V tiles are staged by cp.async in wgmma's core-matrix layout
// (stage_pair_core), double-buffered as before.
//
// Nsight Compute on v5 (H100, head dim 64, 16k tokens): 64 of 853
// instructions per warp and tile were MMAs and the rest ldmatrix, softmax
// and addressing; and mma.sync reaches at most about two thirds of Hopper's
// tensor-core rate (FlashAttention-3's paper), which only wgmma reaches.
#include "kernels/gpu/block_sparse_attention_online_softmax.cuh"
#include "kernels/gpu/tensor_map.h"
#include "kernels/gpu/tma.cuh"

#include <cmath>

namespace stepscope::kernels::gpu::bsa {
namespace {

using namespace mma;

// V: 6, one warpgroup (64 query rows) per block of threads; 7, two
// warpgroups (128 rows: a whole block of 128) sharing each staged K/V tile,
// which halves the tiles staged per query row.
template <class T, int D, int V>
__global__ void __launch_bounds__(kThreads<V>, V == 6 ? 3 : 1) block_sparse_attention_wgmma_fwd_v6(
    const uint16_t* q, const uint16_t* k, const uint16_t* v, DeviceCsr rows, Dims d, float scale, uint16_t* out,
    float* lse) {
  static_assert(kWarps == 4 && kRows == 16, "a warpgroup is 4 warps × 16 rows: wgmma's M of 64");
  extern __shared__ __align__(128) unsigned char smem[];
  uint16_t* buffers = reinterpret_cast<uint16_t*>(smem);  // [2][K, V][core matrices of kTile × D]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const ForwardRows<kThreads<V> / 32 * kRows> at(d, warp, lane);
  const LaneRows& r = at.r;
  uint32_t qf[D / 16][4];
  float o[D / 8][4], top[2], sum[2];
  start_rows<D>(qf, o, top, sum, q, at, lane);
  const float scale2 = scale * kLog2e;
  // Byte steps of the core-matrix layout (stage_pair_core): a 16-byte
  // chunk of the head dimension, and a group of 8 keys.
  constexpr uint32_t kChunk = 128, kKeyGroup = 16 * D;

  walk_tiles_async<D, V>(rows, at.mask_row, d.block, d.seq_k, k, v, at.kv_base, buffers,
                         [&](const uint16_t* ks, const uint16_t* vs, const Tile& tile) {
    // Every warp of the warpgroup takes part in each wgmma, live rows or
    // not (a warp past the block or the sequence has only masked rows), and
    // the tile is the block's, so the branch is uniform.
    if (tile.n <= 0) return;
    // S = Q · Kᵀ: K is B, K-major (keys are N, the head dimension K).
    float s[kTile / 8][4];
    wg::fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      wg::MmaRS<T, kTile, 0>::run(s, qf[kk], wg::descriptor(ks + kk * 128, kChunk, kKeyGroup), kk > 0);
    wg::commit();
    wg::wait<0>();
    wg::hold(s);
    online_softmax<D, V>(s, o, top, sum, tile, r, whole_tile(tile, r), d, scale2, lane);
    // O += P · V: V is B, MN-major (keys are K, the head dimension N); P's
    // accumulators of keys 16kk..16kk+15 are the A operand.
    uint32_t pa[kTile / 16][4];
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) pack_a<T>(s[2 * kk], s[2 * kk + 1], pa[kk]);
    wg::fence();
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk)
      if (kk * 16 < tile.n)
        wg::MmaRS<T, D, 1>::run(o, pa[kk], wg::descriptor(vs + kk * 16 * D, kKeyGroup, kChunk), 1);
    wg::commit();
    // The next tile is staged into this buffer once every warp passes the
    // walk's barrier: the products must have read it by then.
    wg::wait<0>();
    wg::hold(o);
  });
  store_rows<T, D, V>(o, top, sum, r, at.row_at, scale2, out, lse, lane);
}

// v8: v7's products with FlashAttention-3's overlap inside a warpgroup
// (its paper's algorithm 2). v6 and v7 wait for S = Q·Kᵀ, run the softmax,
// then wait for O += P·V, so the tensor cores idle through every softmax
// and the softmax units through every product. v8 issues tile t+1's S and
// tile t's P·V together, waits for S alone, and runs t+1's softmax while
// t's P·V runs; the output rows take t+1's rescale once that P·V is done.
// K and V tiles are staged two ahead into a ring of four buffers: at tile
// t, S reads buffer t+1, P·V buffer t and cp.async fills t+2, and buffer
// t-1's P·V may still be in flight in a warpgroup that has not reached the
// barrier yet. W warpgroups (64 query rows each) share the ring: 2 for
// blocks of more than 64 rows, 1 otherwise (a second would have no rows).
//
// Swizzled: the operands staged in the 128-byte swizzle by whole rows
// (stage_pair_swizzled), after Nsight Compute on v8 counted twice the L2
// sectors its K/V loads needed and 70% excess shared-memory wavefronts: 0
// none (v8), 1 K (v9), 2 K and V (v10).
//
// v11 (Tma): v10's layout filled by the tensor memory accelerator instead
// of cp.async from every thread. Nsight Compute on v10 counted 0.62 stall
// cycles per issued instruction at the block barrier before each tile,
// where both warpgroups meet, and the staging's address arithmetic in every
// thread. Thread 0 issues each tile's copies (D/64 boxes of 64 × 64 for K
// and for V, tensor_map.h), which complete on the buffer's `full` barrier;
// every thread waits there for the tile it reads, and arrives on the
// buffer's `empty` barrier once its P·V is done. Thread 0 refills a buffer
// after `empty` says every thread released it, so a warpgroup waits for
// the other only when that one is two tiles behind. The maps see K and
// V as [batch · kv_heads, seq_k, D], so rows past the sequence's end come
// as zeros, as cp.async wrote them. Rows past a tile's end inside the
// sequence (the last tile of a block that is not a multiple of 64 keys)
// are the next block's keys, where cp.async wrote zeros: P is 0 there, so
// they add 0 · V, which is 0 unless such a V row holds inf or NaN (as in a
// dense product under the same mask).
//
// v14 (MaskBits): v11 with a partial tile's mask tested once per tile into
// a bit per score (keep_bits, from each row's interval where the rule has
// no documents or global tokens) rather than inline in each of the 32
// scores a lane holds: v13's dK/dV pass ran 1.7x faster for that change,
// where Nsight Compute had found 1.9 stall cycles per instruction waiting
// for instruction fetch. At short windows most tiles are partial.
//
// v15 (MinBlocks 2 at head dim 64): v14 held to 128 registers for two
// blocks of 256 threads per SM (64 KB of ring each), so one block's start
// and end (Q's loads, the first tiles' copies, the output's stores) overlap
// the other's tiles; ptxas spills 44 bytes. The same as v14 at head dim 128.
constexpr int kRing = 4;

template <class T, int D, int W, int Swizzled, bool Tma, bool MaskBits = false, int MinBlocks = 1>
__global__ void __launch_bounds__(W * 128, MinBlocks) block_sparse_attention_wgmma_fwd_v8(
    const uint16_t* q, const uint16_t* k, const uint16_t* v, DeviceCsr rows, Dims d, float scale, uint16_t* out,
    float* lse, const __grid_constant__ CUtensorMap k_map, const __grid_constant__ CUtensorMap v_map) {
  static_assert(!Tma || Swizzled == 2, "the TMA copies write the 128-byte swizzle");
  constexpr int kV = MaskBits ? 14 : 8, kThreadsW = W * 128;
  // The swizzle's atoms are 1,024-byte aligned. (A name apart from v6's
  // `smem`: two declarations of one name with different alignments are
  // merged, and nvcc warns which one it keeps.)
  extern __shared__ __align__(1024) unsigned char ring_smem[];
  uint16_t* ring = reinterpret_cast<uint16_t*>(ring_smem);  // [kRing][K, V][kTile × D], each in its layout (Swizzled)
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const ForwardRows<W * 4 * kRows> at(d, warp, lane);
  const LaneRows& r = at.r;
  uint32_t qf[D / 16][4];
  float o[D / 8][4], top[2], sum[2];
  start_rows<D>(qf, o, top, sum, q, at, lane);
  const float scale2 = scale * kLog2e;
  constexpr uint32_t kChunk = 128, kKeyGroup = 16 * D;
  auto key_at = [&](int t) { return ring + (t % kRing) * 2 * kTile * D; };
  auto value_at = [&](int t) { return key_at(t) + kTile * D; };
  // v11's barriers, after the ring: full[i] and empty[i] for buffer i.
  uint64_t* full = reinterpret_cast<uint64_t*>(ring + kRing * 2 * kTile * D);
  uint64_t* empty = full + kRing;
  // v11: the K/V head's plane of the maps.
  const int32_t plane = Tma ? static_cast<int32_t>(at.kv_base / d.seq_k) : 0;
  if constexpr (Tma) {
    if (threadIdx.x == 0) {
      for (int i = 0; i < kRing; ++i) tma::init(&full[i], 1), tma::init(&empty[i], kThreadsW);
      tma::fence_init();
    }
    __syncthreads();
  }

  TileWalk<> walk(rows, at.mask_row, d.block, d.seq_k);
  const int tiles = tiles_of(rows, at.mask_row, d.block);
  Tile now{0, 0, false}, next{0, 0, false}, after{0, 0, false};  // tiles 0, t+1, t+2
  auto stage = [&](int t, Tile& tile) {
    tile = walk.next();
    if constexpr (Tma) {
      if (threadIdx.x == 0) {
        // Buffer t held tile t - kRing: every thread released it.
        if (t >= kRing) tma::wait(&empty[t % kRing], (t / kRing - 1) & 1);
        const int32_t row = static_cast<int32_t>(tile.t0);
        tma::arrive_expect_bytes(&full[t % kRing], 2 * kTile * D * 2);
#pragma unroll
        for (int cb = 0; cb < D / 64; ++cb) {
          tma::load_3d(key_at(t) + cb * kTile * 64, &k_map, cb * 64, row, plane, &full[t % kRing]);
          tma::load_3d(value_at(t) + cb * kTile * 64, &v_map, cb * 64, row, plane, &full[t % kRing]);
        }
      }
      __syncwarp();
    } else if constexpr (Swizzled > 0)
      stage_pair_swizzled<D, kThreadsW, (Swizzled > 1)>(k, v, at.kv_base, tile.t0, tile.n, key_at(t), value_at(t));
    else
      stage_pair_core<D, kThreadsW>(k, v, at.kv_base, tile.t0, tile.n, key_at(t), value_at(t));
  };
  float s[kTile / 8][4];
  auto issue_s = [&](int t) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      // Swizzled: column block kk / 4 (64 elements), then 16 elements (32
      // bytes) into its rows; atoms of 8 rows × 128 bytes stacked by 1,024.
      const uint64_t b = Swizzled > 0 ? wg::descriptor_sw128(key_at(t) + kk / 4 * (kTile * 64) + kk % 4 * 16, 1024)
                                  : wg::descriptor(key_at(t) + kk * 128, kChunk, kKeyGroup);
      wg::MmaRS<T, kTile, 0>::run(s, qf[kk], b, kk > 0);
    }
    wg::commit();
  };
  uint32_t pa[kTile / 16][4];
  auto pack_p = [&] {
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) pack_a<T>(s[2 * kk], s[2 * kk + 1], pa[kk]);
  };

  // Prologue: tiles 0 and 1 staged, tile 0's S and softmax (the output rows
  // are zeros, so its rescale has nothing to do).
  // Tile t's data in its buffer for every thread (v8-v10: this thread's
  // copies but the newest one group done, then the block barrier; v11: the
  // buffer's full barrier).
  auto await_tile = [&](int t) {
    if constexpr (Tma) {
      tma::wait(&full[t % kRing], (t / kRing) & 1);
    } else {
      wait_copies<1>();
      wg::fence_shared_for_async();  // wgmma reads what cp.async wrote
      __syncthreads();
    }
  };
  if (tiles > 0) stage(0, now);
  commit_copies();
  if (tiles > 1) stage(1, next);
  commit_copies();
  if (tiles > 0) {
    await_tile(0);
    wg::fence();
    issue_s(0);
    wg::wait<0>();
    wg::hold(s);
    float unused[2];
    softmax_tile<kV>(s, top, sum, now, r, whole_tile(now, r), d, scale2, lane, unused);
    pack_p();
  }
  // P·V of tile t over all 64 keys: rows past the tile's end were staged
  // as zeros and P is 0 there. The loop's body has no branch between its
  // products, so ptxas can keep them in flight (C7514 otherwise).
  auto issue_pv = [&](int t) {
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) {
      // Swizzled: keys 16kk.. are rows 16kk.. of each 64-column block;
      // blocks of N are kTile × 64 elements apart, groups of 8 keys 1,024
      // bytes.
      const uint64_t b = Swizzled > 1 ? wg::descriptor_sw128_mn(value_at(t) + kk * 16 * 64, kTile * 64 * 2, 1024)
                                      : wg::descriptor(value_at(t) + kk * 16 * D, kKeyGroup, kChunk);
      wg::MmaRS<T, D, 1>::run(o, pa[kk], b, 1);
    }
    wg::commit();
  };
  for (int t = 0; t + 1 < tiles; ++t) {
    // Buffer t+2 held tile t-2, whose P·V every warpgroup waited for before
    // the barrier of tile t-1.
    if (t + 2 < tiles) stage(t + 2, after);
    commit_copies();  // empty near the end: the count stays uniform
    await_tile(t + 1);  // tile t+1 is in; t+2 may still be coming
    wg::fence();
    issue_s(t + 1);
    issue_pv(t);
    wg::wait<1>();  // S of t+1; t's P·V may still run
    wg::hold(s);
    float rescale[2];
    softmax_tile<kV>(s, top, sum, next, r, whole_tile(next, r), d, scale2, lane, rescale);
    wg::wait<0>();
    wg::hold(o);
    if constexpr (Tma) tma::arrive(&empty[t % kRing]);  // tile t's K and V are read
    rescale_rows<D>(o, rescale);
    pack_p();  // pa is free once t's P·V is done
    next = after;
  }
  if (tiles > 0) {
    wg::fence();
    issue_pv(tiles - 1);
    wg::wait<0>();
    wg::hold(o);
  }
  store_rows<T, D, kV>(o, top, sum, r, at.row_at, scale2, out, lse, lane);
}

}  // namespace

template <class T, int D>
bool launch_forward_wgmma(const void* q, const void* k, const void* v, const Dims& d, const DeviceCsr& rows,
                          float scale, void* out, float* lse, cudaStream_t stream, int version) {
  if (!wg::device_runs_wgmma()) return false;
  if (version >= 8) {
    constexpr int ring_bytes = kRing * 2 * kTile * D * 2;  // kRing buffers of a K and a V tile
    const bool two = d.block > 64;
    const int threads = two ? 256 : 128;
    CUtensorMap k_map{}, v_map{};  // v11's; v8-v10 take them unused
    if (version >= 11) {
      // K and V as [batch · kv_heads, seq_k, D]; a box's coordinates are
      // 32-bit. Where the maps cannot be made, v10 runs.
      const uint64_t planes = static_cast<uint64_t>(d.batch) * d.kv_heads, seq = static_cast<uint64_t>(d.seq_k);
      if (planes < (1ull << 31) && seq < (1ull << 31) && encode_swizzled_rows(k_map, k, planes, seq, D, kTile).empty() &&
          encode_swizzled_rows(v_map, v, planes, seq, D, kTile).empty()) {
        // v15 at head dim 64: two blocks of 256 threads per SM (128
        // registers each; v14 holds 145, one block).
        constexpr int kV15Blocks = D == 64 ? 2 : 1;
        auto kernel = version >= 15 ? (two ? block_sparse_attention_wgmma_fwd_v8<T, D, 2, 2, true, true, kV15Blocks>
                                           : block_sparse_attention_wgmma_fwd_v8<T, D, 1, 2, true, true>)
                      : version == 14 ? (two ? block_sparse_attention_wgmma_fwd_v8<T, D, 2, 2, true, true>
                                             : block_sparse_attention_wgmma_fwd_v8<T, D, 1, 2, true, true>)
                                      : (two ? block_sparse_attention_wgmma_fwd_v8<T, D, 2, 2, true>
                                             : block_sparse_attention_wgmma_fwd_v8<T, D, 1, 2, true>);
        return launch_forward_rows(kernel, threads, ring_bytes + 2 * kRing * 8, q, k, v, d, rows, scale, out, lse,
                                   stream, true, k_map, v_map);  // + the full and empty barriers
      }
    }
    auto kernel = version >= 10 ? (two ? block_sparse_attention_wgmma_fwd_v8<T, D, 2, 2, false>
                                       : block_sparse_attention_wgmma_fwd_v8<T, D, 1, 2, false>)
                  : version == 9 ? (two ? block_sparse_attention_wgmma_fwd_v8<T, D, 2, 1, false>
                                        : block_sparse_attention_wgmma_fwd_v8<T, D, 1, 1, false>)
                                 : (two ? block_sparse_attention_wgmma_fwd_v8<T, D, 2, 0, false>
                                        : block_sparse_attention_wgmma_fwd_v8<T, D, 1, 0, false>);
    return launch_forward_rows(kernel, threads, ring_bytes, q, k, v, d, rows, scale, out, lse, stream, true, k_map,
                               v_map);
  }
  constexpr int bytes = 2 * 2 * kTile * D * 2;  // two buffers of a K and a V tile
  if (version >= 7)
    return launch_forward_rows(block_sparse_attention_wgmma_fwd_v6<T, D, 7>, kThreads<7>, bytes, q, k, v, d, rows,
                               scale, out, lse, stream, true);
  return launch_forward_rows(block_sparse_attention_wgmma_fwd_v6<T, D, 6>, kThreads<6>, bytes, q, k, v, d, rows,
                             scale, out, lse, stream, true);
}

#define STEPSCOPE_BSA_WGMMA(T, D)                                                                                \
  template bool launch_forward_wgmma<T, D>(const void*, const void*, const void*, const Dims&, const DeviceCsr&, \
                                           float, void*, float*, cudaStream_t, int);
STEPSCOPE_BSA_WGMMA(Bf16, 64)
STEPSCOPE_BSA_WGMMA(Bf16, 128)
STEPSCOPE_BSA_WGMMA(F16, 64)
STEPSCOPE_BSA_WGMMA(F16, 128)
#undef STEPSCOPE_BSA_WGMMA

}  // namespace stepscope::kernels::gpu::bsa
