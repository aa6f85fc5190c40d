#include "summary/summary_file.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "summary/body_arena.h"
#include "summary/cbor_value.h"
#include "summary/summary_json.h"

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
    BodyArenaScope arena;  // the tree's nodes, let go at once when it closes
    d.summary = summary_from_body(parse_cbor_body(cbor));
  } catch (const std::exception& e) {
    return failed(std::string("bad summary body: ") + e.what());
  }
  d.ok = true;
  return d;
}

DecodedSummary read_summary_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return failed(path + ": cannot open");
  // Read whole at its size (a merge reads thousands of small files); a
  // stream without one (a pipe) a character at a time.
  std::string bytes;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size >= 0 && in) {
    bytes.resize(static_cast<size_t>(size));
    if (!in.read(bytes.data(), size) || in.gcount() != size) return failed(path + ": read error");
  } else {
    in.clear();
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) return failed(path + ": read error");
  }
  DecodedSummary d = decode_summary(bytes);
  if (!d.ok) d.error = path + ": " + d.error;
  return d;
}

}  // namespace stepscope::summary
