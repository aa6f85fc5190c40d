#pragma once

namespace CLI {
class App;
}

namespace stepscope::cli {

void register_analyze(CLI::App& app);
void register_diff(CLI::App& app);
// Adds `summarize` (one rank to a summary file) and `merge` (summaries to a report).
void register_summarize(CLI::App& app);
void register_merge(CLI::App& app);
// Adds `memory` (PyTorch memory snapshots).
void register_memory(CLI::App& app);
void register_bench(CLI::App& app);
// Adds `plan` (and `plan validate`); returns it so other plan subcommands can attach.
CLI::App* register_plan(CLI::App& app);
// Adds `plan search` and `plan recompute` under `plan`.
void register_plan_search(CLI::App* plan);
// Adds `plan pareto` and `plan sharding` under `plan`.
void register_plan_advice(CLI::App* plan);
// Adds `monitor` (exporter) with `monitor push` and `monitor rules`.
void register_monitor(CLI::App& app);
// The exit status chosen by the subcommand that ran.
int exit_code();
void set_exit_code(int code);

}  // namespace stepscope::cli
