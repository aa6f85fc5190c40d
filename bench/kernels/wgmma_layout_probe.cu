// A check of block-sparse attention's wgmma operands, apart from the
// kernels: one warpgroup stages a 64-row K and V tile, computes S = Q·Kᵀ
// (64 × 64, K = D) and O = P·V (64 × D, K = 64, P = S/16 rounded to bf16)
// with the same descriptors as the kernels, and prints the largest error
// against a CPU product in double of the same bf16 inputs (bf16 products
// accumulate in fp32: expect errors near 1e-5 of |S|, |O|; a layout mistake
// gives errors of the size of the values). Head dims 64 and 128. Three
// layouts: v6-v8's core matrices (stage_pair_core); v9's K in the 128-byte
// swizzle (S only); v10's K and V both swizzled (stage_pair_swizzled with
// SwizzleY, descriptor_sw128_mn: LBO the step between 64-column blocks of
// N, SBO between 8-key groups, as the PTX ISA reads; swapped, the product
// reads past the tile and faults, so the probe does not try it).
// Built and run on an sm_90 GPU:
//
//   nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc \
//       bench/kernels/wgmma_layout_probe.cu -o /tmp/wgmma_probe && /tmp/wgmma_probe
#include <cstdio>
#include <cmath>
#include <vector>
#include <random>
#include <cstring>
#include "kernels/gpu/block_sparse_attention_mma.cuh"
using namespace stepscope::kernels::gpu; using namespace stepscope::kernels::gpu::bsa;
using namespace stepscope::kernels::gpu::bsa::mma;
// Rows of a 64-row fp32 result from the accumulators' layout.
template <int N>
__device__ void store_acc(const float (&acc)[N / 8][4], float* out, int warp, int lane) {
  for (int j = 0; j < N / 8; ++j) for (int x = 0; x < 4; ++x) {
    int row = warp * 16 + lane / 4 + 8 * (x >> 1), col = j * 8 + 2 * (lane % 4) + (x & 1);
    out[row * N + col] = acc[j][x];
  }
}
template <int D>
__device__ void p_of(const float (&s)[8][4], uint32_t (&pa)[4][4]) {  // P = bf16(S / 16)
  float p[8][4];
  for (int j = 0; j < 8; ++j) for (int x = 0; x < 4; ++x) p[j][x] = s[j][x] * 0.0625f;
  for (int kk = 0; kk < 4; ++kk) pack_a<Bf16>(p[2 * kk], p[2 * kk + 1], pa[kk]);
}
// s_out: S from the core layout; o_out: O from it; s2_out: S from the
// swizzled K; o2_out: O from the swizzled V.
template <int D>
__global__ void probe(const uint16_t* q, const uint16_t* k, const uint16_t* v, float* s_out, float* o_out,
                      float* s2_out, float* o2_out) {
  __shared__ __align__(1024) uint16_t ks[64 * D];
  __shared__ __align__(1024) uint16_t vs[64 * D];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  stage_pair_core<D, 128>(k, v, 0, 0, 64, ks, vs);
  commit_copies(); wait_copies<0>(); wg::fence_shared_for_async(); __syncthreads();
  LaneRows r; int64_t row_at[2];
  for (int x = 0; x < 2; ++x) { r.token[x] = warp * 16 + lane / 4 + 8 * x; r.ok[x] = true; row_at[x] = r.token[x]; }
  uint32_t qf[D / 16][4];
  load_a_global<D>(qf, q, row_at, r.ok, lane);
  float s[8][4];
  wg::fence();
  for (int kk = 0; kk < D / 16; ++kk) wg::MmaRS<Bf16, 64, 0>::run(s, qf[kk], wg::descriptor(ks + kk * 128, 128, 16 * D), kk > 0);
  wg::commit(); wg::wait<0>(); wg::hold(s);
  store_acc<64>(s, s_out, warp, lane);
  uint32_t pa[4][4];
  p_of<D>(s, pa);
  float o[D / 8][4];
  auto zero = [&] { for (int n = 0; n < D / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f; };
  zero();
  wg::fence();
  for (int kk = 0; kk < 4; ++kk) wg::MmaRS<Bf16, D, 1>::run(o, pa[kk], wg::descriptor(vs + kk * 16 * D, 16 * D, 128), 1);
  wg::commit(); wg::wait<0>(); wg::hold(o);
  store_acc<D>(o, o_out, warp, lane);
  // The same tiles again, both swizzled (the products above are done).
  __syncthreads();
  stage_pair_swizzled<D, 128, true>(k, v, 0, 0, 64, ks, vs);
  commit_copies(); wait_copies<0>(); wg::fence_shared_for_async(); __syncthreads();
  float s2[8][4];
  wg::fence();
  for (int kk = 0; kk < D / 16; ++kk)
    wg::MmaRS<Bf16, 64, 0>::run(s2, qf[kk], wg::descriptor_sw128(ks + kk / 4 * (64 * 64) + kk % 4 * 16, 1024), kk > 0);
  wg::commit(); wg::wait<0>(); wg::hold(s2);
  store_acc<64>(s2, s2_out, warp, lane);
  zero();
  wg::fence();
  for (int kk = 0; kk < 4; ++kk)
    wg::MmaRS<Bf16, D, 1>::run(o, pa[kk], wg::descriptor_sw128_mn(vs + kk * 16 * 64, 64 * 64 * 2, 1024), 1);
  wg::commit(); wg::wait<0>(); wg::hold(o);
  store_acc<D>(o, o2_out, warp, lane);
}
static float bf(uint16_t b) { uint32_t u = uint32_t(b) << 16; float f; memcpy(&f, &u, 4); return f; }
static uint16_t tobf(float f) { uint32_t u; memcpy(&u, &f, 4); return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16); }
// Largest |a - b| over n values; NaN counts as infinite.
static double max_err(const std::vector<double>& want, const std::vector<float>& got) {
  double e = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = fabs(want[i] - got[i]);
    e = d == d ? fmax(e, d) : INFINITY;
  }
  return e;
}
static double max_abs(const std::vector<double>& x) { double m = 0; for (double v : x) m = fmax(m, fabs(v)); return m; }
template <int D> int run() {
  std::mt19937 g(1); std::normal_distribution<float> n;
  std::vector<uint16_t> q(64 * D), k(64 * D), v(64 * D);
  for (auto* a : {&q, &k, &v}) for (auto& x : *a) x = tobf(n(g));
  uint16_t *dq, *dk, *dv; float* res[4];
  const size_t sizes[4] = {64 * 64, 64 * D, 64 * 64, 64 * D};  // S, O, S2, O2
  for (int i = 0; i < 4; ++i) cudaMalloc(&res[i], sizes[i] * 4);
  cudaMalloc(&dq, 64 * D * 2); cudaMalloc(&dk, 64 * D * 2); cudaMalloc(&dv, 64 * D * 2);
  cudaMemcpy(dq, q.data(), 64 * D * 2, cudaMemcpyHostToDevice); cudaMemcpy(dk, k.data(), 64 * D * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dv, v.data(), 64 * D * 2, cudaMemcpyHostToDevice);
  probe<D><<<1, 128>>>(dq, dk, dv, res[0], res[1], res[2], res[3]);
  cudaError_t e = cudaDeviceSynchronize(); if (e) { printf("D=%d error %s\n", D, cudaGetErrorString(e)); return 1; }
  std::vector<float> got[4];
  for (int i = 0; i < 4; ++i) { got[i].resize(sizes[i]); cudaMemcpy(got[i].data(), res[i], sizes[i] * 4, cudaMemcpyDeviceToHost); }
  std::vector<double> s(64 * 64), o(64 * D);
  std::vector<float> p(64 * 64);
  for (int i = 0; i < 64; ++i) for (int j = 0; j < 64; ++j) {
    double acc = 0; for (int c = 0; c < D; ++c) acc += double(bf(q[i * D + c])) * bf(k[j * D + c]);
    s[i * 64 + j] = acc;
    p[i * 64 + j] = bf(tobf(got[0][i * 64 + j] * 0.0625f));  // P from the GPU's S, as the kernel forms it
  }
  for (int i = 0; i < 64; ++i) for (int c = 0; c < D; ++c) {
    double acc = 0; for (int j = 0; j < 64; ++j) acc += double(p[i * 64 + j]) * bf(v[j * D + c]);
    o[i * D + c] = acc;
  }
  printf("probe D=%d: S max err %.3g (max |S| %.3g), O max err %.3g (max |O| %.3g); "
         "K swizzled: S max err %.3g; V swizzled too: O max err %.3g\n",
         D, max_err(s, got[0]), max_abs(s), max_err(o, got[1]), max_abs(o), max_err(s, got[2]), max_err(o, got[3]));
  return 0;
}
int main() { return run<64>() | run<128>(); }
