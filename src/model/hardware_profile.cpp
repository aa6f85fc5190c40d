#include "model/hardware_profile.h"

#include <algorithm>

namespace stepscope::model {
namespace {

template <class T>
const T* by_name(const std::vector<T>& v, const std::string& name) {
  auto it = std::find_if(v.begin(), v.end(), [&](const T& x) { return x.name == name; });
  return it == v.end() ? nullptr : &*it;
}

}  // namespace

const BandwidthResult* HardwareProfile::memory_result(const std::string& name) const { return by_name(memory, name); }
const BandwidthResult* HardwareProfile::host_result(const std::string& name) const { return by_name(host_copy, name); }
const LatencyResult* HardwareProfile::launch_result(const std::string& name) const { return by_name(launch, name); }
const CollectiveResult* HardwareProfile::collective(const std::string& name) const { return by_name(collectives, name); }

double HardwareProfile::gemm_max_tflops(const std::string& dtype) const {
  double best = 0;
  for (const GemmResult& g : gemm)
    if (g.dtype == dtype) best = std::max(best, g.tflops);
  return best;
}

}  // namespace stepscope::model
