// Block-sparse attention forward versions 5 to 11 timed through the raw
// C++ API, without PyTorch: causal sliding windows of the Python benchmark's
// densities (blocks of 128, 8 heads, batch 1, bf16) at 16k and 4k tokens,
// head dims 128 and 64. Each version runs 20 times back to back after one
// warm-up call (CUDA events; no L2 flush, so K and V of 4k tokens stay in
// L2): a comparison of the versions on the same inputs, not of FlexAttention
// or SDPA (bench_block_sparse_attention.py does those). Prints the largest
// difference of each version's output from v5's. Built and run on an sm_90 GPU:
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc bench/kernels/bench_block_sparse_raw.cu \
//       src/kernels/gpu/block_sparse_attention*.cu src/kernels/gpu/tensor_map.cu -o /tmp/bsa_raw && /tmp/bsa_raw
#include <cstdio>
#include <cstring>
#include <vector>
#include <random>
#include <cmath>
#include <cuda_runtime.h>
#include "kernels/gpu/block_sparse_attention.h"
using namespace stepscope::kernels;
using namespace stepscope::kernels::gpu;
#define CK(x) do { cudaError_t e = (x); if (e) { printf("cuda %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)
static uint16_t tobf(float f) { uint32_t u; memcpy(&u, &f, 4); return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16); }
static float bf(uint16_t b) { uint32_t u = uint32_t(b) << 16; float f; memcpy(&f, &u, 4); return f; }
int main() {
  const int B = 128, H = 8;
  int dev; CK(cudaGetDevice(&dev)); cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, dev));
  printf("%s\n", p.name);
  std::mt19937 g(7); std::normal_distribution<float> nd;
  for (int D : {128, 64}) for (int S : {16384, 4096}) {
    const int64_t n = int64_t(H) * S * D;
    std::vector<uint16_t> h(n);
    uint16_t *q, *k, *v, *o5, *o6; float* lse;
    CK(cudaMalloc(&q, n * 2)); CK(cudaMalloc(&k, n * 2)); CK(cudaMalloc(&v, n * 2));
    CK(cudaMalloc(&o5, n * 2)); CK(cudaMalloc(&o6, n * 2)); CK(cudaMalloc(&lse, int64_t(H) * S * 4));
    for (uint16_t* t : {q, k, v}) { for (auto& x : h) x = tobf(nd(g)); CK(cudaMemcpy(t, h.data(), n * 2, cudaMemcpyHostToDevice)); }
    const int nb = S / B;
    const int windows16[] = {819, 2048, 4096, 8192}, windows4[] = {204, 512, 1024, 2048};
    for (int wi = 0; wi < 4; ++wi) {
      const int W = S == 16384 ? windows16[wi] : windows4[wi];
      std::vector<int32_t> ro{0}, ci; std::vector<uint8_t> pa;
      for (int i = 0; i < nb; ++i) {
        for (int j = 0; j <= i; ++j) {
          const int64_t lo = int64_t(i - j) * B - (B - 1), hi = int64_t(i - j) * B + (B - 1);
          if (hi < 0 || lo > W - 1) continue;
          ci.push_back(j); pa.push_back(!(lo >= 0 && hi <= W - 1));
        }
        ro.push_back(int32_t(ci.size()));
      }
      int32_t *dro, *dci; uint8_t* dpa;
      CK(cudaMalloc(&dro, ro.size() * 4)); CK(cudaMalloc(&dci, ci.size() * 4)); CK(cudaMalloc(&dpa, pa.size()));
      CK(cudaMemcpy(dro, ro.data(), ro.size() * 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(dci, ci.data(), ci.size() * 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(dpa, pa.data(), pa.size(), cudaMemcpyHostToDevice));
      DeviceBlockMask m; m.rows = {dro, dci, dpa}; m.cols = m.rows; m.groups = 1; m.block = B; m.causal = true; m.window = W;
      AttentionShape s; s.batch = 1; s.heads = H; s.kv_heads = H; s.seq_q = S; s.seq_k = S; s.head_dim = D;
      const double flops = 4.0 * H * D * double(ci.size()) * B * B;
      printf("d %d seq %d window %d density %.3f:", D, S, W, double(ci.size()) / (nb * nb));
      for (int ver : {5, 6, 7, 8, 9, 10, 11, 14}) {
        uint16_t* out = ver == 5 ? o5 : o6;
        // NaN everywhere first, so an output a version never wrote is not
        // the previous version's.
        if (ver != 5) CK(cudaMemset(out, 0xFF, n * 2));
        std::string err = block_sparse_attention_forward(q, k, v, s, m, 1.0f / sqrtf(D), AttnDType::kBFloat16, out, lse, nullptr, ver);
        if (!err.empty()) { printf(" v%d: %s", ver, err.c_str()); continue; }
        CK(cudaDeviceSynchronize());
        cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
        const int iters = 20;
        cudaEventRecord(a);
        for (int it = 0; it < iters; ++it) block_sparse_attention_forward(q, k, v, s, m, 1.0f / sqrtf(D), AttnDType::kBFloat16, out, lse, nullptr, ver);
        cudaEventRecord(b); CK(cudaEventSynchronize(b));
        float ms; cudaEventElapsedTime(&ms, a, b); ms /= iters;
        double diff = 0;
        if (ver != 5) {
          std::vector<uint16_t> x(n), y(n);
          CK(cudaMemcpy(x.data(), o5, n * 2, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(y.data(), out, n * 2, cudaMemcpyDeviceToHost));
          for (int64_t t = 0; t < n; ++t) {
            const double e = fabs(double(bf(x[t])) - bf(y[t]));
            diff = e == e ? fmax(diff, e) : INFINITY;  // fmax drops a NaN
          }
        }
        printf("  v%d %.1f us %.0f TF/s%s", ver, ms * 1e3, flops / (ms * 1e-3) / 1e12, ver == 5 ? "" : "");
        if (ver != 5) printf(" (max|v%d-v5| %.3g)", ver, diff);
      }
      printf("\n");
      cudaFree(dro); cudaFree(dci); cudaFree(dpa);
    }
    cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(o5); cudaFree(o6); cudaFree(lse);
  }
}
