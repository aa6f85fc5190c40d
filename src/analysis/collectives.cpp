#include "analysis/collectives.h"

#include <algorithm>
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

std::string_view host_collective_op(std::string_view name) {
  const size_t colon = name.find(':');
  if (colon == std::string_view::npos) return {};
  const std::string_view backend = name.substr(0, colon);
  bool known = false;
  for (std::string_view b : {"gloo", "nccl", "mpi", "ucc", "xccl", "hccl"}) known = known || backend == b;
  const std::string_view op = name.substr(colon + 1);
  if (!known || op.empty()) return {};
  for (char c : op)
    if (!(std::islower(static_cast<unsigned char>(c)) || c == '_')) return {};
  return op;
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
    c.row = a.row;
    seq.calls.push_back(c);
  }
  if (!seq.calls.empty()) {
    seq.source = CollectiveSource::kGpuKernels;
    return seq;
  }
  // No communication kernel: the host-side c10d ranges, rows in time order.
  const trace::EventColumns& ev = store.events;
  std::unordered_map<trace::StringId, std::string_view> host_op_of_name;
  for (uint32_t row = 0; row < ev.ts_ns.size(); ++row) {
    if (ev.kind[row] != trace::EventKind::kCpuOp && ev.kind[row] != trace::EventKind::kUserAnnotation) continue;
    auto it = host_op_of_name.find(ev.name[row]);
    if (it == host_op_of_name.end())
      it = host_op_of_name.emplace(ev.name[row], host_collective_op(store.strings.get(ev.name[row]))).first;
    if (it->second.empty()) continue;
    CollectiveCall c;
    c.op = intern_op(std::string(it->second));
    c.ordinal = next_ordinal[c.op]++;
    c.start_ns = base + ev.ts_ns[row];
    c.end_ns = c.start_ns + std::max<int64_t>(ev.dur_ns[row], 0);
    c.row = row;
    seq.calls.push_back(c);
  }
  if (!seq.calls.empty()) seq.source = CollectiveSource::kHostOps;
  return seq;
}

}  // namespace stepscope::analysis
