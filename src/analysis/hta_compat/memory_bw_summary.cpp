#include "analysis/hta_compat/memory_bw_summary.h"

#include <map>
#include <string>

#include "analysis/hta_compat/numpy_quicksort.h"

namespace stepscope::analysis::hta {
namespace {

struct BandwidthChange {
  double ts;
  const std::string* group;
  double gbps;
};

}  // namespace

HtaMemoryBwOutcome hta_memory_bw_summary(const HtaRankFrame& frame) {
  HtaMemoryBwOutcome out;
  std::vector<const HtaEvent*> memory;
  for (const auto& e : frame.events)
    if (e.on_stream() && e.type == HtaKernelType::kMemory) memory.push_back(&e);
  out.has_memory_kernels = !memory.empty();

  std::map<std::string, std::vector<double>> running_of;  // group -> positive running sums (name order)
  std::vector<const std::string*> group_of;
  for (const HtaEvent* e : memory)
    group_of.push_back(&running_of.try_emplace(memory_kernel_group(frame.name_of(*e))).first->first);

  std::vector<BandwidthChange> changes;
  changes.reserve(2 * memory.size());
  for (size_t i = 0; i < memory.size(); ++i) changes.push_back({memory[i]->ts, group_of[i], memory[i]->memory_bw_gbps});
  for (size_t i = 0; i < memory.size(); ++i) {
    const double dur = memory[i]->dur != 0 ? memory[i]->dur : 1;
    changes.push_back({memory[i]->ts + dur, group_of[i], -memory[i]->memory_bw_gbps});
  }
  std::vector<double> ts;
  ts.reserve(changes.size());
  for (const auto& c : changes) ts.push_back(c.ts);
  std::map<const std::string*, double> sum_of;
  for (uint32_t k : numpy_argsort(ts)) {
    const BandwidthChange& c = changes[k];
    const double now = sum_of[c.group] += c.gbps;
    if (now > 0) running_of[*c.group].push_back(now);
  }
  for (auto& [group, values] : running_of) {
    if (values.empty()) continue;
    HtaMemoryBwRow r;
    r.rank = frame.rank;
    r.name = group;
    r.memory_bw_gbps = describe(std::move(values));
    out.rows.push_back(std::move(r));
  }
  return out;
}

}  // namespace stepscope::analysis::hta
