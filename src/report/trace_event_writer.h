// Streams the "traceEvents" array of a Chrome JSON trace into a FileSink: one
// event object per line, commas placed for the caller, text flushed in large
// pieces. Writers append each event's members with the json_text helpers.
#pragma once

#include <cstdint>
#include <string>

#include "report/file_sink.h"
#include "report/json_text.h"

namespace stepscope::report {

class TraceEventWriter {
 public:
  explicit TraceEventWriter(FileSink& sink) : sink_(sink) { text_.reserve(kFlushBytes + 4096); }
  ~TraceEventWriter() { flush(); }

  // Starts an event object; append its members (without braces) to the
  // returned string, then call end_event().
  std::string& begin_event() {
    text_ += events_ == 0 ? "\n{" : ",\n{";
    ++events_;
    return text_;
  }
  void end_event() {
    text_ += '}';
    if (text_.size() >= kFlushBytes) flush();
  }
  // Text outside the array (the head and tail of the file).
  void raw(std::string_view s) {
    text_ += s;
    if (text_.size() >= kFlushBytes) flush();
  }
  void flush() {
    sink_.write(text_);
    text_.clear();
  }
  uint64_t events() const { return events_; }

 private:
  static constexpr size_t kFlushBytes = 1 << 20;
  FileSink& sink_;
  std::string text_;
  uint64_t events_ = 0;
};

}  // namespace stepscope::report
