// Block-wise activation quantize/dequantize kernels.
//
// Quantize: each thread owns 32 consecutive elements by default (four 16-byte
// loads for bf16/fp16, eight for fp32; kQVec below), so a quantization block
// of 64 (128) elements is a group of 2 (4) neighbouring lanes. Dequantize: 8 elements per thread
// (already at 87-92% of copy bandwidth). The kernels are meant to be memory-bound, so the
// arithmetic per element is kept to a handful of full-rate instructions:
// - bf16/fp16: min and max of the thread's values with packed two-wide
//   instructions on the raw 16-bit pairs, then the group's max and -min
//   travel together in one 32-bit word through __shfl_xor_sync (one shuffle
//   per step); the max is NaN-propagating, so a NaN poisons the block without
//   a separate flag (an infinity poisons it through the range).
// - the block's scale, zero and reciprocal come from one multiply and one
//   correctly rounded reciprocal per lane (block_params): every lane of the
//   group computes the same values in the same instructions, which costs the
//   warp no more than one lane would, and 32 elements per lane share it (as
//   they share the index arithmetic and the 64-bit bounds checks).
// - codes: one subtract, one multiply, one min and one add of 1.5 * 2^23,
//   whose rounding is the rounding to an integer (no float-to-int conversion);
//   the codes' low bytes are gathered with byte permutes.
// - stochastic rounding: one fmix32 per four elements (8 bits of dither
//   each), then per element a shift and one three-input logic op build the
//   dither, and two adds round (the second toward -inf, its constant holding
//   the "- 1"); no clamp.
// The arithmetic is the shared scalar code of activation_quant_format.h, so
// the codes equal the CPU reference's bit for bit.
#include "kernels/gpu/activation_quant.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>

#include "kernels/activation_quant_format.h"
#include "kernels/gpu/launch_error.cuh"

namespace stepscope::kernels::gpu {
namespace {

// Elements per thread of the quantize kernel: 8, 16 or 32 (-DSTEPSCOPE_AQ_VEC
// to compare them, bench/kernels/bench_activation_quant_raw.cu). More
// elements per thread share one block-parameter computation and one index
// computation among more elements, and put more bytes in flight per thread;
// a block of 64 (128) elements is then a group of 64 / VEC (128 / VEC) lanes.
// Measured on the H200 (2026-12-01, 1 GiB bf16, 4-bit block 64, % of copy
// bandwidth): 8 elements 62%, 16 elements 90%, 32 elements 99.5%.
#ifndef STEPSCOPE_AQ_VEC
#define STEPSCOPE_AQ_VEC 32
#endif
constexpr int kQVec = STEPSCOPE_AQ_VEC;
static_assert(kQVec == 8 || kQVec == 16 || kQVec == 32, "STEPSCOPE_AQ_VEC must be 8, 16 or 32");
// Resident blocks per SM the register budget must allow: 8 (32 registers,
// 2048 threads) at 8 elements per thread, 6 (40 registers) at 16, 4 (64
// registers, 1024 threads with 64 bytes of input each in flight) at 32.
#ifndef STEPSCOPE_AQ_MIN_BLOCKS
#define STEPSCOPE_AQ_MIN_BLOCKS (kQVec == 32 ? 4 : kQVec == 16 ? 6 : 8)
#endif
constexpr int kQMinBlocks = STEPSCOPE_AQ_MIN_BLOCKS;
constexpr int kVec = 8;  // elements per thread of the dequantize kernel
constexpr int kThreads = 256;

template <class T>
__device__ __forceinline__ T bit_cast_u32(uint32_t u) {
  T t;
  memcpy(&t, &u, sizeof t);
  return t;
}
template <class T>
__device__ __forceinline__ uint32_t u32_of(const T& t) {
  uint32_t u;
  memcpy(&u, &t, sizeof u);
  return u;
}

// max with NaN propagation (PTX max.NaN, sm_80+): a NaN anywhere in a block
// reaches its max and poisons the block.
__device__ __forceinline__ float fmax_nan(float a, float b) {
#if __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (a != a || b != b) ? __int_as_float(0x7FC00000) : fmaxf(a, b);
#endif
}

// Storage type of each dtype; for the 16-bit types also the two-wide
// operations on a 32-bit word holding elements 2k (low half) and 2k+1.
template <ActDType D>
struct Io;
template <>
struct Io<ActDType::kBFloat16> {
  using Storage = uint16_t;
  static constexpr bool kPaired = true;
  static constexpr uint32_t kNegInf2 = 0xFF80FF80u;
  static __device__ float lo(uint32_t w) { return __uint_as_float(w << 16); }
  static __device__ float hi(uint32_t w) { return __uint_as_float(w & 0xFFFF0000u); }
  static __device__ uint32_t max2(uint32_t a, uint32_t b) {
    return u32_of(__hmax2_nan(bit_cast_u32<__nv_bfloat162>(a), bit_cast_u32<__nv_bfloat162>(b)));
  }
  static __device__ uint32_t min2(uint32_t a, uint32_t b) {
    return u32_of(__hmin2(bit_cast_u32<__nv_bfloat162>(a), bit_cast_u32<__nv_bfloat162>(b)));
  }
  static __device__ uint32_t pack2(float a, float b) { return u32_of(__floats2bfloat162_rn(a, b)); }
  static __device__ uint16_t store(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};
template <>
struct Io<ActDType::kFloat16> {
  using Storage = uint16_t;
  static constexpr bool kPaired = true;
  static constexpr uint32_t kNegInf2 = 0xFC00FC00u;
  static __device__ float lo(uint32_t w) { return __half2float(__ushort_as_half(static_cast<uint16_t>(w))); }
  static __device__ float hi(uint32_t w) { return __half2float(__ushort_as_half(static_cast<uint16_t>(w >> 16))); }
  static __device__ uint32_t max2(uint32_t a, uint32_t b) {
    return u32_of(__hmax2_nan(bit_cast_u32<__half2>(a), bit_cast_u32<__half2>(b)));
  }
  static __device__ uint32_t min2(uint32_t a, uint32_t b) {
    return u32_of(__hmin2(bit_cast_u32<__half2>(a), bit_cast_u32<__half2>(b)));
  }
  static __device__ uint32_t pack2(float a, float b) { return u32_of(__floats2half2_rn(a, b)); }
  static __device__ uint16_t store(float f) { return __half_as_ushort(__float2half_rn(f)); }
};
template <>
struct Io<ActDType::kFloat32> {
  using Storage = float;
  static constexpr bool kPaired = false;
  static __device__ float store(float f) { return f; }
};

// One thread's V input values: raw pairs (16-bit types) or floats.
template <ActDType D, int V, bool P = Io<D>::kPaired>
struct Chunk;
template <ActDType D, int V>
struct Chunk<D, V, true> {
  uint32_t w[V / 2];
  __device__ float value(int k) const { return (k & 1) ? Io<D>::hi(w[k / 2]) : Io<D>::lo(w[k / 2]); }
};
template <ActDType D, int V>
struct Chunk<D, V, false> {
  float f[V];
  __device__ float value(int k) const { return f[k]; }
};

// Loads n (1..V) values; past n the first value is repeated, which leaves the
// min and max unchanged (those lanes' codes are never stored). `full`: all V,
// from a 16-byte aligned address.
template <ActDType D, int V>
__device__ __forceinline__ void load_chunk(const typename Io<D>::Storage* __restrict__ x, int n, bool full,
                                           Chunk<D, V>& c) {
  if constexpr (Io<D>::kPaired) {
    if (full) {
#pragma unroll
      for (int j = 0; j < V / 8; ++j) {
        const uint4 r = reinterpret_cast<const uint4*>(x)[j];
        c.w[4 * j] = r.x, c.w[4 * j + 1] = r.y, c.w[4 * j + 2] = r.z, c.w[4 * j + 3] = r.w;
      }
    } else {
#pragma unroll
      for (int k = 0; k < V; k += 2)
        c.w[k / 2] = static_cast<uint32_t>(x[k < n ? k : 0]) | (static_cast<uint32_t>(x[k + 1 < n ? k + 1 : 0]) << 16);
    }
  } else {
    if (full) {
#pragma unroll
      for (int j = 0; j < V / 4; ++j) {
        const float4 a = reinterpret_cast<const float4*>(x)[j];
        c.f[4 * j] = a.x, c.f[4 * j + 1] = a.y, c.f[4 * j + 2] = a.z, c.f[4 * j + 3] = a.w;
      }
    } else {
#pragma unroll
      for (int k = 0; k < V; ++k) c.f[k] = x[k < n ? k : 0];
    }
  }
}

// The block's max and min over the group of kGroup lanes (every lane of the
// warp takes part; lanes with no elements pass the identities).
template <ActDType D, int V, int kGroup>
__device__ __forceinline__ void group_min_max(const Chunk<D, V>& c, bool any, float& mn, float& mx) {
  if constexpr (Io<D>::kPaired) {
    using I = Io<D>;
    uint32_t m2 = c.w[0], n2 = c.w[0];
#pragma unroll
    for (int j = 1; j < V / 2; ++j) m2 = I::max2(m2, c.w[j]), n2 = I::min2(n2, c.w[j]);
    n2 ^= 0x80008000u;  // -min
    // low half: max, high half: -min; both reduce with one max.
    uint32_t p = any ? I::max2(__byte_perm(m2, n2, 0x5410), __byte_perm(m2, n2, 0x7632)) : I::kNegInf2;
#pragma unroll
    for (int off = kGroup / 2; off > 0; off >>= 1) p = I::max2(p, __shfl_xor_sync(0xFFFFFFFFu, p, off));
    mx = I::lo(p);
    mn = -I::hi(p);
  } else {
    mn = INFINITY, mx = -INFINITY;
    if (any) {
#pragma unroll
      for (int k = 0; k < V; ++k) mn = fminf(mn, c.f[k]), mx = fmax_nan(mx, c.f[k]);
    }
#pragma unroll
    for (int off = kGroup / 2; off > 0; off >>= 1) {
      mn = fminf(mn, __shfl_xor_sync(0xFFFFFFFFu, mn, off));
      mx = fmax_nan(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, off));
    }
  }
}

// Low bytes of four biased codes -> one word, a[0] in the lowest byte.
__device__ __forceinline__ uint32_t gather_low_bytes(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return __byte_perm(__byte_perm(a, b, 0x0040), __byte_perm(c, d, 0x0040), 0x5410);
}

// `vec_ok`: x is 16-byte aligned and codes aligned to one thread's code
// bytes (up to 16), so full chunks use vector accesses (a chunk starts at a
// multiple of V elements).
template <ActDType D, int BITS, int BLOCK, bool STOCH>
__global__ void __launch_bounds__(kThreads, kQMinBlocks)
    quantize_kernel(const typename Io<D>::Storage* __restrict__ x, int64_t numel, uint64_t key,
                    uint8_t* __restrict__ codes, uint16_t* __restrict__ scale, uint16_t* __restrict__ zero,
                    bool vec_ok) {
  constexpr int V = kQVec;
  constexpr int kGroup = BLOCK / V;
  constexpr uint32_t kQmax = (1u << BITS) - 1;
  constexpr int kWords = V * BITS / 32;  // code words per thread
  const int64_t base = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) * V;
  const int64_t left = numel - base;
  const int n = left >= V ? V : (left > 0 ? static_cast<int>(left) : 0);
  const bool full = n == V && vec_ok;

  Chunk<D, V> c;
  if (n > 0) load_chunk<D, V>(x + base, n, full, c);
  float mn, mx;
  group_min_max<D, V, kGroup>(c, n > 0, mn, mx);
  if (n == 0) return;

  aq::BlockParams p{};
  const bool ok = aq::block_params(mn, mx, aq::inv_qmax(BITS), &p);
  if (base % BLOCK == 0) {  // the group's first lane
    const int64_t blk = base / BLOCK;
    scale[blk] = ok ? p.scale_bits : aq::kPoisonBf16;
    zero[blk] = ok ? p.zero_bits : aq::kPoisonBf16;
  }
  // Biased codes (code + kRoundBias): the low byte is the code.
  uint32_t r[V];
  if constexpr (STOCH) {
    // One hash per quad of elements, 8 bits each. quad0 is a multiple of
    // V / 4: the thread's quads share their high word.
    const uint64_t quad0 = static_cast<uint64_t>(base) >> 2;
    const uint32_t high = aq::quad_hash_high(key, quad0);
    const uint32_t low0 = static_cast<uint32_t>(quad0) * 0x9E3779B9u + static_cast<uint32_t>(key);
#pragma unroll
    for (int j = 0; j < V / 4; ++j) {
      const uint32_t h = aq::fmix32((low0 + static_cast<uint32_t>(j) * 0x9E3779B9u) ^ high);
#pragma unroll
      for (int k = 0; k < 4; ++k)
        r[4 * j + k] = aq::stochastic_biased(aq::grid_position(c.value(4 * j + k), p, kQmax), aq::dither_bits(h, k));
    }
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) r[k] = aq::nearest_biased(aq::grid_position(c.value(k), p, kQmax));
  }
  uint32_t w[kWords];
  if constexpr (BITS == 8) {
#pragma unroll
    for (int j = 0; j < kWords; ++j) w[j] = gather_low_bytes(r[4 * j], r[4 * j + 1], r[4 * j + 2], r[4 * j + 3]);
  } else {
    // Low byte of r[2i] + 16 r[2i+1] = code(2i) | code(2i+1) << 4 (the bias
    // has zero low bytes, the shift drops its top bits).
#pragma unroll
    for (int j = 0; j < kWords; ++j)
      w[j] = gather_low_bytes(r[8 * j] + (r[8 * j + 1] << 4), r[8 * j + 2] + (r[8 * j + 3] << 4),
                              r[8 * j + 4] + (r[8 * j + 5] << 4), r[8 * j + 6] + (r[8 * j + 7] << 4));
  }
  if (!ok) {
#pragma unroll
    for (int j = 0; j < kWords; ++j) w[j] = 0;
  }
  uint8_t* out = codes + base * BITS / 8;
  if (full) {
    if constexpr (kWords == 1) {
      *reinterpret_cast<uint32_t*>(out) = w[0];
    } else if constexpr (kWords == 2) {
      *reinterpret_cast<uint2*>(out) = make_uint2(w[0], w[1]);
    } else {
#pragma unroll
      for (int j = 0; j < kWords / 4; ++j)
        reinterpret_cast<uint4*>(out)[j] = make_uint4(w[4 * j], w[4 * j + 1], w[4 * j + 2], w[4 * j + 3]);
    }
  } else {
    constexpr int kPerByte = 8 / BITS;
#pragma unroll
    for (int k = 0; k < V; k += kPerByte) {
      uint32_t byte = (w[k * BITS / 32] >> ((k * BITS) % 32)) & 0xFFu;
      if (BITS == 4 && k + 1 >= n) byte &= 0x0Fu;  // no element n: its nibble stays 0
      if (k < n) out[k * BITS / 8] = static_cast<uint8_t>(byte);
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
  const bool full = n == kVec && vec_ok;
  const int64_t blk = base / BLOCK;
  const float s = aq::bf16_bits_value(scale[blk]);
  const float z = aq::bf16_bits_value(zero[blk]);

  uint32_t c[kVec];
  if constexpr (BITS == 8) {
    if (full) {
      const uint2 w = *reinterpret_cast<const uint2*>(codes + base);
#pragma unroll
      for (int k = 0; k < 4; ++k) c[k] = (w.x >> (8 * k)) & 0xFFu, c[k + 4] = (w.y >> (8 * k)) & 0xFFu;
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k) c[k] = k < n ? codes[base + k] : 0u;
    }
  } else {
    const uint8_t* in = codes + base / 2;
    if (full) {
      const uint32_t w = *reinterpret_cast<const uint32_t*>(in);
#pragma unroll
      for (int k = 0; k < kVec; ++k) c[k] = (w >> (4 * k)) & 0xFu;
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k) c[k] = k < n ? (in[k / 2] >> (4 * (k & 1))) & 0xFu : 0u;
    }
  }
  float v[kVec];
#pragma unroll
  for (int k = 0; k < kVec; ++k) v[k] = aq::dequant_value(c[k], s, z);
  if (full) {
    if constexpr (Io<D>::kPaired) {
      uint4 r;  // two-wide conversions: one instruction per pair
      r.x = Io<D>::pack2(v[0], v[1]), r.y = Io<D>::pack2(v[2], v[3]);
      r.z = Io<D>::pack2(v[4], v[5]), r.w = Io<D>::pack2(v[6], v[7]);
      *reinterpret_cast<uint4*>(out + base) = r;
    } else {
      reinterpret_cast<float4*>(out + base)[0] = make_float4(v[0], v[1], v[2], v[3]);
      reinterpret_cast<float4*>(out + base)[1] = make_float4(v[4], v[5], v[6], v[7]);
    }
  } else {
#pragma unroll  // constant indices keep v[] in registers
    for (int k = 0; k < kVec; ++k)
      if (k < n) out[base + k] = static_cast<S>(Io<D>::store(v[k]));
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

unsigned grid_for(int64_t numel, int vec) {
  const int64_t chunks = (numel + vec - 1) / vec;
  return static_cast<unsigned>((chunks + kThreads - 1) / kThreads);
}

template <ActDType D, int BITS, int BLOCK>
void launch_quantize_t(const void* x, int64_t numel, bool stochastic, uint64_t key, uint8_t* codes,
                       uint16_t* scale, uint16_t* zero, cudaStream_t stream) {
  using S = typename Io<D>::Storage;
  const bool vec_ok = aligned(x, 16) && aligned(codes, std::min(16, kQVec * BITS / 8));
  const auto* xs = static_cast<const S*>(x);
  if (stochastic)
    quantize_kernel<D, BITS, BLOCK, true>
        <<<grid_for(numel, kQVec), kThreads, 0, stream>>>(xs, numel, key, codes, scale, zero, vec_ok);
  else
    quantize_kernel<D, BITS, BLOCK, false>
        <<<grid_for(numel, kQVec), kThreads, 0, stream>>>(xs, numel, key, codes, scale, zero, vec_ok);
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
      <<<grid_for(numel, kVec), kThreads, 0, stream>>>(codes, scale, zero, numel, static_cast<S*>(out), vec_ok);
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
  return launch_error("CUDA");
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
  return launch_error("CUDA");
}

}  // namespace stepscope::kernels::gpu
