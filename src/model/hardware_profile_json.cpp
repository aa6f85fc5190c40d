#include "model/hardware_profile_json.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>

#include "model/json_file.h"
#include "model/model_spec.h"

namespace stepscope::model {
namespace {

using nlohmann::json;


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
    if (r.ok() && !s.empty() && !is_printable_label(s))
      r.fail(path, "must be at most 256 characters without control characters");
    return s;
  };
  p.gpu = label(doc, "gpu", "gpu");
  const json* b = r.object(doc, "stepscope_bench", "stepscope_bench", true);
  if (!r.ok()) return std::nullopt;
  double version = static_cast<double>(r.integer(*b, "schema_version", "stepscope_bench.schema_version", true, kMaxInt));
  if (r.ok() && version != kProfileSchemaVersion) {
    error = fmt::format("{}: field \"stepscope_bench.schema_version\" is {}, this stepscope reads {}", where, version,
                        kProfileSchemaVersion);
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
  std::optional<json> doc = parse_json_text(text, where, error);
  if (!doc) return std::nullopt;
  return profile_from_json(*doc, where, error);
}

std::optional<HardwareProfile> read_profile_file(const std::string& path, std::string& error) {
  std::optional<json> doc = read_json_file(path, error);
  if (!doc) return std::nullopt;
  return profile_from_json(*doc, path, error);
}


namespace {

// The planner's part, the top level, within the same bounds as the bench's
// section (kMinCeiling, kMaxRate, kMaxGemmDim above): "gpus_per_node" is
// a whole number of at most 1024.
constexpr int kMaxGpusPerNode = 1024;
constexpr double kMinGemmDim = 1;  // m, n, k
constexpr double kMaxDim = static_cast<double>(kMaxGemmDim);

std::optional<ClusterSpec> planner_profile_from_json(const json& j, const std::string& where, std::string& error) {
  if (!j.is_object() || !j.contains("gpu") || !j["gpu"].is_string()) {
    error = fmt::format("{}: missing string field \"gpu\"", where);
    return std::nullopt;
  }
  const GpuSpec* base = find_gpu(j["gpu"].get<std::string>());
  if (!base) {
    error = fmt::format("{}: field \"gpu\": unknown GPU \"{}\"", where, text_for_message(j["gpu"].get<std::string>()));
    return std::nullopt;
  }
  ClusterSpec c;
  c.gpu = *base;
  // A number in [min, max]; `field` is its path for the message. JSON cannot
  // spell NaN or infinity, and the parser refuses literals past a double's range.
  auto positive = [&](const json& obj, const char* key, const std::string& field, double min, double max,
                      double& out, bool required) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) error = field_error(where, field, "is missing");
      return !required;
    }
    if (!it->is_number() || !(it->get<double>() >= min) || !(it->get<double>() <= max)) {
      error = field_error(where, field, fmt::format("must be a number from {:g} to {:.0f}, got {}", min, max, shown(*it)));
      return false;
    }
    out = it->get<double>();
    return true;
  };
  double hbm = 0, intra = 0, inter = 0;
  if (!positive(j, "hbm_gbps", "hbm_gbps", kMinCeiling, kMaxRate, hbm, false)) return std::nullopt;
  if (auto it = j.find("gpus_per_node"); it != j.end()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > kMaxGpusPerNode ||
        (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(kMaxGpusPerNode))) {
      error = field_error(where, "gpus_per_node",
                          fmt::format("must be an integer from 1 to {}, got {}", kMaxGpusPerNode, shown(*it)));
      return std::nullopt;
    }
    c.gpu.gpus_per_node = static_cast<int>(it->get<int64_t>());
  }
  if (j.contains("nccl")) {
    if (!j["nccl"].is_object()) {
      error = fmt::format("{}: field \"nccl\" must be an object", where);
      return std::nullopt;
    }
    if (!positive(j["nccl"], "intra_node_busbw_gbps", "nccl.intra_node_busbw_gbps", kMinCeiling, kMaxRate, intra, false) ||
        !positive(j["nccl"], "inter_node_busbw_gbps", "nccl.inter_node_busbw_gbps", kMinCeiling, kMaxRate, inter, false))
      return std::nullopt;
  }
  if (hbm > 0) c.gpu.hbm_fraction = hbm / c.gpu.hbm_gbps;
  if (intra > 0) c.gpu.nvlink_fraction = intra / c.gpu.nvlink_gbps;
  if (inter > 0) c.gpu.network_fraction = inter / c.gpu.network_gbps;
  if (j.contains("gemm")) {
    if (!j["gemm"].is_array()) {
      error = fmt::format("{}: field \"gemm\" must be an array", where);
      return std::nullopt;
    }
    for (size_t i = 0; i < j["gemm"].size(); ++i) {
      const auto& e = j["gemm"][i];
      GemmSample s;
      std::string at = fmt::format("gemm[{}]", i);
      if (!e.is_object()) {
        error = fmt::format("{}: {} must be an object", where, at);
        return std::nullopt;
      }
      for (auto [key, out, min, max] :
           {std::tuple{"m", &s.m, kMinGemmDim, kMaxDim}, {"n", &s.n, kMinGemmDim, kMaxDim},
            {"k", &s.k, kMinGemmDim, kMaxDim}, {"tflops", &s.tflops, kMinCeiling, kMaxRate}})
        if (!positive(e, key, at + "." + key, min, max, *out, true)) return std::nullopt;
      if (e.contains("dtype") && (!e["dtype"].is_string() || !parse_dtype(e["dtype"].get<std::string>(), s.dtype))) {
        error = fmt::format("{}: {}.dtype must be bf16, fp16 or fp8", where, at);
        return std::nullopt;
      }
      c.gemm_samples.push_back(s);
    }
  }
  return c;
}

}  // namespace

std::optional<ClusterSpec> hardware_profile_from_json_text(std::string_view text, const std::string& where,
                                                           std::string& error) {
  std::optional<nlohmann::json> doc = parse_json_text(text, where, error);
  if (!doc) return std::nullopt;
  return planner_profile_from_json(*doc, where, error);
}

std::optional<ClusterSpec> load_hardware_profile(const std::string& path, std::string& error) {
  std::optional<nlohmann::json> doc = read_json_file(path, error);
  if (!doc) return std::nullopt;
  return planner_profile_from_json(*doc, path, error);
}

}  // namespace stepscope::model
