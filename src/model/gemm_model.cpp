#include "model/gemm_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace stepscope::model {
namespace {

struct Tile {
  double m, n;
};
// Output tiles a cuBLAS/CUTLASS tensor-core kernel chooses among (thread-block
// tiles of the Ampere/Hopper kernels); the library picks the fastest.
constexpr std::array kTiles = {Tile{256, 128}, Tile{128, 256}, Tile{128, 128},
                               Tile{128, 64},  Tile{64, 128},  Tile{64, 64}};

// A tile of tm × tn does 2·tm·tn FLOPs per element of A and B it stages
// through shared memory per k-step: intensity 2·tm·tn/(tm+tn). The SM's
// tensor cores outrun its shared-memory port (A100: 2048 FLOP/clk vs 64
// 16-bit elements/clk = 32 FLOP/element), so a tile's rate is taken as the
// smooth roofline I / (I + 32), relative to the largest tile.
constexpr double kSmemRidge = 32;

double tile_rate(const Tile& t) {
  double intensity = 2 * t.m * t.n / (t.m + t.n);
  return intensity / (intensity + kSmemRidge);
}

}  // namespace

double gemm_shape_efficiency(const GemmShape& g, int sms) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return 1;
  const double best_rate = tile_rate(kTiles[0]);
  double best = 0;
  for (const Tile& t : kTiles) {
    double tiles_m = std::ceil(g.m / t.m), tiles_n = std::ceil(g.n / t.n);
    double tiles = tiles_m * tiles_n * std::max(1.0, g.batch);
    // Tile quantization: edge tiles compute padding.
    double useful = (g.m * g.n) / (tiles_m * t.m * tiles_n * t.n);
    // Wave quantization: the last wave of tiles leaves SMs idle.
    double waves = std::ceil(tiles / std::max(1, sms));
    double wave_eff = tiles / (waves * std::max(1, sms));
    best = std::max(best, tile_rate(t) / best_rate * useful * wave_eff);
  }
  return best;
}

double gemm_fraction(const ClusterSpec& c, Dtype dtype) {
  std::vector<double> ratios;
  for (const auto& s : c.gemm_samples) {
    if (s.dtype != dtype) continue;
    double eff = gemm_shape_efficiency({s.m, s.n, s.k, 1}, c.gpu.sms);
    double flops = 2 * s.m * s.n * s.k;
    double main_loop = flops / (s.tflops * 1e12);
    // Where the epilogue is not hidden, the sample's time includes writing C:
    // the fraction describes the main loop alone, as gemm_seconds uses it.
    if (!c.gpu.gemm_epilogue_overlapped) {
      double elem = gemm_input_bytes(dtype);
      main_loop -= s.m * s.n * elem / c.gpu.hbm_achievable_Bps();
      if (main_loop <= 0) continue;  // a sample faster than its own output write: not a compute measurement
    }
    ratios.push_back(flops / main_loop / 1e12 / (c.gpu.peak_tflops(dtype) * eff));
  }
  if (ratios.empty())
    return is_low_precision(dtype) && c.gpu.fp8_gemm_fraction > 0 ? c.gpu.fp8_gemm_fraction : c.gpu.gemm_fraction;
  std::sort(ratios.begin(), ratios.end());
  size_t n = ratios.size();
  return n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
}

double gemm_seconds(const GemmShape& g, const ClusterSpec& c, Dtype dtype) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return 0;
  double batch = std::max(1.0, g.batch);
  double flops = 2 * g.m * g.n * g.k * batch;
  double elem = gemm_input_bytes(dtype);
  double operand_bytes = (g.m * g.k + g.k * g.n) * elem * batch;
  double output_bytes = g.m * g.n * elem * batch;
  double rate = c.gpu.peak_tflops(dtype) * 1e12 * gemm_fraction(c, dtype) * gemm_shape_efficiency(g, c.gpu.sms);
  double compute = flops / rate;
  const double hbm = c.gpu.hbm_achievable_Bps();
  // A and B stream in while the tensor cores work. Writing C overlaps too
  // when the kernel is persistent (Hopper); on Ampere each thread block
  // writes its tile after its main loop, so the write adds.
  if (c.gpu.gemm_epilogue_overlapped) return std::max(compute, (operand_bytes + output_bytes) / hbm);
  return std::max(compute, operand_bytes / hbm) + output_bytes / hbm;
}

}  // namespace stepscope::model
