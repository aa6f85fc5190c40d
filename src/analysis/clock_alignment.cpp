#include "analysis/clock_alignment.h"

#include <algorithm>
#include <climits>
#include <fmt/core.h>
#include <map>
#include <utility>

namespace stepscope::analysis {
namespace {

struct Interval {
  int64_t start_ns;
  int64_t end_ns;
};

// (op, ordinal) -> interval, for the synchronizing calls of one rank.
using SyncCalls = std::map<std::pair<std::string, uint32_t>, Interval>;

SyncCalls sync_calls_of(const CollectiveSequence& seq) {
  SyncCalls out;
  for (const CollectiveCall& c : seq.calls) {
    const std::string& op = seq.ops[c.op];
    if (is_synchronizing_op(op)) out.emplace(std::make_pair(op, c.ordinal), Interval{c.start_ns, c.end_ns});
  }
  return out;
}

// [first start, last end] of what the rank recorded on the absolute clock:
// its steps and its collective calls; nullopt-like {0, -1} when it has none.
Interval recorded_range(const RankAnalysis& r) {
  Interval out{INT64_MAX, INT64_MIN};
  for (const StepSpan& s : r.steps.steps) {
    out.start_ns = std::min(out.start_ns, r.base_time_ns + s.cpu_start_ns);
    out.end_ns = std::max(out.end_ns, r.base_time_ns + s.cpu_end_ns);
  }
  for (const CollectiveCall& c : r.collectives.calls) {
    out.start_ns = std::min(out.start_ns, c.start_ns);
    out.end_ns = std::max(out.end_ns, c.end_ns);
  }
  return out;
}

std::string seconds_text(int64_t ns) { return fmt::format("{:+.6f} s", static_cast<double>(ns) / 1e9); }

}  // namespace

int64_t saturating_sub(int64_t a, int64_t b) {
  int64_t out;
  if (!__builtin_sub_overflow(a, b, &out)) return out;
  return b < 0 ? INT64_MAX : INT64_MIN;
}

bool is_synchronizing_op(const std::string& op) {
  for (const char* p : {"allreduce", "allgather", "reducescatter", "alltoall", "barrier"})
    if (op.starts_with(p)) return true;
  return false;
}

ClockAlignment align_clocks(const std::vector<const RankAnalysis*>& ranks) {
  ClockAlignment out;
  std::vector<SyncCalls> calls;
  calls.reserve(ranks.size());
  size_t ref = ranks.size();
  for (size_t i = 0; i < ranks.size(); ++i) {
    calls.push_back(sync_calls_of(ranks[i]->collectives));
    out.ranks.push_back({ranks[i]->rank});
    if (ref == ranks.size() && !calls.back().empty()) ref = i;
  }
  bool any_match = false;
  if (ref < ranks.size()) {
    out.reference_rank = ranks[ref]->rank;
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (i == ref) continue;
      std::vector<int64_t> end_diffs;
      RankClock& rc = out.ranks[i];
      for (const auto& [key, own] : calls[i]) {
        auto it = calls[ref].find(key);
        if (it == calls[ref].end()) continue;
        const Interval& other = it->second;
        end_diffs.push_back(saturating_sub(own.end_ns, other.end_ns));
        if (own.end_ns < other.start_ns || other.end_ns < own.start_ns) ++rc.disjoint_calls;
      }
      rc.matched_calls = static_cast<int64_t>(end_diffs.size());
      if (end_diffs.empty()) continue;
      any_match = true;
      std::nth_element(end_diffs.begin(), end_diffs.begin() + (end_diffs.size() - 1) / 2, end_diffs.end());
      rc.offset_ns = end_diffs[(end_diffs.size() - 1) / 2];
      rc.corrected = 2 * rc.disjoint_calls > rc.matched_calls;
    }
  }
  if (any_match) {
    std::string list;
    for (const RankClock& rc : out.ranks) {
      if (!rc.corrected) continue;
      list += fmt::format("{}rank {} by {}", list.empty() ? "" : ", ", rc.rank, seconds_text(-rc.offset_ns));
    }
    out.status = list.empty() ? "aligned" : "corrected";
    if (!list.empty())
      out.warning = fmt::format(
          "rank clocks disagree: the same synchronizing collectives do not overlap in time; times shifted to rank "
          "{}'s clock (offset = median difference of matched collective end times) before collective skew and "
          "stragglers: {}",
          out.reference_rank, list);
    return out;
  }
  // Nothing to estimate from: the recorded time ranges of the ranks must at
  // least overlap (the ranks of one job were profiled over the same steps).
  std::vector<std::pair<Interval, int64_t>> spans;
  for (const RankAnalysis* r : ranks) {
    Interval s = recorded_range(*r);
    if (s.start_ns <= s.end_ns) spans.push_back({s, r->rank});
  }
  for (size_t i = 0; i < spans.size(); ++i) {
    for (size_t j = i + 1; j < spans.size(); ++j) {
      const Interval& a = spans[i].first;
      const Interval& b = spans[j].first;
      if (a.end_ns < b.start_ns || b.end_ns < a.start_ns) {
        out.status = "refused";
        out.warning = fmt::format(
            "rank clocks cannot be compared: ranks {} and {} recorded disjoint time ranges and no synchronizing "
            "collective (all-reduce, all-gather, reduce-scatter, all-to-all, barrier) is shared to align them; "
            "collective skew and stragglers are not reported",
            spans[i].second, spans[j].second);
        return out;
      }
    }
  }
  return out;
}

}  // namespace stepscope::analysis
