// Reads one Kineto trace file (plain or gzip JSON) into an EventStore.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace/byte_source.h"
#include "trace/event_store.h"
#include "trace/json/json_tokenizer.h"

namespace stepscope::trace {

// glibc gives a block this large its own mapping when the stepscope binary
// fixes its mmap threshold here (each trace file on a thread of its own,
// src/cli/allocator_policy.cpp). The reader reserves columns only from this
// size on, where a fresh mapping's untouched tail costs no memory.
constexpr size_t kOwnMappingBytes = 256 * 1024;

struct ReadOptions {
  GzipBackend gzip = GzipBackend::kIsal;
  bool salvage = false;  // keep what was read before a fatal error; read on past a damaged record
  // Inflate and tokenize on a second thread while this one parses (the same
  // store results). load_traces turns it on when there are cores to spare.
  bool pipeline = false;
};

struct ReadOutcome {
  bool ok = false;             // the store is usable (complete, or salvaged)
  bool salvaged = false;       // a fatal error was turned into a warning
  bool not_a_trace = false;    // valid JSON without traceEvents (skipped in folders)
  std::string error;           // one line: "<file>: <what> at byte N"
  int64_t error_byte = -1;     // that N, where the JSON text is known (-1: a read error of a compressed file)
  uint64_t uncompressed_bytes = 0;
  uint64_t file_bytes = 0;
};

ReadOutcome read_trace_file(const std::string& path, EventStore& store, const ReadOptions& options);

// Reads trace JSON that is already in memory through the same tokenizer and
// parser, direct or pipelined, `options.chunk_bytes` per read (the reader's
// tests and fuzz target vary both), and finishes the store whatever the result.
TokenizeResult read_trace_bytes(std::string_view bytes, EventStore& store, const TokenizerOptions& options,
                                bool pipelined = false);

}  // namespace stepscope::trace
