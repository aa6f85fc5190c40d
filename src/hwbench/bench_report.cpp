#include "hwbench/bench_report.h"

#include <fmt/core.h>

#include "hwbench/golden_reference.h"

namespace stepscope::hwbench {

// The hardware profile and its parts (src/model/hardware_profile.h).
using namespace model;

std::string render_bench_report(const HardwareProfile& p) {
  std::string s;
  auto line = [&](const std::string& t) { s += t + "\n"; };
  const DeviceInfo& d = p.device;
  line(fmt::format("stepscope bench{} on {} (GPU {} of {}, {} SMs, compute {}.{}), {}, {:.0f} s", p.quick ? " --quick" : "",
                   d.name, d.index, d.visible_gpus, d.sms, d.compute_major, d.compute_minor, p.date, p.wall_seconds));
  if (!p.gemm.empty()) {
    line("\nGEMM (cuBLASLt, TN, L2 flushed, median)");
    line(fmt::format("  {:<5} {:>6} {:>6} {:>6} {:>10} {:>9} {:>6}", "dtype", "m", "n", "k", "time ms", "TFLOP/s", "eff"));
    for (const GemmResult& g : p.gemm) {
      double best = p.gemm_max_tflops(g.dtype);
      line(fmt::format("  {:<5} {:>6} {:>6} {:>6} {:>10.3f} {:>9.1f} {:>5.0f}%", g.dtype, g.m, g.n, g.k, g.seconds * 1e3,
                       g.tflops, best > 0 ? 100 * g.tflops / best : 0));
    }
  }
  auto bandwidths = [&](const char* title, const std::vector<BandwidthResult>& v) {
    if (v.empty()) return;
    line(fmt::format("\n{}", title));
    line(fmt::format("  {:<24} {:>10} {:>10} {:>10}", "name", "MiB", "time ms", "GB/s"));
    for (const BandwidthResult& b : v)
      line(fmt::format("  {:<24} {:>10.0f} {:>10.3f} {:>10.1f}", b.name, b.bytes / (1 << 20), b.seconds * 1e3, b.gbps));
  };
  bandwidths("Device memory (bytes read + written, median)", p.memory);
  bandwidths("Host <-> device copies (median)", p.host_copy);
  if (!p.launch.empty()) {
    line("\nEmpty-kernel launch latency");
    for (const LatencyResult& l : p.launch) line(fmt::format("  {:<16} {:>8.2f} µs", l.name, l.us));
  }
  if (!p.collectives.empty()) {
    line(fmt::format("\nNCCL ({} rank(s); algbw = size/time, busbw = algbw × bus factor, nccl-tests)",
                     p.collectives.front().world));
    line(fmt::format("  {:<15} {:>12} {:>12} {:>12} {:>10}   α-β fits (α µs, β GB/s)", "collective", "largest B",
                     "algbw GB/s", "busbw GB/s", "8 B µs"));
    for (const CollectiveResult& c : p.collectives) {
      if (c.points.empty()) continue;
      const CollectivePoint& big = c.points.back();
      std::string fits;
      for (const AlphaBetaFit& f : c.fits) fits += fmt::format("  {}: {:.1f}, {:.0f}", f.range, f.alpha_us, f.beta_gbps);
      line(fmt::format("  {:<15} {:>12} {:>12.1f} {:>12.1f} {:>10.1f} {}", c.name, big.bytes, big.algbw_gbps,
                       big.busbw_gbps, c.points.front().seconds * 1e6, fits));
    }
  }
  std::vector<Verdict> verdicts = golden_comparison(p);
  if (!verdicts.empty()) {
    line("\nGolden comparison");
    for (const Verdict& v : verdicts) line("  " + v.message);
  }
  if (!p.notes.empty()) {
    line("\nNot measured / caveats");
    for (const std::string& n : p.notes) line("  - " + n);
  }
  return s;
}

}  // namespace stepscope::hwbench
