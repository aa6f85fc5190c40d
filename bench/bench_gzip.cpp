// bench_gzip: the gzip decoders stepscope can use, on the same files.
//
//   isal        ISA-L igzip, streaming (stepscope's default)
//   zlib        zlib inflate, streaming (`stepscope analyze --gzip zlib`)
//   libdeflate  libdeflate, whole buffer: it has no streaming API, so the
//               compressed file and the entire uncompressed output must be in
//               memory at once (the figure stepscope avoids by streaming)
//
// Streaming decoders go through stepscope's own ByteSource (1 MB compressed
// reads, 4 MB output chunks, as the reader uses them). Each backend runs
// --repeat times per file; the best thread CPU time is reported, with the
// decoder's buffer memory: chunk buffers for streaming, input + whole output
// for libdeflate. Run one backend per process (--backend) under
// /usr/bin/time -v to see each one's peak RSS.
//
//   build/bench/bench_gzip [--repeat N] [--backend isal|zlib|libdeflate|all] FILE.gz...
#include <libdeflate.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "thread_cpu.h"
#include "trace/byte_source.h"

using namespace stepscope::trace;
using stepscope::bench::thread_cpu_seconds;

namespace {

constexpr size_t kChunk = 1 << 20;         // the tokenizer's read size (TokenizerOptions::chunk_bytes)
constexpr size_t kInputChunk = 256 << 10;  // gzip_source's compressed read size

struct Run {
  uint64_t bytes = 0;
  size_t buffer_bytes = 0;  // what the decoder needs in memory besides its state
  bool ok = false;
};

Run streaming(const std::string& path, GzipBackend gz) {
  Run r;
  std::string err;
  auto src = open_byte_source(path, gz, err);
  if (!src) return r;
  std::vector<char> buf(kChunk);
  while (true) {
    ReadResult rr = src->read(buf.data(), buf.size());
    r.bytes += rr.bytes;
    if (!rr.error.empty()) return r;
    if (rr.eof || rr.bytes == 0) break;
  }
  r.buffer_bytes = kChunk + kInputChunk;
  r.ok = true;
  return r;
}

Run whole_buffer(const std::string& path) {
  Run r;
  // The compressed file in one read, and an output buffer left uninitialised
  // (no zero-fill pass): what a whole-buffer reader would really do.
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return r;
  std::fseek(f, 0, SEEK_END);
  const size_t in_size = static_cast<size_t>(std::ftell(f));
  std::fseek(f, 0, SEEK_SET);
  std::unique_ptr<char[]> in(new char[in_size]);
  const bool read_ok = std::fread(in.get(), 1, in_size, f) == in_size;
  std::fclose(f);
  if (!read_ok || in_size < 18) return r;
  // ISIZE (the last 4 bytes of a member) is the size mod 2^32; a gzip file may
  // hold several members, so the buffer grows if the output does not fit.
  uint32_t isize = 0;
  std::memcpy(&isize, in.get() + in_size - 4, 4);
  size_t cap = std::max<size_t>(isize, in_size * 4) + 1;
  std::unique_ptr<char[]> out(new char[cap]);
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  size_t pos = 0;
  while (pos < in_size) {
    size_t in_used = 0, out_got = 0;
    libdeflate_result res = libdeflate_gzip_decompress_ex(d, in.get() + pos, in_size - pos, out.get() + r.bytes,
                                                          cap - r.bytes, &in_used, &out_got);
    if (res == LIBDEFLATE_INSUFFICIENT_SPACE) {
      std::unique_ptr<char[]> bigger(new char[cap * 2]);
      std::memcpy(bigger.get(), out.get(), r.bytes);
      out = std::move(bigger);
      cap *= 2;
      continue;
    }
    if (res != LIBDEFLATE_SUCCESS) {
      libdeflate_free_decompressor(d);
      return r;
    }
    r.bytes += out_got;
    pos += in_used;
  }
  libdeflate_free_decompressor(d);
  r.buffer_bytes = in_size + cap;
  r.ok = true;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 3;
  std::string backend = "all";
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--backend" && i + 1 < argc) {
      backend = argv[++i];
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: bench_gzip [--repeat N] [--backend isal|zlib|libdeflate|all] FILE.gz...\n");
      return 0;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "bench_gzip: no input files\n");
    return 2;
  }
  std::vector<std::string> backends;
  if (backend == "all") backends = {"isal", "zlib", "libdeflate"};
  else backends = {backend};

  std::printf("%-44s %-11s %10s %10s %10s %12s\n", "file", "backend", "MB out", "s CPU", "MB/s", "buffers MB");
  int errors = 0;
  for (const auto& f : files) {
    for (const auto& b : backends) {
      Run best;
      double best_t = 1e30;
      for (int i = 0; i < repeat; ++i) {
        double t0 = thread_cpu_seconds();
        Run r = b == "isal"   ? streaming(f, GzipBackend::kIsal)
                : b == "zlib" ? streaming(f, GzipBackend::kZlib)
                              : whole_buffer(f);
        double t = thread_cpu_seconds() - t0;
        if (!r.ok) {
          std::fprintf(stderr, "bench_gzip: %s: %s failed\n", f.c_str(), b.c_str());
          ++errors;
          break;
        }
        if (t < best_t) {
          best_t = t;
          best = r;
        }
      }
      if (!best.ok) continue;
      std::string name = f.size() > 44 ? "..." + f.substr(f.size() - 41) : f;
      std::printf("%-44s %-11s %10.1f %10.3f %10.0f %12.1f\n", name.c_str(), b.c_str(), best.bytes / 1e6, best_t,
                  best.bytes / 1e6 / best_t, best.buffer_bytes / 1e6);
    }
  }
  return errors ? 1 : 0;
}
