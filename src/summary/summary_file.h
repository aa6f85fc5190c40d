// The summary file: a fixed header, then the summary's JSON value
// (summary_json.h) as CBOR (RFC 8949), deflated with zlib. The header says
// what the file is, which version of the format it holds and how long and
// whose checksum its body is, so a truncated, damaged or foreign file is a
// one-line error instead of a wrong merge. Layout in docs/distributed.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "summary/rank_summary.h"

namespace stepscope::summary {

inline constexpr char kSummaryMagic[8] = {'S', 'T', 'P', 'S', 'C', 'S', 'U', 'M'};
// The body's schema: bumped whenever a field is added, removed or changes meaning.
inline constexpr uint32_t kSummaryFormatVersion = 3;
// The name a summary file ends with (merge takes a folder's files by it).
inline constexpr const char* kSummaryExtension = ".stepscope-summary";
inline constexpr size_t kSummaryHeaderBytes = 36;  // magic 8, version 4, flags 4, body 8, deflated 8, crc 4

std::string encode_summary(const RankSummary& s);
// A summary file around a body already encoded as CBOR (what encode_summary
// does after encoding; tests and the fuzz target wrap hand-made bodies).
std::string wrap_summary_body(const std::vector<uint8_t>& cbor);

struct DecodedSummary {
  bool ok = false;
  std::string error;  // one line without the file name ("summary format version 2; this stepscope reads 1")
  RankSummary summary;
};

// Never throws for bad bytes.
DecodedSummary decode_summary(std::string_view bytes);

// The error names the file: "<path>: <what>".
DecodedSummary read_summary_file(const std::string& path);

}  // namespace stepscope::summary
