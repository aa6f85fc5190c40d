// A small hand-written hardware profile for the hwbench tests.
#pragma once

#include "model/hardware_profile.h"

namespace stepscope::hwbench::testing {

using model::CollectiveResult;
using model::HardwareProfile;

inline HardwareProfile h200_profile() {
  HardwareProfile p;
  p.gpu = "NVIDIA H200";
  p.date = "2026-11-29T16:00:00Z";
  p.command = "stepscope bench -o h200.json";
  p.tool = "stepscope 0.1.0";
  p.device.name = "NVIDIA H200";
  p.device.visible_gpus = 1;
  p.device.compute_major = 9;
  p.device.sms = 132;
  p.device.memory_bytes = 150'000'000'000;
  p.device.l2_bytes = 62'914'560;
  // 2·8192³ = 1.0995e12 FLOP; at 1.4 ms -> 785.4 TFLOP/s.
  p.gemm.push_back({"bf16", 8192, 8192, 8192, 1.4e-3, 785.4});
  p.gemm.push_back({"bf16", 1024, 1024, 1024, 1e-5, 214.7});
  p.gemm.push_back({"tf32", 8192, 8192, 8192, 3.1e-3, 354.7});
  p.memory.push_back({"hbm_copy", 2147483648.0, 0.51e-3, 4210.0});
  p.host_copy.push_back({"h2d_pinned", 268435456.0, 4.9e-3, 54.8});
  p.launch.push_back({"graph_replay", 1.1});
  CollectiveResult ar;
  ar.name = "all_reduce";
  ar.world = 1;
  ar.points.push_back({8, 6e-6, 0.0013, 0, -1});
  ar.points.push_back({1 << 20, 9e-6, 116.5, 0, 0});
  ar.fits.push_back({"ll", 8, 8, 2, 5.9, 0, 0.5});
  p.collectives.push_back(ar);
  p.notes.push_back("NCCL measured on 1 GPU");
  return p;
}

}  // namespace stepscope::hwbench::testing
