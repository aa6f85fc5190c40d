// CUPTI range-profiler traces: counters kept by the reader, FLOPs derived
// from the SASS counters, ranges tied to launches and operators by order.
#include "analysis/hardware_counters.h"

#include <gtest/gtest.h>

#include "analysis/analysis_fixtures.h"
#include "analysis/counter_range_fixtures.h"

namespace stepscope::analysis {
namespace {

using namespace testing_support;

TEST(HardwareCounters, DerivesFlopsPerRangeFromTheSassCounters) {
  auto store = load_inline(three_kernels());
  HardwareCountersResult r = analyze_hardware_counters(*store);
  ASSERT_EQ(r.ranges, 3);
  EXPECT_EQ(r.devices, 1);
  ASSERT_EQ(r.rows.size(), 3u);
  const CounterDerived& fft = r.rows[0].derived;
  EXPECT_EQ(r.rows[0].name, "void fft2d_r2c_32x32<float, false, 1u, false>(int, int)");
  // ffma counts two FLOPs per thread instruction, fadd one.
  EXPECT_DOUBLE_EQ(*fft.cuda_core_flops, 2 * 1000.0 + 86114304.0);
  EXPECT_DOUBLE_EQ(*fft.fp32_flops, 2 * 1000.0 + 86114304.0);
  EXPECT_DOUBLE_EQ(*fft.fp16_flops, 0.0);   // recorded as 0
  EXPECT_FALSE(fft.fp64_flops.has_value()); // not recorded at all
  EXPECT_DOUBLE_EQ(*fft.tensor_core_insts, 0.0);
  EXPECT_DOUBLE_EQ(*fft.dram_bytes, 4096 + 1024.5);
  // Counters stepscope does not interpret are kept as recorded.
  bool saw_l1 = false;
  for (const auto& [k, v] : r.rows[0].counters) saw_l1 = saw_l1 || (k == "l1tex__t_bytes.sum" && v == 77);
  EXPECT_TRUE(saw_l1);

  const CounterDerived& gemm = r.rows[1].derived;
  EXPECT_DOUBLE_EQ(*gemm.cuda_core_flops, 2 * 10.0 + 2 * 3.0);
  EXPECT_DOUBLE_EQ(*gemm.fp16_flops, 6.0);
  EXPECT_DOUBLE_EQ(*gemm.tensor_core_insts, 2.5e6);
  EXPECT_DOUBLE_EQ(*gemm.dram_bytes, 1e9);  // only the read counter was recorded
  EXPECT_EQ(r.rows[1].counters.size(), 4u) << "the text argument is not a counter";

  const CounterDerived& poi = r.rows[2].derived;
  EXPECT_DOUBLE_EQ(*poi.fp64_flops, 7.0);
  EXPECT_FALSE(poi.tensor_core_insts.has_value());
  EXPECT_FALSE(poi.dram_bytes.has_value());

  EXPECT_DOUBLE_EQ(*r.total.cuda_core_flops, 2 * 1000.0 + 86114304.0 + 26.0 + 7.0);
  EXPECT_DOUBLE_EQ(*r.total.dram_bytes, 4096 + 1024.5 + 1e9);
  // Per counter: ranges that recorded it and the sum.
  for (const CounterTotal& t : r.counters)
    if (t.name == kFfma) {
      EXPECT_EQ(t.ranges, 2);
      EXPECT_DOUBLE_EQ(t.total, 1010.0);
    }
  // Most CUDA-core FLOPs first.
  ASSERT_EQ(r.kernels.size(), 3u);
  EXPECT_EQ(r.kernels[0].name, r.rows[0].name);
  EXPECT_EQ(r.kernels[2].name, "triton_poi_fused_add_0");
}

TEST(HardwareCounters, TiesRangesToLaunchesAndEnclosingOpsInLaunchOrder) {
  auto store = load_inline(three_kernels());
  HardwareCountersResult r = analyze_hardware_counters(*store);
  EXPECT_EQ(r.kernel_launches, 3);  // cudaMemcpyAsync is not one
  ASSERT_TRUE(r.matched_to_launches) << r.match_note;
  EXPECT_EQ(r.rows[0].top_level_op, "aten::conv2d");
  EXPECT_EQ(r.rows[0].bottom_level_op, "aten::cudnn_convolution");
  EXPECT_EQ(r.rows[1].top_level_op, "aten::linear");
  EXPECT_EQ(r.rows[1].bottom_level_op, "aten::addmm");
  EXPECT_EQ(r.rows[2].top_level_op, "triton_op");
  EXPECT_EQ(r.rows[2].bottom_level_op, "triton_op");
  ASSERT_EQ(r.ops.size(), 3u);
  EXPECT_EQ(r.ops[0].name, "aten::conv2d");
  EXPECT_EQ(r.ops[0].ranges, 1);
}

TEST(HardwareCounters, LeavesOperatorsOutWhenRangesAndLaunchesDoNotPair) {
  // One more launch than ranges (a session that hit its range limit).
  auto store = load_inline(three_kernels({call("cudaLaunchKernel", 300'000, "1", 9)}));
  HardwareCountersResult r = analyze_hardware_counters(*store);
  EXPECT_EQ(r.kernel_launches, 4);
  EXPECT_FALSE(r.matched_to_launches);
  EXPECT_NE(r.match_note.find("3 ranges but 4 kernel launches"), std::string::npos) << r.match_note;
  EXPECT_TRUE(r.ops.empty());
  for (const auto& row : r.rows) EXPECT_TRUE(row.top_level_op.empty());
  EXPECT_EQ(r.kernels.size(), 3u) << "counters are still reported per kernel";
}

TEST(HardwareCounters, LeavesOperatorsOutForRangesOnSeveralDevices) {
  auto store = load_inline(three_kernels({range("other_device_kernel", 3, counter(kFadd, "5"), 1),
                                          call("cudaLaunchKernel", 300'000, "1", 9)}));
  HardwareCountersResult r = analyze_hardware_counters(*store);
  EXPECT_EQ(r.ranges, 4);
  EXPECT_EQ(r.devices, 2);
  EXPECT_EQ(r.kernel_launches, 4);
  EXPECT_FALSE(r.matched_to_launches);
  EXPECT_NE(r.match_note.find("2 devices"), std::string::npos) << r.match_note;
}

TEST(HardwareCounters, EmptyForAnOrdinaryTrace) {
  auto store = load_inline({op("aten::mm", 0, 1000), call("cudaLaunchKernel", 100),
                            testing_support::kernel("sgemm", 5000, 1000, 7, 1)});
  HardwareCountersResult r = analyze_hardware_counters(*store);
  EXPECT_EQ(r.ranges, 0);
  EXPECT_TRUE(r.rows.empty());
  EXPECT_FALSE(r.total.cuda_core_flops.has_value());
}

TEST(HardwareCounters, OtherEventsKeepOnlyTheirUsualArguments) {
  // The same counter key on a kernel event is not a range's counter: the
  // reader keeps unknown keys of counter ranges only.
  auto store = load_inline({testing_support::kernel("k", 0, 1000, 7, 1, "kernel", counter("l1tex__t_bytes.sum", "5"))});
  const trace::StringId key = store->strings.find("l1tex__t_bytes.sum");
  EXPECT_FALSE(store->arg_number(0, key).has_value());
}

TEST(KernelLaunchCall, KnowsTheLaunchApisAndTheirSuffixedVariants) {
  for (const char* yes : {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchKernel_ptsz", "cuLaunchKernel",
                          "cuLaunchKernelEx", "cudaLaunchCooperativeKernel", "hipLaunchKernel", "hipExtLaunchKernel",
                          "hipModuleLaunchKernel"})
    EXPECT_TRUE(is_kernel_launch_call(yes)) << yes;
  for (const char* no : {"cudaLaunchHostFunc", "cudaGraphLaunch", "cudaMemcpyAsync", "cudaLaunchKernelish",
                         "launchKernel", ""})
    EXPECT_FALSE(is_kernel_launch_call(no)) << no;
}

}  // namespace
}  // namespace stepscope::analysis
