#include "diagnose/rank_inputs.h"

#include "diagnose/rank_gpu.h"

namespace stepscope::diagnose {

RankInputs prepare_rank(const trace::EventStore& store, const DiagnoseOptions& options) {
  RankInputs in;
  in.timeline = analysis::build_gpu_timeline(store, options.analysis);
  in.host = build_host_index(store);
  in.tree = std::make_unique<HostTree>(store);
  return in;
}

RankAttribution attribute_rank(const RankInputs& in, const trace::EventStore& store,
                               const analysis::RankAnalysis& analysis) {
  return attribute_steps(store, in.timeline, analysis.steps, in.host);
}

RankView view_of(const RankInputs& in, const RankAttribution& attribution, const trace::EventStore& store,
                 const analysis::RankAnalysis& analysis, const DiagnoseOptions& options) {
  RankView v;
  v.store = &store;
  v.analysis = &analysis;
  v.timeline = &in.timeline;
  v.attribution = &attribution;
  v.host = &in.host;
  v.tree = in.tree.get();
  v.peaks = options.peaks_override ? options.peaks_override : rank_gpu_peaks(store);
  return v;
}

}  // namespace stepscope::diagnose
