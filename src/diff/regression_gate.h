// `stepscope diff --fail-if CONDITION`: a CI gate on two runs. Each
// condition names a figure of the diff, a comparison and a threshold; the
// gate fails when any condition holds, and says which in one line.
//
//   step_time>+5%            the mean step grew by more than 5% of before
//   step_time>+2ms           ... by more than 2 ms
//   host_overhead>+1ms       a bucket's mean time per step grew by more than 1 ms
//   host_overhead>+3pp       ... or its share of the step by more than 3 percentage points
//   host_overhead>+10%       ... or its time per step by more than 10% of before
//   effective_compute<-5pp   the effective-compute share fell by more than 5 points
//   busy<-5pp, compute<-5pp  the same for the GPU busy and computation shares
//   new_finding>=medium      a finding reported after and not before, of at least that severity
//
// Units: % (of the before value), ms (per step; times only), pp (percentage
// points; shares and buckets). Bucket names are the attribution's
// (docs/metrics.md, "Step-time attribution"). docs/ci_gate.md has examples.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/finding.h"
#include "diff/run_diff.h"

namespace stepscope::diff {

struct GateCondition {
  std::string text;    // as written
  std::string figure;  // "step_time", a bucket name, "effective_compute", "busy", "compute", "new_finding"
  enum class Unit { kPercent, kMs, kPoints } unit = Unit::kPercent;
  bool greater = true;   // '>' (or '>=' for new_finding); false: '<'
  double threshold = 0;  // signed, in `unit`
  diagnose::Severity severity = diagnose::Severity::kLow;  // new_finding only
};

// The condition, or nullopt with `error` saying what is wrong with it.
std::optional<GateCondition> parse_gate_condition(std::string_view text, std::string& error);

struct GateVerdict {
  bool failed = false;
  std::vector<std::string> crossed;  // one phrase per condition that holds, in the given order
  std::string line;                  // "FAIL: ...; ..." or "pass: N conditions hold none"
};

GateVerdict evaluate_gate(const DiffResult& diff, const std::vector<GateCondition>& conditions);

}  // namespace stepscope::diff
