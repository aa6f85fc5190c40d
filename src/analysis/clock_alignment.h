// Per-rank clock offsets estimated from synchronizing collectives, checked
// before any cross-rank figure that compares absolute times (collective
// start skew, lateness, stragglers).
//
// A synchronizing collective (all-reduce, all-gather, reduce-scatter,
// all-to-all, barrier) completes on every rank at nearly the same instant:
// no rank can finish before the last one has arrived, and the last arrival
// releases all of them. Its start differs by how late each rank came (the
// lateness stragglers are judged by); its end does not. So, on synchronized
// clocks, the recorded intervals of one call on two ranks overlap, and the
// difference of their end times estimates the clocks' offset. Rooted or
// point-to-point operations (broadcast, reduce, send/recv) carry no such
// guarantee (a broadcast root may finish before a leaf starts) and are not used.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/rank_analysis.h"

namespace stepscope::analysis {

struct RankClock {
  int64_t rank = 0;
  int64_t matched_calls = 0;   // synchronizing calls matched with the reference rank
  int64_t disjoint_calls = 0;  // of those, calls whose recorded interval does not overlap the reference rank's
  // Median over matched calls of (own end - reference rank's end) (lower
  // middle), ns: this rank's clock minus the reference clock. 0 without matches.
  int64_t offset_ns = 0;
  // True when more than half of the matched calls are disjoint: the clocks
  // disagree beyond what one synchronous call allows, and this rank's times
  // are shifted by -offset_ns before cross-rank figures.
  bool corrected = false;
};

struct ClockAlignment {
  // "aligned": every rank with matched synchronizing calls agrees with the
  //   reference; "corrected": at least one rank was shifted; "refused": no
  //   synchronizing call to estimate from and the ranks' recorded time ranges
  //   do not overlap, so cross-rank time figures are withheld; "unchecked":
  //   no synchronizing call to estimate from, time ranges overlap.
  std::string status = "unchecked";
  int64_t reference_rank = -1;  // lowest rank with synchronizing calls (-1: none)
  std::vector<RankClock> ranks; // in the order given
  std::string warning;          // one line for the report, "" when aligned or unchecked
};

// a - b, clamped to the int64 range (absurd clocks must not overflow).
int64_t saturating_sub(int64_t a, int64_t b);

// True for operations after which every rank has waited for every other:
// allreduce, allgather*, reducescatter*, alltoall*, barrier (normalised keys).
bool is_synchronizing_op(const std::string& op);

// `ranks` in rank order. Calls are matched as collective_skew matches them:
// by (operation, ordinal).
ClockAlignment align_clocks(const std::vector<const RankAnalysis*>& ranks);

}  // namespace stepscope::analysis
