// The push line protocol (docs/monitor.md): one update per line, fields
// `key=value` separated by spaces, ended by '\n'. Parsing is strict: a line
// is taken whole or rejected whole, with a reason that becomes the label of
// stepscope_monitor_push_rejected_total.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace stepscope::monitor {

constexpr size_t kMaxPushLineBytes = 1024;  // without the '\n'

struct TrainingUpdate {
  std::optional<double> step;        // optimizer step number (integer ≥ 0)
  std::optional<double> loss;        // finite or NaN (written `nan`)
  std::optional<double> step_time;   // seconds, > 0
  std::optional<double> tokens;      // tokens trained in this step, all ranks (integer ≥ 0)
  std::optional<double> grad_norm;   // finite, ≥ 0
  std::optional<double> loss_scale;  // finite, > 0
};

struct PushParse {
  bool ok = false;
  TrainingUpdate update;
  std::string reason;  // empty | too_long | syntax | unknown_key | duplicate_key | not_a_number | out_of_range | empty
  std::string detail;  // human words naming the field
};

// Parses one line (no '\n'; a trailing '\r' is tolerated).
PushParse parse_push_line(std::string_view line);
// The line a client sends for `u` (only the fields it has).
std::string format_push_line(const TrainingUpdate& u);

}  // namespace stepscope::monitor
