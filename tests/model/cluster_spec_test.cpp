// The GPU catalog reads its peaks from diagnose/hardware_table; profiles refine it.
#include "model/cluster_spec.h"
#include "model/hardware_profile_json.h"

#include <gtest/gtest.h>

#include "model/gemm_model.h"
#include "model/gpu_table.h"
#include "trace/trace_fixtures.h"

namespace stepscope::model {

namespace {

TEST(GpuCatalog, PeaksComeFromTheHardwareTable) {
  for (const char* key : {"a100-40-sxm", "a100-80-sxm", "h100-sxm", "h200-sxm", "b200"}) {
    const GpuSpec* g = find_gpu(key);
    ASSERT_NE(g, nullptr) << key;
    const model::GpuPeaks* row = model::find_gpu_peaks(g->datasheet_name);
    ASSERT_NE(row, nullptr) << key;
    EXPECT_EQ(g->bf16_tflops, row->bf16_tflops) << key;
    EXPECT_EQ(g->hbm_gbps, row->hbm_gbps) << key;
    EXPECT_EQ(g->nvlink_gbps * 2, row->link_gbps) << key;
    EXPECT_EQ(g->memory_gb, row->memory_gb) << key;
  }
  // Datasheet figures: A100 312 dense BF16 TFLOP/s, 80 GB; H100 SXM 989.4, 3350 GB/s.
  EXPECT_EQ(find_gpu("a100-80-sxm")->bf16_tflops, 312);
  EXPECT_EQ(find_gpu("h100-sxm")->hbm_gbps, 3350);
  EXPECT_EQ(find_gpu("b200")->fp8_tflops, 4500);
}

// Every catalog row has its datasheet row and rates a plan can divide by;
// the link inside the NVLink domain is the table's (per direction) except
// on the L40S, which has none and plans over PCIe Gen4 (25 GB/s).
TEST(GpuCatalog, EveryRowIsComplete) {
  for (const GpuSpec& g : gpu_catalog()) {
    SCOPED_TRACE(g.name);
    const model::GpuPeaks* row = model::find_gpu_peaks(g.datasheet_name);
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(g.bf16_tflops, row->bf16_tflops);
    EXPECT_GT(g.sms, 0);
    EXPECT_GT(g.nvlink_achievable_Bps(), 0);
    EXPECT_GT(g.network_achievable_Bps(), 0);
    EXPECT_GT(g.gemm_fraction, 0);
    EXPECT_LE(g.gemm_fraction, 1);
    if (g.name != "l40s") EXPECT_EQ(g.nvlink_gbps * 2, row->link_gbps);
  }
  EXPECT_EQ(find_gpu("l40s")->nvlink_gbps, 25);
  EXPECT_EQ(find_gpu("l40s")->gpus_per_node, 1);
  EXPECT_EQ(find_gpu("h800-sxm")->nvlink_gbps, 200);  // the export part's 400 GB/s NVLink
  EXPECT_EQ(find_gpu("h20")->sms, 78);
}

// Hopper rows: a training step's GEMMs at the median of the project's H200
// sweep against its best shape (0.705 / 0.813 of the published best), fp8 at
// 0.642 / 0.705 of that (the same sweep's medians); other families keep the
// published best and the bf16 fraction for fp8.
TEST(GpuCatalog, HopperGemmFractionsFollowTheMeasuredSweep) {
  const GpuSpec& h100 = *find_gpu("h100-sxm");
  EXPECT_NEAR(h100.gemm_fraction, 0.803 * 0.7053 / 0.8132, 1e-12);
  EXPECT_NEAR(h100.fp8_gemm_fraction, h100.gemm_fraction * 0.6417 / 0.7053, 1e-12);
  const ClusterSpec c{h100, 8, {}};
  EXPECT_DOUBLE_EQ(gemm_fraction(c, Dtype::kFp8), h100.fp8_gemm_fraction);
  EXPECT_DOUBLE_EQ(gemm_fraction(c, Dtype::kBf16), h100.gemm_fraction);
  // The catalog's H200 and the measured profile (profiles/h200.json) agree within 2%.
  std::string error;
  const auto profile = load_hardware_profile(std::string(STEPSCOPE_SOURCE_DIR) + "/profiles/h200.json", error);
  ASSERT_TRUE(profile) << error;
  EXPECT_NEAR(gemm_fraction(*profile, Dtype::kBf16) / find_gpu("h200-sxm")->gemm_fraction, 1, 0.02);
  EXPECT_NEAR(gemm_fraction(*profile, Dtype::kFp8) / find_gpu("h200-sxm")->fp8_gemm_fraction, 1, 0.02);
  EXPECT_DOUBLE_EQ(find_gpu("a100-80-sxm")->gemm_fraction, 0.869);
  EXPECT_DOUBLE_EQ(find_gpu("b200")->fp8_gemm_fraction, find_gpu("b200")->gemm_fraction);
  EXPECT_FALSE(find_gpu("a100-80-sxm")->gemm_epilogue_overlapped);
  EXPECT_FALSE(find_gpu("l40s")->gemm_epilogue_overlapped);
  EXPECT_TRUE(find_gpu("h20")->gemm_epilogue_overlapped);
}

TEST(GpuCatalog, DeviceNamesResolve) {
  EXPECT_EQ(find_gpu("A100-SXM4-80GB")->name, "a100-80-sxm");
  EXPECT_EQ(find_gpu("NVIDIA H100 80GB HBM3")->name, "h100-sxm");
  EXPECT_EQ(find_gpu("NVIDIA A100-SXM4-40GB")->name, "a100-40-sxm");
  EXPECT_EQ(find_gpu("NVIDIA B200")->name, "b200");
  EXPECT_EQ(find_gpu("AMD Instinct MI300X")->name, "mi300x");
  EXPECT_EQ(find_gpu("NVIDIA H100 PCIe")->name, "h100-pcie");
  EXPECT_EQ(find_gpu("NVIDIA GH200 480GB")->name, "gh200");
  EXPECT_EQ(find_gpu("tpu-v5"), nullptr);
  EXPECT_EQ(find_gpu("NVIDIA L4"), nullptr);  // in the datasheet table, not a training catalog row
}

TEST(HardwareProfile, MeasuredRatesReplaceFractions) {
  testing::TempDir dir;
  std::string path = dir.write("p.json", R"({
    "gpu": "h100-sxm", "gpus_per_node": 4, "hbm_gbps": 2680,
    "nccl": {"intra_node_busbw_gbps": 360, "inter_node_busbw_gbps": 40},
    "gemm": [{"m": 8192, "n": 8192, "k": 8192, "dtype": "bf16", "tflops": 700}]})");
  std::string error;
  auto c = load_hardware_profile(path, error);
  ASSERT_TRUE(c) << error;
  EXPECT_DOUBLE_EQ(c->gpu.hbm_achievable_Bps(), 2680e9);
  EXPECT_DOUBLE_EQ(c->gpu.nvlink_achievable_Bps(), 360e9);
  EXPECT_DOUBLE_EQ(c->gpu.network_achievable_Bps(), 40e9);
  EXPECT_EQ(c->gpu.gpus_per_node, 4);
  ASSERT_EQ(c->gemm_samples.size(), 1u);
  EXPECT_EQ(c->gemm_samples[0].tflops, 700);
}

TEST(HardwareProfile, ErrorsNameTheField) {
  testing::TempDir dir;
  std::string error;
  std::string unknown = dir.write("a.json", R"({"gpu": "v100"})");
  EXPECT_FALSE(load_hardware_profile(unknown, error));
  EXPECT_EQ(error, unknown + ": field \"gpu\": unknown GPU \"v100\"");
  // The name as the file spells it, escaped: a newline stays out of the one-line error.
  std::string newline = dir.write("n.json", R"({"gpu": "v1\n00"})");
  EXPECT_FALSE(load_hardware_profile(newline, error));
  EXPECT_EQ(error, newline + R"(: field "gpu": unknown GPU "v1\x0a00")");
  std::string bad = dir.write("b.json", R"({"gpu": "h100-sxm", "gemm": [{"m": 1, "n": 1, "k": 0, "tflops": 1}]})");
  EXPECT_FALSE(load_hardware_profile(bad, error));
  EXPECT_EQ(error, bad + ": field \"gemm[0].k\" must be a number from 1 to 16777216, got 0");
  EXPECT_FALSE(load_hardware_profile(dir.file("missing.json"), error));
  EXPECT_EQ(error, dir.file("missing.json") + ": cannot open");
}

}  // namespace
}  // namespace stepscope::model
