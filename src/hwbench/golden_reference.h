// Golden comparison: each measured ceiling against two references for the
// GPU model, the datasheet peak (diagnose/hardware_table, the one source of
// datasheet numbers) and a known-good measured ceiling (what a healthy card
// of that model reached, with its source), and a verdict per metric.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/hardware_profile.h"

namespace stepscope::hwbench {

using model::HardwareProfile;

enum class Health {
  kHealthy,         // at or near what a healthy card reaches
  kBelowReference,  // measurably low: worth a second run, then a look
  kUnhealthy,       // far below: the card, its clocks or its link are suspect
  kNoReference,     // nothing to compare with for this model and metric
};
std::string_view health_name(Health h);  // healthy | below_reference | unhealthy | no_reference

// A known-good measured ceiling of one metric on one model.
struct KnownGood {
  std::string_view metric;  // e.g. "gemm_bf16_tflops" (metric names: verdict_metrics())
  double value;             // in the metric's unit
  std::string_view source;
};

struct Verdict {
  std::string metric;       // gemm_bf16_tflops, hbm_copy_gbps, h2d_pinned_gbps, ...
  std::string unit;         // TFLOP/s or GB/s
  double value = 0;         // measured
  double datasheet = 0;     // datasheet peak, 0: none
  double known_good = 0;    // known-good measured ceiling, 0: none
  double typical_fraction = 0;  // of the datasheet, what healthy cards reach (rule when no known-good)
  Health health = Health::kNoReference;
  std::string message;      // one line, e.g. "HBM copy 4210 GB/s = 88% of datasheet 4800 GB/s: healthy"
};

// Known-good ceilings of the model that `device_name` maps to (empty when none).
std::vector<KnownGood> known_good_ceilings(std::string_view device_name);

// The verdict rule. With a known-good value k: value ≥ 0.95·k healthy (the
// spread between runs and between healthy cards of one model is a few %,
// e.g. 755-778 TFLOP/s bf16 on one H200), ≥ 0.85·k below_reference, else
// unhealthy. Without one, against the datasheet d and the share healthy
// cards typically reach, f: value ≥ 0.9·f·d healthy, ≥ 0.75·f·d
// below_reference, else unhealthy. Neither: no_reference.
Health judge_value(double value, double known_good, double datasheet, double typical_fraction);

// One verdict per measured metric of `profile` that has a name in the table.
std::vector<Verdict> golden_comparison(const HardwareProfile& profile);

}  // namespace stepscope::hwbench
