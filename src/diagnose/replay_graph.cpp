#include "diagnose/replay_graph.h"

namespace stepscope::diagnose {

whatif::StepGraph build_replay_graph(const trace::EventStore& store, const analysis::GpuTimeline& timeline,
                                     const analysis::StepsResult& steps, const HostIndex& host) {
  whatif::HostSpans spans;
  for (const HostCall& c : host.syncs.calls()) spans.blocking.push_back({c.start_ns, c.end_ns, c.row});
  for (const HostCall& c : host.allocator.calls())
    if (is_synchronising_free(store.name_of(c.row))) spans.blocking.push_back({c.start_ns, c.end_ns, c.row});
  for (const HostCall& c : host.dataloader.calls()) spans.dataloader.push_back({c.start_ns, c.end_ns, c.row});
  return whatif::build_step_graph(store, timeline, steps, spans);
}

}  // namespace stepscope::diagnose
