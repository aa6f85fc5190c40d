#include "trace/json/kineto_event_parser.h"

#include <simdjson.h>

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <map>
#include <unordered_map>
#include <vector>

#include "trace/cupti_counter_names.h"
#include "trace/event_limits.h"
#include "trace/json/decimal_time.h"
#include "trace/json/json_tokenizer.h"
#include "trace/json/repeated_metadata.h"
#include "trace/json/utf8_repair.h"

namespace stepscope::trace {

namespace od = simdjson::ondemand;

const std::vector<std::string_view>& kept_arg_keys() {
  static const std::vector<std::string_view> keys = [] {
    std::vector<std::string_view> k = {
      // kernels
      "grid", "block", "registers per thread", "shared memory", "blocks per SM", "warps per SM",
      "est. achieved occupancy %", "queued", "context",
      // memcpy / memset
      "bytes", "memory bandwidth (GB/s)",
      // allocator samples ([memory])
      "Bytes", "Total Allocated", "Total Reserved", "Device Id", "Device Type", "Addr",
      // operators
      "Input Dims", "Input type", "flops", "Sequence number", "Fwd thread id", "Concrete Inputs",
      // collectives (record_param_comms and NCCL kernels)
      "Collective name", "In msg nelems", "Out msg nelems", "In split size", "Out split size",
      "dtype", "Group size", "Process Group Name", "Process Group Description",
      "Process Group Ranks", "Rank", "Global rank start", "Global rank stride",
      // runtime calls
      "cbid", "wait_on_stream", "wait_on_cuda_event_record_corr_id",
      // MTIA device events
      "direction", "size",
    };
    // The CUPTI range-profiler counters stepscope interprets (a counter range
    // keeps its other numeric counters too, see parse_event).
    k.insert(k.end(), cupti::kInterpreted.begin(), cupti::kInterpreted.end());
    return k;
  }();
  return keys;
}

namespace {
// k == literal with the literal's length known at compile time. GCC calls
// memcmp for 6 and 11 bytes ("stream", "correlation": once per argument of
// every event), so 4-16 bytes compare as two overlapping words instead.
template <typename Word, size_t n>
bool same_words(const char* a, const char* b) {
  Word a0, a1, b0, b1;
  std::memcpy(&a0, a, sizeof(Word));
  std::memcpy(&b0, b, sizeof(Word));
  std::memcpy(&a1, a + n - sizeof(Word), sizeof(Word));
  std::memcpy(&b1, b + n - sizeof(Word), sizeof(Word));
  return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

template <size_t N>
bool is(std::string_view k, const char (&literal)[N]) {
  constexpr size_t n = N - 1;
  if (k.size() != n) return false;
  if constexpr (n >= 8 && n <= 16) return same_words<uint64_t, n>(k.data(), literal);
  else if constexpr (n >= 4 && n < 8) return same_words<uint32_t, n>(k.data(), literal);
  else return std::memcmp(k.data(), literal, n) == 0;
}
}  // namespace

struct KinetoEventParser::Impl {
  StoreBuilder& b;
  EventStore& store;
  od::parser parser;
  // Kept argument keys -> their id in the store's string table. Looked up for
  // every argument of every event, so without hashing: a bucket per (length,
  // first byte) holds the few keys that could match, each checked with one
  // compare. Most dropped keys ("Ev Idx", "Input Strides") hit an empty bucket.
  struct KeptKeys {
    struct Entry {
      std::string_view key;
      StringId id;
      int16_t next = -1;  // next entry in the same bucket
    };
    std::vector<Entry> entries;
    std::array<int16_t, 64 * 128> bucket;

    KeptKeys() { bucket.fill(-1); }
    static size_t slot(std::string_view k) {
      return (k.size() & 63) * 128 + (static_cast<unsigned char>(k[0]) & 127);
    }
    void add(std::string_view k, StringId id) {
      if (k.empty() || store_id(k) != StringTable::kMissing) return;
      entries.push_back({k, id, bucket[slot(k)]});
      bucket[slot(k)] = static_cast<int16_t>(entries.size() - 1);
    }
    StringId store_id(std::string_view k) const {
      if (k.empty()) return StringTable::kMissing;
      for (int16_t i = bucket[slot(k)]; i >= 0; i = entries[static_cast<size_t>(i)].next)
        if (entries[static_cast<size_t>(i)].key == k) return entries[static_cast<size_t>(i)].id;
      return StringTable::kMissing;
    }
  } kept;
  StringId empty_cat;
  // The kind of each interned "cat" text (by StringId), found once: the rules
  // compare case-insensitively against some twenty names, and a trace has a
  // handful of categories but one per event.
  static constexpr uint8_t kKindUnknown = 0xFF;
  std::vector<uint8_t> kind_of_category;
  EventKind category_kind(StringId cat, std::string_view cat_text) {
    if (cat >= kind_of_category.size()) kind_of_category.resize(cat + size_t{1}, kKindUnknown);
    if (kind_of_category[cat] == kKindUnknown)
      kind_of_category[cat] = static_cast<uint8_t>(classify_category(cat_text, {}, 'X'));
    return static_cast<EventKind>(kind_of_category[cat]);
  }

  explicit Impl(StoreBuilder& builder) : b(builder), store(builder.store()) {
    // First strings of the store: the kept keys get the small ids that the
    // 2-byte argument key column holds.
    for (auto k : kept_arg_keys()) kept.add(k, b.intern(k));
    empty_cat = b.intern("");
  }

  // Some traces repeat the same "M" record per event (the MTIA test trace has
  // 124k thread/process names, 10 distinct): a name is added unless it is
  // already the current name of that id. Returns whether it was added.
  std::unordered_map<int64_t, size_t> last_thread_name, last_process_name;  // id -> index
  template <typename Id>
  bool add_name(std::vector<std::pair<Id, std::string>>& names, std::unordered_map<int64_t, size_t>& last, Id id,
                std::string_view name) {
    auto it = last.find(id);
    if (it != last.end() && names[it->second].second == name) return false;
    last[id] = names.size();
    names.emplace_back(id, std::string(name));
    return true;
  }
  RepeatedMetadata repeated_metadata;

  // Chrome "B" events waiting for their "E", per (pid, tid): the most recent
  // open one is closed first (Chrome Trace Event Format: B/E nest per thread).
  struct OpenSlice {
    EventRow row;
    uint64_t offset;
    std::vector<StoreBuilder::StagedArg> args;
  };
  std::map<std::pair<int32_t, int64_t>, std::vector<OpenSlice>> open_slices;

  // "B" events whose "E" never came: counted, at the end of the file.
  void finish() {
    for (auto& [thread, stack] : open_slices)
      for (const OpenSlice& o : stack)
        store.stats.add(ImportCounter::kUnmatchedBeginEnd, o.offset, "\"B\" event without an \"E\" on its thread");
    open_slices.clear();
  }

  // A "ProfilerStep#N" whose N is written as an integer that does not fit
  // int64 or is negative: no step number Kineto writes (it counts up from 0).
  static bool bad_step_number(std::string_view name) {
    constexpr std::string_view kPrefix = "ProfilerStep#";
    if (!name.starts_with(kPrefix)) return false;
    name.remove_prefix(kPrefix.size());
    if (name.empty() || !(name[0] == '-' || (name[0] >= '0' && name[0] <= '9'))) return false;
    int64_t n = 0;
    auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
    return ec == std::errc::result_out_of_range || (ec == std::errc() && n < 0);
  }

  void bad(ImportCounter c, uint64_t offset, std::string msg) {
    b.discard_staged_args();
    store.stats.add(c, offset, std::move(msg));
  }

  // pid/tid may be an integer or a string ("stream 7", "Traces").
  bool read_id(od::value v, int64_t& out, bool& was_string, std::string_view& text) {
    // An integer (nearly every id) through simdjson's integer parser, before
    // asking for the type: a value that is not one is left unread.
    int64_t x = 0;
    if (!v.get_int64().get(x)) {
      out = x;
      was_string = false;
      return true;
    }
    auto t = v.type();
    if (t.error()) return false;
    if (t.value_unsafe() == od::json_type::number) {
      // Any other number (1.5, 1e3, an unsigned 64-bit thread id).
      if (!read_id_number(trim(v.raw_json_token()), x)) return false;
      out = x;
      was_string = false;
      return true;
    }
    if (t.value_unsafe() == od::json_type::string) {
      auto s = v.get_string();
      if (s.error()) return false;
      text = s.value_unsafe();
      was_string = true;
      // "stream 7" (2021 GPU rows) and plain digit strings carry a number.
      std::string_view digits = text;
      if (digits.starts_with("stream ")) digits.remove_prefix(7);
      int64_t x = 0;
      auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), x);
      if (ec == std::errc() && p == digits.data() + digits.size() && !digits.empty()) {
        out = x;
      } else {
        out = -static_cast<int64_t>(b.intern(text)) - 1;  // a stable negative id per name
      }
      return true;
    }
    return false;
  }

  // An id written as an integer, an integral float, or a decimal/hex string.
  bool read_int_like(od::value v, int64_t& out) {
    bool is_string = false;
    return read_int_like(v, out, is_string);
  }
  bool read_int_like(od::value v, int64_t& out, bool& is_string) {
    is_string = false;
    if (!v.get_int64().get(out)) return true;  // the common case, as in read_id
    auto t = v.type();
    if (t.error()) return false;
    is_string = t.value_unsafe() == od::json_type::string;
    if (t.value_unsafe() == od::json_type::number) {
      return read_id_number(trim(v.raw_json_token()), out);
    }
    if (t.value_unsafe() == od::json_type::string) {
      std::string_view s;
      if (v.get_string().get(s) || s.empty()) return false;
      int base = 10;
      if (s.starts_with("0x") || s.starts_with("0X")) {
        s.remove_prefix(2);
        base = 16;
      }
      uint64_t u = 0;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), u, base);
      if (ec != std::errc() || p != s.data() + s.size()) return false;
      out = static_cast<int64_t>(u);
      return true;
    }
    return false;
  }

  // An id written as a number simdjson's integer parser did not take: any
  // other number through ours, which rounds it (1.5, 1e3); an integer past
  // INT64_MAX (a 64-bit hash, handle or thread id) keeps its bit pattern, as
  // a hex string does, so that equal ids still join.
  static bool read_id_number(std::string_view tok, int64_t& out) {
    if (parse_scaled_decimal(tok, 0, out)) return true;
    uint64_t u = 0;
    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), u);
    if (ec != std::errc() || p != tok.data() + tok.size()) return false;
    out = static_cast<int64_t>(u);
    return true;
  }

  static std::string_view trim(std::string_view tok) {
    while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\n' || tok.back() == '\r' || tok.back() == '\t')) tok.remove_suffix(1);
    return tok;
  }

  // Reads a microsecond field into ns; `fractional` says whether the text
  // had a fraction or an exponent. Returns 0 ok, 1 wrong type, 2 out of range.
  int read_time(od::value v, int64_t& out, bool& fractional) {
    auto t = v.type();
    if (t.error() || t.value_unsafe() != od::json_type::number) return 1;
    const std::string_view tok = trim(v.raw_json_token());
    if (!is_json_number(tok)) return 3;
    return parse_us_as_ns(tok, out, fractional) ? 0 : 2;
  }

  // RFC 8259's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  // The decimal parsers take more ("01", "1."), which JSON does not.
  static bool is_json_number(std::string_view s) {
    size_t i = 0;
    auto digits = [&] {
      const size_t from = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      return i > from;
    };
    if (i < s.size() && s[i] == '-') ++i;
    if (i < s.size() && s[i] == '0') ++i;
    else if (!digits()) return false;
    if (i < s.size() && s[i] == '.' && (++i, !digits())) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
      if (!digits()) return false;
    }
    return i == s.size();
  }

  // Returns whether the value is a negative number.
  bool stage_arg(StringId key, od::value v) {
    int64_t x;
    if (!v.get_int64().get(x)) {  // most kept arguments; anything else is left unread
      b.stage_int_arg(key, x);
      return x < 0;
    }
    auto t = v.type();
    if (t.error()) return false;
    switch (t.value_unsafe()) {
      case od::json_type::number: {
        double d = 0;
        if (v.get_double().get(d)) return false;
        b.stage_double_arg(key, d);
        return d < 0;
      }
      case od::json_type::string: {
        std::string_view s;
        if (!v.get_string().get(s)) b.stage_string_arg(key, b.intern(s));
        return false;
      }
      case od::json_type::boolean: {
        bool x;
        if (!v.get_bool().get(x)) b.stage_int_arg(key, x ? 1 : 0);
        return false;
      }
      case od::json_type::array: {
        od::array arr;
        std::string_view raw;
        if (!v.get_array().get(arr) && !arr.raw_json().get(raw))
          b.stage_string_arg(key, b.intern(trim(raw)), ArgType::kJson);
        return false;
      }
      case od::json_type::object: {
        od::object o;
        std::string_view raw;
        if (!v.get_object().get(o) && !o.raw_json().get(raw))
          b.stage_string_arg(key, b.intern(trim(raw)), ArgType::kJson);
        return false;
      }
      default:
        return false;
    }
  }

  // A counter of a CUPTI range (any key): numbers only, the rest dropped.
  void stage_counter(std::string_view key, od::value v) {
    int64_t x;
    double d;
    if (!v.get_int64().get(x)) b.stage_int_arg(b.intern(key), x);
    else if (!v.get_double().get(d)) b.stage_double_arg(b.intern(key), d);
    else store.stats.add_silent(ImportCounter::kDroppedArgs, 1);
  }

  uint32_t next_seq = 0;
  std::string repaired;  // a record with its invalid UTF-8 replaced, and padding

  // Starts iterating one record (`raw` has kRecordPadding readable bytes
  // after it). A record whose only fault is invalid UTF-8 is repaired, counted
  // with its offset, and iterated from the repaired copy.
  simdjson::error_code iterate(std::string_view raw, uint64_t offset, od::document& doc) {
    auto err = parser.iterate(raw.data(), raw.size(), raw.size() + kRecordPadding).get(doc);
    if (err != simdjson::UTF8_ERROR) return err;
    const size_t n = replace_invalid_utf8(raw, repaired);
    const size_t size = repaired.size();
    repaired.append(kRecordPadding, ' ');
    err = parser.iterate(repaired.data(), size, repaired.size()).get(doc);
    if (!err)
      store.stats.add(ImportCounter::kInvalidUtf8Repaired, offset,
                      std::to_string(n) + " invalid UTF-8 sequence" + (n == 1 ? "" : "s") + " replaced by U+FFFD");
    return err;
  }

  void parse_event(std::string_view raw, uint64_t offset) {
    b.discard_staged_args();
    const uint32_t seq = next_seq++;
    if (repeated_metadata.seen(raw)) return;
    const uint64_t counted_before = store.stats.total();
    od::document doc;
    auto err = iterate(raw, offset, doc);
    if (err) return bad(ImportCounter::kRecordMalformed, offset, simdjson::error_message(err));
    od::object obj;
    if (doc.get_object().get(obj)) {
      return bad(ImportCounter::kRecordNotObject, offset, "traceEvents element is not an object");
    }
    char phase = 0;
    EventRow row;
    row.seq = seq;
    bool has_ts = false, has_dur = false, has_id = false;
    int64_t flow_id = 0;
    std::string_view meta_name;  // args.name of "M" events
    std::string_view tid_text;
    bool tid_is_string = false;
    bool stream_was_string = false;
    std::string_view name_text;
    std::string_view cat_text;
    // The category's kind, once "cat" was read (Kineto writes it before
    // "args", which a counter range needs: its counters are kept by category).
    EventKind cat_kind = EventKind::kOther;
    bool cat_kind_known = false;
    uint64_t dropped = 0;
    std::string_view negative_size;  // a byte-count argument written negative
    bool lowercase_external_id = false;  // "external id" was read (it wins over "External id")

    for (auto field_result : obj) {
      od::field field;
      if (std::move(field_result).get(field)) return bad(ImportCounter::kRecordMalformed, offset, "invalid JSON in event");
      od::raw_json_string key = field.key();
      od::value v = field.value();
      if (key == "ph") {
        std::string_view s;
        if (v.get_string().get(s) || s.empty()) return bad(ImportCounter::kBadFieldType, offset, "field \"ph\" is not a string");
        phase = s[0];
      } else if (key == "name") {
        if (v.get_string().get(name_text)) return bad(ImportCounter::kBadFieldType, offset, "field \"name\" is not a string");
        row.name = b.intern(name_text);
      } else if (key == "cat") {
        if (v.get_string().get(cat_text)) return bad(ImportCounter::kBadFieldType, offset, "field \"cat\" is not a string");
        row.category = b.intern(cat_text);
        cat_kind = category_kind(row.category, cat_text);
        cat_kind_known = true;
      } else if (key == "ts") {
        bool fractional = false;
        int rc = read_time(v, row.ts_ns, fractional);
        if (rc == 1) return bad(ImportCounter::kBadFieldType, offset, "field \"ts\" is not a number");
        if (rc == 3) return bad(ImportCounter::kRecordMalformed, offset, "field \"ts\" is not a valid JSON number");
        store.meta.fractional_timestamps |= fractional;
        if (rc == 2) return bad(ImportCounter::kNumberOutOfRange, offset, "field \"ts\" out of range");
        has_ts = true;
      } else if (key == "dur") {
        bool fractional = false;
        int rc = read_time(v, row.dur_ns, fractional);
        if (rc == 1) return bad(ImportCounter::kBadFieldType, offset, "field \"dur\" is not a number");
        if (rc == 3) return bad(ImportCounter::kRecordMalformed, offset, "field \"dur\" is not a valid JSON number");
        if (rc == 2) return bad(ImportCounter::kNumberOutOfRange, offset, "field \"dur\" out of range");
        has_dur = true;
      } else if (key == "pid") {
        int64_t x = 0;
        bool s = false;
        std::string_view text;
        if (!read_id(v, x, s, text)) return bad(ImportCounter::kBadFieldType, offset, "field \"pid\" is neither a number nor a string");
        if (x > INT32_MAX || x < INT32_MIN) return bad(ImportCounter::kNumberOutOfRange, offset, "field \"pid\" out of range");
        row.pid = static_cast<int32_t>(x);
      } else if (key == "tid") {
        if (!read_id(v, row.tid, tid_is_string, tid_text)) return bad(ImportCounter::kBadFieldType, offset, "field \"tid\" is neither a number nor a string");
      } else if (key == "id") {
        bool s = false;
        std::string_view text;
        if (!read_id(v, flow_id, s, text)) return bad(ImportCounter::kBadFieldType, offset, "field \"id\" is neither a number nor a string");
        has_id = true;
      } else if (key == "args") {
        // null is no arguments (Python's json.dump writes None so), not a bad event.
        if (auto at = v.type(); !at.error() && at.value_unsafe() == od::json_type::null) continue;
        od::object args;
        if (v.get_object().get(args)) return bad(ImportCounter::kBadFieldType, offset, "field \"args\" is not an object");
        for (auto arg_result : args) {
          od::field arg;
          if (std::move(arg_result).get(arg)) return bad(ImportCounter::kRecordMalformed, offset, "invalid JSON in args");
          std::string_view k;
          if (arg.unescaped_key().get(k)) return bad(ImportCounter::kRecordMalformed, offset, "invalid key in args");
          od::value av = arg.value();
          // Keys compared with their length known at compile time: no call
          // to memcmp for each argument of each event.
          const bool is_correlation = is(k, "correlation");
          // PyTorch 1.8/1.9 write the key on runtime calls and GPU activities
          // as "external id" (ops keep "External id"); the TensorBoard
          // plugin reads "external id" first, then "External id"
          // (pytorch/kineto tb_plugin/torch_tb_profiler/profiler/trace.py,
          // DurationEvent). Same here.
          const bool is_lower_ext = !is_correlation && is(k, "external id");
          if (is_correlation || is_lower_ext || is(k, "External id")) {
            int64_t x;
            if (!read_int_like(av, x)) return bad(ImportCounter::kBadFieldType, offset, "args \"" + std::string(k) + "\" is not an integer");
            if (is_correlation) row.correlation = x;
            else if (is_lower_ext || !lowercase_external_id) row.external_id = x;
            lowercase_external_id |= is_lower_ext;
            continue;
          }
          const bool is_stream = is(k, "stream");
          if (is_stream || is(k, "device")) {
            // Lenient: HIP writes "0x0" strings, CUDA writes 4294967295 for
            // context-wide syncs. Numbers are kept as written (HTA keeps them
            // too); strings only count on GPU rows (checked below).
            int64_t x;
            bool is_string = false;
            if (!read_int_like(av, x, is_string)) {
              store.stats.add_silent(ImportCounter::kUnparsedId);
              continue;
            }
            if (is_stream) {
              row.stream = x;
              stream_was_string = is_string;
            } else {
              row.device = x > INT16_MAX || x < INT16_MIN ? static_cast<int16_t>(kNone) : static_cast<int16_t>(x);
            }
            continue;
          }
          if (is(k, "name")) {  // metadata events: process/thread names
            std::string_view s;
            if (!av.get_string().get(s)) {
              meta_name = s;
              // get_string's view lives in the parser's buffer until the next iterate.
              continue;
            }
          }
          const StringId key = kept.store_id(k);
          if (key == StringTable::kMissing) {
            if (cat_kind == EventKind::kCounterRange) stage_counter(k, av);
            else ++dropped;
            continue;
          }
          if (stage_arg(key, av) && (is(k, "bytes") || is(k, "Total Allocated") || is(k, "Total Reserved")))
            negative_size = k;
        }
      }
    }

    switch (phase) {
      case 'X':
      case 'i':
      case 'I':
        break;
      case 'B':
      case 'E':
        break;
      case 's':
      case 'f':
      case 't':
        b.discard_staged_args();
        if (!has_ts || !has_id) return bad(ImportCounter::kMissingTimestamp, offset, "flow event without ts or id");
        if (!time_in_range(row.ts_ns))
          return bad(ImportCounter::kTimeOutOfRange, offset, "flow event with \"ts\" out of range");
        b.add_flow(flow_id, row.category, phase, row.ts_ns, row.pid, row.tid);
        return;
      case 'M': {
        b.discard_staged_args();
        bool renamed = false;
        if (name_text == "thread_name" && !meta_name.empty())
          renamed = add_name(store.meta.thread_names, last_thread_name, row.tid, meta_name);
        else if (name_text == "process_name" && !meta_name.empty())
          renamed = add_name(store.meta.process_names, last_process_name, row.pid, meta_name);
        if (renamed) repeated_metadata.forget_all();
        // Its names are current now; a repeat is a no-op unless this read
        // was counted (a repair, an unparsed id), which a repeat must count too.
        if (store.stats.total() == counted_before) repeated_metadata.remember(raw);
        return;
      }
      case 0:
        return bad(ImportCounter::kBadFieldType, offset, "event without \"ph\"");
      default:
        b.discard_staged_args();
        store.stats.add_silent(ImportCounter::kUnknownPhase);
        return;
    }
    if (!has_ts) return bad(ImportCounter::kMissingTimestamp, offset, "event without \"ts\"");
    if (!has_dur) {
      row.dur_ns = 0;
      row.flags |= kNoDuration;
    }
    if (row.dur_ns < 0) return bad(ImportCounter::kNegativeDuration, offset, "event with negative \"dur\"");
    // Limits that keep every end and difference of times in int64 (event_limits.h).
    if (!time_in_range(row.ts_ns))
      return bad(ImportCounter::kTimeOutOfRange, offset,
                 row.ts_ns < 0 ? "event with negative \"ts\"" : "event with \"ts\" beyond 2^61 ns");
    if (row.dur_ns > kMaxTimeNs) return bad(ImportCounter::kTimeOutOfRange, offset, "event with \"dur\" beyond 2^61 ns");
    if (!negative_size.empty())
      return bad(ImportCounter::kNegativeSize, offset, "args \"" + std::string(negative_size) + "\" is negative");
    if (bad_step_number(name_text))
      return bad(ImportCounter::kNumberOutOfRange, offset, "step number of \"" + std::string(name_text.substr(0, 64)) +
                                                               "\" is negative or does not fit 64 bits");
    // classify_category(cat, name, phase), with the category's rule looked up once.
    if (name_text == "[memory]") row.kind = EventKind::kMemory;
    else if (phase != 'X' && phase != 'B' && phase != 'E') row.kind = EventKind::kInstant;
    else row.kind = step_kind(cat_kind_known ? cat_kind : category_kind(row.category, cat_text), name_text);
    if (is_gpu_kind(row.kind)) {
      if (row.stream == kNone && row.tid >= 0) {
        // 2021 traces name the stream only in tid ("stream 7").
        row.stream = row.tid;
        row.flags |= kStreamFromTid;
      }
    } else if (stream_was_string) {
      row.stream = kNone;  // e.g. HIP runtime calls: "stream": "0x0" names a queue, not a row
    }
    (void)tid_is_string;
    if (dropped) store.stats.add_silent(ImportCounter::kDroppedArgs, dropped);
    if (phase == 'B') return open_slice(row, offset);
    if (phase == 'E') return close_slice(row, offset);
    b.add_event(row);
  }

  void open_slice(const EventRow& row, uint64_t offset) {
    open_slices[{row.pid, row.tid}].push_back({row, offset, b.take_staged_args()});
  }

  // An "E" closes the most recent open "B" of its thread: one complete event
  // with the B's name, category and fields, lasting from B to E. The E's
  // arguments are added to the B's (Chrome merges them).
  void close_slice(const EventRow& end, uint64_t offset) {
    auto it = open_slices.find({end.pid, end.tid});
    if (it == open_slices.end() || it->second.empty())
      return bad(ImportCounter::kUnmatchedBeginEnd, offset, "\"E\" event without an open \"B\" on its thread");
    OpenSlice open = std::move(it->second.back());
    it->second.pop_back();
    if (it->second.empty()) open_slices.erase(it);
    EventRow row = open.row;
    row.dur_ns = end.ts_ns - row.ts_ns;  // both in [0, kMaxTimeNs]: no overflow
    row.flags &= static_cast<uint8_t>(~kNoDuration);
    if (row.dur_ns < 0)
      return bad(ImportCounter::kNegativeDuration, offset, "\"E\" event earlier than its \"B\"");
    if (row.correlation == kNone) row.correlation = end.correlation;
    if (row.external_id == kNone) row.external_id = end.external_id;
    b.restage_args(open.args);
    b.add_event(row);
  }

  void parse_member(std::string_view key, std::string_view raw, uint64_t offset) {
    od::document doc;
    auto err = iterate(raw, offset, doc);
    if (err) return bad(ImportCounter::kRecordMalformed, offset, "top-level \"" + std::string(key) + "\": " + simdjson::error_message(err));
    auto& meta = store.meta;
    if (key == "distributedInfo") {
      od::object obj;
      if (doc.get_object().get(obj)) return bad(ImportCounter::kBadFieldType, offset, "distributedInfo is not an object");
      for (auto fr : obj) {
        od::field f;
        if (std::move(fr).get(f)) return bad(ImportCounter::kRecordMalformed, offset, "invalid JSON in distributedInfo");
        od::value v = f.value();
        if (f.key() == "rank") {
          int64_t x;
          if (!v.get_int64().get(x)) meta.rank = x;
        } else if (f.key() == "world_size") {
          int64_t x;
          if (!v.get_int64().get(x)) meta.world_size = x;
        } else if (f.key() == "backend") {
          std::string_view s;
          if (!v.get_string().get(s)) meta.backend = std::string(s);
        }
      }
    } else if (key == "baseTimeNanoseconds") {
      std::string_view tok;
      int64_t base = 0;
      if (doc.raw_json_token().get(tok) || !parse_scaled_decimal(trim(tok), 0, base))
        return bad(ImportCounter::kBadFieldType, offset, "baseTimeNanoseconds is not an integer");
      // Base plus a trace time must fit, as every time does (event_limits.h).
      if (!time_in_range(base))
        return bad(ImportCounter::kTimeOutOfRange, offset, "baseTimeNanoseconds negative or beyond 2^61 ns (ignored)");
      meta.base_time_ns = base;
    } else if (key == "stepscope_unprofiled_step_ms") {
      // A recorder's measurement (add_metadata_json writes its value as a
      // number, or as a string holding one).
      double ms = 0;
      std::string_view text;
      bool ok = !doc.get_double().get(ms);
      if (!ok) {
        od::document doc2;
        if (!iterate(raw, offset, doc2) && !doc2.get_string().get(text)) {
          auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
          ok = ec == std::errc() && p == text.data() + text.size();
        }
      }
      if (!ok || !std::isfinite(ms) || ms <= 0 || ms > 1e9)
        return bad(ImportCounter::kBadFieldType, offset, "stepscope_unprofiled_step_ms is not a positive number of ms (ignored)");
      meta.unprofiled_step_ms = ms;
    } else if (key == "schemaVersion") {
      int64_t x;
      if (!doc.get_int64().get(x)) meta.schema_version = x;
    } else if (key == "deviceProperties") {
      od::array arr;
      if (doc.get_array().get(arr)) return bad(ImportCounter::kBadFieldType, offset, "deviceProperties is not an array");
      for (auto item : arr) {
        od::object o;
        if (item.get_object().get(o)) continue;
        DeviceProperties d;
        for (auto fr : o) {
          od::field f;
          if (std::move(fr).get(f)) break;
          od::value v = f.value();
          int64_t x;
          std::string_view s;
          if (f.key() == "id") { if (!v.get_int64().get(x)) d.id = static_cast<int>(x); }
          else if (f.key() == "name") { if (!v.get_string().get(s)) d.name = std::string(s); }
          else if (f.key() == "totalGlobalMem") { if (!v.get_int64().get(x)) d.total_global_mem = x; }
          else if (f.key() == "computeMajor") { if (!v.get_int64().get(x)) d.compute_major = static_cast<int>(x); }
          else if (f.key() == "computeMinor") { if (!v.get_int64().get(x)) d.compute_minor = static_cast<int>(x); }
          else if (f.key() == "numSms") { if (!v.get_int64().get(x)) d.num_sms = static_cast<int>(x); }
        }
        meta.devices.push_back(std::move(d));
      }
    }
  }
};

KinetoEventParser::KinetoEventParser(StoreBuilder& builder) : impl_(std::make_unique<Impl>(builder)) {}
KinetoEventParser::~KinetoEventParser() = default;
void KinetoEventParser::parse_event(std::string_view raw, uint64_t offset) { impl_->parse_event(raw, offset); }
void KinetoEventParser::finish() { impl_->finish(); }
void KinetoEventParser::parse_member(std::string_view key, std::string_view raw, uint64_t offset) {
  impl_->parse_member(key, raw, offset);
}

TokenizerCallbacks KinetoEventParser::callbacks() {
  TokenizerCallbacks cb;
  cb.on_member = [this](std::string_view key, std::string_view raw, uint64_t offset) { parse_member(key, raw, offset); };
  cb.on_event = [this](std::string_view raw, uint64_t offset) { parse_event(raw, offset); };
  cb.on_skipped = [this](uint64_t offset, uint64_t bytes, std::string_view why) {
    impl_->store.stats.add(bytes ? ImportCounter::kDamagedRecordSkipped : ImportCounter::kMissingComma, offset,
                           std::string(why));
  };
  return cb;
}

}  // namespace stepscope::trace
