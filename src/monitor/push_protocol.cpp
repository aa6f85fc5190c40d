#include "monitor/push_protocol.h"

#include <fmt/core.h>

#include <array>
#include <charconv>
#include <cmath>

namespace stepscope::monitor {
namespace {

struct Field {
  std::string_view key;
  std::optional<double> TrainingUpdate::*slot;
  bool integer;
  bool allow_nan;
  double min, max;  // the documented range, inclusive (docs/monitor.md)
  std::string_view unit;
};

// Ranges: wide enough for any real run, narrow enough that every number
// derived from them (tokens/s, MFU, the loss statistics of the alert rules)
// stays finite. float32's largest finite value bounds what a training loop
// can compute for loss, gradient norm and loss scale.
constexpr double kFloat32Max = 3.4028234663852886e38;
constexpr std::array<Field, 6> kFields{{
    {"step", &TrainingUpdate::step, true, false, 0, kMaxPushStep, ""},
    {"loss", &TrainingUpdate::loss, false, true, -kFloat32Max, kFloat32Max, ""},
    {"step_time", &TrainingUpdate::step_time, false, false, kMinPushStepTime, kMaxPushStepTime, " s"},
    {"tokens", &TrainingUpdate::tokens, true, false, 0, kMaxPushTokens, ""},
    {"grad_norm", &TrainingUpdate::grad_norm, false, false, 0, kFloat32Max, ""},
    {"loss_scale", &TrainingUpdate::loss_scale, false, false, 1.1754943508222875e-38, kFloat32Max, ""},
}};

PushParse reject(std::string reason, std::string detail) {
  PushParse p;
  p.reason = std::move(reason);
  p.detail = std::move(detail);
  return p;
}

}  // namespace

PushParse parse_push_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() > kMaxPushLineBytes)
    return reject("too_long", fmt::format("line of {} bytes, the limit is {}", line.size(), kMaxPushLineBytes));
  PushParse out;
  bool any = false;
  size_t pos = 0;
  while (pos < line.size()) {
    if (line[pos] == ' ' || line[pos] == '\t') {
      ++pos;
      continue;
    }
    size_t end = line.find_first_of(" \t", pos);
    if (end == std::string_view::npos) end = line.size();
    std::string_view token = line.substr(pos, end - pos);
    pos = end;
    size_t eq = token.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == token.size())
      return reject("syntax", fmt::format("\"{}\" is not key=value", token.substr(0, 64)));
    std::string_view key = token.substr(0, eq), text = token.substr(eq + 1);
    const Field* field = nullptr;
    for (const Field& f : kFields)
      if (f.key == key) field = &f;
    if (!field)
      return reject("unknown_key", fmt::format("unknown key \"{}\" (step, loss, step_time, tokens, grad_norm, loss_scale)",
                                               key.substr(0, 64)));
    std::optional<double>& slot = out.update.*(field->slot);
    if (slot) return reject("duplicate_key", fmt::format("{}: given twice", key));
    double value = 0;
    if (text == "nan" || text == "NaN") {
      if (!field->allow_nan) return reject("out_of_range", fmt::format("{}: NaN is accepted for loss only", key));
      value = std::nan("");
    } else {
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec == std::errc::result_out_of_range && ptr == text.data() + text.size())
        return reject("out_of_range", fmt::format("{}: {} is too large or too small for a double", key, text.substr(0, 64)));
      if (ec != std::errc() || ptr != text.data() + text.size())
        return reject("not_a_number", fmt::format("{}: \"{}\" is not a number", key, text.substr(0, 64)));
      // from_chars also reads "inf" and "nan(...)": only plain numbers pass.
      if (!std::isfinite(value)) return reject("out_of_range", fmt::format("{}: must be finite", key));
      if (field->integer && value != std::floor(value))
        return reject("not_a_number", fmt::format("{}: \"{}\" is not a whole number", key, text.substr(0, 64)));
      if (value < field->min || value > field->max)
        return reject("out_of_range", fmt::format("{}: {} is outside {:g} to {:g}{}", key, text.substr(0, 64),
                                                  field->min, field->max, field->unit));
    }
    slot = value;
    any = true;
  }
  if (!any) return reject("empty", "no key=value field");
  out.ok = true;
  return out;
}

std::string format_push_line(const TrainingUpdate& u) {
  std::string line;
  for (const Field& f : kFields) {
    const std::optional<double>& v = u.*(f.slot);
    if (!v) continue;
    if (!line.empty()) line += ' ';
    if (std::isnan(*v))
      line += fmt::format("{}=nan", f.key);
    else if (f.integer)
      line += fmt::format("{}={}", f.key, static_cast<long long>(*v));
    else
      line += fmt::format("{}={}", f.key, *v);
  }
  return line + "\n";
}

}  // namespace stepscope::monitor
