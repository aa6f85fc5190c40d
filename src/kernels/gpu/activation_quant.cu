// Block-wise activation quantize/dequantize kernels.
//
// Each thread owns 8 consecutive elements (one 16-byte load for bf16/fp16,
// two for fp32), so a quantization block of 64 (128) elements is a group of
// 8 (16) neighbouring lanes: its min, max and non-finite flag are reduced with
// __shfl_xor_sync inside the group, every lane of the group then derives the
// same scale/zero, and the group's first lane stores them. Codes go out as one
// 8-byte (8-bit) or 4-byte (4-bit) store per thread. Both kernels are
// memory-bound; the arithmetic is the shared scalar code of
// activation_quant_format.h, so the codes equal the CPU reference's bit for bit.
#include "kernels/gpu/activation_quant.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/activation_quant_format.h"

namespace stepscope::kernels::gpu {
namespace {

constexpr int kVec = 8;  // elements per thread
// 256 threads, at least 8 blocks per SM: caps the kernels at 32 registers so
// an SM holds 2048 threads, each with a 16-byte load in flight (32 KB per SM,
// more than HBM latency x bandwidth needs).
constexpr int kThreads = 256;

template <ActDType D>
struct Io;
template <>
struct Io<ActDType::kBFloat16> {
  using Storage = uint16_t;
  static __device__ float load(uint16_t u) { return __uint_as_float(static_cast<uint32_t>(u) << 16); }
  static __device__ uint16_t store(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};
template <>
struct Io<ActDType::kFloat16> {
  using Storage = uint16_t;
  static __device__ float load(uint16_t u) { return __half2float(__ushort_as_half(u)); }
  static __device__ uint16_t store(float f) { return __half_as_ushort(__float2half_rn(f)); }
};
template <>
struct Io<ActDType::kFloat32> {
  using Storage = float;
  static __device__ float load(float f) { return f; }
  static __device__ float store(float f) { return f; }
};

// 8 values from a 16-byte aligned address.
__device__ __forceinline__ void load8(const uint16_t* p, uint16_t (&s)[kVec]) {
  const uint4 r = *reinterpret_cast<const uint4*>(p);
  const uint32_t w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    s[2 * k] = static_cast<uint16_t>(w[k] & 0xFFFFu);
    s[2 * k + 1] = static_cast<uint16_t>(w[k] >> 16);
  }
}
__device__ __forceinline__ void load8(const float* p, float (&s)[kVec]) {
  const float4 a = reinterpret_cast<const float4*>(p)[0];
  const float4 b = reinterpret_cast<const float4*>(p)[1];
  s[0] = a.x, s[1] = a.y, s[2] = a.z, s[3] = a.w, s[4] = b.x, s[5] = b.y, s[6] = b.z, s[7] = b.w;
}
__device__ __forceinline__ void store8(uint16_t* p, const uint16_t (&s)[kVec]) {
  uint4 r;
  r.x = s[0] | (static_cast<uint32_t>(s[1]) << 16);
  r.y = s[2] | (static_cast<uint32_t>(s[3]) << 16);
  r.z = s[4] | (static_cast<uint32_t>(s[5]) << 16);
  r.w = s[6] | (static_cast<uint32_t>(s[7]) << 16);
  *reinterpret_cast<uint4*>(p) = r;
}
__device__ __forceinline__ void store8(float* p, const float (&s)[kVec]) {
  reinterpret_cast<float4*>(p)[0] = make_float4(s[0], s[1], s[2], s[3]);
  reinterpret_cast<float4*>(p)[1] = make_float4(s[4], s[5], s[6], s[7]);
}

// `vec_ok`: x is 16-byte aligned and codes 8-byte aligned, so full chunks use
// vector accesses (a chunk starts at a multiple of 8 elements).
template <ActDType D, int BITS, int BLOCK, bool STOCH>
__global__ void __launch_bounds__(kThreads, 8)
    quantize_kernel(const typename Io<D>::Storage* __restrict__ x, int64_t numel, uint64_t key,
                    uint8_t* __restrict__ codes, uint16_t* __restrict__ scale, uint16_t* __restrict__ zero,
                    bool vec_ok) {
  using S = typename Io<D>::Storage;
  constexpr int kGroup = BLOCK / kVec;
  constexpr float kQmax = static_cast<float>((1 << BITS) - 1);
  const int64_t base = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) * kVec;
  const int64_t left = numel - base;
  const int n = left >= kVec ? kVec : (left > 0 ? static_cast<int>(left) : 0);

  float v[kVec];
  if (n == kVec && vec_ok) {
    S s[kVec];
    load8(x + base, s);
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = Io<D>::load(s[k]);
  } else {
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = k < n ? Io<D>::load(x[base + k]) : 0.0f;
  }
  float mn = INFINITY, mx = -INFINITY;
  int bad = 0;
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    if (k < n) {
      mn = fminf(mn, v[k]);
      mx = fmaxf(mx, v[k]);
      bad |= !aq::is_finite(v[k]);
    }
  }
  // Every lane reaches the shuffles (lanes past the end carry the identities),
  // so the full mask is exact.
#pragma unroll
  for (int off = kGroup / 2; off > 0; off >>= 1) {
    mn = fminf(mn, __shfl_xor_sync(0xFFFFFFFFu, mn, off));
    mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, off));
    bad |= __shfl_xor_sync(0xFFFFFFFFu, bad, off);
  }
  if (n == 0) return;

  aq::BlockParams p{};
  const bool ok = !bad && aq::block_params(mn, mx, kQmax, &p);
  const int64_t blk = base / BLOCK;
  if (base % BLOCK == 0) {  // the group's first lane
    scale[blk] = ok ? p.scale_bits : aq::kPoisonBf16;
    zero[blk] = ok ? p.zero_bits : aq::kPoisonBf16;
  }
  uint32_t c[kVec];
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    c[k] = 0;
    if (ok && k < n) {
      const float t = aq::grid_position(v[k], p, kQmax);
      if constexpr (STOCH)
        c[k] = aq::round_stochastic(t, aq::uniform24(key, static_cast<uint64_t>(base + k)), kQmax);
      else
        c[k] = aq::round_nearest(t);
    }
  }
  if constexpr (BITS == 8) {
    if (n == kVec && vec_ok) {
      uint2 w;
      w.x = c[0] | (c[1] << 8) | (c[2] << 16) | (c[3] << 24);
      w.y = c[4] | (c[5] << 8) | (c[6] << 16) | (c[7] << 24);
      *reinterpret_cast<uint2*>(codes + base) = w;
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k)
        if (k < n) codes[base + k] = static_cast<uint8_t>(c[k]);
    }
  } else {
    uint8_t* out = codes + base / 2;
    if (n == kVec && vec_ok) {
      uint32_t w = 0;
#pragma unroll
      for (int k = 0; k < kVec; ++k) w |= c[k] << (4 * k);
      *reinterpret_cast<uint32_t*>(out) = w;
    } else {
#pragma unroll
      for (int k = 0; k < kVec; k += 2)
        if (k < n) out[k / 2] = static_cast<uint8_t>(c[k] | (c[k + 1] << 4));
    }
  }
}

// `vec_ok`: out 16-byte aligned and codes 8-byte aligned.
template <ActDType D, int BITS, int BLOCK>
__global__ void __launch_bounds__(kThreads, 8)
    dequantize_kernel(const uint8_t* __restrict__ codes, const uint16_t* __restrict__ scale,
                      const uint16_t* __restrict__ zero, int64_t numel, typename Io<D>::Storage* __restrict__ out,
                      bool vec_ok) {
  using S = typename Io<D>::Storage;
  const int64_t base = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) * kVec;
  const int64_t left = numel - base;
  if (left <= 0) return;
  const int n = left >= kVec ? kVec : static_cast<int>(left);
  const int64_t blk = base / BLOCK;
  const float s = aq::bf16_bits_value(scale[blk]);
  const float z = aq::bf16_bits_value(zero[blk]);

  uint32_t c[kVec];
  if constexpr (BITS == 8) {
    if (n == kVec && vec_ok) {
      const uint2 w = *reinterpret_cast<const uint2*>(codes + base);
#pragma unroll
      for (int k = 0; k < 4; ++k) c[k] = (w.x >> (8 * k)) & 0xFFu, c[k + 4] = (w.y >> (8 * k)) & 0xFFu;
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k) c[k] = k < n ? codes[base + k] : 0u;
    }
  } else {
    const uint8_t* in = codes + base / 2;
    if (n == kVec && vec_ok) {
      const uint32_t w = *reinterpret_cast<const uint32_t*>(in);
#pragma unroll
      for (int k = 0; k < kVec; ++k) c[k] = (w >> (4 * k)) & 0xFu;
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k) c[k] = k < n ? (in[k / 2] >> (4 * (k & 1))) & 0xFu : 0u;
    }
  }
  S r[kVec];
#pragma unroll
  for (int k = 0; k < kVec; ++k) r[k] = Io<D>::store(aq::dequant_value(c[k], s, z));
  if (n == kVec && vec_ok) {
    store8(out + base, r);
  } else {
#pragma unroll  // constant indices keep r[] in registers
    for (int k = 0; k < kVec; ++k)
      if (k < n) out[base + k] = r[k];
  }
}

bool aligned(const void* p, uintptr_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

std::string check_args(int64_t numel, int bits, int block, const void* a, const void* b, const void* c,
                       const void* d) {
  if (bits != 4 && bits != 8) return "bits must be 4 or 8, got " + std::to_string(bits);
  if (block != 64 && block != 128) return "block must be 64 or 128, got " + std::to_string(block);
  if (numel < 0) return "numel must be >= 0, got " + std::to_string(numel);
  if (numel > 0 && (!a || !b || !c || !d)) return "null device pointer";
  return "";
}

std::string launch_status() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? std::string() : std::string("CUDA launch failed: ") + cudaGetErrorString(e);
}

unsigned grid_for(int64_t numel) {
  const int64_t chunks = (numel + kVec - 1) / kVec;
  return static_cast<unsigned>((chunks + kThreads - 1) / kThreads);
}

template <ActDType D, int BITS, int BLOCK>
void launch_quantize_t(const void* x, int64_t numel, bool stochastic, uint64_t key, uint8_t* codes,
                       uint16_t* scale, uint16_t* zero, cudaStream_t stream) {
  using S = typename Io<D>::Storage;
  const bool vec_ok = aligned(x, 16) && aligned(codes, 8);
  const auto* xs = static_cast<const S*>(x);
  if (stochastic)
    quantize_kernel<D, BITS, BLOCK, true>
        <<<grid_for(numel), kThreads, 0, stream>>>(xs, numel, key, codes, scale, zero, vec_ok);
  else
    quantize_kernel<D, BITS, BLOCK, false>
        <<<grid_for(numel), kThreads, 0, stream>>>(xs, numel, key, codes, scale, zero, vec_ok);
}

template <ActDType D>
void dispatch_quantize(const void* x, int64_t numel, int bits, int block, bool stochastic, uint64_t key,
                       uint8_t* codes, uint16_t* scale, uint16_t* zero, cudaStream_t stream) {
  if (bits == 4 && block == 64) launch_quantize_t<D, 4, 64>(x, numel, stochastic, key, codes, scale, zero, stream);
  if (bits == 4 && block == 128) launch_quantize_t<D, 4, 128>(x, numel, stochastic, key, codes, scale, zero, stream);
  if (bits == 8 && block == 64) launch_quantize_t<D, 8, 64>(x, numel, stochastic, key, codes, scale, zero, stream);
  if (bits == 8 && block == 128) launch_quantize_t<D, 8, 128>(x, numel, stochastic, key, codes, scale, zero, stream);
}

template <ActDType D, int BITS, int BLOCK>
void launch_dequantize_t(const uint8_t* codes, const uint16_t* scale, const uint16_t* zero, int64_t numel,
                         void* out, cudaStream_t stream) {
  using S = typename Io<D>::Storage;
  const bool vec_ok = aligned(out, 16) && aligned(codes, 8);
  dequantize_kernel<D, BITS, BLOCK>
      <<<grid_for(numel), kThreads, 0, stream>>>(codes, scale, zero, numel, static_cast<S*>(out), vec_ok);
}

template <ActDType D>
void dispatch_dequantize(const uint8_t* codes, const uint16_t* scale, const uint16_t* zero, int64_t numel, int bits,
                         int block, void* out, cudaStream_t stream) {
  if (bits == 4 && block == 64) launch_dequantize_t<D, 4, 64>(codes, scale, zero, numel, out, stream);
  if (bits == 4 && block == 128) launch_dequantize_t<D, 4, 128>(codes, scale, zero, numel, out, stream);
  if (bits == 8 && block == 64) launch_dequantize_t<D, 8, 64>(codes, scale, zero, numel, out, stream);
  if (bits == 8 && block == 128) launch_dequantize_t<D, 8, 128>(codes, scale, zero, numel, out, stream);
}

}  // namespace

std::string act_quantize(const void* x, ActDType dtype, int64_t numel, int bits, int block, bool stochastic,
                         uint64_t seed, uint8_t* codes, uint16_t* scale, uint16_t* zero, cudaStream_t stream) {
  std::string err = check_args(numel, bits, block, x, codes, scale, zero);
  if (!err.empty()) return err;
  if (numel == 0) return "";
  const uint64_t key = aq::mix_seed(seed);
  switch (dtype) {
    case ActDType::kBFloat16:
      dispatch_quantize<ActDType::kBFloat16>(x, numel, bits, block, stochastic, key, codes, scale, zero, stream);
      break;
    case ActDType::kFloat16:
      dispatch_quantize<ActDType::kFloat16>(x, numel, bits, block, stochastic, key, codes, scale, zero, stream);
      break;
    case ActDType::kFloat32:
      dispatch_quantize<ActDType::kFloat32>(x, numel, bits, block, stochastic, key, codes, scale, zero, stream);
      break;
    default:
      return "unsupported dtype code " + std::to_string(static_cast<int>(dtype));
  }
  return launch_status();
}

std::string act_dequantize(const uint8_t* codes, const uint16_t* scale, const uint16_t* zero, int64_t numel,
                           int bits, int block, ActDType out_dtype, void* out, cudaStream_t stream) {
  std::string err = check_args(numel, bits, block, codes, scale, zero, out);
  if (!err.empty()) return err;
  if (numel == 0) return "";
  switch (out_dtype) {
    case ActDType::kBFloat16:
      dispatch_dequantize<ActDType::kBFloat16>(codes, scale, zero, numel, bits, block, out, stream);
      break;
    case ActDType::kFloat16:
      dispatch_dequantize<ActDType::kFloat16>(codes, scale, zero, numel, bits, block, out, stream);
      break;
    case ActDType::kFloat32:
      dispatch_dequantize<ActDType::kFloat32>(codes, scale, zero, numel, bits, block, out, stream);
      break;
    default:
      return "unsupported dtype code " + std::to_string(static_cast<int>(out_dtype));
  }
  return launch_status();
}

}  // namespace stepscope::kernels::gpu
