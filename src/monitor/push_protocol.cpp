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
  bool allow_zero;
};

constexpr std::array<Field, 6> kFields{{
    {"step", &TrainingUpdate::step, true, false, true},
    {"loss", &TrainingUpdate::loss, false, true, true},
    {"step_time", &TrainingUpdate::step_time, false, false, false},
    {"tokens", &TrainingUpdate::tokens, true, false, true},
    {"grad_norm", &TrainingUpdate::grad_norm, false, false, true},
    {"loss_scale", &TrainingUpdate::loss_scale, false, false, false},
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
      if (ec != std::errc() || ptr != text.data() + text.size())
        return reject("not_a_number", fmt::format("{}: \"{}\" is not a number", key, text.substr(0, 64)));
      // from_chars also reads "inf" and "nan(...)": only plain numbers pass.
      if (!std::isfinite(value)) return reject("out_of_range", fmt::format("{}: must be finite", key));
      if (value < 0 && key != "loss") return reject("out_of_range", fmt::format("{}: must not be negative", key));
      if (value == 0 && !field->allow_zero) return reject("out_of_range", fmt::format("{}: must be positive", key));
      if (field->integer && (value != std::floor(value) || value > 9.007199254740992e15))
        return reject("not_a_number", fmt::format("{}: \"{}\" is not a whole number", key, text.substr(0, 64)));
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
