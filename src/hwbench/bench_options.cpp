#include "hwbench/bench_options.h"

#include <algorithm>

namespace stepscope::hwbench {

bool BenchOptions::runs(const std::string& section) const {
  return sections.empty() || std::find(sections.begin(), sections.end(), section) != sections.end();
}

const std::vector<std::string>& bench_sections() {
  static const std::vector<std::string> names = {"gemm", "memory", "launch", "host", "nccl"};
  return names;
}

}  // namespace stepscope::hwbench
