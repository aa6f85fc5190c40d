#include "model/cluster_spec.h"

#include "model/json_file.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <tuple>
#include <nlohmann/json.hpp>

#include "model/gpu_table.h"

namespace stepscope::model {

double GpuSpec::peak_tflops(Dtype d) const {
  switch (d) {
    case Dtype::kBf16:
      return bf16_tflops;
    case Dtype::kFp16:
      return fp16_tflops;
    case Dtype::kFp8:
      return fp8_tflops > 0 ? fp8_tflops : bf16_tflops;  // no FP8 unit: runs at 16-bit rate
    case Dtype::kMxfp8:
      return mxfp8_tflops;  // 0 without the unit: plan_constraints refuses the layout
    case Dtype::kNvfp4:
      return fp4_tflops;
  }
  return bf16_tflops;
}

namespace {

// What the datasheet table (diagnose/hardware_table.cpp) does not hold.
// Every number is a property of the GPU, its node or its libraries, never of
// a training run; docs/planner.md "Constants" gives the reasoning.
//  - sms: CUDA C++ Programming Guide / architecture whitepapers (A100 108,
//    H100 SXM5 132, H200 132 (same GH100 die), B200 148).
//  - network_gbps: one NIC per GPU in the DGX/HGX reference nodes: DGX A100
//    8 × 200 Gb/s HDR (25 GB/s), DGX H100/H200 8 × 400 Gb/s NDR (50 GB/s),
//    DGX B200 8 × 400 Gb/s ConnectX-7 (50 GB/s).
//  - gemm_fraction: best measured bf16 GEMM over shapes / dense peak ("maximum
//    achievable matmul FLOPS", S. Bekman, Machine Learning Engineering, compute
//    chapter: A100 SXM 271.2 of 312, H100 SXM 794.5 of 989). H200 shares the
//    H100 die and clocks: same fraction. B200: no public figure yet, assumed
//    0.77 (between Hopper's and the trend of newer parts) — a known weak constant.
//  - hbm_fraction 0.85: streaming copy kernels reach 85-90% of HBM peak.
//  - nvlink_fraction: nccl-tests all_reduce bus bandwidth on DGX A100 ≈ 230 GB/s
//    of 300 GB/s per direction (0.78); DGX H100 ≈ 360 of 450 without NVLS (0.80).
//  - network_fraction 0.9: nccl-tests inter-node bus bandwidth ≈ 90% of the NIC rate.
//  - flash_fraction: FlashAttention-2 (Dao 2023) fwd+bwd reaches ~60% of A100
//    peak at head dim 128; on Hopper the fused kernels of the Megatron stack
//    (cuDNN through Transformer Engine) are taken at 0.48.
//  - fa2_fraction: FlashAttention-2 itself. A100: the flash fraction (it is
//    FA2 there). Hopper: 0.35, "FlashAttention-2 achieving only 35%
//    utilization on the H100 GPU" (Shah et al. 2024, FlashAttention-3,
//    abstract). Blackwell: no published figure; the flash fraction.
//  - family: what an architecture's libraries do, the same on every part
//    of it (family_traits below): whether the GEMM epilogue is hidden, and
//    the fp8 GEMM fraction.
//  - latencies: NCCL ring step (Simple protocol) ≈ 5 µs over NVLink, ≈ 8 µs
//    over InfiniBand: nccl-tests all_reduce on 8 A100s reaches ~150 GB/s bus
//    bandwidth at 16 MB, i.e. ≈ 65 µs fixed cost over 14 ring steps.
enum class Family : uint8_t { kAmpere, kAda, kHopper, kBlackwell, kCdna3 };

struct FamilyTraits {
  // CUTLASS 2.x-style kernels (what cuBLAS runs on Ampere and Ada) hold one
  // 256x128/128x256 thread block per SM and write the output tile after the
  // main loop; CUTLASS 3.x Hopper and Blackwell kernels are persistent and
  // warp-specialized ("ping-pong": one warp group's epilogue runs during
  // the other's main loop), so the C write is hidden there. CDNA3: the
  // measured fraction is taken as including whatever epilogue shows.
  bool gemm_epilogue_overlapped;
  // What a training step's GEMMs reach against the best shape of a sweep
  // (the row's gemm_fraction, as published). Hopper: 0.867, the project's
  // H200 (profiles/h200.json, `stepscope bench`: 14 bf16 shapes from 1024³
  // to the 16384 × 14336 × 4096 of a Llama MLP) reaches 0.813 of peak at
  // its best shape and a median of 0.705 (tile-normalised, as a hardware
  // profile is read): sustained large GEMMs run into the power limit and
  // clock down (12288³: 715, 16384³: 698 TFLOP/s against 805 at 6144³). A
  // profile and the catalog thus give the same rate for the same GPU.
  // Elsewhere no sweep has been measured: 1 (the best shape).
  double sustained_to_best;
  // The fp8 GEMM's fraction of the fp8 peak relative to the bf16 GEMM's of
  // the bf16 peak. Hopper: 0.910, the medians of the same H200 sweep (fp8
  // e4m3 → bf16 0.642, bf16 0.705). Elsewhere no measurement: 1.
  double fp8_to_bf16_fraction;
};

constexpr FamilyTraits family_traits(Family f) {
  switch (f) {
    case Family::kAmpere:
    case Family::kAda:
      return {false, 1.0, 1.0};
    case Family::kHopper:
      return {true, 0.7053 / 0.8132, 0.6417 / 0.7053};
    case Family::kBlackwell:
    case Family::kCdna3:
      return {true, 1.0, 1.0};
  }
  return {true, 1.0, 1.0};
}

struct Extra {
  const char* key;
  const char* datasheet;
  const char* alias;  // a lower-case token of device names for this row
  Family family;
  int sms;
  double network_gbps;
  double gemm_fraction;
  double nvlink_fraction;
  double flash_fraction;
  double fa2_fraction;
  int gpus_per_node = 8;  // the NVLink domain (72 on GB200 / GB300 NVL72)
  // Pinned host copies per direction: PCIe Gen4 x16 ≈ 25 GB/s achievable
  // (A100); Gen5 x16: 55 GB/s, measured H2D on the H200 here (HGX H100,
  // H200, B200, B300); Grace's NVLink-C2C (900 GB/s both directions) at the
  // NVLink fraction: 360 GB/s (GB200, GB300).
  double host_link_gbps = 55;
  // The link inside the NVLink domain, GB/s per direction; 0: the table's
  // NVLink / Infinity Fabric rate. Parts without one (L40S) give their PCIe link.
  double link_gbps = 0;
};

constexpr Extra kExtras[] = {
    {"a100-40-sxm", "NVIDIA A100 40GB", "a100-sxm4-40gb", Family::kAmpere, 108, 25, 0.869, 0.78, 0.60, 0.60, 8, 25},
    {"a100-80-sxm", "NVIDIA A100 80GB", "a100-sxm4-80gb", Family::kAmpere, 108, 25, 0.869, 0.78, 0.60, 0.60, 8, 25},
    {"h100-sxm", "NVIDIA H100 SXM", "h100", Family::kHopper, 132, 50, 0.803, 0.80, 0.48, 0.35},
    {"h200-sxm", "NVIDIA H200 SXM", "h200", Family::kHopper, 132, 50, 0.803, 0.80, 0.48, 0.35},
    {"b200", "NVIDIA B200", "b200", Family::kBlackwell, 148, 50, 0.77, 0.80, 0.48, 0.48},
    // Variants and newer parts with the fractions of their family (docs/planner.md
    // "Constants": measured on H100/H200, assumed for Blackwell) — not measured on
    // these parts. Meta's Grand Teton H100 (96 GB HBM2e, 500 W, 400 Gb/s RDMA per GPU).
    {"h100-sxm-96gb", "NVIDIA H100 SXM 96GB HBM2e (500 W)", "h100-96gb", Family::kHopper, 132, 50, 0.803, 0.80, 0.48, 0.35},
    // HGX B300: 160 SMs (NVIDIA, "Inside NVIDIA Blackwell Ultra"), ConnectX-8 800 Gb/s per GPU.
    {"b300", "NVIDIA B300", "b300", Family::kBlackwell, 160, 100, 0.77, 0.80, 0.48, 0.48},
    // GB200 NVL72: one NVLink domain of 72 GPUs, ConnectX-7 400 Gb/s per GPU.
    {"gb200", "NVIDIA GB200", "gb200", Family::kBlackwell, 148, 50, 0.77, 0.80, 0.48, 0.48, 72, 360},
    // GB300 NVL72: 72 GPUs per NVLink domain, ConnectX-8 800 Gb/s per GPU.
    {"gb300", "NVIDIA GB300", "gb300", Family::kBlackwell, 160, 100, 0.77, 0.80, 0.48, 0.48, 72, 360},
    // Hopper variants (docs/planner.md "Hardware" gives each source).
    // H800: the H100 SXM with NVLink cut to 400 GB/s (DeepSeek-V3 measured
    // 160 GB/s one way: 0.80 of 200). H20: 78 SMs, 148 TFLOP/s dense bf16,
    // best measured GEMM 142.3 (0.96); attention forward reaches 0.85–0.87
    // of its peak (FA3 / cuDNN, flash-attention#1310), backward unmeasured:
    // Ampere's 0.60 taken. PCIe / NVL cards: NVLink bridges join 2 (H100) or
    // 4 (H200 NVL) cards; past the bridge, PCIe Gen5 and a NIC per GPU
    // (assumed 400 Gb/s). H100 PCIe: 114 SMs, best square GEMM 495.9 of 756
    // (0.656, a lower bound: square shapes only). GH200: Bekman's 828.6 of
    // 989 (144 GB, 900 W) and 821.0 (96 GB); 4 modules per node as CSCS
    // Alps' HPE EX254n, Slingshot 200 Gb/s each; NVLink-C2C to the host.
    {"h800-sxm", "NVIDIA H800 SXM", "h800", Family::kHopper, 132, 50, 0.803, 0.80, 0.48, 0.35},
    {"h20", "NVIDIA H20", "h20", Family::kHopper, 78, 50, 0.96, 0.80, 0.60, 0.60},
    {"h100-pcie", "NVIDIA H100 PCIe", "h100-pcie", Family::kHopper, 114, 50, 0.656, 0.80, 0.48, 0.35, 2},
    {"h100-nvl", "NVIDIA H100 NVL", "h100-nvl", Family::kHopper, 132, 50, 0.803, 0.80, 0.48, 0.35, 2},
    {"h200-nvl", "NVIDIA H200 NVL", "h200-nvl", Family::kHopper, 132, 50, 0.803, 0.80, 0.48, 0.35, 4},
    {"gh200", "NVIDIA GH200 96GB HBM3", "gh200-96gb", Family::kHopper, 132, 25, 0.830, 0.80, 0.48, 0.35, 4, 360},
    {"gh200-144gb", "NVIDIA GH200 144GB HBM3e", "gh200-144gb", Family::kHopper, 132, 25, 0.838, 0.80, 0.48, 0.35, 4, 360},
    // A800: the A100 with NVLink cut to 400 GB/s; same die and clocks (its
    // square-only GEMM sweep reached 0.854).
    {"a800-sxm", "NVIDIA A800 80GB SXM", "a800", Family::kAmpere, 108, 25, 0.869, 0.78, 0.60, 0.60, 8, 25},
    // L40S: no NVLink; each card on PCIe Gen4 x16 (≈ 25 GB/s achievable),
    // 4 per node with 200 Gb/s per GPU in NVIDIA's reference design, so
    // every collective leaves the card at ≈ 25 GB/s. 142 SMs, best square
    // GEMM 269.2 of 362 (0.744); Ada runs CUTLASS 2.x-style kernels (no
    // warp specialization), so the epilogue shows as on Ampere. FA2: Ampere's 0.60.
    {"l40s", "NVIDIA L40S", "l40s", Family::kAda, 142, 25, 0.744, 0.80, 0.60, 0.60, 1, 25, 25},
    // AMD CDNA3: 304 CUs; 8 GPUs in a full Infinity Fabric mesh, 7 links of
    // 64 GB/s per direction (448); rccl-tests all_reduce 319 GB/s bus
    // bandwidth on 8 MI300X (ROCm blog, 2025-03): 0.71. GEMM: Bekman's
    // 668.4 (MI300X) and 784.9 (MI325X) of 1307 TFLOP/s. Attention: the
    // forward measured at 435–587 TFLOP/s (0.33–0.45, AITER); backward
    // unmeasured, so the low end. One 400 Gb/s NIC per GPU.
    {"mi300x", "AMD Instinct MI300X", "mi300x", Family::kCdna3, 304, 50, 0.511, 0.71, 0.33, 0.33},
    {"mi325x", "AMD Instinct MI325X", "mi325x", Family::kCdna3, 304, 50, 0.600, 0.71, 0.33, 0.33},
};

GpuSpec make_spec(const Extra& e) {
  const GpuPeaks* peaks = find_gpu_peaks(e.datasheet);
  GpuSpec g;
  g.name = e.key;
  g.datasheet_name = e.datasheet;
  if (peaks) {
    g.bf16_tflops = peaks->bf16_tflops;
    g.fp16_tflops = peaks->fp16_tflops;
    g.fp8_tflops = peaks->fp8_tflops;
    g.mxfp8_tflops = peaks->mxfp8_tflops;
    g.fp4_tflops = peaks->fp4_tflops;
    g.memory_gb = peaks->memory_gb;
    g.hbm_gbps = peaks->hbm_gbps;
    g.nvlink_gbps = e.link_gbps > 0 ? e.link_gbps : peaks->link_gbps / 2;  // the table holds both directions
    g.source = std::string(peaks->source);
  }
  g.gpus_per_node = e.gpus_per_node;
  g.network_gbps = e.network_gbps;
  g.host_link_gbps = e.host_link_gbps;
  g.sms = e.sms;
  g.hbm_fraction = 0.85;
  g.nvlink_fraction = e.nvlink_fraction;
  g.network_fraction = 0.90;
  g.flash_fraction = e.flash_fraction;
  g.fa2_fraction = e.fa2_fraction;
  const FamilyTraits traits = family_traits(e.family);
  g.gemm_epilogue_overlapped = traits.gemm_epilogue_overlapped;
  g.gemm_fraction = e.gemm_fraction * traits.sustained_to_best;
  g.fp8_gemm_fraction = g.gemm_fraction * traits.fp8_to_bf16_fraction;
  g.nvlink_latency_s = 5e-6;
  g.network_latency_s = 8e-6;
  return g;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

const std::vector<GpuSpec>& gpu_catalog() {
  static const std::vector<GpuSpec> catalog = [] {
    std::vector<GpuSpec> v;
    for (const auto& e : kExtras) v.push_back(make_spec(e));
    return v;
  }();
  return catalog;
}

const GpuSpec* find_gpu(std::string_view name) {
  std::string n = lower(name);
  for (size_t i = 0; i < std::size(kExtras); ++i)
    if (n == kExtras[i].key || n == kExtras[i].alias) return &gpu_catalog()[i];
  // A device name: the datasheet row it maps to, if that row is in the catalog.
  const GpuPeaks* peaks = find_gpu_peaks(name);
  if (!peaks) return nullptr;
  for (const auto& g : gpu_catalog())
    if (find_gpu_peaks(g.datasheet_name) == peaks) return &g;
  return nullptr;
}

}  // namespace stepscope::model
