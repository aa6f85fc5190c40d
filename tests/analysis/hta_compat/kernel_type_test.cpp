#include "analysis/hta_compat/kernel_type.h"

#include <gtest/gtest.h>

namespace stepscope::analysis::hta {
namespace {

HtaKernelType kernel(std::string_view name) { return classify_hta_kernel(name, "kernel"); }

TEST(hta_kernel_type, FollowsHtaRuleOrder) {
  EXPECT_EQ(kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
            HtaKernelType::kCommunication);
  EXPECT_EQ(kernel("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"), HtaKernelType::kCommunication);
  EXPECT_EQ(kernel("Memcpy HtoD (Pinned -> Device)"), HtaKernelType::kMemory);
  EXPECT_EQ(kernel("Memset (Device)"), HtaKernelType::kMemory);
  EXPECT_EQ(kernel("dma_copy"), HtaKernelType::kMemory);
  EXPECT_EQ(kernel("void at::native::vectorized_elementwise_kernel<4>"), HtaKernelType::kComputation);
  // Not anchored like the memory rule: Memcpy or Sync anywhere makes it OTHER.
  EXPECT_EQ(kernel("void cub::DeviceMemcpy::BatchMemcpyKernel"), HtaKernelType::kOther);
  EXPECT_EQ(kernel("Stream Sync"), HtaKernelType::kOther);
  EXPECT_EQ(kernel("Event Sync"), HtaKernelType::kOther);
  // "nccl" without "Kernel" is computation for HTA.
  EXPECT_EQ(kernel("nccl_all_gather_helper"), HtaKernelType::kComputation);
}

TEST(hta_kernel_type, CudaSyncIsNeverComputation) {
  EXPECT_EQ(classify_hta_kernel("Stream Wait Event", "cuda_sync"), HtaKernelType::kOther);
  EXPECT_EQ(classify_hta_kernel("Stream Wait Event", "kernel"), HtaKernelType::kComputation);
}

TEST(hta_kernel_type, Release050ClassifiesCudaSyncByNameAlone) {
  // 0.5.0 has no category rule: "Stream Wait Event" has no "Sync" in it, so
  // its regex calls it computation; "Stream Sync" stays OTHER by name.
  EXPECT_EQ(classify_hta_kernel("Stream Wait Event", "cuda_sync", HtaRelease::k0_5_0), HtaKernelType::kComputation);
  EXPECT_EQ(classify_hta_kernel("Stream Sync", "cuda_sync", HtaRelease::k0_5_0), HtaKernelType::kOther);
  EXPECT_EQ(classify_hta_kernel("ncclDevKernel_AllReduce", "kernel", HtaRelease::k0_5_0),
            HtaKernelType::kCommunication);
}

TEST(hta_kernel_type, DotDoesNotCrossNewlines) {
  // Python's ".*" stops at a newline: these are not "^nccl.*Kernel" / ".*Sync".
  EXPECT_EQ(kernel("nccl\nKernel"), HtaKernelType::kComputation);
  EXPECT_EQ(kernel("foo\nSync"), HtaKernelType::kComputation);
}

TEST(hta_kernel_type, MemoryGroups) {
  EXPECT_EQ(memory_kernel_group("Memcpy HtoD (Pinned -> Device)"), "Memcpy HtoD");
  EXPECT_EQ(memory_kernel_group("Memcpy DtoD (Device -> Device)"), "Memcpy DtoD");
  EXPECT_EQ(memory_kernel_group("Memset (Device)"), "Memset");
  EXPECT_EQ(memory_kernel_group("dma_copy"), "Memcpy Unknown");
  // Eleven characters, not bytes: "Ä" is two bytes in UTF-8.
  EXPECT_EQ(memory_kernel_group("Memcpy \xC3\x84\xC3\x96\xC3\x9C" "1234"), "Memcpy \xC3\x84\xC3\x96\xC3\x9C" "1");
  EXPECT_EQ(to_string(HtaKernelType::kCommunication), "COMMUNICATION");
}

}  // namespace
}  // namespace stepscope::analysis::hta
