#include "trace/rank_numbering.h"

#include <set>

namespace stepscope::trace {

std::vector<NumberedRank> number_ranks(const std::vector<RankClaim>& claims, std::vector<std::string>& warnings) {
  std::vector<NumberedRank> out(claims.size());
  std::set<int64_t> used;
  std::vector<size_t> unresolved;
  for (size_t i = 0; i < claims.size(); ++i) {
    const RankClaim& c = claims[i];
    int64_t r = -1;
    if (c.declared && *c.declared >= 0) {
      r = *c.declared;
      out[i].source = "distributedInfo";
    } else if ((r = c.from_file_name) >= 0) {
      out[i].source = "file name";
    }
    if (r >= 0 && used.count(r)) {
      warnings.push_back(c.path + ": rank " + std::to_string(r) +
                         " already taken by another file; numbered by order instead");
      r = -1;
    }
    if (r < 0) {
      unresolved.push_back(i);
      continue;
    }
    out[i].rank = r;
    used.insert(r);
  }
  int64_t candidate = 0;
  for (size_t i : unresolved) {
    while (used.count(candidate)) ++candidate;
    out[i].rank = candidate;
    out[i].source = "order";
    used.insert(candidate);
  }
  return out;
}

}  // namespace stepscope::trace
