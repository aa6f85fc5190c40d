#include "trace/import_stats.h"

namespace stepscope::trace {

namespace {
constexpr std::array<CounterInfo, static_cast<size_t>(ImportCounter::kCount)> kInfos = {{
    {"record_not_object", Severity::kWarning, "traceEvents element that is not an object"},
    {"record_malformed", Severity::kWarning, "event with invalid JSON, skipped"},
    {"bad_field_type", Severity::kWarning, "event field of the wrong type, event skipped"},
    {"number_out_of_range", Severity::kWarning, "number that does not fit its field, event skipped"},
    {"missing_timestamp", Severity::kWarning, "event without ts, skipped"},
    {"negative_duration", Severity::kWarning, "event with dur < 0, skipped"},
    {"unknown_phase", Severity::kInfo, "event phase not used by stepscope, ignored"},
    {"dropped_args", Severity::kInfo, "arguments no analysis uses, not stored"},
    {"unparsed_id", Severity::kInfo, "stream/device argument that is not a number, kept as unknown"},
    {"truncated_input", Severity::kError, "input ended inside traceEvents"},
}};
}  // namespace

const CounterInfo& counter_info(ImportCounter c) { return kInfos[static_cast<size_t>(c)]; }

void ImportStats::add(ImportCounter c, uint64_t byte_offset, std::string message) {
  auto& n = counts_[static_cast<size_t>(c)];
  if (n < kMaxLoggedPerCounter) log_.push_back({c, byte_offset, std::move(message)});
  ++n;
}

uint64_t ImportStats::skipped_records() const {
  uint64_t total = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    auto c = static_cast<ImportCounter>(i);
    if (c == ImportCounter::kTruncatedInput) continue;
    if (counter_info(c).severity != Severity::kInfo) total += counts_[i];
  }
  return total;
}

}  // namespace stepscope::trace
