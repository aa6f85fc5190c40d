#include "diagnose/finding.h"

#include <array>

namespace stepscope::diagnose {
namespace {

constexpr std::array<std::string_view, kCategoryCount> kCategoryNames = {
    "data_pipeline",      "host_overhead",  "host_sync",          "compute_efficiency",
    "memory_allocator",   "memory_capacity", "communication",     "load_imbalance",
    "fusion_opportunity", "unfused_optimizer", "recomputed_constants",
};

}  // namespace

std::string_view to_string(Category c) { return kCategoryNames[static_cast<size_t>(c)]; }

std::optional<Category> category_from_string(std::string_view name) {
  for (size_t i = 0; i < kCategoryNames.size(); ++i)
    if (kCategoryNames[i] == name) return static_cast<Category>(i);
  return std::nullopt;
}

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::kLow: return "low";
    case Severity::kMedium: return "medium";
    case Severity::kHigh: return "high";
  }
  return "low";
}

std::string_view to_string(Confidence c) {
  switch (c) {
    case Confidence::kLow: return "low";
    case Confidence::kMedium: return "medium";
    case Confidence::kHigh: return "high";
  }
  return "low";
}

std::string_view to_string(SavingBasis b) { return b == SavingBasis::kReplay ? "replay" : "bound"; }

Severity severity_for_saving(double saving_pct) {
  if (saving_pct >= 25.0) return Severity::kHigh;
  if (saving_pct >= 10.0) return Severity::kMedium;
  return Severity::kLow;
}

}  // namespace stepscope::diagnose
