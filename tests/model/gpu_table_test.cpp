// The GPU table: device names as CUDA and ROCm report them find their row,
// and the dtype rates follow the datasheets' dense figures.
#include <gtest/gtest.h>

#include "model/gpu_table.h"

namespace stepscope::model {

namespace {

TEST(GpuTable, NamesAsDriversReportThem) {
  struct Case {
    const char* name;
    const char* model;
  };
  for (Case c : {Case{"NVIDIA H200", "NVIDIA H200 SXM"}, Case{"NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"},
                 Case{"NVIDIA H100 PCIe", "NVIDIA H100 PCIe"}, Case{"NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB"},
                 Case{"NVIDIA A100-PG509-200", "NVIDIA A100 40GB"}, Case{"Tesla V100-SXM2-32GB", "NVIDIA V100 SXM2"},
                 Case{"Tesla V100-PCIE-16GB", "NVIDIA V100 PCIe"}, Case{"NVIDIA L40S", "NVIDIA L40S"},
                 Case{"NVIDIA L4", "NVIDIA L4"}, Case{"NVIDIA A10", "NVIDIA A10"},
                 Case{"NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce RTX 2080 Ti"},
                 Case{"AMD Instinct MI300X", "AMD Instinct MI300X"},
                 Case{"AMD Instinct MI250X", "AMD Instinct MI250X (one GCD)"}}) {
    const GpuPeaks* p = find_gpu_peaks(c.name);
    ASSERT_NE(p, nullptr) << c.name;
    EXPECT_EQ(p->model, c.model) << c.name;
    EXPECT_FALSE(p->source.empty());
  }
  EXPECT_EQ(find_gpu_peaks("AMD Radeon Graphics"), nullptr);
  EXPECT_EQ(find_gpu_peaks(""), nullptr);
}

TEST(GpuTable, GpusAddedForTracesFromTheWild) {
  // Names as torch.cuda.get_device_name() / deviceProperties "name" give them.
  struct Case {
    const char* name;
    const char* model;
    double bf16_tflops;
    double hbm_gbps;
  };
  for (Case c : {Case{"NVIDIA H800", "NVIDIA H800 SXM", 989.4, 3350}, Case{"NVIDIA H800 PCIe", "NVIDIA H800 PCIe", 756, 2000},
                 Case{"NVIDIA H20", "NVIDIA H20", 148, 4000}, Case{"NVIDIA H100 NVL", "NVIDIA H100 NVL", 835.5, 3900},
                 Case{"NVIDIA GH200 480GB", "NVIDIA GH200 96GB HBM3", 989.4, 4000},
                 Case{"NVIDIA GH200 144G HBM3e", "NVIDIA GH200 144GB HBM3e", 989.4, 4900},
                 Case{"NVIDIA L40", "NVIDIA L40", 181.05, 864},
                 Case{"NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090", 165.2, 1008},
                 Case{"NVIDIA A800-SXM4-80GB", "NVIDIA A800 80GB SXM", 312, 2039},
                 Case{"NVIDIA A800 80GB PCIe", "NVIDIA A800 80GB PCIe", 312, 1935},
                 Case{"NVIDIA A40", "NVIDIA A40", 149.7, 696}, Case{"NVIDIA A30", "NVIDIA A30", 165, 933},
                 Case{"Tesla T4", "NVIDIA T4", 0, 320}, Case{"AMD Instinct MI210", "AMD Instinct MI210", 181, 1638.4},
                 Case{"AMD Instinct MI325X", "AMD Instinct MI325X", 1307.4, 6000}}) {
    const GpuPeaks* p = find_gpu_peaks(c.name);
    ASSERT_NE(p, nullptr) << c.name;
    EXPECT_EQ(p->model, c.model) << c.name;
    EXPECT_DOUBLE_EQ(p->bf16_tflops, c.bf16_tflops) << c.name;
    EXPECT_DOUBLE_EQ(p->hbm_gbps, c.hbm_gbps) << c.name;
    EXPECT_FALSE(p->source.empty()) << c.name;
  }
  // The H800 keeps the H100's compute but not its NVLink.
  const GpuPeaks* h800 = find_gpu_peaks("NVIDIA H800");
  const GpuPeaks* h20 = find_gpu_peaks("NVIDIA H20");
  ASSERT_TRUE(h800 && h20);
  EXPECT_DOUBLE_EQ(h800->link_gbps, 400);
  EXPECT_DOUBLE_EQ(h20->fp8_tflops, 296);
}

// The model a name resolves to, "" for none.
std::string_view model_of(std::string_view name) {
  const GpuPeaks* p = find_gpu_peaks(name);
  return p ? p->model : "";
}

TEST(GpuTable, NearMissNamesDoNotResolveToAnotherGpu) {
  // One model's name inside another's: whole words only.
  EXPECT_EQ(model_of("NVIDIA H20"), "NVIDIA H20");
  EXPECT_EQ(model_of("NVIDIA H200"), "NVIDIA H200 SXM");
  EXPECT_EQ(model_of("NVIDIA GH200 480GB"), "NVIDIA GH200 96GB HBM3");  // not the H200
  EXPECT_EQ(model_of("NVIDIA H100 NVL"), "NVIDIA H100 NVL");          // not the SXM
  EXPECT_EQ(model_of("NVIDIA L40"), "NVIDIA L40");
  EXPECT_EQ(model_of("NVIDIA L40S"), "NVIDIA L40S");
  EXPECT_EQ(model_of("NVIDIA L4"), "NVIDIA L4");
  EXPECT_EQ(model_of("NVIDIA A100-SXM4-40GB"), "NVIDIA A100 40GB");
  EXPECT_EQ(model_of("AMD Instinct MI250X"), "AMD Instinct MI250X (one GCD)");
  // GPUs without a row of their own resolve to none, not to a neighbour.
  EXPECT_EQ(model_of("NVIDIA A10G"), "");                 // was the A10's row
  EXPECT_EQ(model_of("NVIDIA GeForce RTX 4090 D"), "");   // fewer SMs than the 4090
  EXPECT_EQ(model_of("NVIDIA GeForce RTX 4090 Laptop GPU"), "");
  EXPECT_EQ(model_of("NVIDIA GeForce RTX 4080"), "");
  EXPECT_EQ(model_of("NVIDIA H20X"), "");
  EXPECT_EQ(model_of("NVIDIA A800 40GB Active"), "");     // no datasheet row
  EXPECT_EQ(model_of("NVIDIA T400"), "");
  EXPECT_EQ(model_of("AMD Instinct MI300A"), "");
  EXPECT_EQ(model_of("AMD Instinct MI2100"), "");
}

TEST(GpuTable, DenseRatesPerDtype) {
  const GpuPeaks& h200 = *find_gpu_peaks("NVIDIA H200");
  EXPECT_DOUBLE_EQ(matmul_peak_tflops(h200, "c10::BFloat16", true), 989.4);
  EXPECT_DOUBLE_EQ(matmul_peak_tflops(h200, "c10::Half", true), 989.4);
  EXPECT_DOUBLE_EQ(matmul_peak_tflops(h200, "float", true), 494.7);
  EXPECT_DOUBLE_EQ(matmul_peak_tflops(h200, "float", false), 67.0);
  EXPECT_DOUBLE_EQ(matmul_peak_tflops(h200, "c10::Float8_e4m3fn", true), 1978.9);
  EXPECT_DOUBLE_EQ(h200.memory_gb, 141);
  const GpuPeaks& v100 = *find_gpu_peaks("Tesla V100-SXM2-32GB");
  EXPECT_DOUBLE_EQ(matmul_peak_tflops(v100, "c10::BFloat16", true), 0);  // no bf16 tensor cores
  EXPECT_DOUBLE_EQ(matmul_peak_tflops(v100, "float", true), 15.7);       // no TF32 either
  // Every row: tensor-core rates above the SIMT FP32 rate where present.
  for (const char* n : {"NVIDIA H200", "NVIDIA A100-SXM4-80GB", "NVIDIA L4", "AMD Instinct MI300X"}) {
    const GpuPeaks& p = *find_gpu_peaks(n);
    EXPECT_GT(p.bf16_tflops, p.fp32_tflops) << n;
    EXPECT_GT(p.hbm_gbps, 0) << n;
  }
}

}  // namespace
}  // namespace stepscope::model
