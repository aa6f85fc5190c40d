#include "analysis/collective_matching.h"

#include <algorithm>
#include <map>

namespace stepscope::analysis {

CollectiveMatching match_collectives(const std::vector<const CollectiveSequence*>& ranks) {
  CollectiveMatching out;
  const size_t n = ranks.size();
  out.unmatched_per_rank.assign(n, 0);
  // op key -> per rank, call index by ordinal.
  std::map<std::string, std::vector<std::vector<uint32_t>>> by_op;
  for (size_t i = 0; i < n; ++i) {
    const CollectiveSequence& seq = *ranks[i];
    for (uint32_t c = 0; c < seq.calls.size(); ++c) {
      auto& per_rank = by_op[seq.ops[seq.calls[c].op]];
      per_rank.resize(n);
      auto& v = per_rank[i];
      if (v.size() <= seq.calls[c].ordinal) v.resize(seq.calls[c].ordinal + 1, UINT32_MAX);
      v[seq.calls[c].ordinal] = c;
    }
  }
  for (auto& [op, per_rank] : by_op) {
    per_rank.resize(n);
    size_t common = SIZE_MAX;
    for (const auto& v : per_rank) common = std::min(common, v.size());
    if (n < 2) common = 0;
    for (size_t i = 0; i < n; ++i) {
      const auto extra = static_cast<int64_t>(per_rank[i].size() - common);
      out.unmatched_calls += extra;
      out.unmatched_per_rank[i] += extra;
    }
    for (size_t k = 0; k < common; ++k) {
      MatchedCollective m{op, static_cast<uint32_t>(k), {}};
      m.call.reserve(n);
      for (size_t i = 0; i < n; ++i) m.call.push_back(per_rank[i][k]);
      out.matched.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace stepscope::analysis
