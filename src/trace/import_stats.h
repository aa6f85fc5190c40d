// Bad input is counted, not thrown. Each counter is declared once in
// kImportCounters with its severity and meaning; each occurrence can also be
// logged with file and byte offset (the first few per counter are kept).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope::trace {

enum class ImportCounter : uint8_t {
  kRecordNotObject,     // a traceEvents element that is not a JSON object
  kRecordMalformed,     // an event whose JSON is invalid (skipped)
  kBadFieldType,        // a field with the wrong type (e.g. "ts": "abc"); event skipped
  kNumberOutOfRange,    // a number that does not fit (e.g. ts beyond int64 ns); event skipped
  kMissingTimestamp,    // an X/i event without ts
  kNegativeDuration,    // dur < 0; event skipped
  kUnknownPhase,        // a phase stepscope does not use (counters, async, ...); ignored
  kDroppedArgs,         // arguments of keys no analysis uses (not an error)
  kUnparsedId,          // a stream/device argument that is not a number (kept as unknown)
  kTruncatedInput,      // input ended inside traceEvents (salvaged events kept)
  kInvalidUtf8Repaired, // an event with invalid UTF-8 in a string, kept with U+FFFD in its place
  kDamagedRecordSkipped, // --salvage: a stretch of traceEvents that could not be cut into records, skipped to the next one
  kMissingComma,        // --salvage: two traceEvents records without ',' between them (both kept)
  kTimeOutOfRange,      // ts < 0 or > kMaxTimeNs, or dur > kMaxTimeNs (event_limits.h); event skipped
  kNegativeSize,        // a byte count that cannot be negative ("bytes", "Total Allocated", ...); event skipped
  kAmbiguousCorrelation, // runtime calls sharing one correlation id: their GPU activities are left unjoined
  kUnmatchedBeginEnd,   // a Chrome "B" without its "E" on the same thread, or an "E" without a "B"; skipped
  kCount
};

enum class Severity : uint8_t { kInfo, kWarning, kError };

struct CounterInfo {
  std::string_view name;
  Severity severity;
  std::string_view description;
  bool skips_event;  // each occurrence is an event left out of the analyses
};

const CounterInfo& counter_info(ImportCounter c);

class ImportStats;
// One line for a warning about a file's skipped and repaired records ("3
// malformed records skipped (first at byte 120); 1 record repaired ..."),
// or "" when there were none.
std::string import_warning(const ImportStats& stats);

struct ImportLogEntry {
  ImportCounter counter;
  uint64_t byte_offset;  // offset in the uncompressed JSON text
  std::string message;
};

class ImportStats {
 public:
  void add(ImportCounter c, uint64_t byte_offset, std::string message);
  void add_silent(ImportCounter c, uint64_t n = 1) {
    counts_[static_cast<size_t>(c)] += n;
    total_ += n;
  }
  uint64_t count(ImportCounter c) const { return counts_[static_cast<size_t>(c)]; }
  // Every occurrence of every counter.
  uint64_t total() const { return total_; }
  const std::vector<ImportLogEntry>& log() const { return log_; }
  // Events skipped for being bad (the counters that skip an event).
  uint64_t skipped_records() const;
  // Events kept after a repair (invalid UTF-8 replaced).
  uint64_t repaired_records() const { return count(ImportCounter::kInvalidUtf8Repaired); }

  static constexpr size_t kMaxLoggedPerCounter = 5;

 private:
  std::array<uint64_t, static_cast<size_t>(ImportCounter::kCount)> counts_{};
  uint64_t total_ = 0;
  std::vector<ImportLogEntry> log_;
};

}  // namespace stepscope::trace
