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
// Ranges of the fields (the others: float32's finite range; docs/monitor.md).
constexpr double kMaxPushStep = 9007199254740992.0;  // 2^53: every whole number below is exact
constexpr double kMaxPushTokens = 1e12;              // per step, all ranks
constexpr double kMinPushStepTime = 1e-6;            // seconds
constexpr double kMaxPushStepTime = 1e6;             // seconds (11.6 days)

struct TrainingUpdate {
  std::optional<double> step;        // optimizer step number (integer 0 to 2^53)
  std::optional<double> loss;        // |loss| ≤ float32 max, or NaN (written `nan`)
  std::optional<double> step_time;   // seconds, 1e-6 to 1e6
  std::optional<double> tokens;      // tokens trained in this step, all ranks (integer 0 to 1e12)
  std::optional<double> grad_norm;   // 0 to float32 max
  std::optional<double> loss_scale;  // float32's smallest normal to its max
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
