// `stepscope monitor`: the live exporter (GPU metrics through NVML, training
// metrics pushed by the training loop, /metrics for Prometheus, optional
// built-in alerts), plus `monitor push` and `monitor rules`.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <csignal>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/output_file.h"
#include "monitor/alert_rules.h"
#include "monitor/monitor_options.h"
#include "monitor/monitor_service.h"
#include "monitor/push_client.h"

namespace stepscope::cli {
namespace {

struct MonitorArgs {
  monitor::MonitorOptions options;
};

struct PushArgs {
  std::string to = "127.0.0.1:9402";
  std::vector<std::string> fields;
};

// SIGINT/SIGTERM stop the sampling loop (an atomic store: signal-safe).
monitor::MonitorService* g_service = nullptr;

extern "C" void on_signal(int) {
  if (g_service) g_service->stop();
}

void log_line(const std::string& line) { fmt::print(stderr, "stepscope monitor: {}\n", line); }

// Exit codes: 0 stopped by a signal or --duration, 2 bad options, ports or
// --model file. Nothing escapes as an exception.
int run_monitor(MonitorArgs& a) {
  // Every option is checked before a port is bound or NVML loaded.
  if (std::string bad = monitor::check_monitor_options(a.options); !bad.empty()) {
    fmt::print(stderr, "stepscope: error: monitor: {}\n", bad);
    return 2;
  }
  try {
    monitor::MonitorService service(a.options, log_line);
    std::string error;
    if (!service.start(error)) {
      fmt::print(stderr, "stepscope: error: monitor: {}\n", error);
      return 2;
    }
    log_line(fmt::format("serving /metrics on port {}, training pushes on port {}{}", service.metrics_port(),
                         service.push_port(), a.options.alerts ? ", built-in alerts on" : ""));
    g_service = &service;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    service.run();
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    g_service = nullptr;
    return 0;
  } catch (const std::exception& e) {
    g_service = nullptr;
    fmt::print(stderr, "stepscope: error: monitor: {}\n", e.what());
    return 2;
  }
}

// Exit codes: 0 every line accepted, 1 a line rejected (the monitor's error
// line is printed), 2 bad arguments or no answer from the monitor.
int run_push(const PushArgs& a) {
  if (a.fields.empty()) {
    fmt::print(stderr, "stepscope: error: monitor push: give key=value fields (step, loss, step_time, tokens, grad_norm, loss_scale)\n");
    return 2;
  }
  // The fields make one line; an argument holding a line break makes more,
  // and every line sent gets its answer read and checked.
  std::string text;
  for (const auto& f : a.fields) text += (text.empty() ? "" : " ") + f;
  std::vector<std::string> lines;
  for (size_t start = 0;;) {
    const size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  if (lines.size() > 1 && lines.back().empty()) lines.pop_back();  // a final '\n' ends the last line
  monitor::PushClient client;
  std::string error;
  if (!client.connect(a.to, error)) {
    fmt::print(stderr, "stepscope: error: monitor push: --to: {}\n", error);
    return 2;
  }
  const auto replies = client.send_lines_and_wait(lines, 5000);
  int code = 0;
  for (const std::string& r : replies)
    if (r != "ok") {
      fmt::print(stderr, "stepscope: error: monitor push: {}\n", r);
      code = 1;
    }
  if (replies.size() < lines.size()) {
    fmt::print(stderr, "stepscope: error: monitor push: {}: {} of {} line(s) got no reply from the monitor\n", a.to,
               lines.size() - replies.size(), lines.size());
    return 2;
  }
  return code;
}

}  // namespace

void register_monitor(CLI::App& app) {
  auto args = std::make_shared<MonitorArgs>();
  auto push = std::make_shared<PushArgs>();
  auto rules_out = std::make_shared<std::string>("-");
  CLI::App* cmd = app.add_subcommand("monitor", "Export live GPU and training metrics to Prometheus (/metrics)");
  cmd->require_subcommand(0, 1);
  monitor::MonitorOptions& o = args->options;
  cmd->add_option("--listen", o.listen, "HOST:PORT serving /metrics (default 127.0.0.1:9401)");
  cmd->add_option("--push-listen", o.push, "HOST:PORT where training clients push (default 127.0.0.1:9402)");
  cmd->add_option("--interval", o.interval_seconds, "sampling interval, seconds (default 1)");
  cmd->add_option("--job", o.job, "value of the job label (default \"default\")");
  cmd->add_option("--nvml-lib", o.nvml_library, "NVML library to load (default libnvidia-ml.so.1)");
  cmd->add_flag("--alerts", o.alerts, "evaluate the built-in alert rules and log when they fire");
  cmd->add_option("--model", o.mfu_model, "model preset or JSON spec (as `plan`) for live MFU");
  cmd->add_option("--gpu", o.mfu_gpu, "GPU catalog key for the MFU peak (default: the GPU NVML names)");
  cmd->add_option("--dtype", o.mfu_dtype, "bf16 (default), fp16 or fp8: which peak MFU divides by");
  cmd->add_option("--gpus", o.mfu_gpus, "GPUs of the job for MFU (default: the GPUs NVML sees)");
  cmd->add_option("--duration", o.run_seconds, "stop after this many seconds (default: run until signalled)");
  cmd->add_option("--push-idle-timeout", o.push_limits.idle_timeout_seconds,
                  "close a push connection that sends no complete line for this many seconds (default 60)");
  cmd->add_option("--push-max-rate", o.push_limits.lines_per_second,
                  "lines/s one push connection may send; more are rejected (default 200, bursts of 5 s worth)");

  CLI::App* push_cmd = cmd->add_subcommand("push", "Send one training update to a running monitor");
  push_cmd->add_option("--to", push->to, "HOST:PORT of the monitor's push port (default 127.0.0.1:9402)");
  push_cmd->add_option("fields", push->fields, "key=value ... (step, loss, step_time, tokens, grad_norm, loss_scale)");
  push_cmd->callback([push] { set_exit_code(run_push(*push)); });

  CLI::App* rules_cmd = cmd->add_subcommand("rules", "Write the Prometheus alert rule file");
  rules_cmd->add_option("-o,--output", *rules_out, "file to write ('-' for stdout, the default)");
  rules_cmd->callback([rules_out] {
    if (!write_output(*rules_out, monitor::alert_rules_yaml())) {
      fmt::print(stderr, "stepscope: error: {}: cannot write the rule file\n", *rules_out);
      set_exit_code(2);
    }
  });

  cmd->callback([cmd, args] {
    if (cmd->got_subcommand("push") || cmd->got_subcommand("rules")) return;
    set_exit_code(run_monitor(*args));
  });
}

}  // namespace stepscope::cli
