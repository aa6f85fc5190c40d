// What `stepscope bench` measures and how thoroughly.
#pragma once

#include <string>
#include <vector>

namespace stepscope::hwbench {

struct BenchOptions {
  bool quick = false;  // node health check: fewer shapes, sizes and repeats (under 60 s)
  int device = 0;      // CUDA ordinal for the single-GPU benchmarks
  int nccl_gpus = 0;   // GPUs in the collectives (0: all visible)
  // Sections to run: gemm, memory, launch, host, nccl (empty: all).
  std::vector<std::string> sections;
  std::vector<std::string> gemm_dtypes = {"bf16", "fp16", "fp8", "tf32", "fp32"};
  std::string command;  // the command line, recorded in the profile

  bool runs(const std::string& section) const;
};

// The known section names, for the CLI's check.
const std::vector<std::string>& bench_sections();

}  // namespace stepscope::hwbench
