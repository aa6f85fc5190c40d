// stepscope-gen-trace: writes a synthetic multi-rank PyTorch profiler trace
// set (Kineto JSON, one file per rank) for benchmarks and scale tests.
//
//   stepscope-gen-trace --out /tmp/synth --ranks 8 --target-mb 1100
//   stepscope-gen-trace --out /tmp/small --ranks 2 --steps 3 --layers 2 --plain
//
// The same options and seed always write the same bytes. Prints one line per
// rank (file, records, uncompressed MB) and the totals.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "synthetic/rank_writer.h"

using namespace stepscope::synth;

int main(int argc, char** argv) {
  SyntheticSpec spec;
  std::string out_dir;
  double target_mb = 0;
  bool plain = false;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  CLI::App app{"Write a synthetic multi-rank Kineto trace set"};
  app.add_option("--out", out_dir, "output folder (created if missing)")->required();
  app.add_option("--ranks", spec.ranks, "ranks (files); world_size")->check(CLI::Range(1, 4096));
  app.add_option("--steps", spec.steps, "ProfilerStep#N per rank (default 4 unless --target-mb)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--target-mb", target_mb, "total uncompressed JSON over all ranks, in MB (1e6 bytes)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--layers", spec.layers, "transformer layers per step (events per step grow with it)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--hidden", spec.hidden, "model width")->check(CLI::Range(64, 65536));
  app.add_option("--seq", spec.seq, "sequence length")->check(CLI::Range(64, 1 << 20));
  app.add_option("--seed", spec.seed, "random seed");
  app.add_option("--gzip-level", spec.gzip_level, "ISA-L gzip level 1..3")->check(CLI::Range(1, 3));
  app.add_flag("--plain", plain, "write plain .json instead of .json.gz");
  app.add_option("--jobs", jobs, "ranks written in parallel")->check(CLI::Range(1, 1024));
  CLI11_PARSE(app, argc, argv);
  if (plain) spec.gzip_level = 0;
  spec.target_bytes = static_cast<uint64_t>(target_mb * 1e6);
  if (spec.target_bytes == 0 && spec.steps == 0) spec.steps = 4;

  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) {
    fmt::print(stderr, "stepscope-gen-trace: {}: {}\n", out_dir, ec.message());
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  const int steps = spec.steps > 0 ? spec.steps : steps_for_target(spec);
  std::vector<RankFile> files(static_cast<size_t>(spec.ranks));
  std::atomic<int> next{0};
  auto work = [&] {
    for (int r = next++; r < spec.ranks; r = next++) files[static_cast<size_t>(r)] = write_rank(spec, r, steps, out_dir);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<unsigned>(jobs, static_cast<unsigned>(spec.ranks)); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  uint64_t bytes = 0, events = 0, file_bytes = 0;
  int failed = 0;
  for (const auto& f : files) {
    if (!f.error.empty()) {
      fmt::print(stderr, "stepscope-gen-trace: {}\n", f.error);
      ++failed;
      continue;
    }
    uint64_t fb = std::filesystem::file_size(f.path, ec);
    fmt::print("{}: {} steps, {} events, {} flows, {:.1f} MB JSON, {:.1f} MB on disk\n", f.path, f.tally.steps.size(),
               f.tally.events(), [&] {
                 uint64_t n = 0;
                 for (const auto& [c, k] : f.tally.flow_starts) n += k;
                 for (const auto& [c, k] : f.tally.flow_ends) n += k;
                 return n;
               }(),
               f.tally.bytes / 1e6, fb / 1e6);
    bytes += f.tally.bytes;
    events += f.tally.events();
    file_bytes += fb;
  }
  fmt::print("wrote {} ranks x {} steps: {} events, {:.1f} MB JSON ({:.1f} MB on disk) in {:.1f} s\n", spec.ranks,
             steps, events, bytes / 1e6, file_bytes / 1e6, s);
  return failed ? 1 : 0;
}
