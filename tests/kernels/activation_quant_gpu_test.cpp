// CUDA activation quantize/dequantize kernels against the CPU reference on
// fresh random inputs: codes, scales and zero points must be equal bit for
// bit (both sides run the same IEEE-rounded scalar code of
// activation_quant_format.h: one subtraction, one multiply by the rounded
// reciprocal, round-half-even through the add of 1.5 * 2^23 or the
// counter-hash stochastic rounding), and
// dequantized values equal the reference's fp32 fma rounded to the dtype.
// Outputs are poisoned first, so an element the kernel never writes fails.
// Skips without a GPU (CI) or without the CUDA build.
#include <gtest/gtest.h>

#ifdef STEPSCOPE_HAVE_KERNELS_GPU
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu_skip.h"
#include "kernels/device_buffer.h"
#include "kernels/activation_quant_reference.h"
#include "kernels/bf16.h"
#include "kernels/gpu/activation_quant.h"
#endif

namespace stepscope::kernels {
namespace {

#ifdef STEPSCOPE_HAVE_KERNELS_GPU
using gpu::ActDType;

using testing::DeviceBuffer;

size_t elem_bytes(ActDType d) { return d == ActDType::kFloat32 ? 4 : 2; }
const char* dtype_name(ActDType d) {
  return d == ActDType::kFloat32 ? "fp32" : d == ActDType::kFloat16 ? "fp16" : "bf16";
}

// Values in the dtype's storage (raw bytes) and their exact float values.
struct HostInput {
  std::vector<unsigned char> raw;
  std::vector<float> values;
};

HostInput make_input(std::mt19937& rng, ActDType d, size_t n, bool with_non_finite) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> log_spread(-3.0f, 2.0f);
  HostInput in;
  in.raw.resize(n * elem_bytes(d));
  in.values.resize(n);
  float spread = 1, offset = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i % 37 == 0) {  // spreads change inside blocks too
      spread = std::pow(10.0f, log_spread(rng));
      offset = normal(rng) * spread;
    }
    float v = offset + spread * normal(rng);
    if (with_non_finite && rng() % 5000 == 0)
      v = (rng() & 1) ? std::numeric_limits<float>::quiet_NaN() : -std::numeric_limits<float>::infinity();
    if (d == ActDType::kBFloat16) {
      const uint16_t b = float_to_bf16_rne(v);
      std::memcpy(&in.raw[2 * i], &b, 2);
      in.values[i] = bf16_to_float(b);
    } else if (d == ActDType::kFloat16) {
      const __half h = __float2half_rn(v);
      const uint16_t b = __half_as_ushort(h);
      std::memcpy(&in.raw[2 * i], &b, 2);
      in.values[i] = __half2float(h);
    } else {
      std::memcpy(&in.raw[4 * i], &v, 4);
      in.values[i] = v;
    }
  }
  return in;
}

// The reference's fp32 value as the GPU stores it in `d` (round to nearest even).
float round_to(ActDType d, float v) {
  if (d == ActDType::kBFloat16) return round_to_bf16(v);
  if (d == ActDType::kFloat16) return __half2float(__float2half_rn(v));
  return v;
}

float stored_value(ActDType d, const std::vector<unsigned char>& raw, size_t i) {
  if (d == ActDType::kFloat32) {
    float f;
    std::memcpy(&f, &raw[4 * i], 4);
    return f;
  }
  uint16_t b;
  std::memcpy(&b, &raw[2 * i], 2);
  return d == ActDType::kBFloat16 ? bf16_to_float(b) : __half2float(__ushort_as_half(b));
}

// Quantizes `in` (skipping `skip` leading elements, which misaligns the
// pointers when nonzero) on the GPU and compares everything with the reference.
void check_against_reference(const HostInput& in, ActDType d, size_t skip, const ActQuantOptions& opt) {
  const size_t n = in.values.size() - skip;
  SCOPED_TRACE(std::string(dtype_name(d)) + " n " + std::to_string(n) + " skip " + std::to_string(skip) + " bits " +
               std::to_string(opt.bits) + " block " + std::to_string(opt.block) + " stochastic " +
               std::to_string(opt.stochastic));
  const std::vector<float> xs(in.values.begin() + static_cast<long>(skip), in.values.end());
  const ActQuantized ref = quantize_reference(xs, opt);

  DeviceBuffer x(in.raw.size());
  x.upload(in.raw.data(), in.raw.size());
  const size_t code_bytes = act_quant_code_bytes(n, opt.bits), nblocks = act_quant_num_blocks(n, opt.block);
  DeviceBuffer codes(code_bytes + skip, 0xA5), scale(2 * nblocks, 0xC1), zero(2 * nblocks, 0xC1);
  const void* xp = x.as<unsigned char>() + skip * elem_bytes(d);
  std::string err = gpu::act_quantize(xp, d, static_cast<int64_t>(n), opt.bits, opt.block, opt.stochastic, opt.seed,
                                      codes.as<uint8_t>() + skip, scale.as<uint16_t>(), zero.as<uint16_t>(), nullptr);
  ASSERT_EQ(err, "");
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<uint8_t> got_codes = codes.download<uint8_t>(code_bytes, skip);
  const std::vector<uint16_t> got_scale = scale.download<uint16_t>(nblocks), got_zero = zero.download<uint16_t>(nblocks);
  int shown = 0;
  for (size_t b = 0; b < nblocks && shown < 5; ++b) {
    if (got_scale[b] != ref.scale[b] || got_zero[b] != ref.zero[b]) {
      ++shown;
      ADD_FAILURE() << "block " << b << ": scale " << std::hex << got_scale[b] << " vs " << ref.scale[b] << ", zero "
                    << got_zero[b] << " vs " << ref.zero[b];
    }
  }
  for (size_t i = 0; i < code_bytes && shown < 10; ++i) {
    if (got_codes[i] != ref.codes[i]) {
      ++shown;
      ADD_FAILURE() << "code byte " << i << ": " << int{got_codes[i]} << " vs reference " << int{ref.codes[i]}
                    << " (x " << xs[std::min(n - 1, 2 * i)] << ")";
    }
  }

  // Dequantize the GPU's own codes, once into a NaN-poisoned buffer (0xFF
  // bytes) and once into a finite-poisoned one (0x55: 1.5e13 in bf16/fp32, 85.3
  // in fp16), so an unwritten element fails whatever the reference expects.
  const std::vector<float> want = dequantize_reference(ref);
  for (int poison : {0xFF, 0x55}) {
    DeviceBuffer out(n * elem_bytes(d) + 16, poison);
    void* op = out.as<unsigned char>() + skip * elem_bytes(d);
    err = gpu::act_dequantize(codes.as<uint8_t>() + skip, scale.as<uint16_t>(), zero.as<uint16_t>(),
                              static_cast<int64_t>(n), opt.bits, opt.block, d, op, nullptr);
    ASSERT_EQ(err, "");
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<unsigned char> got = out.download<unsigned char>(n * elem_bytes(d), skip * elem_bytes(d));
    for (size_t i = 0; i < n && shown < 15; ++i) {
      const float g = stored_value(d, got, i), w = round_to(d, want[i]);
      const bool same = std::isnan(w) ? std::isnan(g) : g == w;
      if (!same) {
        ++shown;
        ADD_FAILURE() << "element " << i << ": dequantized " << g << " vs reference " << w << " (x " << xs[i]
                      << ", poison 0x" << std::hex << poison << ")";
      }
    }
  }
}

TEST(ActivationQuantGpu, MatchesReferenceOnFreshRandomInputs) {
  SKIP_WITHOUT_GPU();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (ActDType d : {ActDType::kBFloat16, ActDType::kFloat16, ActDType::kFloat32}) {
    for (size_t n : {size_t{1}, size_t{7}, size_t{63}, size_t{64}, size_t{65}, size_t{1000}, size_t{4099}, size_t{262147}}) {
      const HostInput in = make_input(rng, d, n + 1, n > 1000);
      for (int bits : {4, 8})
        for (int block : {64, 128})
          for (bool stochastic : {false, true}) {
            const ActQuantOptions opt{bits, block, stochastic, (static_cast<uint64_t>(rng()) << 32) | rng()};
            check_against_reference(in, d, 0, opt);
            if (n >= 64) check_against_reference(in, d, 1, opt);  // unaligned pointers: scalar path
          }
    }
  }
}

TEST(ActivationQuantGpu, LargeInputWithPoisonedBlocks) {
  SKIP_WITHOUT_GPU();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const HostInput in = make_input(rng, ActDType::kBFloat16, (size_t{1} << 22) + 77, true);
  check_against_reference(in, ActDType::kBFloat16, 0, {4, 64, false, 0});
  check_against_reference(in, ActDType::kBFloat16, 0, {4, 64, true, rng()});
}

TEST(ActivationQuantGpu, RejectsBadArguments) {
  SKIP_WITHOUT_GPU();
  DeviceBuffer x(1024), codes(1024), scale(64), zero(64);
  auto q = [&](int64_t n, int bits, int block, const void* xp) {
    return gpu::act_quantize(xp, ActDType::kBFloat16, n, bits, block, false, 0, codes.as<uint8_t>(),
                             scale.as<uint16_t>(), zero.as<uint16_t>(), nullptr);
  };
  EXPECT_EQ(q(100, 3, 64, x.as<void>()), "bits must be 4 or 8, got 3");
  EXPECT_EQ(q(100, 4, 32, x.as<void>()), "block must be 64 or 128, got 32");
  EXPECT_EQ(q(-1, 4, 64, x.as<void>()), "numel must be >= 0, got -1");
  EXPECT_EQ(q(100, 4, 64, nullptr), "null device pointer");
  EXPECT_EQ(q(0, 4, 64, nullptr), "");  // nothing to do
  EXPECT_EQ(gpu::act_quantize(x.as<void>(), static_cast<ActDType>(7), 100, 4, 64, false, 0, codes.as<uint8_t>(),
                              scale.as<uint16_t>(), zero.as<uint16_t>(), nullptr),
            "unsupported dtype code 7");
  EXPECT_EQ(gpu::act_dequantize(codes.as<uint8_t>(), scale.as<uint16_t>(), zero.as<uint16_t>(), 100, 8, 256,
                                ActDType::kFloat32, x.as<void>(), nullptr),
            "block must be 64 or 128, got 256");
}

#else
TEST(ActivationQuantGpu, NotBuilt) { GTEST_SKIP() << "built without CUDA: GPU kernels not compiled"; }
#endif

}  // namespace
}  // namespace stepscope::kernels
