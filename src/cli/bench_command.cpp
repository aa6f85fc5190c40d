// `stepscope bench`: measure this node's ceilings (GEMM, HBM, launch, host
// copies, NCCL), compare them with golden references and write the hardware
// profile that `plan --profile` and `analyze --profile` read.
#include <CLI/CLI.hpp>
#include <fmt/core.h>


#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/messages.h"
#include "cli/option_checks.h"
#include "cli/output_file.h"
#include "hwbench/bench_options.h"
#include "hwbench/bench_report.h"
#include "hwbench/golden_reference.h"
#include "hwbench/profile_json.h"

#ifdef STEPSCOPE_HAVE_CUDA
#include "hwbench/gpu/cuda_check.h"
#include "hwbench/gpu/run_bench.h"
#endif

namespace stepscope::cli {
namespace {

struct BenchArgs {
  hwbench::BenchOptions options;
  std::string out_path;
  bool quiet = false;
};

// Exit codes: 0 measured and healthy (or no reference), 2 bad arguments or
// output, 3 the bench could not run (no CUDA build, no GPU, a failed call or
// a wrong result), 4 measured but a metric is unhealthy.
int run_bench_command(BenchArgs& args) {
#ifndef STEPSCOPE_HAVE_CUDA
  print_error("bench: this stepscope was built without CUDA (no CUDA compiler at configure time, or -DSTEPSCOPE_CUDA=OFF)");
  return 3;
#else
  // The run takes minutes: an output that cannot be written fails now.
  report::AtomicOutput out;
  if (!open_output(args.out_path, out, "the hardware profile")) return 2;
  model::HardwareProfile profile;
  try {
    profile = hwbench::gpu::run_bench(args.options);
  } catch (const hwbench::gpu::BenchError& e) {
    print_error(std::string("bench: ") + e.what());
    return 3;
  }
  if (out.ok() && !finish_output(out, hwbench::profile_to_json(profile).dump(1) + "\n")) return 2;
  if (!args.quiet && args.out_path != "-" && !write_stdout(hwbench::render_bench_report(profile))) return 2;
  for (const hwbench::Verdict& v : hwbench::golden_comparison(profile))
    if (v.health == hwbench::Health::kUnhealthy) return 4;
  return 0;
#endif
}

}  // namespace

void register_bench(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Measure this node's GPU ceilings and write a hardware profile");
  cmd->add_flag("--quick", args->options.quick, "node health check: fewer shapes and sizes (under a minute)");
  cmd->add_option("-o,--out", args->out_path, "write the hardware profile JSON to FILE ('-' for stdout)");
  // CUDA ordinals and NCCL ranks of one node: far below 1024.
  cmd->add_option("--device", args->options.device, "CUDA device for the single-GPU benchmarks (default 0)")
      ->check(whole_number(0, 1023));
  cmd->add_option("--nccl-gpus", args->options.nccl_gpus, "GPUs in the NCCL collectives (default: all visible)")
      ->check(whole_number(0, 1024));
  cmd->add_option("--only", args->options.sections, "run only these sections (repeatable): gemm, memory, launch, host, nccl")
      ->check(CLI::IsMember(hwbench::bench_sections()));
  cmd->add_option("--gemm-dtypes", args->options.gemm_dtypes, "GEMM dtypes (default: bf16 fp16 fp8 tf32 fp32)")
      ->check(CLI::IsMember({"bf16", "fp16", "fp8", "tf32", "fp32"}));
  cmd->add_flag("-q,--quiet", args->quiet, "no terminal report");
  cmd->callback([args] {
    const hwbench::BenchOptions& o = args->options;
    std::string command = "stepscope bench";
    if (o.quick) command += " --quick";
    if (o.device != 0) command += fmt::format(" --device {}", o.device);
    if (o.nccl_gpus != 0) command += fmt::format(" --nccl-gpus {}", o.nccl_gpus);
    for (const std::string& s : o.sections) command += " --only " + s;
    if (!args->out_path.empty()) command += " -o " + args->out_path;
    args->options.command = command;
    set_exit_code(run_bench_command(*args));
  });
}

}  // namespace stepscope::cli
