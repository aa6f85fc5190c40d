// bench_ingest: where the time of reading a trace goes, per file, in three
// cumulative phases, and what the resulting store costs in memory.
//
//   gunzip    open + decompress into a 4 MB buffer (ISA-L, or zlib with --gzip zlib)
//   tokenize  + cut the text into records (no parsing)
//   read      + parse every record, intern, append to the store, sort, join
//
// Each phase runs --repeat times; the best run's thread CPU time is reported
// (CPU, not wall, so other load on the machine inflates it less). MB are 1e6
// bytes of uncompressed JSON. Memory is resident memory (RSS) from the
// kernel's own counters, so it counts what the store really touches whatever
// its layout: free heap is returned first (malloc_trim) and the peak counter
// reset (/proc/self/clear_refs), then one read of the file; "peak" is the
// highest RSS above the start during the read, "held" what the finished
// store keeps, both as a share of the file's JSON, and held per event.
// A last row loads all inputs at once through load_traces (one thread per
// file up to the core count) and reports wall time and the process's peak RSS.
//
// --set-only skips the per-file phases, so the peak RSS is that of the load alone.
//
//   build/bench/bench_ingest [--repeat N] [--gzip isal|zlib] [--set-only] FILE|FOLDER...
#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "thread_cpu.h"
#include "trace/byte_source.h"
#include "trace/json/json_tokenizer.h"
#include "trace/trace_reader.h"
#include "trace/trace_set.h"

using namespace stepscope::trace;
using stepscope::bench::thread_cpu_seconds;

namespace {

// VmRSS or VmHWM from /proc/self/status, in bytes.
uint64_t status_kb(const char* field) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  uint64_t kb = 0;
  const size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, field, n) == 0 && line[n] == ':') {
      kb = std::strtoull(line + n + 1, nullptr, 10);
      break;
    }
  }
  std::fclose(f);
  return kb * 1024;
}

struct RssUse {
  uint64_t peak = 0;  // highest RSS above the start, while reading
  uint64_t held = 0;  // RSS above the start once the store is finished
  size_t events = 0;
  bool ok = false;
};

RssUse rss_of_read(const std::string& path, const ReadOptions& ro) {
  malloc_trim(0);
  if (FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);  // resets VmHWM to the current RSS
    std::fclose(f);
  }
  const uint64_t start = status_kb("VmRSS");
  RssUse u;
  {
    EventStore s;
    u.ok = read_trace_file(path, s, ro).ok;
    u.held = status_kb("VmRSS") - start;
    u.peak = status_kb("VmHWM") - start;
    u.events = s.events.size();
  }
  malloc_trim(0);
  return u;
}

// Returns uncompressed bytes, or 0 on failure.
uint64_t phase_gunzip(const std::string& path, GzipBackend gz) {
  std::string err;
  auto src = open_byte_source(path, gz, err);
  if (!src) return 0;
  std::vector<char> buf(4 << 20);
  uint64_t total = 0;
  while (true) {
    ReadResult r = src->read(buf.data(), buf.size());
    total += r.bytes;
    if (r.eof || !r.error.empty() || r.bytes == 0) break;
  }
  return total;
}

uint64_t phase_tokenize(const std::string& path, GzipBackend gz) {
  std::string err;
  auto src = open_byte_source(path, gz, err);
  if (!src) return 0;
  uint64_t records = 0;
  TokenizerCallbacks cb;
  cb.on_event = [&](std::string_view, uint64_t) { ++records; };
  cb.on_member = [&](std::string_view, std::string_view, uint64_t) { ++records; };
  tokenize_trace(*src, cb);
  return records;
}

struct Best {
  double cpu = 1e30;
  void take(double t) { cpu = std::min(cpu, t); }
};

template <typename F>
double best_cpu(int repeat, F&& f) {
  Best b;
  for (int i = 0; i < repeat; ++i) {
    double t0 = thread_cpu_seconds();
    f();
    b.take(thread_cpu_seconds() - t0);
  }
  return b.cpu;
}

// One row per file: the three phases and the store's size. Returns the failures.
int per_file_phases(const std::vector<std::string>& files, int repeat, GzipBackend gz) {
  std::printf("%-44s %9s %9s %9s %9s %9s %9s %9s %7s %7s %7s %9s\n", "file", "MB", "gunzip", "tokenize", "read",
              "gunzip", "tokenize", "read", "peak", "held", "held", "events");
  std::printf("%-44s %9s %9s %9s %9s %9s %9s %9s %7s %7s %7s %9s\n", "", "(1e6 B)", "(MB/s)", "(MB/s)", "(MB/s)",
              "(s CPU)", "(s CPU)", "(s CPU)", "(xJSON)", "(xJSON)", "(B/ev)", "");
  int errors = 0;
  for (const auto& f : files) {
    uint64_t bytes = phase_gunzip(f, gz);
    if (bytes == 0) {
      std::fprintf(stderr, "bench_ingest: %s: unreadable\n", f.c_str());
      ++errors;
      continue;
    }
    double t_gz = best_cpu(repeat, [&] { phase_gunzip(f, gz); });
    double t_tok = best_cpu(repeat, [&] { phase_tokenize(f, gz); });
    ReadOptions ro;
    ro.gzip = gz;
    double t_read = best_cpu(repeat, [&] {
      EventStore s;
      read_trace_file(f, s, ro);
    });
    RssUse mem = rss_of_read(f, ro);
    if (!mem.ok) continue;  // not a trace (a config or expected-results file in the folder)
    const double mb = static_cast<double>(bytes) / 1e6;
    std::string name = f.size() > 44 ? "..." + f.substr(f.size() - 41) : f;
    std::printf("%-44s %9.1f %9.0f %9.0f %9.0f %9.3f %9.3f %9.3f %7.2f %7.2f %7.0f %9zu\n", name.c_str(), mb,
                mb / t_gz, mb / t_tok, mb / t_read, t_gz, t_tok, t_read, static_cast<double>(mem.peak) / static_cast<double>(bytes),
                static_cast<double>(mem.held) / static_cast<double>(bytes),
                mem.events ? static_cast<double>(mem.held) / static_cast<double>(mem.events) : 0.0, mem.events);
  }
  return errors;
}

}  // namespace

int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);  // as the CLI does for one file per thread (src/cli/allocator_policy.cpp)
  int repeat = 3;
  bool set_only = false;
  GzipBackend gz = GzipBackend::kIsal;
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--gzip" && i + 1 < argc) {
      gz = std::strcmp(argv[++i], "zlib") == 0 ? GzipBackend::kZlib : GzipBackend::kIsal;
    } else if (a == "--set-only") {
      set_only = true;
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: bench_ingest [--repeat N] [--gzip isal|zlib] [--set-only] FILE|FOLDER...\n");
      return 0;
    } else {
      inputs.push_back(a);
    }
  }
  std::string err;
  std::vector<std::string> files = expand_inputs(inputs, err);
  if (files.empty()) {
    std::fprintf(stderr, "bench_ingest: %s\n", err.c_str());
    return 2;
  }

  int errors = set_only ? 0 : per_file_phases(files, repeat, gz);

  // All inputs at once, as `stepscope analyze` reads them.
  ReadOptions ro;
  ro.gzip = gz;
  auto w0 = std::chrono::steady_clock::now();
  rusage u0{};
  getrusage(RUSAGE_SELF, &u0);
  LoadResult all = load_traces(inputs, ro);
  rusage u1{};
  getrusage(RUSAGE_SELF, &u1);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  double cpu = secs(u1.ru_utime) - secs(u0.ru_utime) + secs(u1.ru_stime) - secs(u0.ru_stime);
  if (!all.ok) {
    std::fprintf(stderr, "bench_ingest: load_traces: %s\n", all.error.c_str());
    return 1;
  }
  const double mb = static_cast<double>(all.set.uncompressed_bytes) / 1e6;
  std::printf("load_traces: %zu ranks, %.1f MB in %.3f s wall (%.0f MB/s), %.3f s CPU (%.0f MB/s per core), "
              "peak RSS %.1f MB (%.2fx JSON)\n",
              all.set.ranks.size(), mb, wall, mb / wall, cpu, mb / cpu, static_cast<double>(u1.ru_maxrss) / 1e3,
              static_cast<double>(u1.ru_maxrss) * 1e3 / static_cast<double>(all.set.uncompressed_bytes));
  return errors ? 1 : 0;
}
