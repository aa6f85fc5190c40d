// A rank diagnosed from inline events, with its timeline and replay graph.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/gpu_timeline.h"
#include "diagnose/diagnose_fixtures.h"
#include "diagnose/replay_graph.h"
#include "whatif/step_graph.h"

namespace stepscope::whatif::testing_support {

struct BuiltGraph {
  std::unique_ptr<diagnose::testing_support::Diagnosed> run;
  analysis::GpuTimeline timeline;
  StepGraph graph;
};

inline BuiltGraph build_graph(const std::vector<std::string>& events, const std::string& header = "") {
  BuiltGraph b;
  b.run = diagnose::testing_support::diagnose_inline(events, header);
  const trace::EventStore& store = *b.run->stores[0];
  b.timeline = analysis::build_gpu_timeline(store, analysis::AnalysisOptions{});
  b.graph = diagnose::build_replay_graph(store, b.timeline, b.run->ranks[0].steps, diagnose::build_host_index(store));
  return b;
}

}  // namespace stepscope::whatif::testing_support
