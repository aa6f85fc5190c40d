#include "diagnose/rank_gpu.h"

namespace stepscope::diagnose {

const model::GpuPeaks* rank_gpu_peaks(const trace::EventStore& store) {
  for (const auto& d : store.meta.devices)
    if (const model::GpuPeaks* p = model::find_gpu_peaks(d.name)) return p;
  return nullptr;
}

}  // namespace stepscope::diagnose
