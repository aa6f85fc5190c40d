// Writes N rank summaries made from one real summary (issue #32's merge
// benchmark: "16,384 summaries, generated directly"): rank i gets its own
// file name, distributedInfo rank, process id and collective start times
// shifted by a few µs, so the merge numbers, matches and aligns N distinct
// ranks. Usage: gen_summaries TEMPLATE.stepscope-summary N OUT_DIR
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "summary/summary_file.h"

int main(int argc, char** argv) {
  using namespace stepscope::summary;
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s TEMPLATE N OUT_DIR\n", argv[0]);
    return 2;
  }
  const DecodedSummary t = read_summary_file(argv[1]);
  if (!t.ok) {
    std::fprintf(stderr, "%s\n", t.error.c_str());
    return 2;
  }
  const long n = std::strtol(argv[2], nullptr, 10);
  const std::filesystem::path dir = argv[3];
  std::filesystem::create_directories(dir);
  for (long i = 0; i < n; ++i) {
    RankSummary s = t.summary;
    const std::string trace = "/traces/rank_" + std::to_string(i) + ".json";
    s.files = {trace};
    s.analysis.source_path = trace;
    s.declared_rank = i;
    s.file_name_rank = i;
    s.analysis.rank = i;
    if (s.process) s.process->pid = static_cast<int32_t>(1000 + i);
    // A rank's lateness: up to 50 µs, deterministic.
    const int64_t shift = (i * 7919) % 50'000;
    for (auto& c : s.analysis.collectives.calls) {
      c.start_ns += shift;
      c.end_ns += shift;
    }
    std::ofstream out(dir / ("rank_" + std::to_string(i) + kSummaryExtension), std::ios::binary);
    out << encode_summary(s);
    if (!out) {
      std::fprintf(stderr, "cannot write into %s\n", argv[3]);
      return 2;
    }
  }
  return 0;
}
