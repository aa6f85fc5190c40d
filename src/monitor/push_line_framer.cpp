#include "monitor/push_line_framer.h"

#include "monitor/push_protocol.h"

namespace stepscope::monitor {
namespace {

// A line's length as the protocol counts it: without a trailing '\r'.
size_t content_length(std::string_view line) {
  return !line.empty() && line.back() == '\r' ? line.size() - 1 : line.size();
}

}  // namespace

void PushLineFramer::feed(std::string_view bytes, const Sink& sink) {
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    const std::string_view part = bytes.substr(0, nl == std::string_view::npos ? bytes.size() : nl);
    if (!discarding_) buffer_.append(part);
    if (nl == std::string_view::npos) {
      // No end yet: a line already over the limit (a '\r' may still end it
      // at limit + 1) is reported now and its rest skipped, so memory stays
      // bounded whatever the client sends.
      if (!discarding_ && buffer_.size() > kMaxPushLineBytes + 1) {
        sink({}, true);
        buffer_.clear();
        discarding_ = true;
      }
      return;
    }
    if (discarding_) {
      discarding_ = false;  // the end of a line already reported
    } else if (content_length(buffer_) > kMaxPushLineBytes) {
      sink({}, true);
    } else {
      sink(buffer_, false);
    }
    buffer_.clear();
    bytes.remove_prefix(nl + 1);
  }
}

}  // namespace stepscope::monitor
