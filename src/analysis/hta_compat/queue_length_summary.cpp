#include "analysis/hta_compat/queue_length_summary.h"

#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "analysis/hta_compat/numpy_quicksort.h"

namespace stepscope::analysis::hta {
namespace {

constexpr const char* kRuntimeLaunchNames[] = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel",
    "cudaMemcpyAsync",  "cudaMemsetAsync",     "runFunction - job_prep_and_submit_for_execution",
    "hipLaunchKernel",  "hipExtModuleLaunchKernel", "hipMemcpyAsync", "hipMemsetAsync", "hipMemcpyWithStream",
};
// Added to the list in 0.6.1: the driver call PyTorch 2.x uses for cuBLASLt's
// nvjet GEMMs, so 0.5.0 leaves those launches out of the queue.
constexpr const char* kRuntimeLaunchNamesFrom061[] = {"cuLaunchKernelEx"};

struct QueueChange {
  double ts;
  std::optional<int64_t> stream;
  int delta;
};

}  // namespace

std::vector<HtaQueueLengthRow> hta_queue_length_summary(const HtaRankFrame& frame) {
  const auto& strings = frame.store->strings;
  std::unordered_set<trace::StringId> runtime_names;
  auto add = [&](const char* n) {
    trace::StringId id = strings.find(n);
    if (id != trace::StringTable::kMissing) runtime_names.insert(id);
  };
  for (const char* n : kRuntimeLaunchNames) add(n);
  if (frame.release == HtaRelease::k0_6_1)
    for (const char* n : kRuntimeLaunchNamesFrom061) add(n);
  std::unordered_map<int64_t, std::vector<const HtaEvent*>> stream_rows_of;
  for (const auto& e : frame.events)
    if (e.on_stream()) stream_rows_of[e.correlation].push_back(&e);

  std::vector<QueueChange> changes;
  std::unordered_set<int64_t> runtime_correlations;
  for (const auto& e : frame.events) {
    if (e.index_correlation <= 0 || !runtime_names.count(e.name)) continue;
    runtime_correlations.insert(e.correlation);
    auto it = stream_rows_of.find(e.correlation);
    if (it == stream_rows_of.end()) {
      changes.push_back({e.ts, std::nullopt, +1});
      continue;
    }
    for (const HtaEvent* g : it->second) changes.push_back({e.ts, g->stream, +1});
  }
  for (const auto& e : frame.events)
    if (e.on_stream() && runtime_correlations.count(e.correlation)) changes.push_back({e.ts, e.stream, -1});

  std::vector<double> ts;
  ts.reserve(changes.size());
  for (const auto& c : changes) ts.push_back(c.ts);
  std::map<int64_t, std::vector<double>> queue_of;  // stream -> queue length after each change
  std::map<int64_t, int64_t> running;
  for (uint32_t k : numpy_argsort(ts)) {
    const QueueChange& c = changes[k];
    if (!c.stream) continue;
    queue_of[*c.stream].push_back(static_cast<double>(running[*c.stream] += c.delta));
  }
  std::vector<HtaQueueLengthRow> rows;
  for (auto& [stream, lengths] : queue_of) {
    HtaQueueLengthRow r;
    r.rank = frame.rank;
    r.stream = stream;
    r.queue_length = describe(std::move(lengths));
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace stepscope::analysis::hta
