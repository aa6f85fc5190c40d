#include "summary/cbor_body.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "summary/cbor_value.h"
#include "summary/one_line.h"
#include "trace/json/utf8_repair.h"

namespace stepscope::summary {

namespace {

class BodyReader {
 public:
  explicit BodyReader(const std::vector<uint8_t>& cbor) : begin_(cbor.data()), at_(begin_), end_(begin_ + cbor.size()) {}

  BodyJson read_whole() {
    BodyJson root;
    item(root, 0);
    if (at_ != end_) throw std::runtime_error("not a whole CBOR value");
    if (!bad_text_.empty()) throw std::runtime_error("text that is not UTF-8 (\"" + one_line(bad_text_, 60) + "\")");
    return root;
  }

 private:
  // At the initial byte of the item being read (counted from 1).
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("parse error at byte " + std::to_string(item_ - begin_ + 1) + ": " + what);
  }
  // Just past the last byte.
  [[noreturn]] void fail_at_end() const {
    throw std::runtime_error("parse error at byte " + std::to_string(end_ - begin_ + 1) + ": unexpected end of input");
  }

  uint8_t initial_byte() {
    if (at_ == end_) fail_at_end();
    item_ = at_;
    return *at_++;
  }
  uint64_t big_endian(int bytes) {
    if (end_ - at_ < bytes) fail_at_end();
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | *at_++;
    return v;
  }
  // The count or value that follows an initial byte's low five bits.
  uint64_t argument(uint8_t info) {
    if (info < 24) return info;
    switch (info) {
      case 24: return big_endian(1);
      case 25: return big_endian(2);
      case 26: return big_endian(4);
      case 27: return big_endian(8);
      case 31: fail("an item of indefinite length (stepscope writes none)");
      default: fail("reserved additional information " + std::to_string(info));
    }
  }
  // `n` bytes of the input, refused past its end.
  const uint8_t* take(uint64_t n) {
    if (n > static_cast<uint64_t>(end_ - at_)) fail_at_end();
    const uint8_t* from = at_;
    at_ += n;
    return from;
  }
  std::string text(uint64_t n) {
    const uint8_t* from = take(n);
    std::string s(reinterpret_cast<const char*>(from), n);
    if (bad_text_.empty()) {
      uint8_t any_high = 0;
      for (const char c : s) any_high |= static_cast<uint8_t>(c);
      std::string repaired;
      if ((any_high & 0x80) != 0 && trace::replace_invalid_utf8(s, repaired) > 0) bad_text_ = std::move(repaired);
    }
    return s;
  }
  std::string key() {
    const uint8_t initial = initial_byte();
    if ((initial >> 5) != 3) fail("a map key that is not text");
    return text(argument(initial & 31));
  }
  static double half_float(uint64_t bits) {
    const int exponent = static_cast<int>((bits >> 10) & 0x1f);
    const double mantissa = static_cast<double>(bits & 0x3ff);
    double v;
    if (exponent == 0)
      v = std::ldexp(mantissa, -24);  // subnormal
    else if (exponent == 31)
      v = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    else
      v = std::ldexp(mantissa + 1024, exponent - 25);
    return (bits & 0x8000) != 0 ? -v : v;
  }
  // A container opened at `depth` (the root's items are at depth 1).
  void enter(size_t depth) const {
    if (depth > kMaxCborNesting)
      throw std::runtime_error("nested more than " + std::to_string(kMaxCborNesting) + " levels deep");
  }

  void item(BodyJson& out, size_t depth) {
    const uint8_t initial = initial_byte();
    const uint8_t info = initial & 31;
    switch (initial >> 5) {
      case 0: out = static_cast<std::uint64_t>(argument(info)); return;
      case 1: out = static_cast<std::int64_t>(-1) - static_cast<std::int64_t>(argument(info)); return;
      case 2: {
        const uint64_t n = argument(info);
        const uint8_t* from = take(n);
        out = BodyJson::binary(std::vector<uint8_t>(from, from + n));
        return;
      }
      case 3: out = text(argument(info)); return;
      case 4: {
        enter(depth + 1);
        const uint64_t n = argument(info);
        out = BodyJson::array();
        auto& items = out.get_ref<BodyJson::array_t&>();
        items.reserve(std::min<uint64_t>(n, static_cast<uint64_t>(end_ - at_)));  // an item is a byte at least
        for (uint64_t i = 0; i < n; ++i) item(items.emplace_back(), depth + 1);
        return;
      }
      case 5: {
        enter(depth + 1);
        const uint64_t n = argument(info);
        out = BodyJson::object();
        auto& members = out.get_ref<BodyJson::object_t&>();
        // A repeated key keeps its last value, as nlohmann's reader did.
        for (uint64_t i = 0; i < n; ++i) {
          BodyJson& slot = members[key()];
          slot = BodyJson();
          item(slot, depth + 1);
        }
        return;
      }
      case 6: fail("a tagged item (stepscope writes none)");
      default: break;
    }
    switch (info) {
      case 20: out = false; return;
      case 21: out = true; return;
      case 22: out = nullptr; return;
      case 25: out = half_float(big_endian(2)); return;
      case 26: out = static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(big_endian(4)))); return;
      case 27: out = std::bit_cast<double>(big_endian(8)); return;
      default: fail("simple value " + std::to_string(info) + " (not false, true, null or a float)");
    }
  }

  const uint8_t* begin_;
  const uint8_t* at_;
  const uint8_t* end_;
  const uint8_t* item_ = nullptr;  // the initial byte of the item being read
  std::string bad_text_;  // the first text that is not UTF-8, repaired; "" while there is none
};

}  // namespace

BodyJson read_cbor_body(const std::vector<uint8_t>& cbor) { return BodyReader(cbor).read_whole(); }

}  // namespace stepscope::summary
