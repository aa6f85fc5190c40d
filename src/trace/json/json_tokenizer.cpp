#include "trace/json/json_tokenizer.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_set>

#include "trace/json/blank_padding.h"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace stepscope::trace {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// "64 MiB (67108864 bytes)", or the bytes alone below 1 MiB.
std::string describe_bytes(size_t n) {
  const std::string bytes = std::to_string(n) + " bytes";
  if (n < (size_t{1} << 20) || n % (size_t{1} << 20) != 0) return bytes;
  return std::to_string(n >> 20) + " MiB (" + bytes + ")";
}

enum class Scan { kDone, kNeedMore, kBad };

// A growable window over the stream: [data+begin, data+end) is unread text.
// The buffer is left uninitialised (only the padding is zeroed), so a small
// file touches only the pages its bytes land on, not the whole chunk.
class Window {
 public:
  Window(ByteSource& src, size_t chunk)
      : src_(src), chunk_(chunk), cap_(chunk + kRecordPadding), buf_(new char[cap_]) {
    std::memset(buf_.get(), 0, kRecordPadding);
  }

  const char* data() const { return buf_.get(); }
  char* mutable_data() { return buf_.get(); }
  size_t end() const { return end_; }
  bool eof() const { return eof_; }
  const std::string& error() const { return error_; }
  uint64_t offset_of(size_t pos) const { return base_ + pos; }

  // Drops everything before `keep`, then appends more bytes. Returns false when
  // nothing more can be read (eof or error).
  bool refill(size_t& keep, size_t max_record) {
    if (eof_ || !error_.empty()) return false;
    if (keep > 0) {
      std::memmove(buf_.get(), buf_.get() + keep, end_ - keep);
      end_ -= keep;
      base_ += keep;
      keep = 0;
    }
    // The record in progress starts at the buffer's front: once it passes
    // the limit it is refused, before more of it is buffered.
    if (end_ > max_record) {
      error_ = "record larger than the limit of " + describe_bytes(max_record);
      too_large_ = true;
      return false;
    }
    if (cap_ - kRecordPadding - end_ < chunk_ / 2) {
      // Doubling, but never past what a record at the limit needs.
      const size_t want = std::min(std::max(cap_ * 2, end_ + chunk_ + kRecordPadding),
                                   std::max(max_record, end_) + chunk_ + kRecordPadding);
      std::unique_ptr<char[]> grown(new char[want]);
      std::memcpy(grown.get(), buf_.get(), end_);
      buf_ = std::move(grown);
      cap_ = want;
    }
    ReadResult r = src_.read(buf_.get() + end_, cap_ - kRecordPadding - end_);
    end_ += r.bytes;
    std::memset(buf_.get() + end_, 0, kRecordPadding);
    if (!r.error.empty()) error_ = r.error;
    if (r.eof) eof_ = true;
    return r.bytes > 0 || (!eof_ && error_.empty());
  }
  bool too_large() const { return too_large_; }
  // After a too-large record is given up (resync), reading may go on.
  void forget_too_large() {
    if (too_large_) error_.clear();
    too_large_ = false;
  }

 private:
  ByteSource& src_;
  size_t chunk_;
  size_t cap_;  // bytes in buf_, padding included
  std::unique_ptr<char[]> buf_;
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

// Structural characters of one 64-byte block, one bit per byte (bit i is
// byte i). '[' and '{' differ only in bit 0x20, as do ']' and '}', so one
// compare after OR-ing 0x20 finds both brackets of a kind.
struct BlockMasks {
  uint64_t quote, backslash, open, close;
};

inline BlockMasks block_masks(const char* p) {
  BlockMasks m;
#if defined(__AVX2__)
  const __m256i quote = _mm256_set1_epi8('"'), slash = _mm256_set1_epi8('\\');
  const __m256i open = _mm256_set1_epi8('{'), close = _mm256_set1_epi8('}'), low = _mm256_set1_epi8(0x20);
  auto half = [&](const char* q, int shift) {
    __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    __m256i folded = _mm256_or_si256(v, low);
    auto bits = [](__m256i x) { return static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(x))); };
    m.quote |= bits(_mm256_cmpeq_epi8(v, quote)) << shift;
    m.backslash |= bits(_mm256_cmpeq_epi8(v, slash)) << shift;
    m.open |= bits(_mm256_cmpeq_epi8(folded, open)) << shift;
    m.close |= bits(_mm256_cmpeq_epi8(folded, close)) << shift;
  };
  m = {0, 0, 0, 0};
  half(p, 0);
  half(p + 32, 32);
#elif defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\');
  const __m128i open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}'), low = _mm_set1_epi8(0x20);
  m = {0, 0, 0, 0};
  for (int k = 0; k < 4; ++k) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    __m128i folded = _mm_or_si128(v, low);
    auto bits = [](__m128i x) { return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(x))); };
    m.quote |= bits(_mm_cmpeq_epi8(v, quote)) << (16 * k);
    m.backslash |= bits(_mm_cmpeq_epi8(v, slash)) << (16 * k);
    m.open |= bits(_mm_cmpeq_epi8(folded, open)) << (16 * k);
    m.close |= bits(_mm_cmpeq_epi8(folded, close)) << (16 * k);
  }
#else
  m = {0, 0, 0, 0};
  for (int i = 0; i < 64; ++i) {
    const char c = p[i];
    const uint64_t bit = uint64_t{1} << i;
    if (c == '"') m.quote |= bit;
    if (c == '\\') m.backslash |= bit;
    if (c == '{' || c == '[') m.open |= bit;
    if (c == '}' || c == ']') m.close |= bit;
  }
#endif
  return m;
}

// Bit i of the result is the XOR of bits 0..i: with quote bits in, it marks
// the bytes from an opening quote up to (not including) its closing quote.
inline uint64_t prefix_xor(uint64_t x) {
#if defined(__PCLMUL__) && defined(__SSE2__)
  // One carry-less multiply by all ones does the same in one instruction.
  const __m128i product = _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<int64_t>(x)),
                                               _mm_set1_epi8(static_cast<char>(0xFF)), 0);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(product));
#else
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
#endif
}

// Skips the object or array whose opening bracket is at p[pos]. Scans 64
// bytes at a time: quote bits give the in-string mask, brackets outside
// strings move the depth, and a block that cannot bring the depth to zero
// (fewer closes than the depth) is passed with two popcounts. Blocks holding
// a backslash, and the block where the value may end, go byte by byte, with
// exactly the rules of the scalar scan (escapes count only inside strings).
// Needs 64 readable bytes past `end` (the window's padding).
Scan skip_container(const char* p, size_t end, size_t& pos, int max_depth, std::string& why) {
  size_t i = pos + 1;
  int depth = 1;
  bool in_string = false;
  bool escaped = false;  // the next byte is escaped (a backslash ended the last block)
  auto too_deep = [&](size_t at) {
    why = "nesting deeper than " + std::to_string(max_depth) + " levels";
    pos = at;
    return Scan::kBad;
  };
  if (max_depth < 1) return too_deep(pos);
  while (i < end) {
    const size_t n = std::min<size_t>(64, end - i);
    const uint64_t valid = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
    BlockMasks m = block_masks(p + i);
    if (((m.backslash & valid) == 0) && !escaped) {
      const uint64_t strings = prefix_xor(m.quote & valid) ^ (in_string ? ~uint64_t{0} : 0);
      const uint64_t open = m.open & valid & ~strings;
      const uint64_t close = m.close & valid & ~strings;
      const int opens = __builtin_popcountll(open), closes = __builtin_popcountll(close);
      if (depth - closes > 0 && depth + opens <= max_depth) {
        depth += opens - closes;
        in_string = (strings >> 63) & 1;
        i += n;
        continue;
      }
      // The value may end (or nest too deep) here: walk its brackets in order.
      for (uint64_t b = open | close; b; b &= b - 1) {
        const size_t at = i + static_cast<size_t>(__builtin_ctzll(b));
        if ((open >> (at - i)) & 1) {
          if (++depth > max_depth) return too_deep(at);
        } else if (--depth == 0) {
          pos = at + 1;
          return Scan::kDone;
        }
      }
      in_string = (strings >> 63) & 1;
      i += n;
      continue;
    }
    // Byte by byte through a block with backslashes.
    for (size_t k = i; k < i + n; ++k) {
      const char c = p[k];
      if (in_string) {
        if (escaped) escaped = false;
        else if (c == '\\') escaped = true;
        else if (c == '"') in_string = false;
        continue;
      }
      if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        if (++depth > max_depth) return too_deep(k);
      } else if (c == '}' || c == ']') {
        if (--depth == 0) {
          pos = k + 1;
          return Scan::kDone;
        }
      }
    }
    i += n;
  }
  return Scan::kNeedMore;
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
  if (c == '{' || c == '[') return skip_container(p, end, pos, max_depth, why);
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

// Resync (TokenizerOptions::resync): finds the next byte where a whole
// traceEvents record starts after a damaged one. A candidate is a '{' that
// begins a line or follows ',' or '[' (Kineto writes one record per line;
// minified traces separate them by ','), whose brackets close, fresh string
// state assumed, and which is followed by ',' or ']' (or '{': the next record
// without the ',' between them). Candidates inside the
// damaged record are rejected by those checks, and the first real record
// after it passes them. `prev` is the last byte before `pos` that was not a
// blank ('\n' counts), kept across calls when the window is refilled.
enum class Resync { kFound, kNeedMore, kNone };

struct ResyncScan {
  char prev = 0;
  uint64_t spent = 0;  // bytes walked by rejected candidates: bounds the work on hostile input
  static constexpr uint64_t kBudget = uint64_t{256} << 20;
};

Resync find_record_start(const char* p, size_t end, bool at_eof, int max_depth, size_t& pos, ResyncScan& scan) {
  std::string ignored;
  for (; pos < end; ++pos) {
    const char c = p[pos];
    if (c == '{' && (scan.prev == ',' || scan.prev == '[' || scan.prev == '\n')) {
      size_t close = pos;
      Scan s = skip_container(p, end, close, max_depth, ignored);
      if (s == Scan::kNeedMore && !at_eof) return Resync::kNeedMore;  // caller refills, keeping pos
      if (s == Scan::kDone) {
        size_t next = close;
        while (next < end && is_ws(p[next])) ++next;
        if (next == end && !at_eof) return Resync::kNeedMore;
        if (next < end && (p[next] == ',' || p[next] == ']' || p[next] == '{')) return Resync::kFound;
      }
      scan.spent += (s == Scan::kDone ? close : end) - pos;
      if (scan.spent > ResyncScan::kBudget) return Resync::kNone;
    }
    if (c == '\n' || !is_ws(c)) scan.prev = c;
  }
  return at_eof ? Resync::kNone : Resync::kNeedMore;
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
  kResync,           // looking for the next record after a damaged one (TokenizerOptions::resync)
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
  std::unordered_set<std::string> seen_keys;
  bool after_comma = false;  // a ',' in the top-level object: a member must follow  // top-level keys so far, as written
  std::string why;

  auto fail = [&](TokenizeStatus st, std::string msg, size_t at) {
    result.status = st;
    result.message = std::move(msg);
    result.byte_offset = w.offset_of(at);
    return result;
  };

  // Resync state: where the damaged stretch began and why, and the scan.
  uint64_t damaged_at = 0;
  std::string damage;
  ResyncScan resync;
  // After fail(): with opt.resync, looks for the next record from `from`
  // (`prev`: the byte before it) instead of returning the failure; `why` is
  // what the skipped stretch is reported as, if a whole record follows.
  auto begin_resync = [&](size_t damaged, size_t from, char prev, std::string why) {
    damaged_at = w.offset_of(damaged);
    damage = std::move(why);
    resync = ResyncScan{};
    resync.prev = prev;
    pos = from;
    state = State::kResync;
  };

  w.refill(keep, opt.max_record_bytes);
  // A UTF-8 byte-order mark (Windows editors write one when a trace is saved
  // from them) carries nothing: skipped, as Python's json.loads does on bytes.
  if (w.end() >= 3 && std::memcmp(w.data(), "\xEF\xBB\xBF", 3) == 0) pos = 3;
  while (true) {
    if (state == State::kResync) {
      size_t at = pos;
      const Resync r = find_record_start(w.data(), w.end(), w.eof(), opt.max_depth, at, resync);
      if (r == Resync::kFound) {
        const uint64_t next = w.offset_of(at);
        if (cb.on_skipped)
          cb.on_skipped(damaged_at, next - damaged_at,
                        next == damaged_at ? "two records without ',' between them; both read"
                                           : damage + "; skipped " + std::to_string(next - damaged_at) +
                                                 " bytes up to the next record, at byte " + std::to_string(next));
        result.status = TokenizeStatus::kOk;
        result.message.clear();
        result.byte_offset = 0;
        pos = at;
        state = State::kEvent;
        continue;
      }
      if (r == Resync::kNone) return result;  // no whole record follows: the failure stands
      keep = at;  // a candidate still being checked, or the end of the data
      const size_t before = at;
      const bool more = w.refill(keep, opt.max_record_bytes);
      pos = at - (before - keep);
      if (!more && !w.eof()) {
        if (!w.error().empty() && !w.too_large()) return fail(TokenizeStatus::kReadError, w.error(), w.end());
        return result;  // a candidate larger than max_record_bytes: give up
      }
      continue;
    }
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
        if (state == State::kStart) {
          // Only whitespace: the fault is the whole file's, reported at its
          // start (offset_of(0) is where the last read began, which depends
          // on the chunk size).
          TokenizeResult empty = fail(TokenizeStatus::kBadInput, "empty file (no JSON value)", 0);
          empty.byte_offset = 0;
          return empty;
        }
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
          result.bare_array = true;
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
      case State::kResync:  // handled above
        break;
    }

    if (state == State::kMemberOrEnd) {
      if (c == '}') {
        if (after_comma) return fail(TokenizeStatus::kBadInput, "trailing ',' before '}' in the top-level object", pos);
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
          if (w.too_large()) return fail(TokenizeStatus::kBadInput, "member name: " + w.error(), keep);
          return fail(TokenizeStatus::kTruncated, "unexpected end of input in a member name (file truncated?)", w.end());
        }
        pos = start - (before - keep);
        continue;
      }
      key.assign(p + start + 1, pos - start - 2);
      after_comma = false;
      // A repeated key is ambiguous: Python's json keeps the last value,
      // other readers the first, and reading both would count events twice.
      if (!seen_keys.insert(key).second)
        return fail(TokenizeStatus::kBadInput,
                    "top-level key \"" + key.substr(0, 64) +
                        "\" appears twice (ambiguous: JSON readers differ on which one counts)",
                    start);
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
        after_comma = true;
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
        if (c != ',') {
          fail(TokenizeStatus::kBadInput, "expected ',' or ']' in traceEvents", pos);
          if (!opt.resync) return result;
          begin_resync(pos, pos, ',', result.message);  // a record right here (a missing ',') is taken as is
          continue;
        }
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
    if (s == Scan::kBad) {
      fail(TokenizeStatus::kBadInput, why, end_pos);
      if (state != State::kEvent || !opt.resync) return result;
      begin_resync(start, start + 1, p[start], result.message);
      continue;
    }
    if (s == Scan::kNeedMore) {
      keep = start;
      size_t before = start;
      const uint64_t record_offset = w.offset_of(start);  // refill moves the window
      const bool more = w.refill(keep, opt.max_record_bytes);
      start -= before - keep;
      if (!more) {
        if (!w.error().empty() && !w.too_large()) return fail(TokenizeStatus::kReadError, w.error(), w.end());
        if (w.too_large()) {
          fail(TokenizeStatus::kBadInput, w.error(), start);
        } else {
          // The stream ended inside this record: scalars at eof are complete.
          // Where the record began also locates an unescaped '"' in it, the
          // other way a string can run to the end of the input.
          fail(TokenizeStatus::kTruncated,
               state == State::kEvent
                   ? "unexpected end of input inside the traceEvents record that starts at byte " +
                         std::to_string(record_offset) + " (file truncated, or an unescaped '\"' in that record?)"
                   : "unexpected end of input inside member \"" + key + "\" (file truncated?)",
               w.end());
        }
        if (state != State::kEvent || !opt.resync) return result;
        w.forget_too_large();
        // If a whole record follows, the input was not cut here: the record is what is broken.
        begin_resync(start, start + 1, w.data()[start],
                     result.status == TokenizeStatus::kTruncated
                         ? "the record that starts here does not close (an unescaped '\"' or a missing bracket in it)"
                         : result.message);
        continue;
      }
      pos = start;
      continue;
    }
    std::string_view raw(p + start, end_pos - start);
    const BlankPadding blank(w.mutable_data() + end_pos);  // end_pos <= end: the padding is in the buffer
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
