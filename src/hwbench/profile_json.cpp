#include "hwbench/profile_json.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "hwbench/golden_reference.h"
#include "model/json_file.h"
#include "model/model_spec.h"

namespace stepscope::hwbench {
namespace {

using nlohmann::json;

constexpr int kSchemaVersion = 1;

// Bounds of the numbers a profile holds (docs/hardware_profile.md "Reading a
// profile"): rates (GB/s, TFLOP/s) at most 1e6, far above any GPU (H200:
// 4.8 TB/s, ~1,000 dense bf16 TFLOP/s) and low enough that ceilings derived
// from them stay finite; other quantities (bytes, seconds) at most 1e15;
// integer fields fit their C++ type; GEMM sizes at most 2^24.
constexpr double kMinCeiling = 1e-3;  // a measured ceiling: at least 1 MB/s, 1 GFLOP/s
constexpr double kMaxRate = 1e6;
constexpr double kMaxNumber = 1e15;
constexpr int64_t kMaxInt = 2147483647;
constexpr int64_t kMaxInt64 = int64_t{1} << 53;  // exact in a double
constexpr int64_t kMaxGemmDim = int64_t{1} << 24;

std::string shown(const json& v) {
  std::string s = v.dump();
  return s.size() > 40 ? s.substr(0, 40) + "..." : s;
}

// The planner's gemm[] accepts these dtypes only (plan/training_settings.h).
bool plan_dtype(const std::string& d) { return d == "bf16" || d == "fp16" || d == "fp8"; }

json bandwidths_to_json(const std::vector<BandwidthResult>& v) {
  json a = json::array();
  for (const BandwidthResult& b : v) a.push_back({{"name", b.name}, {"bytes", b.bytes}, {"seconds", b.seconds}, {"gbps", b.gbps}});
  return a;
}

// Field readers that record the first error and name the field's path.
class Reader {
 public:
  Reader(std::string where, std::string& error) : where_(std::move(where)), error_(error) {}
  bool ok() const { return ok_; }

  const json* object(const json& parent, const std::string& key, const std::string& path, bool required) {
    auto it = parent.find(key);
    if (it == parent.end()) {
      if (required) fail(path, "is missing");
      return nullptr;
    }
    if (!it->is_object()) return fail(path, "must be an object"), nullptr;
    return &*it;
  }
  const json* array(const json& parent, const std::string& key, const std::string& path) {
    auto it = parent.find(key);
    if (it == parent.end()) return nullptr;
    if (!it->is_array()) return fail(path, "must be an array"), nullptr;
    return &*it;
  }
  // A number in [0, max] (in [kMinCeiling, max] when `positive`, a measured
  // ceiling: efficiencies divide by it): JSON cannot spell NaN or infinity,
  // and the parser refuses literals past a double's range, so the bounds are
  // what is left to check.
  double number(const json& obj, const std::string& key, const std::string& path, bool required = true,
                double max = kMaxNumber, bool positive = false) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) fail(path, "is missing");
      return 0;
    }
    const double v = it->is_number() ? it->get<double>() : -1;
    if (!it->is_number() || !std::isfinite(v) || v < (positive ? kMinCeiling : 0) || v > max) {
      fail(path, fmt::format("must be a number from {:g} to {:.0f}, got {}", positive ? kMinCeiling : 0.0, max,
                             shown(*it)));
      return 0;
    }
    return v;
  }
  // A whole number in [0, max]: what the profile's integer fields hold.
  int64_t integer(const json& obj, const std::string& key, const std::string& path, bool required, int64_t max) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) fail(path, "is missing");
      return 0;
    }
    const double v = it->is_number() ? it->get<double>() : -1;
    if (!it->is_number() || !(v >= 0) || v > static_cast<double>(max) || std::floor(v) != v) {
      fail(path, fmt::format("must be a whole number from 0 to {}, got {}", max, shown(*it)));
      return 0;
    }
    return static_cast<int64_t>(v);
  }
  // A finite number of either sign (the fit's α, r²), |v| ≤ kMaxNumber.
  double signed_number(const json& obj, const std::string& key, const std::string& path) {
    auto it = obj.find(key);
    if (it == obj.end()) return 0;
    const double v = it->is_number() ? it->get<double>() : kMaxNumber * 2;
    if (!(std::fabs(v) <= kMaxNumber)) {
      fail(path, fmt::format("must be a number from {:g} to {:g}, got {}", -kMaxNumber, kMaxNumber, shown(*it)));
      return 0;
    }
    return v;
  }
  std::string string(const json& obj, const std::string& key, const std::string& path, bool required = true) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) fail(path, "is missing");
      return {};
    }
    if (!it->is_string()) return fail(path, "must be a string"), std::string();
    return it->get<std::string>();
  }
  void fail(const std::string& path, const std::string& what) {
    if (!ok_) return;
    ok_ = false;
    error_ = model::field_error(where_, path, what);
  }

 private:
  std::string where_;
  std::string& error_;
  bool ok_ = true;
};

std::vector<BandwidthResult> read_bandwidths(Reader& r, const json& bench, const std::string& key) {
  std::vector<BandwidthResult> out;
  const json* a = r.array(bench, key, "stepscope_bench." + key);
  if (!a) return out;
  for (size_t i = 0; i < a->size() && r.ok(); ++i) {
    std::string p = fmt::format("stepscope_bench.{}[{}]", key, i);
    const json& e = (*a)[i];
    if (!e.is_object()) {
      r.fail(p, "must be an object");
      break;
    }
    BandwidthResult b;
    b.name = r.string(e, "name", p + ".name");
    b.bytes = r.number(e, "bytes", p + ".bytes");
    b.seconds = r.number(e, "seconds", p + ".seconds");
    b.gbps = r.number(e, "gbps", p + ".gbps", true, kMaxRate, true);  // a ceiling: measured, so above 0
    out.push_back(b);
  }
  return out;
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
  b["schema_version"] = kSchemaVersion;
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

std::optional<HardwareProfile> profile_from_json(const json& doc, const std::string& where, std::string& error) {
  Reader r(where, error);
  if (!doc.is_object()) {
    error = where + ": a hardware profile must be a JSON object";
    return std::nullopt;
  }
  HardwareProfile p;
  // The two names `analyze --profile` prints: no control characters (plan/model_spec.h).
  auto label = [&r](const json& obj, const char* key, const std::string& path) {
    std::string s = r.string(obj, key, path);
    if (r.ok() && !s.empty() && !model::is_printable_label(s))
      r.fail(path, "must be at most 256 characters without control characters");
    return s;
  };
  p.gpu = label(doc, "gpu", "gpu");
  const json* b = r.object(doc, "stepscope_bench", "stepscope_bench", true);
  if (!r.ok()) return std::nullopt;
  double version = static_cast<double>(r.integer(*b, "schema_version", "stepscope_bench.schema_version", true, kMaxInt));
  if (r.ok() && version != kSchemaVersion) {
    error = fmt::format("{}: field \"stepscope_bench.schema_version\" is {}, this stepscope reads {}", where, version,
                        kSchemaVersion);
    return std::nullopt;
  }
  p.date = r.string(*b, "date", "stepscope_bench.date", false);
  p.command = r.string(*b, "command", "stepscope_bench.command", false);
  p.tool = r.string(*b, "tool", "stepscope_bench.tool", false);
  if (auto it = b->find("quick"); it != b->end() && it->is_boolean()) p.quick = it->get<bool>();
  p.wall_seconds = r.number(*b, "wall_seconds", "stepscope_bench.wall_seconds", false);
  if (const json* d = r.object(*b, "device", "stepscope_bench.device", true)) {
    auto num = [&](const char* k, int64_t max) {
      return r.integer(*d, k, std::string("stepscope_bench.device.") + k, false, max);
    };
    p.device.name = label(*d, "name", "stepscope_bench.device.name");
    p.device.index = static_cast<int>(num("index", kMaxInt));
    p.device.visible_gpus = static_cast<int>(num("visible_gpus", kMaxInt));
    p.device.sms = static_cast<int>(num("sms", kMaxInt));
    p.device.memory_bytes = num("memory_bytes", kMaxInt64);
    p.device.l2_bytes = num("l2_bytes", kMaxInt64);
    p.device.sm_clock_mhz = static_cast<int>(num("sm_clock_mhz", kMaxInt));
    p.device.memory_clock_mhz = static_cast<int>(num("memory_clock_mhz", kMaxInt));
    p.device.memory_bus_bits = static_cast<int>(num("memory_bus_bits", kMaxInt));
    p.device.driver_version = static_cast<int>(num("driver_version", kMaxInt));
    p.device.runtime_version = static_cast<int>(num("runtime_version", kMaxInt));
    p.device.cublaslt_version = num("cublaslt_version", kMaxInt64);
    p.device.nccl_version = static_cast<int>(num("nccl_version", kMaxInt));
    std::string cc = r.string(*d, "compute_capability", "stepscope_bench.device.compute_capability", false);
    if (std::sscanf(cc.c_str(), "%d.%d", &p.device.compute_major, &p.device.compute_minor) != 2 && !cc.empty())
      r.fail("stepscope_bench.device.compute_capability", "must read MAJOR.MINOR");
  }
  if (const json* sweep = r.array(*b, "gemm_sweep", "stepscope_bench.gemm_sweep")) {
    for (size_t i = 0; i < sweep->size() && r.ok(); ++i) {
      std::string path = fmt::format("stepscope_bench.gemm_sweep[{}]", i);
      const json& e = (*sweep)[i];
      if (!e.is_object()) {
        r.fail(path, "must be an object");
        break;
      }
      GemmResult g;
      g.dtype = r.string(e, "dtype", path + ".dtype");
      g.m = r.integer(e, "m", path + ".m", true, kMaxGemmDim);
      g.n = r.integer(e, "n", path + ".n", true, kMaxGemmDim);
      g.k = r.integer(e, "k", path + ".k", true, kMaxGemmDim);
      g.seconds = r.number(e, "seconds", path + ".seconds");
      g.tflops = r.number(e, "tflops", path + ".tflops", true, kMaxRate, true);  // a ceiling: above 0
      p.gemm.push_back(g);
    }
  }
  p.memory = read_bandwidths(r, *b, "memory");
  p.host_copy = read_bandwidths(r, *b, "host_copy");
  if (const json* launch = r.array(*b, "launch_us", "stepscope_bench.launch_us")) {
    for (size_t i = 0; i < launch->size() && r.ok(); ++i) {
      std::string path = fmt::format("stepscope_bench.launch_us[{}]", i);
      const json& e = (*launch)[i];
      if (!e.is_object()) {
        r.fail(path, "must be an object");
        break;
      }
      p.launch.push_back({r.string(e, "name", path + ".name"), r.number(e, "us", path + ".us")});
    }
  }
  if (const json* colls = r.array(*b, "collectives", "stepscope_bench.collectives")) {
    for (size_t i = 0; i < colls->size() && r.ok(); ++i) {
      std::string path = fmt::format("stepscope_bench.collectives[{}]", i);
      const json& e = (*colls)[i];
      if (!e.is_object()) {
        r.fail(path, "must be an object");
        break;
      }
      CollectiveResult c;
      c.name = r.string(e, "name", path + ".name");
      c.world = static_cast<int>(r.integer(e, "world", path + ".world", true, kMaxInt));
      if (const json* pts = r.array(e, "points", path + ".points")) {
        for (size_t k = 0; k < pts->size() && r.ok(); ++k) {
          std::string pp = fmt::format("{}.points[{}]", path, k);
          const json& q = (*pts)[k];
          if (!q.is_object()) {
            r.fail(pp, "must be an object");
            break;
          }
          CollectivePoint pt;
          pt.bytes = r.integer(q, "bytes", pp + ".bytes", true, kMaxInt64);
          pt.seconds = r.number(q, "seconds", pp + ".seconds");
          pt.algbw_gbps = r.number(q, "algbw_gbps", pp + ".algbw_gbps", true, kMaxRate);
          // 0 on one rank (no bus traffic); a ceiling only with 2 or more ranks, and only when above 0.
          pt.busbw_gbps = r.number(q, "busbw_gbps", pp + ".busbw_gbps", true, kMaxRate);
          // -1: not checked.
          if (auto w = q.find("wrong"); w != q.end() && w->is_number_integer() && w->get<int64_t>() >= -1)
            pt.wrong = w->get<int64_t>();
          c.points.push_back(pt);
        }
      }
      if (const json* fits = r.array(e, "fits", path + ".fits")) {
        for (size_t k = 0; k < fits->size() && r.ok(); ++k) {
          std::string fp = fmt::format("{}.fits[{}]", path, k);
          const json& q = (*fits)[k];
          if (!q.is_object()) {
            r.fail(fp, "must be an object");
            break;
          }
          AlphaBetaFit f;
          f.range = r.string(q, "range", fp + ".range");
          f.min_bytes = r.integer(q, "min_bytes", fp + ".min_bytes", true, kMaxInt64);
          f.max_bytes = r.integer(q, "max_bytes", fp + ".max_bytes", true, kMaxInt64);
          f.points = static_cast<int>(r.integer(q, "points", fp + ".points", true, kMaxInt));
          // α can come out slightly negative from the fit: read it signed.
          f.alpha_us = r.signed_number(q, "alpha_us", fp + ".alpha_us");
          f.beta_gbps = r.number(q, "beta_gbps", fp + ".beta_gbps", true, kMaxRate);  // 0: time did not grow
          f.r2 = r.signed_number(q, "r2", fp + ".r2");
          c.fits.push_back(f);
        }
      }
      p.collectives.push_back(std::move(c));
    }
  }
  if (auto it = b->find("notes"); it != b->end() && it->is_array())
    for (const json& n : *it)
      if (n.is_string()) p.notes.push_back(n.get<std::string>());
  if (!r.ok()) return std::nullopt;
  return p;
}

std::optional<HardwareProfile> read_profile_text(std::string_view text, const std::string& where, std::string& error) {
  std::optional<json> doc = model::parse_json_text(text, where, error);
  if (!doc) return std::nullopt;
  return profile_from_json(*doc, where, error);
}

std::optional<HardwareProfile> read_profile_file(const std::string& path, std::string& error) {
  std::optional<json> doc = model::read_json_file(path, error);
  if (!doc) return std::nullopt;
  return profile_from_json(*doc, path, error);
}

}  // namespace stepscope::hwbench
