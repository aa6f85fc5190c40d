#include "analysis/hta_compat/kernel_type.h"

namespace stepscope::analysis::hta {
namespace {

// The part of the name a Python ".*" can scan from the start: up to the first newline.
std::string_view first_line(std::string_view s) {
  size_t nl = s.find('\n');
  return nl == std::string_view::npos ? s : s.substr(0, nl);
}

// re.match(r"^nccl.*Kernel", name)
bool is_nccl_kernel(std::string_view name) {
  std::string_view line = first_line(name);
  return line.starts_with("nccl") && line.find("Kernel", 4) != std::string_view::npos;
}

}  // namespace

HtaKernelType classify_hta_kernel(std::string_view name, std::string_view category, HtaRelease release) {
  if (release == HtaRelease::k0_6_1 && category == "cuda_sync") return HtaKernelType::kOther;
  if (is_nccl_kernel(name)) return HtaKernelType::kCommunication;
  if (name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("dma"))
    return HtaKernelType::kMemory;
  // re.match(r"(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)", name) fails -> COMPUTATION
  std::string_view line = first_line(name);
  bool not_compute = line.find("Memcpy") != std::string_view::npos || name.starts_with("Memset") ||
                     line.find("Sync") != std::string_view::npos;
  return not_compute ? HtaKernelType::kOther : HtaKernelType::kComputation;
}

std::string_view to_string(HtaKernelType t) {
  switch (t) {
    case HtaKernelType::kComputation: return "COMPUTATION";
    case HtaKernelType::kCommunication: return "COMMUNICATION";
    case HtaKernelType::kMemory: return "MEMORY";
    case HtaKernelType::kOther: return "OTHER";
  }
  return "OTHER";
}

std::string memory_kernel_group(std::string_view name) {
  if (name.starts_with("Memset")) return "Memset";
  if (!name.starts_with("Memcpy")) return "Memcpy Unknown";
  // First 11 code points: skip UTF-8 continuation bytes when counting.
  size_t bytes = 0;
  int chars = 0;
  while (bytes < name.size()) {
    if ((static_cast<unsigned char>(name[bytes]) & 0xC0) != 0x80) {
      if (chars == 11) break;
      ++chars;
    }
    ++bytes;
  }
  return std::string(name.substr(0, bytes));
}

}  // namespace stepscope::analysis::hta
