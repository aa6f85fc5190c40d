// Reads every GPU through NVML each interval. Failed calls are recorded in the
// sample (and logged once per GPU, call and error), never thrown: a lost GPU
// or a missing feature must not stop the exporter.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "monitor/gpu_sample.h"
#include "monitor/nvml_api.h"

namespace stepscope::monitor {

class GpuSampler {
 public:
  using Logger = std::function<void(const std::string&)>;
  // Loads `library_path` (e.g. libnvidia-ml.so.1) and enumerates the GPUs;
  // on failure ok() is false and error() says why.
  GpuSampler(const std::string& library_path, Logger log);
  ~GpuSampler();
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  int gpu_count() const { return static_cast<int>(devices_.size()); }
  const std::string& gpu_name(int i) const { return devices_[i].name; }
  Sample sample();

 private:
  struct DeviceState {
    nvml::Device handle = nullptr;
    std::string uuid, name;
    bool gpm = false;
    nvml::GpmSample previous = nullptr;
    double previous_time = 0;  // steady seconds when `previous` was taken
    std::set<std::string> unsupported;  // queries answered NOT_SUPPORTED: not asked again
  };
  bool check(int gpu, const char* query, nvml::Return r, Sample& out, GpuSample* g);
  void sample_gpm(int i, DeviceState& d, GpuSample& g, Sample& out);
  void drain_xid_events(Sample& out);

  nvml::Library lib_;
  bool ok_ = false;
  std::string error_;
  Logger log_;
  std::vector<DeviceState> devices_;
  nvml::EventSet events_ = nullptr;
  std::set<std::tuple<int, std::string, std::string>> logged_;
};

}  // namespace stepscope::monitor
