#include "kernels/gpu/tensor_map.h"

#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

namespace stepscope::kernels::gpu {
namespace {

// The driver's entry point, looked up once (CUDA 12.0's signature).
PFN_cuTensorMapEncodeTiled_v12000 encode_tiled(std::string& why) {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static cudaError_t looked_up = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status{};
    cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &status);
    if (e == cudaSuccess && status == cudaDriverEntryPointSuccess) fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
    return e;
  }();
  if (!fn) why = std::string("cuTensorMapEncodeTiled is not available: ") + cudaGetErrorString(looked_up);
  return fn;
}

}  // namespace

std::string encode_swizzled_rows(CUtensorMap& map, const void* base, uint64_t planes, uint64_t rows, uint64_t cols,
                                 uint32_t box_rows) {
  if (cols == 0 || cols % 8 != 0) return "encode_swizzled_rows: cols must be a positive multiple of 8";
  if (rows == 0 || planes == 0) return "encode_swizzled_rows: no rows";
  if (rows >= (1ull << 32) || planes >= (1ull << 32)) return "encode_swizzled_rows: rows or planes past 2^32";
  if (box_rows == 0 || box_rows > 256) return "encode_swizzled_rows: box_rows must be 1 to 256";
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0) return "encode_swizzled_rows: base is not 16-byte aligned";
  std::string why;
  const auto fn = encode_tiled(why);
  if (!fn) return why;
  // Dimension 0 is the contiguous one (columns); strides are in bytes and
  // name dimensions 1 and up only. Each dimension is bounded apart, which is
  // what makes rows past a plane zeros.
  const cuuint64_t dims[3] = {cols, rows, planes};
  const cuuint64_t strides[2] = {cols * 2, rows * cols * 2};
  const cuuint32_t box[3] = {64, box_rows, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult r = fn(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(base), dims, strides, box,
                        element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return "encode_swizzled_rows: cuTensorMapEncodeTiled failed with CUresult " + std::to_string(r);
  return "";
}

}  // namespace stepscope::kernels::gpu
