#include "trace/event_kind.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace stepscope::trace {
namespace {

// ASCII case folding (what std::tolower does in the "C" locale stepscope runs
// in), inline: this runs for every event.
constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return ascii_lower(x) == ascii_lower(y); });
}

struct CategoryRule {
  std::string_view category;
  EventKind kind;
};

// Category names across Kineto generations: 2021 traces capitalise
// ("Operator", "Runtime", "Kernel", "Memcpy"); later ones use snake case.
// AMD (ROCm) traces reuse the CUDA names; MTIA traces add their own runtime.
constexpr std::array kRules = {
    CategoryRule{"cpu_op", EventKind::kCpuOp},
    CategoryRule{"operator", EventKind::kCpuOp},
    CategoryRule{"user_annotation", EventKind::kUserAnnotation},
    CategoryRule{"gpu_user_annotation", EventKind::kGpuUserAnnotation},
    CategoryRule{"python_function", EventKind::kPythonFunction},
    CategoryRule{"cuda_runtime", EventKind::kRuntime},
    CategoryRule{"cuda_driver", EventKind::kRuntime},
    CategoryRule{"runtime", EventKind::kRuntime},
    CategoryRule{"hip_runtime", EventKind::kRuntime},
    CategoryRule{"mtia_runtime", EventKind::kRuntime},
    CategoryRule{"privateuse1_runtime", EventKind::kRuntime},
    CategoryRule{"kernel", EventKind::kKernel},
    CategoryRule{"mtia_ccp_events", EventKind::kKernel},
    CategoryRule{"privateuse1_kernel", EventKind::kKernel},
    CategoryRule{"gpu_memcpy", EventKind::kMemcpy},
    CategoryRule{"memcpy", EventKind::kMemcpy},
    CategoryRule{"gpu_memset", EventKind::kMemset},
    CategoryRule{"memset", EventKind::kMemset},
    CategoryRule{"cuda_sync", EventKind::kGpuSync},
    CategoryRule{"trace", EventKind::kTraceSpan},
    CategoryRule{"overhead", EventKind::kTraceSpan},
    CategoryRule{"cuda_profiler_range", EventKind::kCounterRange},
};

}  // namespace

EventKind classify_category(std::string_view cat, std::string_view name, char phase) {
  if (name == "[memory]") return EventKind::kMemory;
  if (phase == 'i' || phase == 'I') return EventKind::kInstant;
  for (const auto& rule : kRules) {
    if (iequals(cat, rule.category)) return step_kind(rule.kind, name);
  }
  return step_kind(EventKind::kOther, name);
}

std::string_view to_string(EventKind k) {
  switch (k) {
    case EventKind::kCpuOp: return "cpu_op";
    case EventKind::kUserAnnotation: return "user_annotation";
    case EventKind::kGpuUserAnnotation: return "gpu_user_annotation";
    case EventKind::kPythonFunction: return "python_function";
    case EventKind::kRuntime: return "runtime";
    case EventKind::kKernel: return "kernel";
    case EventKind::kMemcpy: return "memcpy";
    case EventKind::kMemset: return "memset";
    case EventKind::kGpuSync: return "gpu_sync";
    case EventKind::kMemory: return "memory";
    case EventKind::kInstant: return "instant";
    case EventKind::kTraceSpan: return "trace_span";
    case EventKind::kCounterRange: return "counter_range";
    case EventKind::kOther: return "other";
  }
  return "other";
}

}  // namespace stepscope::trace
