#include "analysis/collectives.h"

#include <cctype>
#include <unordered_map>

namespace stepscope::analysis {

std::string collective_op_of(std::string_view name) {
  // Drop the parameter list: "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)".
  if (auto paren = name.find('('); paren != std::string_view::npos) name = name.substr(0, paren);
  if (name.starts_with("void ")) name.remove_prefix(5);
  // NCCL < 2.19: ncclKernel_<Op>_<Algo>_<Proto>_<RedOp>_<type>;
  // NCCL >= 2.19: ncclDevKernel_<Op>_<...>. RCCL keeps both spellings.
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_", "rcclKernel_", "rccl_"}) {
    if (name.starts_with(prefix)) {
      std::string_view rest = name.substr(prefix.size());
      return std::string(rest.substr(0, rest.find('_')));
    }
  }
  return std::string(name);
}

// "AllReduce", "all_reduce" and "allreduce" are one operation: lower case
// without underscores, so kernel names and "Collective name" args agree.
std::string normalize_op(std::string_view op) {
  std::string out;
  out.reserve(op.size());
  for (char c : op) {
    if (c == '_' || c == ' ') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

CollectiveSequence extract_collectives(const trace::EventStore& store, const GpuTimeline& timeline) {
  CollectiveSequence seq;
  const trace::StringId coll_key = store.strings.find("Collective name");
  std::unordered_map<std::string, uint32_t> op_index;
  std::unordered_map<trace::StringId, uint32_t> op_of_name;  // kernel names without the arg
  std::vector<uint32_t> next_ordinal;
  const int64_t base = store.meta.base_time_ns;
  auto intern_op = [&](std::string op) {
    auto [it, inserted] = op_index.emplace(normalize_op(op), static_cast<uint32_t>(seq.ops.size()));
    if (inserted) {
      seq.ops.push_back(it->first);
      next_ordinal.push_back(0);
    }
    return it->second;
  };
  for (const GpuActivity& a : timeline.activities) {
    if (a.cls != KernelClass::kCommunication) continue;
    uint32_t op;
    // Newer traces name the collective on the kernel itself; it beats parsing
    // generic kernel names ("ncclDevKernel_Generic").
    auto named = store.arg_string(a.row, coll_key);
    if (named && !named->empty()) {
      op = intern_op(std::string(*named));
    } else {
      auto it = op_of_name.find(a.name);
      if (it == op_of_name.end()) {
        it = op_of_name.emplace(a.name, intern_op(collective_op_of(store.strings.get(a.name)))).first;
      }
      op = it->second;
    }
    CollectiveCall c;
    c.op = op;
    c.ordinal = next_ordinal[op]++;
    c.stream = timeline.lanes[a.lane].stream;
    c.start_ns = base + a.start_ns;
    c.end_ns = base + a.end_ns;
    seq.calls.push_back(c);
  }
  return seq;
}

}  // namespace stepscope::analysis
