#include "analysis/salvage_cut.h"

#include <string_view>

namespace stepscope::analysis {
namespace {

bool is_device_record(trace::EventKind k) {
  return k == trace::EventKind::kKernel || k == trace::EventKind::kMemcpy || k == trace::EventKind::kMemset ||
         k == trace::EventKind::kRuntime || k == trace::EventKind::kGpuSync;
}

// Records Kineto writes only after every device record (section 3 above).
bool is_trailer_record(const trace::EventStore& store, uint32_t row) {
  const trace::EventKind k = store.events.kind[row];
  if (k == trace::EventKind::kTraceSpan) return store.strings.get(store.events.category[row]) == "Trace";
  if (k == trace::EventKind::kInstant) {
    std::string_view name = store.name_of(row);
    return name == "Record Window End" || name.starts_with("Iteration Start");
  }
  return false;
}

}  // namespace

CutEffect cut_effect(const trace::EventStore& store) {
  CutEffect out;
  if (store.stats.count(trace::ImportCounter::kTruncatedInput) == 0) return out;
  out.truncated = true;
  for (const auto& e : store.stats.log()) {
    if (e.counter == trace::ImportCounter::kTruncatedInput) {
      out.cut_offset = e.byte_offset;
      break;
    }
  }
  const auto& ev = store.events;
  int64_t last_device = -1;
  for (uint32_t row = 0; row < ev.size(); ++row)
    if (is_device_record(ev.kind[row])) last_device = std::max<int64_t>(last_device, ev.seq[row]);
  bool after_device = false;
  for (uint32_t row = 0; row < ev.size() && !after_device; ++row) {
    if (is_trailer_record(store, row)) after_device = true;
    if (last_device >= 0 && ev.kind[row] == trace::EventKind::kGpuUserAnnotation && ev.seq[row] > last_device)
      after_device = true;
  }
  out.section = after_device ? "after_device" : last_device >= 0 ? "device" : "host";
  out.steps_whole = after_device;
  return out;
}

}  // namespace stepscope::analysis
