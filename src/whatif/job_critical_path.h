// The critical path of each step of the job replay (job_replay.h): one
// rank's walk (critical_path.h) carried across ranks. From the node that
// ends the step's window on the rank whose window ends last, it walks back
// through each node's binding in-edge; where that is a collective's release
// (a rank's end of the collective, set by the join) and the join's binding
// arrival is another rank's, the path crosses to that rank: the one that
// arrived last and made the others wait. Its segments tile the window on
// the job clock. Definitions: docs/whatif.md ("Critical path", "Across ranks").
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "whatif/critical_path.h"
#include "whatif/job_graph.h"
#include "whatif/job_replay.h"

namespace stepscope::whatif {

// A stretch of the job's path on one rank (times on the job clock).
struct JobPathSegment {
  uint32_t rank_index = 0;  // index into JobGraph::ranks: the rank the path is on
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  SegmentKind kind = SegmentKind::kEdge;
  PathCategory category = PathCategory::kResidual;
  int64_t dur_ns() const { return end_ns - start_ns; }
};

// Consecutive segments of one rank and one category, merged.
struct JobPathRun {
  uint32_t rank_index = 0;
  int64_t start_ns = 0;  // job clock
  int64_t end_ns = 0;
  PathCategory category = PathCategory::kResidual;
  int64_t dur_ns() const { return end_ns - start_ns; }
};

// Where the path, walked back, leaves one rank at a collective for the rank
// that arrived last there.
struct RankCrossing {
  size_t instance = 0;      // index into JobGraph::collectives
  uint32_t from_index = 0;  // the rank the path came back on: it waited in the collective
  uint32_t to_index = 0;    // the rank whose arrival bound the join: it arrived last
  int64_t at_ns = 0;        // job clock: the last rank's arrival
  int64_t wait_ns = 0;      // the last rank's arrival minus from's arrival
  int64_t max_wait_ns = 0;  // latest minus earliest arrival over the ranks (last_arrival)
};

struct JobStepPath {
  int64_t step = -1;
  uint32_t end_index = 0;  // the rank whose window for this step ends last (ties: the first rank)
  int64_t start_ns = 0;    // that rank's window in the job replay, job clock
  int64_t end_ns = 0;
  std::vector<JobPathSegment> segments;  // time order; they tile [start_ns, end_ns)
  std::vector<JobPathRun> runs;          // the segments merged by rank and category
  std::array<int64_t, kPathCategoryCount> by_category_ns{};
  std::vector<int64_t> by_rank_ns;       // per rank index; sums to wall_ns()
  std::vector<RankCrossing> crossings;   // time order
  int64_t wall_ns() const { return end_ns - start_ns; }
};

// The path of every step number that has a window on some rank, in step
// order. `r` is a replay of `g` with input `in`. Requires g.usable().
std::vector<JobStepPath> job_critical_paths(const JobGraph& g, const JobReplayInput& in, const JobReplayResult& r);

// For the reports: rank ids instead of indexes, and every time on the clock
// of the rank it names (each rank's trace clock, as its own critical_path).
struct JobPathTop {
  int64_t rank = 0;
  PathCategory category = PathCategory::kResidual;
  int64_t start_ns = 0;  // on that rank's trace clock
  int64_t dur_ns = 0;
};
struct JobCrossing {
  std::string op;        // the collective ("allreduce")
  uint32_t ordinal = 0;  // its instance: the k-th call of `op` on every rank
  int64_t from_rank = 0;
  int64_t to_rank = 0;
  int64_t at_ns = 0;     // the last arrival, on to_rank's trace clock
  int64_t wait_ns = 0;
  int64_t max_wait_ns = 0;
};
struct JobStepSummary {
  int64_t step = -1;
  int64_t end_rank = 0;  // the rank whose window ends last
  int64_t start_ns = 0;  // on end_rank's trace clock
  int64_t wall_ns = 0;
  std::array<int64_t, kPathCategoryCount> by_category_ns{};
  std::vector<int64_t> by_rank_ns;  // parallel to JobCriticalPath::ranks
  std::vector<JobPathTop> top;      // the longest runs, longest first, at most kTopPathSegments
  std::vector<JobCrossing> crossings;
};
struct JobCriticalPath {
  std::vector<int64_t> ranks;  // the job graph's ranks, in order (empty: no path, see notes)
  std::vector<JobStepSummary> steps;
  std::array<int64_t, kPathCategoryCount> total_ns{};  // over the steps
  std::vector<int64_t> total_by_rank_ns;  // parallel to ranks
  std::vector<int64_t> crossed_to;        // per rank: crossings to it over the steps
  int64_t wall_ns = 0;                    // the steps' walls summed
  int64_t crossings = 0;
  std::vector<std::string> notes;
};

// The job path of `g` replayed as recorded.
JobCriticalPath summarize_job_critical_path(const JobGraph& g);

}  // namespace stepscope::whatif
