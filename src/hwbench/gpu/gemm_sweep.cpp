#include "hwbench/gpu/gemm_sweep.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "hwbench/gpu/cuda_check.h"
#include "hwbench/gpu/device_buffer.h"
#include "hwbench/gpu/gpu_libraries.h"
#include "hwbench/gpu/element_kernels.h"
#include "hwbench/sample_stats.h"

namespace stepscope::hwbench::gpu {

using model::GemmResult;

namespace {

// cuBLAS recommends 32 MiB of workspace on Hopper (cuBLAS docs, cublasLtMatmul).
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

struct DtypeConfig {
  ElementType in, out;
  cudaDataType_t in_type, out_type;
  cublasComputeType_t compute;
  double tolerance;  // |D − ref| ≤ tolerance · Σ|a·b| on the sampled outputs
  int min_major, min_minor;
};

// Tolerances: the output's rounding dominates (bf16 2^-8 ≈ 4e-3 of |D| ≤
// Σ|ab|; fp16 2^-11; tf32 inputs round to 2^-11 each; fp32 accumulation
// error over k ≤ 16384 is far under 1e-4). A layout or type mistake gives
// errors of order 1.
DtypeConfig config_for(const std::string& dtype) {
  if (dtype == "bf16")
    return {ElementType::kBf16, ElementType::kBf16, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1e-2, 8, 0};
  if (dtype == "fp16")
    return {ElementType::kFp16, ElementType::kFp16, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 5e-3, 7, 0};
  if (dtype == "fp8")
    return {ElementType::kFp8E4m3, ElementType::kBf16, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1e-2, 8, 9};
  if (dtype == "tf32")
    return {ElementType::kFp32, ElementType::kFp32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 5e-3, 8, 0};
  if (dtype == "fp32")
    return {ElementType::kFp32, ElementType::kFp32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1e-4, 0, 0};
  throw BenchError("unknown GEMM dtype '" + dtype + "' (bf16, fp16, fp8, tf32, fp32)");
}

// One GEMM problem with its descriptors and candidate algorithms.
class LtGemm {
 public:
  LtGemm(cublasLtHandle_t handle, const DtypeConfig& c, GemmShape s, int max_algos) : handle_(handle) {
    SS_CUBLAS(cublaslt().MatmulDescCreate(&op_, c.compute, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    SS_CUBLAS(cublaslt().MatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    SS_CUBLAS(cublaslt().MatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    SS_CUBLAS(cublaslt().MatrixLayoutCreate(&a_, c.in_type, s.k, s.m, s.k));
    SS_CUBLAS(cublaslt().MatrixLayoutCreate(&b_, c.in_type, s.k, s.n, s.k));
    SS_CUBLAS(cublaslt().MatrixLayoutCreate(&d_, c.out_type, s.m, s.n, s.m));
    cublasLtMatmulPreference_t pref;
    SS_CUBLAS(cublaslt().MatmulPreferenceCreate(&pref));
    uint64_t ws = kWorkspaceBytes;
    SS_CUBLAS(cublaslt().MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    algos_.resize(static_cast<size_t>(max_algos));
    int returned = 0;
    cublasStatus_t st = cublaslt().MatmulAlgoGetHeuristic(handle_, op_, a_, b_, d_, d_, pref, max_algos, algos_.data(),
                                                       &returned);
    cublaslt().MatmulPreferenceDestroy(pref);
    SS_CUBLAS(st);
    algos_.resize(static_cast<size_t>(returned));
    if (algos_.empty())
      throw BenchError(fmt::format("cuBLASLt has no algorithm for {}x{}x{}", s.m, s.n, s.k));
  }
  ~LtGemm() {
    cublaslt().MatrixLayoutDestroy(a_);
    cublaslt().MatrixLayoutDestroy(b_);
    cublaslt().MatrixLayoutDestroy(d_);
    cublaslt().MatmulDescDestroy(op_);
  }
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  size_t algorithms() const { return algos_.size(); }
  void run(size_t algo, const void* a, const void* b, void* d, void* workspace, cudaStream_t s) const {
    const float alpha = 1, beta = 0;
    SS_CUBLAS(cublaslt().Matmul(handle_, op_, &alpha, a, a_, b, b_, &beta, d, d_, d, d_, &algos_[algo].algo, workspace,
                             kWorkspaceBytes, s));
  }

 private:
  cublasLtHandle_t handle_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos_;
};

// A non-square, non-power-of-two-free shape, so a transposed or misread
// operand cannot pass; 16 outputs sampled across D.
void check_dtype(const BenchContext& ctx, cublasLtHandle_t handle, const std::string& dtype, const DtypeConfig& c,
                 void* workspace) {
  const GemmShape s{768, 512, 1024};
  DeviceBuffer a(s.m * s.k * element_bytes(c.in)), b(s.k * s.n * element_bytes(c.in)),
      d(s.m * s.n * element_bytes(c.out));
  fill_uniform(a.p, c.in, s.m * s.k, 11, ctx.stream);
  fill_uniform(b.p, c.in, s.k * s.n, 12, ctx.stream);
  LtGemm g(handle, c, s, 1);
  g.run(0, a.p, b.p, d.p, workspace, ctx.stream);
  constexpr int kSamples = 16;
  std::vector<int64_t> rows(kSamples), cols(kSamples);
  for (int i = 0; i < kSamples; ++i) {
    rows[i] = (i * 97 + 5) % s.m;
    cols[i] = (i * 61 + 3) % s.n;
  }
  DeviceBuffer idx(2 * kSamples * sizeof(int64_t)), res(3 * kSamples * sizeof(double));
  auto* di = static_cast<int64_t*>(idx.p);
  auto* dr = static_cast<double*>(res.p);
  SS_CUDA(cudaMemcpyAsync(di, rows.data(), kSamples * sizeof(int64_t), cudaMemcpyHostToDevice, ctx.stream));
  SS_CUDA(cudaMemcpyAsync(di + kSamples, cols.data(), kSamples * sizeof(int64_t), cudaMemcpyHostToDevice, ctx.stream));
  gemm_reference_samples(a.p, b.p, c.in, d.p, c.out, s.m, s.k, di, di + kSamples, kSamples, dr, dr + kSamples,
                         dr + 2 * kSamples, ctx.stream);
  std::vector<double> host(3 * kSamples);
  SS_CUDA(cudaMemcpyAsync(host.data(), dr, host.size() * sizeof(double), cudaMemcpyDeviceToHost, ctx.stream));
  SS_CUDA(cudaStreamSynchronize(ctx.stream));
  int wrong = 0;
  double worst = 0;
  for (int i = 0; i < kSamples; ++i) {
    double ref = host[i], got = host[kSamples + i], scale = host[2 * kSamples + i];
    double err = std::fabs(got - ref) / std::max(scale, 1e-30);
    worst = std::max(worst, err);
    if (!(err <= c.tolerance)) ++wrong;  // NaN counts as wrong
  }
  if (wrong > 0)
    throw BenchError(fmt::format("GEMM {} check failed: {} of {} sampled outputs off the double reference (worst "
                                 "relative error {:.3g}, tolerance {:.0e})",
                                 dtype, wrong, kSamples, worst, c.tolerance));
  progress(fmt::format("gemm    {:<5} check passed: {} sampled outputs within {:.0e} (worst {:.2g})", dtype, kSamples,
                       c.tolerance, worst));
}

}  // namespace

std::vector<GemmShape> gemm_shapes(const std::string& dtype, bool quick) {
  if (quick) {
    if (dtype == "bf16") return {{8192, 8192, 8192}, {16384, 16384, 16384}};
    if (dtype == "fp32") return {{4096, 4096, 4096}};
    return {{8192, 8192, 8192}};
  }
  // Cubes for the maximum; transformer-layer shapes (tokens × hidden ×
  // hidden, MLP 4h and 3.5h widths, a narrow k) for the efficiency table.
  std::vector<GemmShape> cubes = {{1024, 1024, 1024},    {2048, 2048, 2048},    {4096, 4096, 4096},
                                  {6144, 6144, 6144},    {8192, 8192, 8192},    {12288, 12288, 12288},
                                  {16384, 16384, 16384}};
  std::vector<GemmShape> layers = {{16384, 4096, 4096},  {16384, 16384, 4096}, {16384, 4096, 16384},
                                   {16384, 14336, 4096}, {8192, 8192, 1024},   {8192, 1024, 8192},
                                   {4096, 4096, 512}};
  if (dtype == "bf16") {
    cubes.insert(cubes.end(), layers.begin(), layers.end());
    return cubes;
  }
  if (dtype == "fp16" || dtype == "fp8")
    return {{4096, 4096, 4096},   {8192, 8192, 8192},  {12288, 12288, 12288},
            {16384, 16384, 16384}, {16384, 4096, 4096}, {16384, 14336, 4096}};
  if (dtype == "tf32") return {{4096, 4096, 4096}, {8192, 8192, 8192}, {16384, 16384, 16384}};
  return {{4096, 4096, 4096}, {8192, 8192, 8192}, {12288, 12288, 12288}};  // fp32: slow, fewer
}

std::vector<GemmResult> run_gemm_sweep(const BenchContext& ctx, const std::vector<std::string>& dtypes) {
  cublasLtHandle_t handle;
  SS_CUBLAS(cublaslt().Create(&handle));
  std::unique_ptr<cublasLtContext, void (*)(cublasLtHandle_t)> handle_guard(
      handle, [](cublasLtHandle_t h) { cublaslt().Destroy(h); });
  DeviceBuffer workspace(kWorkspaceBytes);
  std::vector<GemmResult> out;
  const int max_algos = ctx.quick ? 1 : 3;
  for (const std::string& dtype : dtypes) {
    DtypeConfig c = config_for(dtype);
    int cc = ctx.device.compute_major * 10 + ctx.device.compute_minor;
    if (cc < c.min_major * 10 + c.min_minor) {
      ctx.note(fmt::format("GEMM {} not measured: needs compute capability {}.{}, the device has {}.{}", dtype,
                           c.min_major, c.min_minor, ctx.device.compute_major, ctx.device.compute_minor));
      continue;
    }
    check_dtype(ctx, handle, dtype, c, workspace.p);
    std::vector<GemmShape> shapes = gemm_shapes(dtype, ctx.quick);
    size_t max_a = 0, max_b = 0, max_d = 0;
    for (const GemmShape& s : shapes) {
      max_a = std::max<size_t>(max_a, s.m * s.k);
      max_b = std::max<size_t>(max_b, s.k * s.n);
      max_d = std::max<size_t>(max_d, s.m * s.n);
    }
    DeviceBuffer a(max_a * element_bytes(c.in)), b(max_b * element_bytes(c.in)), d(max_d * element_bytes(c.out));
    fill_uniform(a.p, c.in, max_a, 21, ctx.stream);
    fill_uniform(b.p, c.in, max_b, 22, ctx.stream);
    for (const GemmShape& s : shapes) {
      LtGemm g(handle, c, s, max_algos);
      double flop = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
      // Large shapes take milliseconds: fewer repeats hold the spread.
      int repeats = ctx.quick ? 5 : (flop > 4e12 ? 8 : 15);
      TimingPlan plan{2, repeats, ctx.flusher};
      double best = 0;
      for (size_t algo = 0; algo < g.algorithms(); ++algo) {
        double t = median_seconds([&](cudaStream_t st) { g.run(algo, a.p, b.p, d.p, workspace.p, st); }, ctx.stream,
                                  plan);
        if (best == 0 || t < best) best = t;
      }
      GemmResult r{dtype, s.m, s.n, s.k, best, flop / best / 1e12};
      progress(fmt::format("gemm    {:<5} {:>6}x{:>6}x{:>6} {:>8.1f} TFLOP/s  ({:.3f} ms, best of {} algorithms)",
                           dtype, s.m, s.n, s.k, r.tflops, best * 1e3, g.algorithms()));
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace stepscope::hwbench::gpu
