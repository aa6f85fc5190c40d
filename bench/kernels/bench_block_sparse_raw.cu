// Block-sparse attention forward versions 5, 11, 15 and 17, then the
// backward of versions 5, 13, 15, 16 and 17, timed through the raw C++ API,
// without PyTorch: causal sliding windows of the Python benchmark's
// densities and 8 causal documents whose ends fall inside blocks (lengths
// seq/8 ∓ 100 in turn; v17 takes them as intervals), blocks of 128, 8 heads,
// batch 1, bf16, at 16k and 4k tokens, head dims 128 and 64. Each version runs 20 times back to back after one
// warm-up call (CUDA events; no L2 flush, so K and V of 4k tokens stay in
// L2): a comparison of the versions on the same inputs, not of FlexAttention
// or SDPA (bench_block_sparse_attention.py does those). Prints the largest
// difference of each version's output (backward: dQ, dK, dV for a random
// dO, 10 timed calls) from v5's. Built and run on an sm_90 GPU:
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc bench/kernels/bench_block_sparse_raw.cu \
//       src/kernels/gpu/block_sparse_attention*.cu src/kernels/gpu/tensor_map.cu -o /tmp/bsa_raw && /tmp/bsa_raw
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <random>
#include <cmath>
#include <cuda_runtime.h>
#include "kernels/document_spans.h"
#include "kernels/gpu/block_sparse_attention.h"
using namespace stepscope::kernels;
using namespace stepscope::kernels::gpu;
#define CK(x) do { cudaError_t e = (x); if (e) { printf("cuda %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)
static uint16_t tobf(float f) { uint32_t u; memcpy(&u, &f, 4); return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16); }
static float bf(uint16_t b) { uint32_t u = uint32_t(b) << 16; float f; memcpy(&f, &u, 4); return f; }
// Mean milliseconds of `iters` calls of fn back to back, after what ran before finished (CUDA events).
template <class Fn>
static float mean_ms(int iters, Fn fn) {
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  cudaEventRecord(a);
  for (int it = 0; it < iters; ++it) fn();
  cudaEventRecord(b); CK(cudaEventSynchronize(b));
  float ms; cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a); cudaEventDestroy(b);
  return ms / iters;
}
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
    // Documents: 8 of seq/8 - 100, seq/8 + 100, ... tokens.
    std::vector<int32_t> docs(S);
    for (int t = 0, d = 0, end = S / 8 - 100; t < S; ++t) {
      if (t == end) ++d, end += S / 8 + (d % 2 ? 100 : -100);
      docs[t] = d;
    }
    const std::vector<int32_t> spans = document_spans(docs.data(), S);
    int32_t *ddocs, *dspans;
    CK(cudaMalloc(&ddocs, S * 4)); CK(cudaMalloc(&dspans, S * 8));
    CK(cudaMemcpy(ddocs, docs.data(), S * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dspans, spans.data(), S * 8, cudaMemcpyHostToDevice));
    const int windows16[] = {819, 2048, 4096, 8192}, windows4[] = {204, 512, 1024, 2048};
    for (int wi = 0; wi < 5; ++wi) {
      const bool documents = wi == 4;
      const int W = documents ? 0 : S == 16384 ? windows16[wi] : windows4[wi];
      std::vector<int32_t> ro{0}, ci; std::vector<uint8_t> pa;
      for (int i = 0; i < nb; ++i) {
        for (int j = 0; j <= i; ++j) {
          if (documents) {  // live where block j's last document reaches block i's first
            if (docs[j * B + B - 1] < docs[i * B]) continue;
            ci.push_back(j); pa.push_back(j == i || docs[j * B] != docs[i * B + B - 1]);
            continue;
          }
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
      if (documents) m.doc_ids = ddocs, m.doc_spans = dspans;
      AttentionShape s; s.batch = 1; s.heads = H; s.kv_heads = H; s.seq_q = S; s.seq_k = S; s.head_dim = D;
      const double flops = 4.0 * H * D * double(ci.size()) * B * B;
      const std::string pattern = documents ? "8 documents" : "window " + std::to_string(W);
      printf("d %d seq %d %s density %.3f:", D, S, pattern.c_str(), double(ci.size()) / (nb * nb));
      for (int ver : {5, 11, 15, 17}) {
        uint16_t* out = ver == 5 ? o5 : o6;
        // NaN everywhere first, so an output a version never wrote is not
        // the previous version's.
        if (ver != 5) CK(cudaMemset(out, 0xFF, n * 2));
        std::string err = block_sparse_attention_forward(q, k, v, s, m, 1.0f / sqrtf(D), AttnDType::kBFloat16, out, lse, nullptr, ver);
        if (!err.empty()) { printf(" v%d: %s", ver, err.c_str()); continue; }
        const float ms = mean_ms(20, [&] {
          block_sparse_attention_forward(q, k, v, s, m, 1.0f / sqrtf(D), AttnDType::kBFloat16, out, lse, nullptr, ver);
        });
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
      // The backward: the mask by key block too (the transposed CSR), O and
      // lse from v5's forward, a random dO.
      std::vector<int32_t> cro{0}, cci; std::vector<uint8_t> cpa;
      for (int j = 0; j < nb; ++j) {
        for (int i = j; i < nb; ++i)
          for (int32_t e = ro[i]; e < ro[i + 1]; ++e)
            if (ci[e] == j) { cci.push_back(i); cpa.push_back(pa[e]); }
        cro.push_back(int32_t(cci.size()));
      }
      int32_t *dcro, *dcci; uint8_t* dcpa;
      CK(cudaMalloc(&dcro, cro.size() * 4)); CK(cudaMalloc(&dcci, cci.size() * 4)); CK(cudaMalloc(&dcpa, cpa.size()));
      CK(cudaMemcpy(dcro, cro.data(), cro.size() * 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(dcci, cci.data(), cci.size() * 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(dcpa, cpa.data(), cpa.size(), cudaMemcpyHostToDevice));
      m.cols = {dcro, dcci, dcpa};
      uint16_t* dout; CK(cudaMalloc(&dout, n * 2));
      for (auto& x : h) x = tobf(nd(g));
      CK(cudaMemcpy(dout, h.data(), n * 2, cudaMemcpyHostToDevice));
      uint16_t* grads[2][3];  // [v5, this version][dq, dk, dv]
      for (auto& pair : grads) for (auto& t : pair) CK(cudaMalloc(&t, n * 2));
      void* ws; CK(cudaMalloc(&ws, block_sparse_attention_workspace_bytes(s)));
      std::string ferr = block_sparse_attention_forward(q, k, v, s, m, 1.0f / sqrtf(D), AttnDType::kBFloat16, o5, lse, nullptr, 5);
      if (!ferr.empty()) { printf("  forward v5: %s\n", ferr.c_str()); exit(1); }
      printf("d %d seq %d %s backward:", D, S, pattern.c_str());
      for (int ver : {5, 13, 15, 16, 17}) {
        uint16_t** gr = grads[ver == 5 ? 0 : 1];
        if (ver != 5) for (int t = 0; t < 3; ++t) CK(cudaMemset(gr[t], 0xFF, n * 2));
        auto run = [&] {
          return block_sparse_attention_backward(q, k, v, o5, dout, lse, s, m, 1.0f / sqrtf(D), AttnDType::kBFloat16,
                                                 gr[0], gr[1], gr[2], ws, nullptr, ver);
        };
        std::string err = run();
        if (!err.empty()) { printf(" v%d: %s", ver, err.c_str()); continue; }
        const float ms = mean_ms(10, run);
        printf("  v%d %.1f us %.0f TF/s", ver, ms * 1e3, 2.5 * flops / (ms * 1e-3) / 1e12);
        if (ver == 5) continue;
        printf(" (max|d-d5| q/k/v");
        for (int t = 0; t < 3; ++t) {
          std::vector<uint16_t> x(n), y(n);
          CK(cudaMemcpy(x.data(), grads[0][t], n * 2, cudaMemcpyDeviceToHost));
          CK(cudaMemcpy(y.data(), gr[t], n * 2, cudaMemcpyDeviceToHost));
          double diff = 0;
          for (int64_t e = 0; e < n; ++e) {
            const double dd = fabs(double(bf(x[e])) - bf(y[e]));
            diff = dd == dd ? fmax(diff, dd) : INFINITY;
          }
          printf(" %.3g", diff);
        }
        printf(")");
      }
      printf("\n");
      for (auto& pair : grads) for (auto& t : pair) cudaFree(t);
      cudaFree(ws); cudaFree(dout); cudaFree(dcro); cudaFree(dcci); cudaFree(dcpa);
      cudaFree(dro); cudaFree(dci); cudaFree(dpa);
    }
    cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(o5); cudaFree(o6); cudaFree(lse); cudaFree(ddocs); cudaFree(dspans);
  }
}
