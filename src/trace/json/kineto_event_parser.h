// Second half of the Kineto JSON reader: turns one raw record (an element of
// traceEvents, or a top-level member) into store rows through StoreBuilder.
// Records with invalid JSON, wrong field types or out-of-range numbers are
// skipped and counted with their byte offset; the rest of the file goes on.
#pragma once

#include <memory>
#include <string_view>

#include "trace/json/json_tokenizer.h"
#include "trace/store_builder.h"

namespace stepscope::trace {

class KinetoEventParser {
 public:
  explicit KinetoEventParser(StoreBuilder& builder);
  ~KinetoEventParser();

  // `raw` must have kRecordPadding readable bytes after it.
  void parse_event(std::string_view raw, uint64_t offset);
  void parse_member(std::string_view key, std::string_view raw, uint64_t offset);
  // After the last record: counts Chrome "B" events that never got their "E".
  void finish();
  // The tokenizer callbacks that hand every record to this parser (valid
  // while the parser lives).
  TokenizerCallbacks callbacks();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Argument keys kept in the store (all others are counted and dropped).
const std::vector<std::string_view>& kept_arg_keys();

}  // namespace stepscope::trace
