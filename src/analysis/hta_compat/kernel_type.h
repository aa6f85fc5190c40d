// HTA 0.6.1's kernel classification (docs/hta_compat.md §2), by name and
// category, in HTA's rule order. This is deliberately not analysis/kernel_class:
// HTA calls "Memcpy" in the middle of a name OTHER, counts a kernel that
// merely starts with "nccl" and contains "Kernel" as communication, and so on.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/hta_compat/hta_release.h"

namespace stepscope::analysis::hta {

enum class HtaKernelType : uint8_t {
  kComputation,    // "COMPUTATION"
  kCommunication,  // "COMMUNICATION"
  kMemory,         // "MEMORY"
  kOther,          // "OTHER": never counted in type breakdowns
};

// The three types HTA's breakdowns iterate over, in HTA's order; the bit of
// type i in the overlap labels is 1 << i.
constexpr HtaKernelType kHtaBreakdownTypes[] = {HtaKernelType::kComputation, HtaKernelType::kCommunication,
                                               HtaKernelType::kMemory};

// Rules, first match wins:
//   1. category "cuda_sync"                       -> OTHER  (0.6.1 only; 0.5.0 goes on)
//   2. name matches ^nccl.*Kernel                 -> COMMUNICATION
//   3. name starts with Memcpy, Memset or dma     -> MEMORY
//   4. name matches none of ^nccl.*Kernel, .*Memcpy, ^Memset, .*Sync -> COMPUTATION
//   5. anything else                              -> OTHER
// ".*" does not cross a newline, as in Python's re.
HtaKernelType classify_hta_kernel(std::string_view name, std::string_view category,
                                  HtaRelease release = HtaRelease::k0_6_1);

std::string_view to_string(HtaKernelType t);  // "COMPUTATION", "COMMUNICATION", "MEMORY", "OTHER"

// The memory-bandwidth group of a MEMORY kernel: "Memset" for Memset*, the
// first 11 characters ("Memcpy HtoD", "Memcpy DtoD", ...) for Memcpy*, and
// "Memcpy Unknown" for anything else (dma*). Characters are Unicode code
// points, as in Python.
std::string memory_kernel_group(std::string_view name);

}  // namespace stepscope::analysis::hta
