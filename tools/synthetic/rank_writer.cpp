#include "synthetic/rank_writer.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "synthetic/step_model.h"

namespace stepscope::synth {
namespace {

// Base of the trace clock: a 2026 wall-clock epoch, as Kineto records it.
constexpr int64_t kBaseTimeNs = 1790857026000000000ll;

// Runs the simulation for `steps` steps and writes the records of one side;
// returns the model (its clocks and ids name the metadata records).
std::unique_ptr<StepModel> write_side(const SyntheticSpec& spec, int rank, int steps, bool host,
                                      KinetoWriter& w) {
  auto model = std::make_unique<StepModel>(spec, rank);
  std::vector<TraceEvent> events;
  for (int s = 0; s < steps; ++s) {
    events.clear();
    model->next_step(events);
    for (const TraceEvent& e : events)
      if (e.host == host) w.event(e);
  }
  return model;
}

void write_all(const SyntheticSpec& spec, int rank, int steps, OutputSink& sink, RankTally& tally,
               const std::string& trace_name) {
  KinetoWriter w(sink, tally);
  w.begin(TraceHeader{rank, spec.ranks, 8, kBaseTimeNs});
  write_side(spec, rank, steps, true, w);
  const auto model = write_side(spec, rank, steps, false, w);
  const int64_t t0 = model->start_ns();
  w.process_metadata(model->host_pid(), "python3", "CPU", model->host_pid(), t0);
  w.process_metadata(model->device(), "python3", "GPU " + std::to_string(model->device()),
                     5000000 + model->device(), t0);
  w.thread_metadata(model->host_pid(), model->main_tid(),
                    "thread " + std::to_string(model->main_tid()) + " (python3)", model->main_tid(), t0);
  w.thread_metadata(model->host_pid(), model->autograd_tid(),
                    "thread " + std::to_string(model->autograd_tid()) + " (pt_autograd_0)", model->autograd_tid(), t0);
  for (int stream : {StepModel::kComputeStream, StepModel::kNcclStream})
    w.thread_metadata(model->device(), stream, "stream " + std::to_string(stream) + " ", stream, t0);
  const int64_t span_start = t0 - 120000;
  w.profiler_span(span_start, model->now_ns() - span_start, model->now_ns() + 50000);
  w.end(trace_name);
}

}  // namespace

std::string rank_file_name(const SyntheticSpec& spec, int rank) {
  return "rank" + std::to_string(rank) + (spec.gzip_level > 0 ? ".json.gz" : ".json");
}

int steps_for_target(const SyntheticSpec& spec) {
  if (spec.target_bytes == 0) return std::max(1, spec.steps);
  // Two dry runs differ by one step: their difference is the bytes of a step.
  RankTally one, two;
  auto s1 = make_counting_sink();
  auto s2 = make_counting_sink();
  write_all(spec, 0, 1, *s1, one, "dry run");
  write_all(spec, 0, 2, *s2, two, "dry run");
  const uint64_t per_step = std::max<uint64_t>(1, two.bytes - one.bytes);
  const uint64_t fixed = one.bytes > per_step ? one.bytes - per_step : 0;
  const uint64_t per_rank = spec.target_bytes / static_cast<uint64_t>(std::max(1, spec.ranks));
  if (per_rank <= fixed) return 1;
  return static_cast<int>(std::max<uint64_t>(1, (per_rank - fixed + per_step - 1) / per_step));
}

RankFile write_rank(const SyntheticSpec& spec, int rank, int steps, const std::string& dir) {
  RankFile out;
  out.path = dir + "/" + rank_file_name(spec, rank);
  auto sink = make_file_sink(out.path, spec.gzip_level, out.error);
  if (!sink) return out;
  // traceName is the file name alone, so the bytes do not depend on the folder.
  write_all(spec, rank, steps, *sink, out.tally, rank_file_name(spec, rank));
  sink->close(out.error);
  return out;
}

}  // namespace stepscope::synth
