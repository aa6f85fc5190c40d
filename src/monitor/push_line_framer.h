// Cuts one push connection's byte stream into lines. Where the stream is cut
// into reads never changes what comes out (fuzz/fuzz_push_protocol.cpp checks
// it): every complete line is handed over as it arrives, a line longer than
// kMaxPushLineBytes is reported once as too long and skipped up to its '\n',
// and bytes left at the end are an incomplete line.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace stepscope::monitor {

class PushLineFramer {
 public:
  // `line` is the text without '\n' (a trailing '\r' is left for the parser);
  // `too_long` is set (and `line` empty) for a line over the limit.
  using Sink = std::function<void(std::string_view line, bool too_long)>;
  void feed(std::string_view bytes, const Sink& sink);
  // True when the stream stopped inside a line (not one already skipped).
  bool incomplete() const { return !buffer_.empty() && !discarding_; }
  size_t buffered() const { return buffer_.size(); }

 private:
  std::string buffer_;
  bool discarding_ = false;  // inside an over-long line: drop bytes until its '\n'
};

}  // namespace stepscope::monitor
