#include "trace/import_stats.h"

namespace stepscope::trace {

namespace {
constexpr std::array<CounterInfo, static_cast<size_t>(ImportCounter::kCount)> kInfos = {{
    {"record_not_object", Severity::kWarning, "traceEvents element that is not an object", true},
    {"record_malformed", Severity::kWarning, "event with invalid JSON, skipped", true},
    {"bad_field_type", Severity::kWarning, "event field of the wrong type, event skipped", true},
    {"number_out_of_range", Severity::kWarning, "number that does not fit its field, event skipped", true},
    {"missing_timestamp", Severity::kWarning, "event without ts, skipped", true},
    {"negative_duration", Severity::kWarning, "event with dur < 0, skipped", true},
    {"unknown_phase", Severity::kInfo, "event phase not used by stepscope, ignored", false},
    {"dropped_args", Severity::kInfo, "arguments no analysis uses, not stored", false},
    {"unparsed_id", Severity::kInfo, "stream/device argument that is not a number, kept as unknown", false},
    {"truncated_input", Severity::kError, "input ended inside traceEvents", false},
    {"invalid_utf8_repaired", Severity::kWarning, "event with invalid UTF-8 in a string, kept with U+FFFD in its place",
     false},
    {"damaged_record_skipped", Severity::kWarning,
     "stretch of traceEvents that is not whole records (e.g. an unescaped quote), skipped to the next record", true},
    {"missing_comma", Severity::kWarning, "two traceEvents records without ',' between them, both kept", false},
    {"time_out_of_range", Severity::kWarning,
     "event with ts < 0 or beyond 2^61 ns, or dur beyond 2^61 ns (its end would not fit), skipped", true},
    {"negative_size", Severity::kWarning,
     "event with a negative byte count (bytes, Total Allocated, Total Reserved), skipped", true},
    {"ambiguous_correlation", Severity::kWarning,
     "runtime call sharing its correlation id with another one; the GPU activities of that id are not joined to a launch",
     false},
    {"unmatched_begin_end", Severity::kWarning, "Chrome B event without its E on the same thread, or E without B, skipped",
     true},
}};
}  // namespace

const CounterInfo& counter_info(ImportCounter c) { return kInfos[static_cast<size_t>(c)]; }

void ImportStats::add(ImportCounter c, uint64_t byte_offset, std::string message) {
  auto& n = counts_[static_cast<size_t>(c)];
  if (n < kMaxLoggedPerCounter) log_.push_back({c, byte_offset, std::move(message)});
  ++n;
  ++total_;
}

std::string import_warning(const ImportStats& stats) {
  std::string out;
  if (uint64_t skipped = stats.skipped_records()) {
    uint64_t first = 0;
    for (const ImportLogEntry& e : stats.log())
      if (counter_info(e.counter).skips_event) {
        first = e.byte_offset;
        break;
      }
    out = std::to_string(skipped) + " malformed record" + (skipped == 1 ? "" : "s") + " skipped (first at byte " +
          std::to_string(first) + ")";
  }
  if (uint64_t damaged = stats.count(ImportCounter::kDamagedRecordSkipped)) {
    out += " (" + std::to_string(damaged) + " of them a damaged stretch read past to the next whole record)";
  }
  if (uint64_t joined = stats.count(ImportCounter::kMissingComma)) {
    if (!out.empty()) out += "; ";
    out += std::to_string(joined) + " record" + (joined == 1 ? "" : "s") + " without ',' before " +
           (joined == 1 ? "it" : "them") + " read as if it were there";
  }
  // Why records were skipped or left unjoined, for the rules that guard the
  // numbers (each is a value no profiler writes; docs/robustness.md).
  struct Reason {
    ImportCounter counter;
    const char* what;
  };
  static constexpr Reason kReasons[] = {
      {ImportCounter::kTimeOutOfRange, "with ts or dur out of range"},
      {ImportCounter::kNegativeSize, "with a negative byte count"},
      {ImportCounter::kUnmatchedBeginEnd, "B/E events without their pair"},
      {ImportCounter::kAmbiguousCorrelation, "runtime calls sharing a correlation id (their GPU activities not joined)"},
  };
  for (const Reason& r : kReasons)
    if (uint64_t n = stats.count(r.counter)) {
      if (!out.empty()) out += "; ";
      out += std::to_string(n) + " " + r.what;
    }
  if (uint64_t repaired = stats.repaired_records()) {
    if (!out.empty()) out += "; ";
    out += std::to_string(repaired) + " record" + (repaired == 1 ? "" : "s") +
           " with invalid UTF-8 kept, the bad bytes replaced by U+FFFD";
  }
  return out;
}

uint64_t ImportStats::skipped_records() const {
  uint64_t total = 0;
  for (size_t i = 0; i < counts_.size(); ++i)
    if (counter_info(static_cast<ImportCounter>(i)).skips_event) total += counts_[i];
  return total;
}

}  // namespace stepscope::trace
