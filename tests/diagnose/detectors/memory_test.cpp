// memory_allocator on the empty_cache example, memory_capacity on inline
// traces near and over device memory.
#include <gtest/gtest.h>

#include "diagnose/diagnose_fixtures.h"

namespace stepscope::diagnose {
namespace {

using namespace testing_support;
using analysis::testing_support::kernel;
using analysis::testing_support::launch;
using analysis::testing_support::step;
using analysis::testing_support::us_text;

TEST(MemoryAllocator, EmptyCacheEveryStep) {
  auto run = diagnose_folder(examples_dir() + "/empty_cache");
  const Finding* f = reported(run->d, Category::kMemoryAllocator);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(run->d.primary_bottleneck, "memory_allocator");
  // labels.json: 29 cudaMalloc and 29 cudaFree per step, 5.3 ms of idle in them.
  EXPECT_DOUBLE_EQ(*metric(*f, "cudamalloc_per_step"), 29.0);
  EXPECT_DOUBLE_EQ(*metric(*f, "cudafree_per_step"), 29.0);
  EXPECT_GE(*metric(*f, "reserved_memory_drops_per_step"), 1.0);
  EXPECT_NEAR(f->bound_saving_us, 5'800, 600);
  for (const Example& e : f->evidence.examples) EXPECT_TRUE(e.name == "cudaFree" || e.name == "cudaMalloc") << e.name;
  EXPECT_NE(f->remedy.find("empty_cache()"), std::string::npos);
}

TEST(MemoryAllocator, NoneWhereTheCacheIsWarm) {
  for (const char* name : {"item_sync", "eager_bf16_baseline", "baseline_compiled"}) {
    auto run = diagnose_folder(examples_dir() + "/" + name);
    EXPECT_EQ(any_finding(run->d, Category::kMemoryAllocator), nullptr) << name;
  }
}

// A 6 ms cudaFree between two kernels (the shape of a run's first runtime
// calls, which create the CUDA context), with or without a ProfilerStep.
std::unique_ptr<Diagnosed> long_free_run(bool with_step) {
  constexpr const char* k = "void at::native::vectorized_elementwise_kernel<4>";
  std::vector<std::string> events = {launch(0, 5'000, 1), kernel(k, 5'000, 95'000, 7, 1),
                                     launch(100'000, 6'000'000, 90, "cudaFree"), launch(6'100'000, 5'000, 2),
                                     kernel(k, 6'110'000, 100'000, 7, 2)};
  if (with_step) events.push_back(step(1, 0, 6'300'000));
  return diagnose_inline(events);
}

// Without ProfilerStep markers the one window may be the run's warm-up: the
// allocator is not judged (before: a 6 ms "steady-state" saving, as on
// HTA's critical_path/alexnet trace, where a 6 s cudaFree is the context's
// creation), and a note says why.
TEST(MemoryAllocator, NotJudgedWithoutProfilerSteps) {
  auto run = long_free_run(false);
  EXPECT_EQ(any_finding(run->d, Category::kMemoryAllocator), nullptr);
  EXPECT_TRUE(has_note(run->d, "memory_allocator", "steady-state"));
  auto stepped = long_free_run(true);
  const Finding* f = any_finding(stepped->d, Category::kMemoryAllocator);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*metric(*f, "cudafree_per_step"), 1.0);
  EXPECT_FALSE(has_note(stepped->d, "memory_allocator", "steady-state"));
}

std::string memory_sample(int64_t ts_ns, int64_t allocated, int64_t reserved, int64_t bytes) {
  return R"({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": )" +
         us_text(ts_ns) + R"(, "args": {"Total Reserved": )" + std::to_string(reserved) +
         R"(, "Total Allocated": )" + std::to_string(allocated) + R"(, "Bytes": )" + std::to_string(bytes) +
         R"(, "Device Id": 0, "Device Type": 1}})";
}

const char* kDevice = R"("deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85000000000}])";

TEST(MemoryCapacity, ReservedNearDeviceMemory) {
  auto run = diagnose_inline({step(1, 0, 100'000), launch(0, 1'000, 1),
                              kernel("void at::native::vectorized_elementwise_kernel<4>", 2'000, 90'000, 7, 1),
                              memory_sample(10'000, 40'000'000'000, 50'000'000'000, 40'000'000'000),
                              memory_sample(20'000, 79'000'000'000, 80'000'000'000, 39'000'000'000)},
                             kDevice);
  const Finding* f = reported(run->d, Category::kMemoryCapacity);
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->saves_time);
  EXPECT_EQ(f->bound_saving_us, 0.0);
  EXPECT_EQ(f->severity, Severity::kMedium);
  EXPECT_NEAR(*metric(*f, "peak_reserved_pct_of_device"), 100.0 * 80 / 85, 1e-6);
  // A finding that saves no time is never the primary bottleneck.
  EXPECT_NE(run->d.primary_bottleneck, "memory_capacity");
}

TEST(MemoryCapacity, OutOfMemoryEventsAreHighSeverity) {
  auto run = diagnose_inline({step(1, 0, 100'000), launch(0, 1'000, 1),
                              kernel("void at::native::vectorized_elementwise_kernel<4>", 2'000, 90'000, 7, 1),
                              memory_sample(10'000, 1'000'000'000, 2'000'000'000, 1'000'000'000),
                              R"({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[OutOfMemory]", "pid": 1, "tid": 1, "ts": 50.000, "args": {"Device Id": 0, "Device Type": 1, "Bytes": 90000000000}})"},
                             kDevice);
  const Finding* f = reported(run->d, Category::kMemoryCapacity);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kHigh);
  EXPECT_DOUBLE_EQ(*metric(*f, "out_of_memory_events"), 1.0);
  ASSERT_FALSE(f->evidence.examples.empty());
  EXPECT_EQ(f->evidence.examples.front().name, "[OutOfMemory]");
}

TEST(MemoryCapacity, FarFromFullIsNoFinding) {
  for (const char* name : {"baseline_compiled", "fp32_no_tf32", "empty_cache"}) {
    auto run = diagnose_folder(examples_dir() + "/" + name);
    EXPECT_EQ(any_finding(run->d, Category::kMemoryCapacity), nullptr) << name;
    EXPECT_FALSE(has_note(run->d, "memory_capacity", "peak allocated")) << name << ": samples are there";
  }
}

TEST(MemoryCapacity, WithoutSamplesItSaysSo) {
  SKIP_WITHOUT_SHARED();
  auto run = diagnose_folder(stepscope::testing::shared_dir() + "/conformance/param/linear");
  EXPECT_TRUE(has_note(run->d, "memory_capacity", "peak allocated"));
}

}  // namespace
}  // namespace stepscope::diagnose
