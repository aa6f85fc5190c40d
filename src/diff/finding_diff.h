// Findings matched between two runs by (category, detector): resolved (reported
// before, not after), new (reported after, not before) and persisting
// (reported on both sides). "Reported" is Diagnosis::findings, above the
// saving bar; a cause that drops below the bar into Diagnosis::minor counts
// as resolved, and its remaining saving is shown.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "diagnose/finding.h"

namespace stepscope::diff {

enum class FindingChange : uint8_t {
  kResolved,    // reported before, not after
  kNew,         // reported after, not before
  kPersisting,  // reported on both sides
};

std::string_view to_string(FindingChange c);  // "resolved", "new", "persisting"

// One side of a matched finding.
struct FindingSide {
  bool present = false;   // the detector found the cause on this side (reported or minor)
  bool reported = false;  // above the reporting bar (Diagnosis::findings)
  std::string title;
  diagnose::Severity severity = diagnose::Severity::kLow;
  bool saves_time = true;
  double saving_us = 0;   // Finding::estimated_saving_us, µs per step
  double saving_pct = 0;  // Finding::estimated_saving_pct, % of its rank's step
};

struct FindingDelta {
  FindingChange change = FindingChange::kPersisting;
  diagnose::Category category = diagnose::Category::kHostOverhead;
  std::string detector;
  FindingSide before;
  FindingSide after;
  double saving_change_us = 0;  // after.saving_us - before.saving_us (absent side counts 0), µs
};

// Resolved first, then new, then persisting; within each, the larger saving
// (before for resolved, after otherwise) first.
std::vector<FindingDelta> diff_findings(const std::vector<diagnose::Finding>& before_reported,
                                        const std::vector<diagnose::Finding>& before_minor,
                                        const std::vector<diagnose::Finding>& after_reported,
                                        const std::vector<diagnose::Finding>& after_minor);

}  // namespace stepscope::diff
