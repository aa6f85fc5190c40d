// Tensor maps for Hopper's tensor memory accelerator (TMA): the 128-byte
// descriptor cp.async.bulk.tensor reads to copy a box of a global tensor
// into shared memory. Made on the host through the driver's
// cuTensorMapEncodeTiled, reached through the runtime's entry-point query so
// that nothing links libcuda.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

namespace stepscope::kernels::gpu {

// A row-major [planes, rows, cols] tensor of 16-bit elements (bf16 or fp16:
// the copy moves bits, so one map type serves both) at `base`, read in
// boxes of `box_rows` × 64 elements (128 bytes) of one plane with the
// 128-byte swizzle: in shared memory a box is box_rows rows of 128 bytes,
// 16-byte chunk c of row r stored at chunk c ^ (r % 8), the layout of
// wgmma's 128-byte swizzle (block_sparse_attention_mma.cuh,
// stage_pair_swizzled). A plane is one head's sequence: rows past a plane's
// last row, or columns past its last column, come as zeros, never as the
// next plane's rows. `cols` must be a multiple of 8 (16-byte rows), `base`
// 16-byte aligned, box_rows 1..256, rows and planes below 2^32. Returns ""
// or why not (the driver's error included).
std::string encode_swizzled_rows(CUtensorMap& map, const void* base, uint64_t planes, uint64_t rows, uint64_t cols,
                                 uint32_t box_rows);

}  // namespace stepscope::kernels::gpu
