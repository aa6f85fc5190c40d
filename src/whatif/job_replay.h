// Replays the job graph (job_graph.h) with given durations: every node at the
// latest of its in-edges' bounds plus its residual, as one rank's replay does
// (replay.h), so a rank that arrives earlier at a collective lets the others
// leave it earlier. With the recorded durations it reproduces every rank's
// recorded times; its summary says how faithfully, for the reports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "whatif/job_graph.h"
#include "whatif/replay.h"

namespace stepscope::whatif {

// What a job replay may change; job_recorded_input() gives the run as profiled.
struct JobReplayInput {
  std::vector<int64_t> dur_ns;       // per node: GPU work's duration (0 for others), ns
  std::vector<int64_t> edge_w_ns;    // per edge (JobGraph::edges order), ns; kDropped removes it
  std::vector<int64_t> residual_ns;  // per node, ns
};
JobReplayInput job_recorded_input(const JobGraph& g);

struct JobReplayResult {
  std::vector<int64_t> time_ns;   // per node, on the job clock, ns
  std::vector<uint32_t> binding;  // per node: the in-edge that set its time, or kNoEdge (a root)
  std::vector<std::vector<StepWindow>> windows;  // per rank (JobGraph::ranks order): its step windows
  // Per rank, parallel to windows: the job node whose time (a mark, a rank's
  // end of a collective) or end (other GPU work) closes each window.
  std::vector<std::vector<uint32_t>> window_end;
};

// Requires g.usable(). A collective kernel's successors on its rank wait for
// the rank's end of the collective; the rank's last step runs on to it.
JobReplayResult replay_job(const JobGraph& g, const JobReplayInput& in);

// Who made the others wait at collective instance `instance` in a replay: the
// rank whose arrival is the latest (the join's binding edge leaves from it;
// ties: the first rank given), and how long the first rank to arrive waited
// for it.
struct LastArrival {
  size_t rank_index = 0;  // index into JobGraph::ranks
  int64_t rank = -1;      // its rank
  int64_t wait_ns = 0;    // latest arrival minus earliest arrival, ns
};
LastArrival last_arrival(const JobGraph& g, const JobReplayResult& r, size_t instance);

// The job replay's fidelity, for the reports (docs/whatif.md).
struct JobReplay {
  int64_t ranks = 0;              // ranks in the job graph (0: no job graph, see notes)
  bool replayed = false;          // the job graph was replayed (false: see notes)
  int64_t collectives = 0;        // matched collective instances tied across ranks
  int64_t collective_edges = 0;   // arrival and release edges
  int64_t unmatched_calls = 0;    // collective calls not on every rank (no edge)
  int64_t steps = 0;              // step windows compared, over all ranks
  double max_abs_error_pct = 0;   // over every rank's steps: |replayed - measured| / measured, %
  std::vector<std::string> notes;
};

JobReplay summarize_job_replay(const JobGraph& g);

}  // namespace stepscope::whatif
