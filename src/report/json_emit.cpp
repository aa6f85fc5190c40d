#include "report/json_emit.h"

#include <array>
#include <charconv>
#include <cmath>

namespace stepscope::report {

using nlohmann::ordered_json;

ordered_json& TreeEmit::place(ordered_json v) {
  if (open_.empty()) {
    root_ = std::move(v);
    return root_;
  }
  ordered_json& in = *open_.back();
  if (in.is_array()) {
    in.push_back(std::move(v));
    return in.back();
  }
  ordered_json& slot = in[key_];
  slot = std::move(v);
  return slot;
}

TextEmit::TextEmit(std::string& out, int indent, unsigned depth)
    : out_(out),
      pretty_(indent >= 0),
      step_(indent >= 0 ? static_cast<unsigned>(indent) : 0),
      base_(depth),
      scalars_(nlohmann::detail::output_adapter<char>(out), ' ') {}

// An array's element starts its own line; an object's member started with its key.
void TextEmit::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (open_.empty()) return;
  Open& in = open_.back();
  out_ += in.members++ > 0 ? (pretty_ ? ",\n" : ",") : (pretty_ ? "\n" : "");
  if (pretty_) out_.append(depth(), ' ');
}

void TextEmit::open(char c, bool object) {
  before_value();
  out_ += c;
  open_.push_back({object, 0});
}

void TextEmit::end() {
  const Open closed = open_.back();
  open_.pop_back();
  if (closed.members > 0 && pretty_) {
    out_ += '\n';
    out_.append(depth(), ' ');
  }
  out_ += closed.object ? '}' : ']';
}

void TextEmit::key(std::string_view k) {
  Open& in = open_.back();
  out_ += in.members++ > 0 ? (pretty_ ? ",\n" : ",") : (pretty_ ? "\n" : "");
  if (pretty_) out_.append(depth(), ' ');
  quoted(k);
  out_ += pretty_ ? ": " : ":";
  after_key_ = true;
}

// Printable ASCII other than the quote and the backslash is written as it
// is (the serializer, ensure_ascii off, escapes only those and control
// characters, and checks UTF-8): anything else goes through the serializer.
constexpr std::array<bool, 256> kWrittenAsItIs = [] {
  std::array<bool, 256> plain{};
  for (int b = 0x20; b < 0x80; ++b) plain[static_cast<size_t>(b)] = b != '"' && b != '\\';
  return plain;
}();

void TextEmit::quoted(std::string_view s) {
  bool plain = true;
  for (const char c : s) plain &= kWrittenAsItIs[static_cast<unsigned char>(c)];
  if (!plain) {
    scalars_.dump(ordered_json(s), false, false, 0, 0);
    return;
  }
  out_ += '"';
  out_ += s;
  out_ += '"';
}

void TextEmit::value(const ordered_json& v) {
  switch (v.type()) {
    case ordered_json::value_t::object:
      begin_object();
      for (auto it = v.begin(); it != v.end(); ++it) {
        key(it.key());
        value(it.value());
      }
      end();
      return;
    case ordered_json::value_t::array:
      begin_array();
      for (const ordered_json& x : v) value(x);
      end();
      return;
    case ordered_json::value_t::string: text(v.get_ref<const std::string&>()); return;
    case ordered_json::value_t::boolean: boolean(v.get<bool>()); return;
    case ordered_json::value_t::number_integer: integer(v.get<std::int64_t>()); return;
    case ordered_json::value_t::number_unsigned: unsigned_integer(v.get<std::uint64_t>()); return;
    case ordered_json::value_t::number_float: number(v.get<double>()); return;
    default:  // null, binary, discarded
      before_value();
      scalars_.dump(v, pretty_, false, step_, depth());
  }
}

void TextEmit::boolean(bool v) {
  before_value();
  out_ += v ? "true" : "false";
}

void TextEmit::integer(std::int64_t v) {
  before_value();
  std::array<char, 24> digits;
  out_.append(digits.data(), std::to_chars(digits.data(), digits.data() + digits.size(), v).ptr);
}

void TextEmit::unsigned_integer(std::uint64_t v) {
  before_value();
  std::array<char, 24> digits;
  out_.append(digits.data(), std::to_chars(digits.data(), digits.data() + digits.size(), v).ptr);
}

// The serializer's own formatting (Grisu2, then its exponent rules); not
// finite is null, as it writes it.
void TextEmit::number(double v) {
  before_value();
  if (!std::isfinite(v)) {
    out_ += "null";
    return;
  }
  std::array<char, 64> digits;
  out_.append(digits.data(), nlohmann::detail::to_chars(digits.data(), digits.data() + digits.size(), v));
}

void TextEmit::text(std::string_view v) {
  before_value();
  quoted(v);
}

}  // namespace stepscope::report
