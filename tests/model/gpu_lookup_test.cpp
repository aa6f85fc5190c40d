// GPU names as users type them, resolved once for plan, monitor and plan
// validate: catalog keys, driver names, variants the table approximates,
// and the closest names when none matches.
#include "model/gpu_lookup.h"

#include <gtest/gtest.h>

namespace stepscope::model {
namespace {

std::string row_of(std::string_view name) {
  const GpuMatch m = lookup_gpu(name);
  return m.row ? std::string(m.row->model) : "";
}

TEST(GpuLookup, CatalogKeysAndDriverNamesFindTheirRow) {
  EXPECT_EQ(row_of("h100-sxm"), "NVIDIA H100 SXM");
  EXPECT_EQ(row_of("a100-80-sxm"), "NVIDIA A100 80GB");  // the key, not the "a100" device rule (40 GB)
  EXPECT_EQ(row_of("NVIDIA H200"), "NVIDIA H200 SXM");
  EXPECT_EQ(row_of("NVIDIA L40S"), "NVIDIA L40S");  // in the table though not in the planner's catalog
  EXPECT_EQ(row_of("AMD Instinct MI300X"), "AMD Instinct MI300X");
  EXPECT_EQ(row_of("voodoo"), "");
  EXPECT_EQ(row_of(std::string(300, 'h')), "");
}

TEST(GpuLookup, AVariantWithAnotherMemorySizeIsSaidToBeApproximated) {
  EXPECT_EQ(lookup_gpu("H100-SXM5-64GB").approximation,
            "\"H100-SXM5-64GB\" states 64 GB, approximated by the NVIDIA H100 SXM row (80 GB)");
  // Meta's 96 GB HBM2e H100 has its own row (torchtitan's published figures).
  EXPECT_EQ(lookup_gpu("H100-SXM5-96GB").approximation, "");
  EXPECT_EQ(row_of("H100-SXM5-96GB"), "NVIDIA H100 SXM 96GB HBM2e (500 W)");
  EXPECT_EQ(row_of("NVIDIA GB200"), "NVIDIA GB200");  // not the B200's row
  EXPECT_EQ(row_of("NVIDIA H200 NVL"), "NVIDIA H200 NVL");
  // The sizes the datasheets round (80 GB HBM3, 141 GB) are the same part.
  EXPECT_EQ(lookup_gpu("NVIDIA H100 80GB HBM3").approximation, "");
  EXPECT_EQ(lookup_gpu("H200-SXM-141GB").approximation, "");
  EXPECT_EQ(lookup_gpu("h100-sxm").approximation, "");
  EXPECT_EQ(lookup_gpu("NVIDIA GH200 480GB").approximation, "");  // the module's total, CPU memory included
  EXPECT_EQ(row_of("NVIDIA GH200 480GB"), "NVIDIA GH200 96GB HBM3");
}

TEST(GpuLookup, UnknownNamesListTheClosest) {
  EXPECT_EQ(unknown_gpu_message("h10o"), "unknown GPU \"h10o\" (closest: h100-sxm, h100-nvl, h100-pcie)");
  EXPECT_EQ(unknown_gpu_message("mi300"), "unknown GPU \"mi300\" (closest: mi300x, b300, gb300)");
  // A row the planner catalog plans is named once, by its catalog name.
  EXPECT_EQ(unknown_gpu_message("l40z"), "unknown GPU \"l40z\" (closest: l40s, b200, b300)");
  EXPECT_EQ(unknown_gpu_message("rtx4090").substr(0, 50), "unknown GPU \"rtx4090\" (closest: nvidia geforce rtx");
}

TEST(GpuLookup, TrainingPeakFollowsThePrecision) {
  const GpuPeaks& h100 = *lookup_gpu("h100-sxm").row;
  EXPECT_DOUBLE_EQ(training_peak_tflops(h100, Dtype::kBf16), 989.4);
  EXPECT_DOUBLE_EQ(training_peak_tflops(h100, Dtype::kFp8), 1978.9);
  const GpuPeaks& a100 = *lookup_gpu("a100-80-sxm").row;
  EXPECT_DOUBLE_EQ(training_peak_tflops(a100, Dtype::kFp8), 312);  // no FP8 unit: the 16-bit rate
}

}  // namespace
}  // namespace stepscope::model
