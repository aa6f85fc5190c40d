// How the ranks of a trace set are numbered: distributedInfo's rank, then a
// rank in the file name, then the order of the files; a number already taken
// is numbered by order with a warning. Shared by the trace set (trace_set.h)
// and the merge of rank summaries, so both number a set alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepscope::trace {

struct RankClaim {
  std::string path;                      // the file (for the warning)
  std::optional<int64_t> declared;       // distributedInfo.rank, when >= 0
  int64_t from_file_name = -1;           // rank_from_file_name(path), -1 when none
};

struct NumberedRank {
  int64_t rank = 0;
  std::string source;  // "distributedInfo", "file name" or "order"
};

// One entry per claim, same order; claims are taken in the order given
// (the files' path order). Warnings are appended for numbers already taken.
std::vector<NumberedRank> number_ranks(const std::vector<RankClaim>& claims, std::vector<std::string>& warnings);

}  // namespace stepscope::trace
