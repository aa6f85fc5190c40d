// A check of the TMA copies a block-sparse attention forward would stage K
// and V with (tensor_map.h, tma.cuh), apart from any kernel: one block
// copies a 64-row tile of a [rows, D] bf16 matrix with the 128-byte swizzle
// (one box of 64 × 64 elements per 64 columns, completing on an mbarrier)
// and compares it, bit for bit, with the tile stage_pair_swizzled writes by
// cp.async (the layout the wgmma descriptors of v9/v10 read, which the
// layout probe checks against a CPU product). The matrix is two planes
// (heads) of 200 rows, mapped as [2, 200, D]. Cases: whole tiles of the
// first and the second plane, and a tile of the first running past its last
// row (TMA fills those rows with zeros, as the cp.async staging does, rather
// than with the second plane's rows). Head dims 64 and 128. Prints the
// mismatching elements of each case (0 expected). Built and run on an
// sm_90 GPU:
//
//   nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc bench/kernels/tma_layout_probe.cu \
//       src/kernels/gpu/tensor_map.cu -o /tmp/tma_probe && /tmp/tma_probe
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "kernels/gpu/block_sparse_attention_mma.cuh"
#include "kernels/gpu/tensor_map.h"
#include "kernels/gpu/tma.cuh"

using namespace stepscope::kernels::gpu;
using namespace stepscope::kernels::gpu::bsa;
using namespace stepscope::kernels::gpu::bsa::mma;

template <int D>
__global__ void probe(const __grid_constant__ CUtensorMap map, const uint16_t* x, int rows, int plane, int row0,
                      unsigned* mismatches) {
  // Dynamic: three tiles of head dim 128 pass the 48 KB of static shared memory.
  extern __shared__ __align__(1024) unsigned char tiles[];
  uint16_t* by_tma = reinterpret_cast<uint16_t*>(tiles);
  uint16_t* by_copy = by_tma + 64 * D;
  uint16_t* unused = by_copy + 64 * D;  // stage_pair_swizzled's second tile (V), not compared
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x == 0) {
    tma::init(&bar, 1);
    tma::fence_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    tma::arrive_expect_bytes(&bar, 64 * D * 2);  // whole boxes count, rows past the matrix included
    for (int cb = 0; cb < D / 64; ++cb) tma::load_3d(by_tma + cb * 64 * 64, &map, cb * 64, row0, plane, &bar);
  }
  const int n = rows - row0 < 64 ? rows - row0 : 64;
  stage_pair_swizzled<D, 128, false>(x, x, int64_t(plane) * rows, row0, n, by_copy, unused);
  commit_copies();
  wait_copies<0>();
  tma::wait(&bar, 0);
  __syncthreads();
  for (int i = threadIdx.x; i < 64 * D; i += blockDim.x)
    if (by_tma[i] != by_copy[i]) atomicAdd(mismatches, 1u);
}

template <int D>
int run() {
  const int rows = 200, planes = 2;
  std::vector<uint16_t> host(planes * rows * D);
  std::mt19937 g(D);
  for (auto& v : host) v = static_cast<uint16_t>(g() & 0x7fff);  // any bits; no NaN/inf patterns matter to a copy
  uint16_t* x = nullptr;
  unsigned* bad = nullptr;
  cudaMalloc(&x, host.size() * 2);
  cudaMalloc(&bad, sizeof(unsigned));
  cudaMemcpy(x, host.data(), host.size() * 2, cudaMemcpyHostToDevice);
  CUtensorMap map;
  const std::string why = encode_swizzled_rows(map, x, planes, rows, D, 64);
  if (!why.empty()) {
    printf("D=%d: %s\n", D, why.c_str());
    return 1;
  }
  int failed = 0;
  // (plane, first row); (0, 150): rows 150-199 live, 200-213 past the plane.
  for (auto [plane, row0] : {std::pair{0, 0}, {0, 64}, {1, 64}, {0, 150}, {1, 150}}) {
    cudaMemset(bad, 0, sizeof(unsigned));
    constexpr int bytes = 3 * 64 * D * 2;
    cudaFuncSetAttribute(probe<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    probe<D><<<1, 128, bytes>>>(map, x, rows, plane, row0, bad);
    const cudaError_t e = cudaDeviceSynchronize();
    unsigned mismatches = 0;
    cudaMemcpy(&mismatches, bad, sizeof(unsigned), cudaMemcpyDeviceToHost);
    printf("tma probe D=%d plane %d rows %d-%d: %s, %u of %d elements differ from stage_pair_swizzled\n", D, plane,
           row0, row0 + 63,
           e ? cudaGetErrorString(e) : "ran", mismatches, 64 * D);
    failed |= e != cudaSuccess || mismatches != 0;
  }
  cudaFree(x);
  cudaFree(bad);
  return failed;
}

int main() { return run<64>() | run<128>(); }
