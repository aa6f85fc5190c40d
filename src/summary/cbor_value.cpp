#include "summary/cbor_value.h"

#include <stdexcept>
#include <string>

#include "diagnose/part_json.h"
#include "summary/cbor_body.h"
#include "summary/one_line.h"
#include "trace/json/utf8_repair.h"

namespace stepscope::summary {

namespace {

// The CBOR parser recurses once per level without a limit, so a body of
// nested arrays would overflow the stack: parsing stops past kMaxCborNesting.

class DepthLimitedParser : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<nlohmann::json>;
  explicit DepthLimitedParser(nlohmann::json& root) : Base(root, true) {}
  bool start_object(std::size_t n) { return enter() && Base::start_object(n); }
  bool start_array(std::size_t n) { return enter() && Base::start_array(n); }
  bool end_object() { return leave() && Base::end_object(); }
  bool end_array() { return leave() && Base::end_array(); }
  bool too_deep() const { return too_deep_; }

 private:
  bool enter() {
    if (++depth_ <= kMaxCborNesting) return true;
    too_deep_ = true;
    return false;
  }
  bool leave() {
    --depth_;
    return true;
  }
  size_t depth_ = 0;
  bool too_deep_ = false;
};

// `text` repaired when it is not UTF-8, else false (ASCII, most of a
// summary's text, is checked without a copy).
bool repaired_if_invalid(const std::string& text, std::string& repaired) {
  bool ascii = true;
  for (const char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  return !ascii && trace::replace_invalid_utf8(text, repaired) > 0;
}

// The first string (key or value) that is not UTF-8, repaired for the
// message; "" when all are. The parser has bounded the depth.
std::string first_invalid_utf8(const nlohmann::json& j) {
  std::string repaired;
  if (j.is_string()) return repaired_if_invalid(j.get_ref<const std::string&>(), repaired) ? repaired : std::string();
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (repaired_if_invalid(it.key(), repaired)) return repaired;
      if (std::string bad = first_invalid_utf8(it.value()); !bad.empty()) return bad;
    }
  } else if (j.is_array()) {
    for (const auto& v : j)
      if (std::string bad = first_invalid_utf8(v); !bad.empty()) return bad;
  }
  return {};
}

}  // namespace

nlohmann::json parse_cbor_value(const std::vector<uint8_t>& cbor) {
  nlohmann::json j;
  DepthLimitedParser parser(j);
  bool whole = false;
  try {
    whole = nlohmann::json::sax_parse(cbor, &parser, nlohmann::json::input_format_t::cbor);
  } catch (const nlohmann::json::exception& e) {  // malformed CBOR
    throw std::runtime_error(diagnose::json_error_text(e));
  }
  if (parser.too_deep()) throw std::runtime_error("nested more than " + std::to_string(kMaxCborNesting) + " levels deep");
  if (!whole) throw std::runtime_error("not a whole CBOR value");
  // CBOR text must be UTF-8, but the parser does not check it; the JSON
  // report would throw on it later.
  if (std::string bad = first_invalid_utf8(j); !bad.empty())
    throw std::runtime_error("text that is not UTF-8 (\"" + one_line(bad, 60) + "\")");
  return j;
}

BodyJson parse_cbor_body(const std::vector<uint8_t>& cbor) { return read_cbor_body(cbor); }

}  // namespace stepscope::summary
