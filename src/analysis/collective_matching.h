// The same collective call found on every rank: calls are matched by
// (operation, ordinal), the k-th all-reduce of one rank with the k-th
// all-reduce of every other (collectives.h). NCCL and gloo run the
// collectives of one communicator in the order every rank issues them, so
// the k-th call of an operation is one instance across ranks when all calls
// go through one communicator (sub-group communicators break this: see
// docs/metrics.md, "Collective skew"). Used by the collective skew and by the
// job-level replay (whatif/job_graph.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/collectives.h"

namespace stepscope::analysis {

struct MatchedCollective {
  std::string op;              // normalised operation key ("allreduce")
  uint32_t ordinal = 0;        // the k-th call of `op` on every rank
  std::vector<uint32_t> call;  // per rank (in the order given): index into its CollectiveSequence::calls
};

struct CollectiveMatching {
  std::vector<MatchedCollective> matched;  // by (op, ordinal)
  // Calls on some rank whose (op, ordinal) is missing on another rank: each
  // operation matches up to its smallest count over ranks.
  int64_t unmatched_calls = 0;
  std::vector<int64_t> unmatched_per_rank;  // the same, per rank (order given)
};

// Nothing is matched with fewer than two ranks.
CollectiveMatching match_collectives(const std::vector<const CollectiveSequence*>& ranks);

}  // namespace stepscope::analysis
