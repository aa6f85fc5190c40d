// What the wgmma backward passes (v12's dK/dV, v13's dQ) share: 64-row
// tiles of 16-bit tensors copied by TMA into the 128-byte swizzle (D/64
// column blocks of 64 rows × 64 elements, tensor_map.h), and the two
// products they issue on such tiles:
//   - ss_product: acc = A · Bᵀ over the head dimension, A's 64 rows and B's
//     64 rows both K-major tiles in shared memory (Sᵀ = K·Qᵀ, S = Q·Kᵀ, and
//     dP's likes);
//   - add_rs_product: acc += A · X over X's 64 rows, A packed 16-bit
//     fragments in registers, X a tile read as the MN-major B operand (the
//     forward's P·V form: dV += Pᵀ·dO, dK += dSᵀ·Q, dQ += dS·K).
#pragma once

#include "kernels/gpu/block_sparse_attention_mma.cuh"
#include "kernels/gpu/tensor_map.h"
#include "kernels/gpu/tma.cuh"

namespace stepscope::kernels::gpu::bsa::wgtiles {

using mma::kTile;

// Elements of one 64-row tile of head dim D.
template <int D>
constexpr int kTileElems = kTile * D;

// Element offset of K step kk (16 elements of the head dimension) inside a
// tile: its 64-column block, then 16 elements (32 bytes) into its rows; the
// hardware applies the swizzle to the address it forms.
__device__ __forceinline__ int k_step(int kk) { return kk / 4 * (kTile * 64) + kk % 4 * 16; }

// Thread-level: copies rows [row, row + 64) of plane `plane` of two tensors
// (their maps, boxes of 64 × 64) into tiles `a` and `b`; the bytes count
// towards `bar` (the caller announced them).
template <int D>
__device__ __forceinline__ void load_tile_pair(uint16_t* a, uint16_t* b, const CUtensorMap* map_a,
                                               const CUtensorMap* map_b, int64_t row, int64_t plane, uint64_t* bar) {
#pragma unroll
  for (int cb = 0; cb < D / 64; ++cb) {
    tma::load_3d(a + cb * kTile * 64, map_a, cb * 64, static_cast<int32_t>(row), static_cast<int32_t>(plane), bar);
    tma::load_3d(b + cb * kTile * 64, map_b, cb * 64, static_cast<int32_t>(row), static_cast<int32_t>(plane), bar);
  }
}

// Warpgroup-level, no fence or commit (the caller batches products):
// acc (m64 × n64) = A · Bᵀ over D, A and B 64-row tiles, both K-major.
template <class T, int D>
__device__ __forceinline__ void ss_product(float (&acc)[kTile / 8][4], const uint16_t* a, const uint16_t* b) {
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    wg::MmaSS<T, kTile>::run(acc, wg::descriptor_sw128(a + k_step(kk), 1024), wg::descriptor_sw128(b + k_step(kk), 1024),
                             kk > 0);
}

// Warpgroup-level, fenced and committed as one group: acc (m64 × nD) += A ·
// X over X's 64 rows, A's 16-row steps in registers. Rows 16kk.. of X are
// rows 16kk.. of each 64-column block, blocks kTile × 64 elements apart
// (LBO), groups of 8 rows 1,024 bytes (SBO).
template <class T, int D>
__device__ __forceinline__ void add_rs_product(float (&acc)[D / 8][4], const uint32_t (&a)[kTile / 16][4],
                                               const uint16_t* x) {
  wg::fence();
#pragma unroll
  for (int kk = 0; kk < kTile / 16; ++kk)
    wg::MmaRS<T, D, 1>::run(acc, a[kk], wg::descriptor_sw128_mn(x + kk * 16 * 64, kTile * 64 * 2, 1024), 1);
  wg::commit();
}

// The accumulators of a 64 × 64 product packed as the A fragments of the
// next (16-bit, K steps of 16 columns).
template <class T>
__device__ __forceinline__ void pack_fragments(const float (&acc)[kTile / 8][4], uint32_t (&a)[kTile / 16][4]) {
#pragma unroll
  for (int kk = 0; kk < kTile / 16; ++kk) mma::pack_a<T>(acc[2 * kk], acc[2 * kk + 1], a[kk]);
}

// Host: the four tensor maps of a backward pass, Q and dO as [batch ·
// heads, seq_q, D], K and V as [batch · kv_heads, seq_k, D], boxes of 64
// rows. False where a coordinate would pass 31 bits or the driver refuses
// a map (a pointer not 16-byte aligned among its reasons).
struct BackwardMaps {
  CUtensorMap q{}, dout{}, k{}, v{};
};
template <int D>
inline bool make_backward_maps(const Dims& d, const void* q, const void* k, const void* v, const void* dout,
                               BackwardMaps& m) {
  if (d.batch * d.heads >= (1ll << 31) || d.seq_q >= (1ll << 31) || d.seq_k >= (1ll << 31)) return false;
  const auto q_planes = static_cast<uint64_t>(d.batch * d.heads), kv_planes = static_cast<uint64_t>(d.batch * d.kv_heads);
  return encode_swizzled_rows(m.q, q, q_planes, d.seq_q, D, kTile).empty() &&
         encode_swizzled_rows(m.dout, dout, q_planes, d.seq_q, D, kTile).empty() &&
         encode_swizzled_rows(m.k, k, kv_planes, d.seq_k, D, kTile).empty() &&
         encode_swizzled_rows(m.v, v, kv_planes, d.seq_k, D, kTile).empty();
}

// Host: how a backward pass on wgmma is launched. Two warpgroups (128 rows)
// per block of threads where the mask's blocks hold more than 64 rows, else
// one; the grid walks `blocks` blocks of the mask (each split over blocks
// of threads where it holds more rows than one takes) by batch × heads.
struct PassLaunch {
  bool two;
  dim3 grid;
  unsigned threads;
};
inline PassLaunch pass_launch(const Dims& d, int64_t blocks) {
  const bool two = d.block > 64;
  const int rows = two ? 128 : 64;
  const int64_t subs = (d.block + rows - 1) / rows;
  return {two, dim3(static_cast<unsigned>(blocks * subs), static_cast<unsigned>(d.batch * d.heads)),
          static_cast<unsigned>(rows * 2)};
}

// Host: lets `kernel` take `bytes` of dynamic shared memory; false where the device refuses.
template <class Kernel>
inline bool allow_shared_bytes(Kernel kernel, int bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) == cudaSuccess;
}

}  // namespace stepscope::kernels::gpu::bsa::wgtiles
