// Running out of memory while reading one file (std::bad_alloc from the
// store's columns, the tokenizer's buffer or the pipeline's thread) ends
// that file with one line naming it, never the process. Allocation failure
// is injected here: this binary's operator new throws for blocks above a
// threshold while a test sets one.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "trace_fixtures.h"

namespace {
std::atomic<size_t> g_fail_above{0};  // 0: never fail
}  // namespace

void* operator new(size_t n) {
  const size_t limit = g_fail_above.load(std::memory_order_relaxed);
  if (limit != 0 && n > limit) throw std::bad_alloc();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return ::operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
// The nothrow forms too (simdjson allocates with them): every block this
// binary frees with free() must have come from malloc(), or ASan reports an
// alloc-dealloc mismatch.
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t& tag) noexcept { return ::operator new(n, tag); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace stepscope::trace {
namespace {

TEST(OutOfMemory, BadAllocWhileReadingIsAOneLineErrorNamingTheFile) {
  testing::TempDir dir;
  const std::string path = dir.write("big.json", testing::trace_doc(testing::cpu_ops(200000)));
  for (bool pipeline : {false, true}) {
    SCOPED_TRACE(pipeline ? "pipelined" : "direct");
    EventStore store;
    ReadOptions o;
    o.pipeline = pipeline;
    // Above the tokenizer's 1 MiB window; the 8-byte columns of 200,000 events pass it.
    g_fail_above = size_t{1536} << 10;
    ReadOutcome out = read_trace_file(path, store, o);
    g_fail_above = 0;
    EXPECT_FALSE(out.ok);
    EXPECT_EQ(out.error, path + ": out of memory while reading this file");
    EXPECT_EQ(store.events.size(), 0u);
  }
  // The same file reads whole when memory is there.
  EventStore store;
  ASSERT_TRUE(testing::read(path, store).ok);
  EXPECT_EQ(store.events.size(), 200000u);
}

}  // namespace
}  // namespace stepscope::trace
