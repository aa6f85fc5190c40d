// The unscale+check pass reads every gradient byte once (and writes it back
// unless it only checks), so it is bandwidth bound and launch bound at the
// same time: hundreds of tensors of very different sizes. One launch covers
// them all: the grid is cut into tiles of kUnscaleTileElems elements, each
// tensor owning ceil(numel / tile) consecutive tiles, and a block finds its
// tensor by binary search over the table's first_tile column (a few cached
// loads). Full aligned tiles load all their 16-byte vectors before touching
// any, to keep many bytes in flight per thread.
#include "kernels/gpu/loss_scaler.h"

#include <climits>

#include "kernels/gpu/dtype_bits.cuh"
#include "kernels/gpu/launch_error.cuh"

namespace stepscope::kernels::gpu {
namespace {

constexpr int kThreads = 256;

template <class T, int N>
struct alignas(16) Vec16 {
  T v[N];
};

// Exponent all ones = inf or NaN. On the bits, so no fast-math flag can fold it away.
__device__ __forceinline__ bool non_finite(float f) { return (__float_as_uint(f) & 0x7F800000u) == 0x7F800000u; }

template <class E>
__device__ int full_tile(typename E::Bits* p, float inv) {
  using T = typename E::Bits;
  constexpr int N = 16 / sizeof(T);
  constexpr int kIters = static_cast<int>(kUnscaleTileElems / (N * kThreads));
  static_assert(kIters * N * kThreads == kUnscaleTileElems, "tile must be a whole number of vector rounds");
  auto* vp = reinterpret_cast<Vec16<T, N>*>(p);
  Vec16<T, N> r[kIters];
#pragma unroll
  for (int i = 0; i < kIters; ++i) r[i] = vp[threadIdx.x + i * kThreads];
  int bad = 0;
  const bool write = inv != 1.0f;
#pragma unroll
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int j = 0; j < N; ++j) {
      const float f = E::load(r[i].v[j]);
      bad += non_finite(f);
      r[i].v[j] = E::store(f * inv);
    }
  }
  if (write) {
#pragma unroll
    for (int i = 0; i < kIters; ++i) vp[threadIdx.x + i * kThreads] = r[i];
  }
  return bad;
}

template <class E>
__device__ int partial_tile(typename E::Bits* p, int64_t n, float inv) {
  int bad = 0;
  const bool write = inv != 1.0f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    const float f = E::load(p[i]);
    bad += non_finite(f);
    if (write) p[i] = E::store(f * inv);
  }
  return bad;
}

template <class E>
__device__ int process(void* data, int64_t start, int64_t len, bool vector_ok, float inv) {
  auto* p = static_cast<typename E::Bits*>(data) + start;
  if (vector_ok && len == kUnscaleTileElems) return full_tile<E>(p, inv);
  return partial_tile<E>(p, len, inv);
}

__global__ void __launch_bounds__(kThreads)
    unscale_check_kernel(const GradTensorDesc* __restrict__ descs, int num_tensors, const float* scale,
                         const float* inv_scale, float* found_inf, unsigned long long* nonfinite) {
  const int64_t tile = blockIdx.x;
  // Last tensor whose first tile is <= this one: tensors with no elements own
  // no tiles and share first_tile with the next one, which this skips past.
  int lo = 0, hi = num_tensors;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (descs[mid].first_tile <= tile) lo = mid; else hi = mid;
  }
  const GradTensorDesc d = descs[lo];
  float inv = 1.0f;
  if (inv_scale != nullptr) {
    inv = *inv_scale;
  } else if (scale != nullptr) {
    inv = __double2float_rn(1.0 / static_cast<double>(*scale));  // as GradScaler: reciprocal in fp64
  }
  const int64_t start = (tile - d.first_tile) * kUnscaleTileElems;
  const int64_t len = d.numel - start < kUnscaleTileElems ? d.numel - start : kUnscaleTileElems;
  int bad = 0;
  switch (static_cast<GradDType>(d.dtype)) {
    case GradDType::kFloat32: bad = process<F32>(d.data, start, len, d.vector_ok != 0, inv); break;
    case GradDType::kFloat16: bad = process<F16>(d.data, start, len, d.vector_ok != 0, inv); break;
    default: bad = process<Bf16>(d.data, start, len, d.vector_ok != 0, inv); break;
  }
  // Block total: a warp shuffle reduction and one barrier; atomics only when a tile holds a non-finite value.
#pragma unroll
  for (int off = 16; off > 0; off /= 2) bad += __shfl_xor_sync(0xFFFFFFFFu, bad, off);
  __shared__ int warp_bad[kThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_bad[threadIdx.x / 32] = bad;
  __syncthreads();
  if (threadIdx.x == 0) {
    int total = 0;
#pragma unroll
    for (int w = 0; w < kThreads / 32; ++w) total += warp_bad[w];
    if (total > 0) {
      atomicAdd(&nonfinite[lo], static_cast<unsigned long long>(total));
      *found_inf = 1.0f;  // every writer stores the same value: no atomic needed
    }
  }
}

__global__ void update_scale_kernel(float* scale, int32_t* growth_tracker, const float* found_inf,
                                    double growth_factor, double backoff_factor, int32_t growth_interval) {
  if (*found_inf != 0.0f) {
    *scale = static_cast<float>(static_cast<double>(*scale) * backoff_factor);
    *growth_tracker = 0;
    return;
  }
  const int32_t successful = *growth_tracker + 1;
  if (successful == growth_interval) {
    const float grown = static_cast<float>(static_cast<double>(*scale) * growth_factor);
    if ((__float_as_uint(grown) & 0x7F800000u) != 0x7F800000u) *scale = grown;
    *growth_tracker = 0;
  } else {
    *growth_tracker = successful;
  }
}

}  // namespace

std::string plan_grad_tensors(std::vector<GradTensorDesc>& descs, int64_t* total_tiles) {
  int64_t tiles = 0;
  if (descs.size() > static_cast<size_t>(INT_MAX)) return "too many gradient tensors";
  for (size_t t = 0; t < descs.size(); ++t) {
    GradTensorDesc& d = descs[t];
    const std::string name = "gradient tensor " + std::to_string(t);
    if (d.numel < 0) return name + " has numel < 0";
    if (d.numel > 0 && d.data == nullptr) return name + " has a null data pointer";
    const auto dt = static_cast<GradDType>(d.dtype);
    if (dt != GradDType::kFloat32 && dt != GradDType::kFloat16 && dt != GradDType::kBFloat16) {
      return name + " has dtype code " + std::to_string(d.dtype) + "; only float32, float16 and bfloat16 are supported";
    }
    const uintptr_t addr = reinterpret_cast<uintptr_t>(d.data);
    const uintptr_t elem = dt == GradDType::kFloat32 ? 4 : 2;
    if (addr % elem != 0) return name + " is not aligned to its element size";
    d.vector_ok = addr % 16 == 0 ? 1 : 0;
    d.first_tile = tiles;
    tiles += (d.numel + kUnscaleTileElems - 1) / kUnscaleTileElems;
  }
  if (tiles > INT_MAX) return "the gradients need more than 2^31 - 1 tiles";
  *total_tiles = tiles;
  return "";
}

std::string unscale_and_check(const GradTensorDesc* descs, int num_tensors, int64_t total_tiles, const float* scale,
                              const float* inv_scale, float* found_inf, int64_t* nonfinite, cudaStream_t stream) {
  if (num_tensors < 0 || total_tiles < 0 || total_tiles > INT_MAX) return "unscale_and_check: bad table size";
  if (num_tensors == 0) return "";
  if (descs == nullptr || found_inf == nullptr || nonfinite == nullptr) {
    return "unscale_and_check: descs, found_inf and nonfinite must be device pointers";
  }
  // Zeroed on the stream, so a captured graph zeroes the counts at every replay.
  cudaError_t err = cudaMemsetAsync(nonfinite, 0, sizeof(int64_t) * static_cast<size_t>(num_tensors), stream);
  if (err != cudaSuccess) return std::string("unscale_and_check: memset failed: ") + cudaGetErrorString(err);
  if (total_tiles == 0) return "";
  static_assert(sizeof(unsigned long long) == sizeof(int64_t), "counts are 64-bit");
  unscale_check_kernel<<<static_cast<unsigned>(total_tiles), kThreads, 0, stream>>>(
      descs, num_tensors, scale, inv_scale, found_inf, reinterpret_cast<unsigned long long*>(nonfinite));
  return launch_error("unscale_and_check");
}

std::string update_scale(float* scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                         double backoff_factor, int32_t growth_interval, cudaStream_t stream) {
  if (scale == nullptr || growth_tracker == nullptr || found_inf == nullptr) {
    return "update_scale: scale, growth_tracker and found_inf must be device pointers";
  }
  update_scale_kernel<<<1, 1, 0, stream>>>(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                                           growth_interval);
  return launch_error("update_scale");
}

}  // namespace stepscope::kernels::gpu
