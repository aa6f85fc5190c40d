#include "hwbench/profile_json.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "hwbench/golden_reference.h"
#include "model/json_file.h"
#include "model/model_spec.h"

namespace stepscope::hwbench {

// The hardware profile and its parts (src/model/hardware_profile.h).
using namespace model;
namespace {

using nlohmann::json;

// The planner's gemm[] accepts these dtypes only (plan/training_settings.h).
bool plan_dtype(const std::string& d) { return d == "bf16" || d == "fp16" || d == "fp8"; }

json bandwidths_to_json(const std::vector<BandwidthResult>& v) {
  json a = json::array();
  for (const BandwidthResult& b : v) a.push_back({{"name", b.name}, {"bytes", b.bytes}, {"seconds", b.seconds}, {"gbps", b.gbps}});
  return a;
}

}  // namespace

json profile_to_json(const HardwareProfile& p) {
  json j;
  j["gpu"] = p.gpu;
  // Planner fields: only what was measured; absent ones keep the catalog's.
  if (p.device.visible_gpus >= 2) j["gpus_per_node"] = p.device.visible_gpus;
  if (const BandwidthResult* copy = p.memory_result("hbm_copy")) j["hbm_gbps"] = copy->gbps;
  if (const CollectiveResult* ar = p.collective("all_reduce"); ar && ar->world >= 2) {
    double best = 0;
    for (const CollectivePoint& pt : ar->points) best = std::max(best, pt.busbw_gbps);
    j["nccl"] = {{"intra_node_busbw_gbps", best}};
  }
  json plan_gemm = json::array();
  for (const GemmResult& g : p.gemm)
    if (plan_dtype(g.dtype) && g.tflops > 0)
      plan_gemm.push_back({{"m", g.m}, {"n", g.n}, {"k", g.k}, {"dtype", g.dtype}, {"tflops", g.tflops}});
  j["gemm"] = plan_gemm;

  json b;
  b["schema_version"] = model::kProfileSchemaVersion;
  b["date"] = p.date;
  b["command"] = p.command;
  b["tool"] = p.tool;
  b["quick"] = p.quick;
  b["wall_seconds"] = p.wall_seconds;
  const DeviceInfo& d = p.device;
  b["device"] = {{"name", d.name},
                 {"index", d.index},
                 {"visible_gpus", d.visible_gpus},
                 {"compute_capability", fmt::format("{}.{}", d.compute_major, d.compute_minor)},
                 {"sms", d.sms},
                 {"memory_bytes", d.memory_bytes},
                 {"l2_bytes", d.l2_bytes},
                 {"sm_clock_mhz", d.sm_clock_mhz},
                 {"memory_clock_mhz", d.memory_clock_mhz},
                 {"memory_bus_bits", d.memory_bus_bits},
                 {"driver_version", d.driver_version},
                 {"runtime_version", d.runtime_version},
                 {"cublaslt_version", d.cublaslt_version},
                 {"nccl_version", d.nccl_version}};
  json sweep = json::array();
  json maxima = json::object();
  for (const GemmResult& g : p.gemm) {
    double best = p.gemm_max_tflops(g.dtype);
    sweep.push_back({{"dtype", g.dtype},
                     {"m", g.m},
                     {"n", g.n},
                     {"k", g.k},
                     {"seconds", g.seconds},
                     {"tflops", g.tflops},
                     {"efficiency", best > 0 ? g.tflops / best : 0}});
    maxima[g.dtype] = best;
  }
  b["gemm_sweep"] = sweep;
  b["gemm_max_tflops"] = maxima;
  b["memory"] = bandwidths_to_json(p.memory);
  b["host_copy"] = bandwidths_to_json(p.host_copy);
  json launch = json::array();
  for (const LatencyResult& l : p.launch) launch.push_back({{"name", l.name}, {"us", l.us}});
  b["launch_us"] = launch;
  json colls = json::array();
  for (const CollectiveResult& c : p.collectives) {
    json pts = json::array(), fits = json::array();
    for (const CollectivePoint& pt : c.points)
      pts.push_back({{"bytes", pt.bytes},
                     {"seconds", pt.seconds},
                     {"algbw_gbps", pt.algbw_gbps},
                     {"busbw_gbps", pt.busbw_gbps},
                     {"wrong", pt.wrong}});
    for (const AlphaBetaFit& f : c.fits)
      fits.push_back({{"range", f.range},
                      {"min_bytes", f.min_bytes},
                      {"max_bytes", f.max_bytes},
                      {"points", f.points},
                      {"alpha_us", f.alpha_us},
                      {"beta_gbps", f.beta_gbps},
                      {"r2", f.r2}});
    colls.push_back({{"name", c.name}, {"world", c.world}, {"points", pts}, {"fits", fits}});
  }
  b["collectives"] = colls;
  json verdicts = json::array();
  for (const Verdict& v : golden_comparison(p))
    verdicts.push_back({{"metric", v.metric},
                        {"unit", v.unit},
                        {"value", v.value},
                        {"datasheet", v.datasheet},
                        {"known_good", v.known_good},
                        {"health", health_name(v.health)},
                        {"message", v.message}});
  b["verdicts"] = verdicts;
  b["notes"] = p.notes;
  j["stepscope_bench"] = b;
  return j;
}

}  // namespace stepscope::hwbench
