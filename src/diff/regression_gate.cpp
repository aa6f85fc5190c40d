#include "diff/regression_gate.h"

#include <charconv>
#include <cmath>

#include <fmt/core.h>

#include "diagnose/step_attribution.h"

namespace stepscope::diff {

namespace {

using Unit = GateCondition::Unit;

std::optional<diagnose::Bucket> bucket_named(std::string_view name) {
  for (int b = 0; b < diagnose::kBucketCount; ++b)
    if (diagnose::to_string(static_cast<diagnose::Bucket>(b)) == name) return static_cast<diagnose::Bucket>(b);
  return std::nullopt;
}

bool is_share(std::string_view figure) {
  return figure == "effective_compute" || figure == "busy" || figure == "compute";
}

std::optional<diagnose::Severity> severity_named(std::string_view s) {
  if (s == "low") return diagnose::Severity::kLow;
  if (s == "medium") return diagnose::Severity::kMedium;
  if (s == "high") return diagnose::Severity::kHigh;
  return std::nullopt;
}

const char* unit_text(Unit u) { return u == Unit::kPercent ? "%" : u == Unit::kMs ? " ms" : " pp"; }

// The figure's change in the condition's unit.
double change_of_figure(const DiffResult& d, const GateCondition& c, std::string& detail) {
  const Change* ch = nullptr;
  bool time = false;  // µs values (ms conditions)
  if (c.figure == "step_time") {
    ch = &d.step_us;
    time = true;
  } else if (c.figure == "effective_compute") {
    ch = &d.effective_compute_pct;
  } else if (c.figure == "busy") {
    ch = &d.busy_pct;
  } else if (c.figure == "compute") {
    ch = &d.compute_pct;
  } else if (auto b = bucket_named(c.figure)) {
    for (const BucketChange& bc : d.buckets)
      if (bc.bucket == *b) ch = c.unit == Unit::kPoints ? &bc.share_pct : &bc.us_per_step;
    time = c.unit != Unit::kPoints;
  }
  if (!ch) return 0;
  if (time)
    detail = fmt::format("{:.3f} -> {:.3f} ms", ch->before / 1000.0, ch->after / 1000.0);
  else
    detail = fmt::format("{:.1f}% -> {:.1f}%", ch->before, ch->after);
  switch (c.unit) {
    case Unit::kPercent: return ch->change_pct;
    case Unit::kMs: return ch->change / 1000.0;
    case Unit::kPoints: return ch->change;
  }
  return 0;
}

}  // namespace

std::optional<GateCondition> parse_gate_condition(std::string_view text, std::string& error) {
  GateCondition c;
  c.text = std::string(text);
  const size_t op = text.find_first_of("<>");
  if (op == std::string_view::npos || op == 0) {
    error = fmt::format("'{}': expected FIGURE>VALUE or FIGURE<VALUE (e.g. step_time>+5%)", text);
    return std::nullopt;
  }
  c.figure = std::string(text.substr(0, op));
  c.greater = text[op] == '>';
  std::string_view value = text.substr(op + 1);
  const bool or_equal = value.starts_with('=');
  if (or_equal) value.remove_prefix(1);

  if (c.figure == "new_finding") {
    auto sev = severity_named(value);
    if (!c.greater || !or_equal || !sev) {
      error = fmt::format("'{}': new_finding takes >=low, >=medium or >=high", text);
      return std::nullopt;
    }
    c.severity = *sev;
    return c;
  }
  const bool bucket = bucket_named(c.figure).has_value();
  if (c.figure != "step_time" && !bucket && !is_share(c.figure)) {
    error = fmt::format("'{}': unknown figure '{}' (step_time, effective_compute, busy, compute, new_finding, or an "
                        "attribution bucket such as host_overhead)",
                        text, c.figure);
    return std::nullopt;
  }
  if (or_equal) {
    error = fmt::format("'{}': use > or < with a number", text);
    return std::nullopt;
  }
  if (value.ends_with("%")) {
    c.unit = Unit::kPercent;
    value.remove_suffix(1);
  } else if (value.ends_with("ms")) {
    c.unit = Unit::kMs;
    value.remove_suffix(2);
  } else if (value.ends_with("pp")) {
    c.unit = Unit::kPoints;
    value.remove_suffix(2);
  } else {
    error = fmt::format("'{}': the value needs a unit: % (of before), ms or pp (percentage points)", text);
    return std::nullopt;
  }
  if ((c.unit == Unit::kMs && is_share(c.figure)) || (c.unit == Unit::kPoints && c.figure == "step_time")) {
    error = fmt::format("'{}': {} is {}, not {}", text, c.figure, c.figure == "step_time" ? "a time" : "a share",
                        unit_text(c.unit));
    return std::nullopt;
  }
  if (value.starts_with('+')) value.remove_prefix(1);
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), c.threshold);
  if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(c.threshold)) {
    error = fmt::format("'{}': '{}' is not a number", text, value);
    return std::nullopt;
  }
  return c;
}

GateVerdict evaluate_gate(const DiffResult& d, const std::vector<GateCondition>& conditions) {
  GateVerdict v;
  for (const GateCondition& c : conditions) {
    if (c.figure == "new_finding") {
      for (const FindingDelta& f : d.findings)
        if (f.change == FindingChange::kNew && f.after.severity >= c.severity)
          v.crossed.push_back(fmt::format("new finding {} ({}): {}", diagnose::to_string(f.category),
                                          diagnose::to_string(f.after.severity), f.after.title));
      continue;
    }
    std::string detail;
    const double value = change_of_figure(d, c, detail);
    const bool holds = c.greater ? value > c.threshold : value < c.threshold;
    if (holds)
      v.crossed.push_back(fmt::format("{} {:+.1f}{} ({} {:+g}{}; {})", c.figure, value, unit_text(c.unit),
                                      c.greater ? ">" : "<", c.threshold, unit_text(c.unit), detail));
  }
  v.failed = !v.crossed.empty();
  if (v.failed) {
    v.line = "FAIL: ";
    for (size_t i = 0; i < v.crossed.size(); ++i) v.line += (i ? "; " : "") + v.crossed[i];
  } else {
    v.line = fmt::format("pass: none of {} condition{} holds", conditions.size(), conditions.size() == 1 ? "" : "s");
  }
  return v;
}

}  // namespace stepscope::diff
