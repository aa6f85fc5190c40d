#include "model/gpu_table.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace stepscope::model {
namespace {

// One row per model. Tensor-core rates are dense: NVIDIA's datasheets print
// them "with sparsity" (2:4), which is twice the dense rate, so those are
// halved here. AMD MI250/MI250X appear to PyTorch as two devices (one per
// GCD), so their rows are per GCD: half the package figures.
constexpr std::array kPeaks = {
    // NVIDIA H200 Tensor Core GPU datasheet (SXM): FP32 67 TF; TF32 989 TF*,
    // BF16/FP16 1,979 TF*, FP8 3,958 TF* (* with sparsity); 141 GB HBM3e at
    // 4.8 TB/s; NVLink 900 GB/s.
    GpuPeaks{"NVIDIA H200 SXM", 67, 494.7, 989.4, 989.4, 1978.9, 4800, 900, 141,
             "NVIDIA H200 Tensor Core GPU datasheet (SXM)", 700},
    // NVIDIA H100 Tensor Core GPU datasheet, PCIe column: FP32 51 TF; TF32
    // 756 TF*, BF16/FP16 1,513 TF*, FP8 3,026 TF*; 80 GB at 2 TB/s; NVLink
    // bridge 600 GB/s.
    GpuPeaks{"NVIDIA H100 PCIe", 51, 378, 756, 756, 1513, 2000, 600, 80,
             "NVIDIA H100 Tensor Core GPU datasheet (PCIe)", 350},
    // Same datasheet, SXM column: FP32 67 TF; TF32 989 TF*, BF16/FP16 1,979
    // TF*, FP8 3,958 TF*; 80 GB HBM3 at 3.35 TB/s; NVLink 900 GB/s.
    GpuPeaks{"NVIDIA H100 SXM", 67, 494.7, 989.4, 989.4, 1978.9, 3350, 900, 80,
             "NVIDIA H100 Tensor Core GPU datasheet (SXM)", 700},
    // NVIDIA A100 Tensor Core GPU datasheet: FP32 19.5 TF; TF32 156 TF
    // (312*), BF16/FP16 312 TF (624*); 80 GB HBM2e at 2,039 GB/s (SXM);
    // NVLink 600 GB/s. No FP8.
    GpuPeaks{"NVIDIA A100 80GB", 19.5, 156, 312, 312, 0, 2039, 600, 80,
             "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM)", 400},
    // Same datasheet, 40 GB: HBM2 at 1,555 GB/s.
    GpuPeaks{"NVIDIA A100 40GB", 19.5, 156, 312, 312, 0, 1555, 600, 40,
             "NVIDIA A100 Tensor Core GPU datasheet (40GB)", 400},
    // NVIDIA V100 Tensor Core GPU datasheet, SXM2: FP32 15.7 TF; tensor
    // (FP16) 125 TF; HBM2 900 GB/s; NVLink 300 GB/s. No TF32/BF16.
    GpuPeaks{"NVIDIA V100 SXM2", 15.7, 0, 0, 125, 0, 900, 300, 32,
             "NVIDIA V100 Tensor Core GPU datasheet (SXM2)", 300},
    // Same datasheet, PCIe: FP32 14 TF; tensor 112 TF; 900 GB/s; no NVLink.
    GpuPeaks{"NVIDIA V100 PCIe", 14, 0, 0, 112, 0, 900, 0, 32,
             "NVIDIA V100 Tensor Core GPU datasheet (PCIe)", 250},
    // NVIDIA L40S datasheet: FP32 91.6 TF; TF32 183 TF (366*), BF16/FP16
    // 362.05 TF (733*), FP8 733 TF (1,466*); 48 GB GDDR6 at 864 GB/s.
    GpuPeaks{"NVIDIA L40S", 91.6, 183, 362.05, 362.05, 733, 864, 0, 48, "NVIDIA L40S datasheet", 350},
    // NVIDIA L4 datasheet: FP32 30.3 TF; TF32 120 TF*, BF16/FP16 242 TF*,
    // FP8 485 TF*; 24 GB at 300 GB/s.
    GpuPeaks{"NVIDIA L4", 30.3, 60, 121, 121, 242.5, 300, 0, 24, "NVIDIA L4 datasheet", 72},
    // NVIDIA A10 datasheet: FP32 31.2 TF; TF32 62.5 TF (125*), BF16/FP16 125
    // TF (250*); 24 GB GDDR6 at 600 GB/s.
    GpuPeaks{"NVIDIA A10", 31.2, 62.5, 125, 125, 0, 600, 0, 24, "NVIDIA A10 datasheet", 150},
    // NVIDIA Turing architecture whitepaper, GeForce RTX 2080 Ti (reference
    // clocks): FP32 13.4 TF; FP16 tensor with FP32 accumulate 53.8 TF
    // (PyTorch accumulates in FP32); 616 GB/s GDDR6, 11 GB.
    GpuPeaks{"NVIDIA GeForce RTX 2080 Ti", 13.4, 0, 0, 53.8, 0, 616, 0, 11,
             "NVIDIA Turing GPU architecture whitepaper (RTX 2080 Ti)"},
    // AMD Instinct MI300X data sheet: FP32 vector 163.4 TF; TF32 653.7 TF,
    // BF16/FP16 1,307.4 TF, FP8 2,614.9 TF (dense); 192 GB HBM3 at 5.3 TB/s;
    // Infinity Fabric 896 GB/s.
    GpuPeaks{"AMD Instinct MI300X", 163.4, 653.7, 1307.4, 1307.4, 2614.9, 5300, 896, 192,
             "AMD Instinct MI300X accelerator data sheet", 750},
    // AMD Instinct MI250X data sheet (package): FP32 vector 47.9 TF, BF16/FP16
    // 383 TF; 128 GB HBM2e at 3.2768 TB/s; Infinity Fabric 800 GB/s. Per GCD
    // (one PyTorch device): half of each. CDNA2 has no TF32.
    GpuPeaks{"AMD Instinct MI250X (one GCD)", 23.95, 0, 191.5, 191.5, 0, 1638.4, 400, 64,
             "AMD Instinct MI250X accelerator data sheet (halved per GCD)"},
    // AMD Instinct MI250 data sheet (package): FP32 vector 45.3 TF, BF16/FP16
    // 362.1 TF; 128 GB HBM2e at 3.2768 TB/s; Infinity Fabric 800 GB/s. Per GCD: half.
    GpuPeaks{"AMD Instinct MI250 (one GCD)", 22.65, 0, 181.05, 181.05, 0, 1638.4, 400, 64,
             "AMD Instinct MI250 accelerator data sheet (halved per GCD)"},
    // NVIDIA HGX B200 datasheet, per GPU: FP32 75 TF; TF32 2.2 PF*, BF16/FP16
    // 4.5 PF*, FP8 9 PF* (* with sparsity); 180 GB HBM3e at 7.7 TB/s; NVLink 5
    // 1.8 TB/s.
    GpuPeaks{"NVIDIA B200", 75, 1100, 2250, 2250, 4500, 7700, 1800, 180, "NVIDIA HGX B200 datasheet", 1000, 4500,
             9000},
    // NVIDIA H800 Tensor Core GPU datasheet, SXM column: the H100 SXM's
    // compute (FP32 67 TF; TF32 989 TF*, BF16/FP16 1,979 TF*, FP8 3,958 TF*)
    // and 80 GB HBM3 at 3.35 TB/s, with NVLink cut to 400 GB/s.
    GpuPeaks{"NVIDIA H800 SXM", 67, 494.7, 989.4, 989.4, 1978.9, 3350, 400, 80,
             "NVIDIA H800 Tensor Core GPU datasheet (SXM)"},
    // Same datasheet, PCIe column: the H100 PCIe's compute (FP32 51 TF; TF32
    // 756 TF*, BF16/FP16 1,513 TF*, FP8 3,026 TF*); 80 GB HBM2e at 2 TB/s;
    // NVLink bridge 400 GB/s.
    GpuPeaks{"NVIDIA H800 PCIe", 51, 378, 756, 756, 1513, 2000, 400, 80,
             "NVIDIA H800 Tensor Core GPU datasheet (PCIe)"},
    // NVIDIA H20 (HGX H20) product specification as NVIDIA's partners publish
    // it (no sparsity in these figures): FP32 44 TF; TF32 74 TF, BF16/FP16
    // 148 TF, FP8 296 TF; 96 GB HBM3 at 4.0 TB/s; NVLink 900 GB/s.
    GpuPeaks{"NVIDIA H20", 44, 74, 148, 148, 296, 4000, 900, 96, "NVIDIA HGX H20 product specification (96 GB)"},
    // NVIDIA H100 Tensor Core GPU datasheet, H100 NVL column: FP32 60 TF;
    // TF32 835 TF*, BF16/FP16 1,671 TF*, FP8 3,341 TF*; 94 GB HBM3 at 3.9 TB/s;
    // NVLink bridge 600 GB/s.
    GpuPeaks{"NVIDIA H100 NVL", 60, 417.5, 835.5, 835.5, 1670.5, 3900, 600, 94,
             "NVIDIA H100 Tensor Core GPU datasheet (H100 NVL)", 400},
    // NVIDIA GH200 Grace Hopper Superchip datasheet, GPU side: FP32 67 TF;
    // TF32 989 TF*, BF16/FP16 1,979 TF*, FP8 3,958 TF*; 96 GB HBM3 at 4 TB/s
    // (the 480GB in the device name is the module's total with the Grace
    // LPDDR5X); NVLink 900 GB/s.
    GpuPeaks{"NVIDIA GH200 96GB HBM3", 67, 494.7, 989.4, 989.4, 1978.9, 4000, 900, 96,
             "NVIDIA GH200 Grace Hopper Superchip datasheet (96 GB HBM3)"},
    // Same datasheet, HBM3e version: 144 GB at 4.9 TB/s, same compute.
    GpuPeaks{"NVIDIA GH200 144GB HBM3e", 67, 494.7, 989.4, 989.4, 1978.9, 4900, 900, 144,
             "NVIDIA GH200 Grace Hopper Superchip datasheet (144 GB HBM3e)"},
    // NVIDIA L40 datasheet: FP32 90.5 TF; TF32 181 TF*, BF16/FP16 362.1 TF*,
    // FP8 724 TF*; 48 GB GDDR6 at 864 GB/s.
    GpuPeaks{"NVIDIA L40", 90.5, 90.5, 181.05, 181.05, 362, 864, 0, 48, "NVIDIA L40 datasheet", 300},
    // NVIDIA Ada Lovelace architecture whitepaper, GeForce RTX 4090: FP32
    // 82.6 TF; TF32 82.6 TF, BF16 and FP16 with FP32 accumulate 165.2 TF, FP8
    // with FP32 accumulate 330.3 TF (dense; PyTorch accumulates in FP32);
    // 24 GB GDDR6X at 1,008 GB/s.
    GpuPeaks{"NVIDIA GeForce RTX 4090", 82.6, 82.6, 165.2, 165.2, 330.3, 1008, 0, 24,
             "NVIDIA Ada Lovelace GPU architecture whitepaper (RTX 4090)"},
    // NVIDIA A800 Tensor Core GPU datasheet, 80GB SXM: the A100 80GB's
    // compute (FP32 19.5 TF; TF32 156 TF, BF16/FP16 312 TF) and HBM2e at
    // 2,039 GB/s, with NVLink at 400 GB/s.
    GpuPeaks{"NVIDIA A800 80GB SXM", 19.5, 156, 312, 312, 0, 2039, 400, 80,
             "NVIDIA A800 Tensor Core GPU datasheet (80GB SXM)"},
    // Same datasheet, 80GB PCIe: HBM2e at 1,935 GB/s; NVLink bridge 400 GB/s.
    GpuPeaks{"NVIDIA A800 80GB PCIe", 19.5, 156, 312, 312, 0, 1935, 400, 80,
             "NVIDIA A800 Tensor Core GPU datasheet (80GB PCIe)"},
    // NVIDIA A40 datasheet: FP32 37.4 TF; TF32 74.8 TF (149.6*), BF16/FP16
    // 149.7 TF (299.4*); 48 GB GDDR6 at 696 GB/s; NVLink 112.5 GB/s.
    GpuPeaks{"NVIDIA A40", 37.4, 74.8, 149.7, 149.7, 0, 696, 112.5, 48, "NVIDIA A40 datasheet", 300},
    // NVIDIA A30 datasheet: FP32 10.3 TF; TF32 82 TF (165*), BF16/FP16 165
    // TF (330*); 24 GB HBM2 at 933 GB/s; NVLink 200 GB/s.
    GpuPeaks{"NVIDIA A30", 10.3, 82, 165, 165, 0, 933, 200, 24, "NVIDIA A30 datasheet", 165},
    // NVIDIA T4 datasheet: FP32 8.1 TF; mixed precision (FP16 in, FP32
    // accumulate) 65 TF; 16 GB GDDR6 at 320 GB/s. No TF32/BF16.
    GpuPeaks{"NVIDIA T4", 8.1, 0, 0, 65, 0, 320, 0, 16, "NVIDIA T4 datasheet", 70},
    // AMD Instinct MI210 data sheet: FP32 vector 22.6 TF, BF16/FP16 matrix
    // 181 TF; 64 GB HBM2e at 1.6384 TB/s; three Infinity Fabric links, 300
    // GB/s. One GCD, so one PyTorch device; CDNA2 has no TF32.
    GpuPeaks{"AMD Instinct MI210", 22.6, 0, 181, 181, 0, 1638.4, 300, 64, "AMD Instinct MI210 accelerator data sheet", 300},
    // AMD Instinct MI325X data sheet: the MI300X's compute (FP32 vector
    // 163.4 TF; TF32 653.7 TF, BF16/FP16 1,307.4 TF, FP8 2,614.9 TF, dense);
    // 256 GB HBM3E at 6 TB/s; Infinity Fabric 896 GB/s.
    GpuPeaks{"AMD Instinct MI325X", 163.4, 653.7, 1307.4, 1307.4, 2614.9, 6000, 896, 256,
             "AMD Instinct MI325X accelerator data sheet", 1000},
    // NVIDIA Blackwell Ultra datasheet (OCT25), HGX B300 column: FP32 75 TF;
    // TF32 2.2 PF*, FP16/BF16 4.5 PF (read as sparse like the B200 column's
    // same figure), FP8/FP6 9 PF*, NVFP4 "18 | 14" PF (sparse | dense); 270
    // GB HBM3E at 7.7 TB/s; NVLink 1.8 TB/s; configurable up to 1,100 W.
    // MXFP8 runs at the FP8/FP6 row's rate (the datasheet prints no own row).
    GpuPeaks{"NVIDIA B300", 75, 1100, 2250, 2250, 4500, 7700, 1800, 270,
             "NVIDIA Blackwell Ultra datasheet (HGX B300)", 1100, 4500, 14000},
    // NVIDIA GB200 NVL72 product page, per-GPU column: FP32 80 TF; TF32 2.5
    // PF*, FP16/BF16 5 PF*, FP8/FP6 10 PF*, FP4 20 PF* (rack: "1,440 | 720"
    // sparse | dense); 186 GB HBM3E at 8 TB/s; NVLink 1.8 TB/s; up to 1,200 W.
    GpuPeaks{"NVIDIA GB200", 80, 1250, 2500, 2500, 5000, 8000, 1800, 186,
             "NVIDIA GB200 NVL72 product page (per GPU)", 1200, 5000, 10000},
    // NVIDIA Blackwell Ultra datasheet (OCT25), GB300 NVL72 per-GPU column:
    // FP32 80 TF; TF32 2.5 PF*, FP16/BF16 5 PF (as B300), FP8/FP6 10 PF*,
    // NVFP4 "20 | 15" PF; 279 GB HBM3E at 8 TB/s; NVLink 1.8 TB/s; up to 1,400 W.
    GpuPeaks{"NVIDIA GB300", 80, 1250, 2500, 2500, 5000, 8000, 1800, 279,
             "NVIDIA Blackwell Ultra datasheet (GB300 NVL72, per GPU)", 1400, 5000, 15000},
    // NVIDIA H200 product page, H200 NVL column: FP32 60 TF; TF32 835 TF*,
    // BF16/FP16 1,671 TF*, FP8 3,341 TF*; 141 GB at 4.8 TB/s; NVLink bridge
    // 900 GB/s per GPU; up to 600 W.
    GpuPeaks{"NVIDIA H200 NVL", 60, 417.5, 835.5, 835.5, 1670.5, 4800, 900, 141,
             "NVIDIA H200 Tensor Core GPU product page (H200 NVL)", 600},
    // Meta's Grand Teton H100 (no NVIDIA datasheet; torchtitan
    // benchmarks/llama3_h100_202412_torchtitan.md): "96GB HBM2e with 2.4
    // TB/sec peak memory bandwidth", "the default 500W power limit", and a
    // peak "between SXM and NVL": the H100 NVL's rates here, the lower bound
    // (FP32 60 TF; TF32 417.5, BF16/FP16 835.5, FP8 1,670.5 TF dense); SXM NVLink.
    GpuPeaks{"NVIDIA H100 SXM 96GB HBM2e (500 W)", 60, 417.5, 835.5, 835.5, 1670.5, 2400, 900, 96,
             "torchtitan benchmarks/llama3_h100_202412 (Meta Grand Teton H100)", 500},
};

// Name rules, tried in order on the lower-cased device name. The model
// token (`all[0]`) must occur as a whole word: bounded by the name's ends or
// by characters other than letters and digits, so "h20" is not found in
// "h200", nor "h200" in "gh200", nor "a10" in "a10g" (a GPU with its own
// clocks and no public datasheet: it resolves to no row rather than the
// A10's). `all[1]` must occur anywhere and no `none` token may. Order
// matters: the PCIe, NVL and 40 GB variants come before the plain model name.
struct NameRule {
  std::array<std::string_view, 2> all;
  std::array<std::string_view, 2> none;
  size_t row;
};

constexpr std::array kNameRules = {
    NameRule{{"h200", "nvl"}, {}, 33},
    NameRule{{"h200", ""}, {}, 0},
    NameRule{{"h100", "pcie"}, {}, 1},
    NameRule{{"h100", "nvl"}, {}, 18},
    NameRule{{"h100", "96g"}, {}, 34},
    NameRule{{"h100", ""}, {}, 2},
    NameRule{{"a100", "80g"}, {}, 3},
    NameRule{{"a100", ""}, {}, 4},
    NameRule{{"v100", "pcie"}, {}, 6},
    NameRule{{"v100", ""}, {}, 5},
    NameRule{{"l40s", ""}, {}, 7},
    NameRule{{"l4", ""}, {}, 8},
    NameRule{{"a10", ""}, {}, 9},
    NameRule{{"2080 ti", ""}, {}, 10},
    NameRule{{"mi300x", ""}, {}, 11},
    NameRule{{"mi250x", ""}, {}, 12},
    NameRule{{"mi250", ""}, {}, 13},
    NameRule{{"b200", ""}, {}, 14},
    NameRule{{"h800", "pcie"}, {}, 16},
    NameRule{{"h800", ""}, {}, 15},
    NameRule{{"h20", ""}, {}, 17},
    NameRule{{"gh200", "144g"}, {}, 20},
    NameRule{{"gh200", ""}, {}, 19},
    NameRule{{"l40", ""}, {}, 21},
    // "RTX 4090 D" (fewer SMs) and the laptop part are other GPUs.
    NameRule{{"rtx 4090", ""}, {"4090 d", "laptop"}, 22},
    NameRule{{"a800", "pcie"}, {}, 24},
    NameRule{{"a800", "80g"}, {}, 23},
    NameRule{{"a40", ""}, {}, 25},
    NameRule{{"a30", ""}, {}, 26},
    NameRule{{"t4", ""}, {}, 27},
    NameRule{{"mi210", ""}, {}, 28},
    NameRule{{"mi325x", ""}, {}, 29},
    NameRule{{"b300", ""}, {}, 30},
    NameRule{{"gb200", ""}, {}, 31},
    NameRule{{"gb300", ""}, {}, 32},
};

static_assert(std::all_of(kNameRules.begin(), kNameRules.end(),
                          [](const NameRule& r) { return r.row < kPeaks.size(); }),
              "a name rule points past the peak table");

bool contains(std::string_view hay, std::string_view needle) {
  return needle.empty() || hay.find(needle) != std::string_view::npos;
}

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// `word` occurs in `hay` with no letter or digit right before or after it.
bool contains_word(std::string_view hay, std::string_view word) {
  for (size_t at = hay.find(word); at != std::string_view::npos; at = hay.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !is_alnum(hay[at - 1])) && (end == hay.size() || !is_alnum(hay[end]))) return true;
  }
  return false;
}

}  // namespace

std::span<const GpuPeaks> gpu_table() { return kPeaks; }

const GpuPeaks* find_gpu_peaks(std::string_view device_name) {
  std::string lower(device_name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& rule : kNameRules) {
    if (!contains_word(lower, rule.all[0]) || !contains(lower, rule.all[1])) continue;
    if (std::any_of(rule.none.begin(), rule.none.end(),
                    [&](std::string_view n) { return !n.empty() && contains(lower, n); }))
      continue;
    return &kPeaks[rule.row];
  }
  return nullptr;
}

double matmul_peak_tflops(const GpuPeaks& peaks, std::string_view dtype, bool tf32) {
  std::string lower(dtype);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (contains(lower, "bfloat16")) return peaks.bf16_tflops;
  if (contains(lower, "float8")) return peaks.fp8_tflops;
  if (contains(lower, "half") || lower == "float16") return peaks.fp16_tflops;
  if (lower == "float" || lower == "float32") {
    if (tf32 && peaks.tf32_tflops > 0) return peaks.tf32_tflops;
    return peaks.fp32_tflops;
  }
  if (lower == "double") return 0;
  return 0;
}

}  // namespace stepscope::model
