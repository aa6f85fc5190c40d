#include "summary/summary_file.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "summary/one_line.h"
#include "summary/summary_json.h"
#include "trace/json/utf8_repair.h"

namespace stepscope::summary {

namespace {

// A body may inflate to at most this many times its deflated size: CBOR of
// the analyses deflates 3-10x; more is a damaged or hostile file, refused
// before the memory is taken.
constexpr uint64_t kMaxInflateRatio = 1024;
constexpr uint64_t kMaxBodyBytes = uint64_t{4} << 30;

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t get_le(std::string_view b, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

uint32_t crc_of(std::string_view b) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // crc32 takes a uInt length: feed large bodies in pieces.
  for (size_t at = 0; at < b.size();) {
    const size_t n = std::min<size_t>(b.size() - at, 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(b.data() + at), static_cast<uInt>(n));
    at += n;
  }
  return static_cast<uint32_t>(crc);
}

std::string deflate_bytes(const std::vector<uint8_t>& in) {
  uLongf bound = compressBound(static_cast<uLong>(in.size()));
  std::string out(bound, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &bound, in.data(), static_cast<uLong>(in.size()), 6) != Z_OK)
    throw std::runtime_error("zlib could not deflate the summary");
  out.resize(bound);
  return out;
}

// The summary schema nests eight levels deep; the CBOR parser recurses once
// per level without a limit, so a body of nested arrays would overflow the
// stack. Parsing stops past this depth.
constexpr size_t kMaxNesting = 32;

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
    if (++depth_ <= kMaxNesting) return true;
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

// The first string (key or value) that is not UTF-8, repaired for the
// message; "" when all are. The parser has bounded the depth.
std::string first_invalid_utf8(const nlohmann::json& j) {
  std::string repaired;
  if (j.is_string()) {
    const auto& text = j.get_ref<const std::string&>();
    return trace::replace_invalid_utf8(text, repaired) > 0 ? repaired : std::string();
  }
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (trace::replace_invalid_utf8(it.key(), repaired) > 0) return repaired;
      if (std::string bad = first_invalid_utf8(it.value()); !bad.empty()) return bad;
    }
  } else if (j.is_array()) {
    for (const auto& v : j)
      if (std::string bad = first_invalid_utf8(v); !bad.empty()) return bad;
  }
  return {};
}

DecodedSummary failed(std::string why) {
  DecodedSummary d;
  d.error = std::move(why);
  return d;
}

}  // namespace

std::string encode_summary(const RankSummary& s) { return wrap_summary_body(nlohmann::json::to_cbor(summary_to_json(s))); }

std::string wrap_summary_body(const std::vector<uint8_t>& cbor) {
  const std::string body = deflate_bytes(cbor);
  std::string out(kSummaryMagic, sizeof kSummaryMagic);
  put_u32(out, kSummaryFormatVersion);
  put_u32(out, 0);  // flags: none defined
  put_u64(out, cbor.size());
  put_u64(out, body.size());
  put_u32(out, crc_of(body));
  out += body;
  return out;
}

DecodedSummary decode_summary(std::string_view bytes) {
  if (bytes.size() < sizeof kSummaryMagic || std::memcmp(bytes.data(), kSummaryMagic, sizeof kSummaryMagic) != 0)
    return failed("not a stepscope summary (no STPSCSUM header)");
  if (bytes.size() < kSummaryHeaderBytes) return failed("truncated summary header");
  const uint64_t version = get_le(bytes, 8, 4);
  if (version != kSummaryFormatVersion)
    return failed("summary format version " + std::to_string(version) + "; this stepscope reads version " +
                  std::to_string(kSummaryFormatVersion) + " (summarize the traces again with this stepscope)");
  const uint64_t flags = get_le(bytes, 12, 4);
  if (flags != 0) return failed("summary flags " + std::to_string(flags) + " unknown to this stepscope");
  const uint64_t raw = get_le(bytes, 16, 8);
  const uint64_t deflated = get_le(bytes, 24, 8);
  const uint32_t crc = static_cast<uint32_t>(get_le(bytes, 32, 4));
  const std::string_view body = bytes.substr(kSummaryHeaderBytes);
  if (body.size() != deflated)
    return failed("summary body is " + std::to_string(body.size()) + " bytes, the header says " +
                  std::to_string(deflated) + (body.size() < deflated ? " (truncated)" : ""));
  if (crc_of(body) != crc) return failed("summary checksum mismatch (the file is damaged)");
  if (raw > kMaxBodyBytes || raw > deflated * kMaxInflateRatio + 1024)
    return failed("summary header claims " + std::to_string(raw) + " bytes inflated from " +
                  std::to_string(deflated) + " (damaged)");
  std::vector<uint8_t> cbor(raw);
  uLongf got = static_cast<uLongf>(raw);
  if (uncompress(cbor.data(), &got, reinterpret_cast<const Bytef*>(body.data()), static_cast<uLong>(body.size())) !=
          Z_OK ||
      got != raw)
    return failed("summary body does not inflate to its stated size (damaged)");
  DecodedSummary d;
  try {
    nlohmann::json j;
    DepthLimitedParser parser(j);
    const bool whole = nlohmann::json::sax_parse(cbor, &parser, nlohmann::json::input_format_t::cbor);
    if (parser.too_deep())
      return failed("bad summary body: nested more than " + std::to_string(kMaxNesting) + " levels deep");
    if (!whole) return failed("bad summary body: not a whole CBOR value");
    // CBOR text must be UTF-8, but the parser does not check it; the JSON
    // report would throw on it later.
    if (std::string bad = first_invalid_utf8(j); !bad.empty())
      return failed("bad summary body: text that is not UTF-8 (\"" + one_line(bad, 60) + "\")");
    d.summary = summary_from_json(j);
  } catch (const std::exception& e) {
    return failed(std::string("bad summary body: ") + e.what());
  }
  d.ok = true;
  return d;
}

DecodedSummary read_summary_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return failed(path + ": cannot open");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return failed(path + ": read error");
  DecodedSummary d = decode_summary(bytes);
  if (!d.ok) d.error = path + ": " + d.error;
  return d;
}

}  // namespace stepscope::summary
