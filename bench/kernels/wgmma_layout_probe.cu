// A check of block-sparse attention v6's wgmma operands, apart from the
// kernel: one warpgroup stages a 64-row K and V tile with stage_pair_core,
// computes S = Q·Kᵀ (64 × 64, K = D) and O = P·V (64 × D, K = 64, P = S/16
// rounded to bf16) with the same descriptors as the kernel, and prints the
// largest error against a CPU product in double of the same bf16 inputs
// (bf16 products accumulate in fp32: expect errors near 1e-5 of |S|, |O|; a
// layout mistake gives errors of the size of the values). Head dims 64 and
// 128. Then S again with K staged as v9 stages it (128-byte swizzle,
// stage_pair_swizzled_k, descriptor_sw128). Built and run on an sm_90 GPU:
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
template <int D>
__global__ void probe(const uint16_t* q, const uint16_t* k, const uint16_t* v, float* s_out, float* o_out,
                      float* s2_out) {
  __shared__ __align__(1024) uint16_t ksw[64 * D];
  __shared__ __align__(128) uint16_t ks[64 * D], vs[64 * D];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  stage_pair_core<D, 128>(k, v, 0, 0, 64, ks, vs);
  commit_copies(); wait_copies<0>(); __syncthreads();
  stage_pair_swizzled_k<D, 128>(k, v, 0, 0, 64, ksw, vs);  // V again, in the same layout
  commit_copies(); wait_copies<0>(); wg::fence_shared_for_async(); __syncthreads();
  LaneRows r; int64_t row_at[2];
  for (int x = 0; x < 2; ++x) { r.token[x] = warp * 16 + lane / 4 + 8 * x; r.ok[x] = true; row_at[x] = r.token[x]; }
  uint32_t qf[D / 16][4];
  load_a_global<D>(qf, q, row_at, r.ok, lane);
  float s[8][4];
  wg::fence();
  for (int kk = 0; kk < D / 16; ++kk) wg::MmaRS<Bf16, 64, 0>::run(s, qf[kk], wg::descriptor(ks + kk * 128, 128, 16 * D), kk > 0);
  wg::commit(); wg::wait<0>(); wg::hold(s);
  {
    float s2[8][4];
    wg::fence();
    for (int kk = 0; kk < D / 16; ++kk)
      wg::MmaRS<Bf16, 64, 0>::run(s2, qf[kk], wg::descriptor_sw128(ksw + kk / 4 * (64 * 64) + kk % 4 * 16, 1024), kk > 0);
    wg::commit(); wg::wait<0>(); wg::hold(s2);
    for (int j = 0; j < 8; ++j) for (int x = 0; x < 4; ++x) {
      int row = warp * 16 + lane / 4 + 8 * (x >> 1), col = j * 8 + 2 * (lane % 4) + (x & 1);
      s2_out[row * 64 + col] = s2[j][x];
    }
  }
  for (int j = 0; j < 8; ++j) for (int x = 0; x < 4; ++x) {
    int row = warp * 16 + lane / 4 + 8 * (x >> 1), col = j * 8 + 2 * (lane % 4) + (x & 1);
    s_out[row * 64 + col] = s[j][x];
  }
  // P = bf16(S / 16)
  for (int j = 0; j < 8; ++j) for (int x = 0; x < 4; ++x) s[j][x] *= 0.0625f;
  uint32_t pa[4][4];
  for (int kk = 0; kk < 4; ++kk) pack_a<Bf16>(s[2 * kk], s[2 * kk + 1], pa[kk]);
  float o[D / 8][4];
  for (int n = 0; n < D / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  wg::fence();
  for (int kk = 0; kk < 4; ++kk) wg::MmaRS<Bf16, D, 1>::run(o, pa[kk], wg::descriptor(vs + kk * 16 * D, 16 * D, 128), 1);
  wg::commit(); wg::wait<0>(); wg::hold(o);
  for (int n = 0; n < D / 8; ++n) for (int x = 0; x < 4; ++x) {
    int row = warp * 16 + lane / 4 + 8 * (x >> 1), col = n * 8 + 2 * (lane % 4) + (x & 1);
    o_out[row * D + col] = o[n][x];
  }
}
static float bf(uint16_t b) { uint32_t u = uint32_t(b) << 16; float f; memcpy(&f, &u, 4); return f; }
static uint16_t tobf(float f) { uint32_t u; memcpy(&u, &f, 4); return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16); }
template <int D> int run() {
  std::mt19937 g(1); std::normal_distribution<float> n;
  std::vector<uint16_t> q(64 * D), k(64 * D), v(64 * D);
  for (auto* a : {&q, &k, &v}) for (auto& x : *a) x = tobf(n(g));
  uint16_t *dq, *dk, *dv; float *ds, *dout, *ds2;
  cudaMalloc(&ds2, 64 * 64 * 4);
  cudaMalloc(&dq, 64 * D * 2); cudaMalloc(&dk, 64 * D * 2); cudaMalloc(&dv, 64 * D * 2);
  cudaMalloc(&ds, 64 * 64 * 4); cudaMalloc(&dout, 64 * D * 4);
  cudaMemcpy(dq, q.data(), 64 * D * 2, cudaMemcpyHostToDevice); cudaMemcpy(dk, k.data(), 64 * D * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dv, v.data(), 64 * D * 2, cudaMemcpyHostToDevice);
  probe<D><<<1, 128>>>(dq, dk, dv, ds, dout, ds2);
  cudaError_t e = cudaDeviceSynchronize(); if (e) { printf("D=%d error %s\n", D, cudaGetErrorString(e)); return 1; }
  std::vector<float> s(64 * 64), o(64 * D), s2(64 * 64);
  cudaMemcpy(s2.data(), ds2, s2.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(s.data(), ds, s.size() * 4, cudaMemcpyDeviceToHost); cudaMemcpy(o.data(), dout, o.size() * 4, cudaMemcpyDeviceToHost);
  double es = 0, ns = 0, eo = 0, no = 0, es2 = 0;
  std::vector<float> p(64 * 64);
  for (int i = 0; i < 64; ++i) for (int j = 0; j < 64; ++j) {
    double acc = 0; for (int c = 0; c < D; ++c) acc += double(bf(q[i * D + c])) * bf(k[j * D + c]);
    es = fmax(es, fabs(acc - s[i * 64 + j])); ns = fmax(ns, fabs(acc));
    const double e2 = fabs(acc - s2[i * 64 + j]);
    es2 = e2 == e2 ? fmax(es2, e2) : INFINITY;
    p[i * 64 + j] = bf(tobf(s[i * 64 + j] * 0.0625f));
  }
  for (int i = 0; i < 64; ++i) for (int c = 0; c < D; ++c) {
    double acc = 0; for (int j = 0; j < 64; ++j) acc += double(p[i * 64 + j]) * bf(v[j * D + c]);
    eo = fmax(eo, fabs(acc - o[i * D + c])); no = fmax(no, fabs(acc));
  }
  printf("probe D=%d: S max err %.3g (max |S| %.3g), O max err %.3g (max |O| %.3g), S with K swizzled max err %.3g\n",
         D, es, ns, eo, no, es2);
  return 0;
}
int main() { run<64>(); run<128>(); }
