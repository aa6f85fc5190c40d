#include "trace/json/json_tokenizer.h"

#include <cstring>

namespace stepscope::trace {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

enum class Scan { kDone, kNeedMore, kBad };

// A growable window over the stream: [data+begin, data+end) is unread text.
class Window {
 public:
  Window(ByteSource& src, size_t chunk) : src_(src), chunk_(chunk) {
    buf_.resize(chunk + kRecordPadding, '\0');
  }

  const char* data() const { return buf_.data(); }
  size_t end() const { return end_; }
  bool eof() const { return eof_; }
  const std::string& error() const { return error_; }
  uint64_t offset_of(size_t pos) const { return base_ + pos; }

  // Drops everything before `keep`, then appends more bytes. Returns false when
  // nothing more can be read (eof or error).
  bool refill(size_t& keep, size_t max_record) {
    if (eof_ || !error_.empty()) return false;
    if (keep > 0) {
      std::memmove(buf_.data(), buf_.data() + keep, end_ - keep);
      end_ -= keep;
      base_ += keep;
      keep = 0;
    }
    if (buf_.size() - kRecordPadding - end_ < chunk_ / 2) {
      size_t want = std::max(buf_.size() * 2, end_ + chunk_ + kRecordPadding);
      if (end_ > max_record) {
        error_ = "record larger than " + std::to_string(max_record) + " bytes";
        too_large_ = true;
        return false;
      }
      buf_.resize(want, '\0');
    }
    ReadResult r = src_.read(buf_.data() + end_, buf_.size() - kRecordPadding - end_);
    end_ += r.bytes;
    std::memset(buf_.data() + end_, 0, kRecordPadding);
    if (!r.error.empty()) error_ = r.error;
    if (r.eof) eof_ = true;
    return r.bytes > 0 || (!eof_ && error_.empty());
  }
  bool too_large() const { return too_large_; }

 private:
  ByteSource& src_;
  size_t chunk_;
  std::string buf_;
  size_t end_ = 0;
  uint64_t base_ = 0;
  bool eof_ = false;
  bool too_large_ = false;
  std::string error_;
};

// Skips a string whose opening quote is at p[pos]; on success pos is past the
// closing quote.
Scan skip_string(const char* p, size_t end, size_t& pos) {
  size_t i = pos + 1;
  while (true) {
    const void* q = std::memchr(p + i, '"', end - i);
    if (!q) return Scan::kNeedMore;
    size_t at = static_cast<const char*>(q) - p;
    // A quote preceded by an odd run of backslashes is escaped.
    size_t slashes = 0;
    for (size_t k = at; k > pos + 1 && p[k - 1] == '\\'; --k) ++slashes;
    if (slashes % 2 == 0) {
      pos = at + 1;
      return Scan::kDone;
    }
    i = at + 1;
  }
}

// Skips one JSON value starting at pos (which must not be whitespace). This is
// a structural scan only; the parser validates the record's JSON.
Scan skip_value(const char* p, size_t end, size_t& pos, int max_depth, bool at_eof,
                std::string& why) {
  size_t i = pos;
  if (i >= end) return Scan::kNeedMore;
  char c = p[i];
  if (c == '"') {
    Scan s = skip_string(p, end, i);
    if (s == Scan::kDone) pos = i;
    return s;
  }
  if (c == '{' || c == '[') {
    int depth = 0;
    while (i < end) {
      char ch = p[i];
      if (ch == '"') {
        Scan s = skip_string(p, end, i);
        if (s != Scan::kDone) return s;
        continue;
      }
      if (ch == '{' || ch == '[') {
        if (++depth > max_depth) {
          why = "nesting deeper than " + std::to_string(max_depth) + " levels";
          pos = i;
          return Scan::kBad;
        }
      } else if (ch == '}' || ch == ']') {
        if (--depth == 0) {
          pos = i + 1;
          return Scan::kDone;
        }
      }
      ++i;
    }
    return Scan::kNeedMore;
  }
  // Scalar: number, true, false, null. Ends at a delimiter.
  if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
    while (i < end && !is_ws(p[i]) && p[i] != ',' && p[i] != '}' && p[i] != ']') ++i;
    if (i == end && !at_eof) return Scan::kNeedMore;
    pos = i;
    return Scan::kDone;
  }
  why = std::string("unexpected character '") + (c >= 32 && c < 127 ? std::string(1, c) : "\\x" + std::to_string(static_cast<unsigned char>(c))) + "'";
  return Scan::kBad;
}

enum class State {
  kStart,            // before the top-level value
  kMemberOrEnd,      // in the top-level object: a key or '}'
  kColon,            // after a key
  kMemberValue,      // the value of a member
  kAfterMember,      // ',' or '}'
  kEventsOpen,       // '[' of traceEvents
  kEventOrEnd,       // first element or ']'
  kEvent,            // an element
  kAfterEvent,       // ',' or ']'
  kTrailing,         // only whitespace may follow
};

}  // namespace

TokenizeResult tokenize_trace(ByteSource& source, const TokenizerCallbacks& cb,
                              const TokenizerOptions& opt) {
  TokenizeResult result;
  Window w(source, opt.chunk_bytes);
  size_t pos = 0;
  size_t keep = 0;  // start of the record in progress (bytes before it can be dropped)
  State state = State::kStart;
  bool bare_array = false;  // the document is a bare array of events
  std::string key;
  std::string why;

  auto fail = [&](TokenizeStatus st, std::string msg, size_t at) {
    result.status = st;
    result.message = std::move(msg);
    result.byte_offset = w.offset_of(at);
    return result;
  };

  w.refill(keep, opt.max_record_bytes);
  while (true) {
    // Skip whitespace between tokens.
    const char* p = w.data();
    while (pos < w.end() && is_ws(p[pos])) ++pos;
    if (pos >= w.end()) {
      keep = pos;
      size_t before = pos;
      if (!w.refill(keep, opt.max_record_bytes)) {
        pos -= before - keep;  // refill moved the window
        if (!w.error().empty() && !w.too_large())
          return fail(TokenizeStatus::kReadError, w.error(), w.end());
        if (state == State::kTrailing) return result;
        if (state == State::kStart)
          return fail(TokenizeStatus::kBadInput, "empty file (no JSON value)", 0);
        return fail(TokenizeStatus::kTruncated,
                    state == State::kEvent || state == State::kAfterEvent ||
                            state == State::kEventOrEnd
                        ? "unexpected end of input inside traceEvents (file truncated?)"
                        : "unexpected end of input inside the top-level object (file truncated?)",
                    w.end());
      }
      pos -= before - keep;
      continue;
    }
    char c = p[pos];
    switch (state) {
      case State::kStart:
        if (c == '{') {
          state = State::kMemberOrEnd;
        } else if (c == '[') {
          bare_array = true;
          result.saw_trace_events = true;
          state = State::kEventOrEnd;
        } else {
          return fail(TokenizeStatus::kBadInput,
                      "not a JSON trace: expected '{' or '[' at the start", pos);
        }
        ++pos;
        continue;
      case State::kMemberOrEnd:
      case State::kColon:
      case State::kAfterMember:
      case State::kEventsOpen:
      case State::kEventOrEnd:
      case State::kAfterEvent:
      case State::kTrailing:
        break;
      case State::kMemberValue:
      case State::kEvent:
        break;
    }

    if (state == State::kMemberOrEnd) {
      if (c == '}') {
        ++pos;
        state = State::kTrailing;
        continue;
      }
      if (c != '"') return fail(TokenizeStatus::kBadInput, "expected a member name in the top-level object", pos);
      size_t start = pos;
      Scan s = skip_string(p, w.end(), pos);
      if (s == Scan::kNeedMore) {
        keep = start;
        size_t before = start;
        if (!w.refill(keep, opt.max_record_bytes)) {
          if (!w.error().empty() && !w.too_large())
            return fail(TokenizeStatus::kReadError, w.error(), w.end());
          return fail(TokenizeStatus::kTruncated, "unexpected end of input in a member name", w.end());
        }
        pos = start - (before - keep);
        continue;
      }
      key.assign(p + start + 1, pos - start - 2);
      state = State::kColon;
      continue;
    }
    if (state == State::kColon) {
      if (c != ':') return fail(TokenizeStatus::kBadInput, "expected ':' after member name \"" + key + "\"", pos);
      ++pos;
      state = key == "traceEvents" ? State::kEventsOpen : State::kMemberValue;
      continue;
    }
    if (state == State::kEventsOpen) {
      if (c != '[') return fail(TokenizeStatus::kBadInput, "traceEvents is not an array", pos);
      result.saw_trace_events = true;
      ++pos;
      state = State::kEventOrEnd;
      continue;
    }
    if (state == State::kAfterMember) {
      if (c == ',') {
        ++pos;
        state = State::kMemberOrEnd;
        continue;
      }
      if (c == '}') {
        ++pos;
        state = State::kTrailing;
        continue;
      }
      return fail(TokenizeStatus::kBadInput, "expected ',' or '}' in the top-level object", pos);
    }
    if (state == State::kEventOrEnd || state == State::kAfterEvent) {
      if (c == ']') {
        ++pos;
        state = bare_array ? State::kTrailing : State::kAfterMember;
        continue;
      }
      if (state == State::kAfterEvent) {
        if (c != ',') return fail(TokenizeStatus::kBadInput, "expected ',' or ']' in traceEvents", pos);
        ++pos;
        state = State::kEvent;
        continue;
      }
      state = State::kEvent;
      continue;
    }
    if (state == State::kTrailing) {
      return fail(TokenizeStatus::kBadInput, "unexpected data after the end of the JSON document", pos);
    }

    // kMemberValue or kEvent: one whole value.
    size_t start = pos;
    size_t end_pos = pos;
    Scan s = skip_value(p, w.end(), end_pos, opt.max_depth, w.eof(), why);
    if (s == Scan::kBad) return fail(TokenizeStatus::kBadInput, why, end_pos);
    if (s == Scan::kNeedMore) {
      keep = start;
      size_t before = start;
      if (!w.refill(keep, opt.max_record_bytes)) {
        if (w.too_large()) return fail(TokenizeStatus::kBadInput, w.error(), start);
        if (!w.error().empty()) return fail(TokenizeStatus::kReadError, w.error(), w.end());
        // The stream ended inside this record: scalars at eof are complete.
        return fail(TokenizeStatus::kTruncated,
                    state == State::kEvent ? "unexpected end of input inside a traceEvents record (file truncated?)"
                                           : "unexpected end of input inside member \"" + key + "\"",
                    w.end());
      }
      pos = start - (before - keep);
      continue;
    }
    std::string_view raw(p + start, end_pos - start);
    if (state == State::kEvent) {
      ++result.events;
      if (cb.on_event) cb.on_event(raw, w.offset_of(start));
      state = State::kAfterEvent;
    } else {
      if (cb.on_member) cb.on_member(key, raw, w.offset_of(start));
      state = State::kAfterMember;
    }
    pos = end_pos;
  }
}

}  // namespace stepscope::trace
