// The GPU benchmarks on a real device: each skips with a message where no
// GPU (or no CUDA build) is present, as in CI.
#include <gtest/gtest.h>

#ifdef STEPSCOPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "gpu_skip.h"
#include "model/gpu_table.h"
#include "hwbench/gpu/cuda_check.h"
#include "hwbench/gpu/run_bench.h"
#endif

namespace stepscope::hwbench {
namespace {

#ifdef STEPSCOPE_HAVE_CUDA
// The hardware profile and its parts (src/model/hardware_profile.h).
using namespace model;

BenchOptions quick(std::vector<std::string> sections) {
  BenchOptions o;
  o.quick = true;
  o.sections = std::move(sections);
  return o;
}

TEST(GpuBench, LaunchLatenciesAreOrdered) {
  SKIP_WITHOUT_GPU();
  HardwareProfile p = gpu::run_bench(quick({"launch"}));
  const LatencyResult* rt = p.launch_result("stream_roundtrip");
  const LatencyResult* graph = p.launch_result("graph_replay");
  ASSERT_NE(rt, nullptr);
  ASSERT_NE(graph, nullptr);
  // A launch waited for costs a host round trip (µs); a graph node replays
  // on the device alone, so it must be cheaper, and neither can be 0.
  EXPECT_GT(graph->us, 0);
  EXPECT_LT(graph->us, rt->us);
}

TEST(GpuBench, MemoryBandwidthIsPhysical) {
  SKIP_WITHOUT_GPU();
  HardwareProfile p = gpu::run_bench(quick({"memory"}));
  const BandwidthResult* copy = p.memory_result("hbm_copy");
  ASSERT_NE(copy, nullptr);
  EXPECT_GT(copy->gbps, 0);
  // No kernel streams device memory faster than the datasheet (a timing or
  // byte-count bug would): at most 5% over, for rounding of the datasheet.
  if (const model::GpuPeaks* sheet = model::find_gpu_peaks(p.device.name)) {
    EXPECT_LT(copy->gbps, 1.05 * sheet->hbm_gbps);
  }
  // L2 reads beat HBM reads.
  ASSERT_NE(p.memory_result("l2_read"), nullptr);
  EXPECT_GT(p.memory_result("l2_read")->gbps, p.memory_result("hbm_read")->gbps);
}

TEST(GpuBench, GemmChecksPassAndStayUnderPeak) {
  SKIP_WITHOUT_GPU();
  BenchOptions o = quick({"gemm"});
  o.gemm_dtypes = {"bf16", "fp32"};
  HardwareProfile p = gpu::run_bench(o);  // throws if the sampled check fails
  ASSERT_GT(p.gemm_max_tflops("bf16"), 0);
  if (const model::GpuPeaks* sheet = model::find_gpu_peaks(p.device.name)) {
    EXPECT_LT(p.gemm_max_tflops("bf16"), sheet->bf16_tflops);
    EXPECT_LT(p.gemm_max_tflops("fp32"), 1.05 * sheet->fp32_tflops);
  }
}

TEST(GpuBench, NcclAllReduceIsCheckedAndFitted) {
  SKIP_WITHOUT_GPU();
  HardwareProfile p = gpu::run_bench(quick({"nccl"}));
#ifdef STEPSCOPE_HAVE_NCCL
  const CollectiveResult* ar = p.collective("all_reduce");
  ASSERT_NE(ar, nullptr);
  bool checked = false;
  for (const CollectivePoint& pt : ar->points)
    if (pt.wrong == 0) checked = true;
  EXPECT_TRUE(checked);
  EXPECT_FALSE(ar->fits.empty());
  EXPECT_EQ(p.collectives.size(), 5u);
#else
  EXPECT_TRUE(p.collectives.empty());
#endif
}

TEST(GpuBench, BadDeviceIndexIsAClearError) {
  SKIP_WITHOUT_GPU();
  BenchOptions o = quick({"launch"});
  o.device = 999;
  try {
    gpu::run_bench(o);
    FAIL() << "expected BenchError";
  } catch (const gpu::BenchError& e) {
    EXPECT_NE(std::string(e.what()).find("--device 999: only"), std::string::npos) << e.what();
  }
}
#else
TEST(GpuBench, NotBuilt) { GTEST_SKIP() << "built without CUDA: GPU benchmarks not compiled"; }
#endif

}  // namespace
}  // namespace stepscope::hwbench
