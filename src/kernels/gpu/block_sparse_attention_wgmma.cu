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

#include <cmath>

namespace stepscope::kernels::gpu::bsa {
namespace {

using namespace mma;

// V: 6, one warpgroup (64 query rows) per block of threads; 7, two
// warpgroups (128 rows: a whole block of 128) sharing each staged K/V tile,
// which halves the tiles staged per query row.
template <class T, int D, int V>
__global__ void __launch_bounds__(kThreads<V>) block_sparse_attention_wgmma_fwd_v6(
    const uint16_t* q, const uint16_t* k, const uint16_t* v, DeviceCsr rows, Dims d, float scale, uint16_t* out,
    float* lse) {
  static_assert(kWarps == 4 && kRows == 16, "a warpgroup is 4 warps × 16 rows: wgmma's M of 64");
  extern __shared__ __align__(128) unsigned char smem[];
  uint16_t* buffers = reinterpret_cast<uint16_t*>(smem);  // [2][K, V][core matrices of kTile × D]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const ForwardRows<kThreads<V> / 32 * kRows> at(d, warp, lane);
  const LaneRows& r = at.r;
  uint32_t qf[D / 16][4];
  load_a_global<D>(qf, q, at.row_at, r.ok, lane);
  float o[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float top[2] = {-INFINITY, -INFINITY}, sum[2] = {0.0f, 0.0f};
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

}  // namespace

template <class T, int D>
bool launch_forward_wgmma(const void* q, const void* k, const void* v, const Dims& d, const DeviceCsr& rows,
                          float scale, void* out, float* lse, cudaStream_t stream, int version) {
  // wgmma is Hopper's (compute capability 9.0, built for sm_90a).
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess || major != 9 ||
      minor != 0)
    return false;
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
