// Helpers for reader tests: temporary folders, files written from strings,
// gzip in and out (through zlib, independent of the reader's own decoders),
// and small Kineto-shaped event texts. Fixtures are built in the test, so
// the bad input each test feeds is visible where it is asserted.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_paths.h"
#include "trace/event_store.h"
#include "trace/trace_reader.h"

namespace stepscope::testing {

namespace fs = std::filesystem;

// A fresh folder under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "stepscope_test_XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

  // Writes `bytes` to `name` in this folder and returns the full path.
  std::string write(const std::string& name, const std::string& bytes) const {
    std::string p = file(name);
    fs::create_directories(fs::path(p).parent_path());
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + p);
    return p;
  }

 private:
  fs::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One gzip member holding `text`.
inline std::string gzip(const std::string& text, int level = 6) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::string out(deflateBound(&zs, text.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate failed");
  out.resize(zs.total_out);
  return out;
}

// Decompresses a whole gzip file (all members) with zlib.
inline std::string gunzip_file(const std::string& path) {
  std::string in = read_file(path);
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw std::runtime_error("inflateInit2 failed");
  std::string out;
  char buf[1 << 16];
  zs.next_in = reinterpret_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    int rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      inflateReset(&zs);
      continue;
    }
    if (rc != Z_OK) {
      inflateEnd(&zs);
      throw std::runtime_error("cannot gunzip " + path);
    }
  }
  inflateEnd(&zs);
  return out;
}

// A complete ("X") event as Kineto writes it; `extra` is appended verbatim
// inside the object (e.g. R"("args": {"correlation": 5})").
inline std::string x_event(const std::string& cat, const std::string& name, const std::string& ts,
                           const std::string& dur, const std::string& pid = "1",
                           const std::string& tid = "1", const std::string& extra = "") {
  std::string e = R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name + R"(", "pid": )" +
                  pid + R"(, "tid": )" + tid + R"(, "ts": )" + ts + R"(, "dur": )" + dur;
  if (!extra.empty()) e += ", " + extra;
  return e + "}";
}

// {"schemaVersion": 1, <header>, "traceEvents": [events...]}
inline std::string trace_doc(const std::vector<std::string>& events, const std::string& header = "") {
  std::string s = "{\n  \"schemaVersion\": 1,\n";
  if (!header.empty()) s += "  " + header + ",\n";
  s += "  \"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i) s += "    " + events[i] + (i + 1 < events.size() ? ",\n" : "\n");
  return s + "  ]\n}\n";
}

// `n` ordinary CPU-op events, ts 1000, 1010, ... us.
inline std::vector<std::string> cpu_ops(int n, int first_ts_us = 1000) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i)
    v.push_back(x_event("cpu_op", "aten::op" + std::to_string(i), std::to_string(first_ts_us + 10 * i), "5"));
  return v;
}

inline trace::ReadOutcome read(const std::string& path, trace::EventStore& store, bool salvage = false,
                               trace::GzipBackend gzip = trace::GzipBackend::kIsal) {
  trace::ReadOptions o;
  o.salvage = salvage;
  o.gzip = gzip;
  return trace::read_trace_file(path, store, o);
}

// The first (by name) .json.gz trace in a ../shared folder.
inline std::string shared_trace(const std::string& folder) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(shared_dir() + "/" + folder))
    if (e.path().string().ends_with(".json.gz")) found.push_back(e.path().string());
  std::sort(found.begin(), found.end());
  return found.empty() ? std::string() : found.front();
}

}  // namespace stepscope::testing

namespace stepscope::trace {
// Readable parameter values in test names and failure messages.
inline void PrintTo(GzipBackend b, std::ostream* os) { *os << (b == GzipBackend::kIsal ? "isal" : "zlib"); }
}  // namespace stepscope::trace
