// communication: collective kernels that run while no computation hides
// them (the communication_exposed bucket) are time the step could recover by
// overlapping them. Each collective's bus bandwidth, from its message size
// ("In msg nelems" x dtype on the kernel or its record_param_comms op) and
// the collective's traffic factor, is compared with the link's peak; many
// small collectives are latency-bound. Only runs with collective kernels on
// more than one rank are judged: DDP at world size 1 runs none.
// The remedy for the replay (docs/whatif.md, "Remedies"): each collective's
// exposed time is hidden behind compute - its kernel keeps only the time that
// compute overlapped - an upper bound of what bucketing, prefetching or
// a separate stream can overlap.
#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "analysis/collectives.h"
#include "diagnose/detector_support.h"
#include "diagnose/detectors/detectors.h"
#include "diagnose/part_json.h"
#include "diagnose/host_wait.h"
#include "analysis/exact_sum.h"
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;
namespace {

constexpr const char* kName = "communication";

int64_t dtype_bytes(std::string_view t) {
  std::string s(t);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s.find("double") != std::string::npos || s.find("long") != std::string::npos || s.find("64") != std::string::npos)
    return 8;
  if (s.find("half") != std::string::npos || s.find("bfloat16") != std::string::npos || s.find("16") != std::string::npos) return 2;
  if (s.find("byte") != std::string::npos || s.find("char") != std::string::npos || s.find("bool") != std::string::npos ||
      s.find("8") != std::string::npos)
    return 1;
  return 4;  // float, int, and unnamed 4-byte types
}

// nccl-tests' bus-bandwidth factor: the share of the message each rank's
// busiest link carries, so busbw is comparable across collectives.
double bus_factor(std::string_view op, int64_t n) {
  if (n <= 1) return 1.0;
  double nd = static_cast<double>(n);
  if (op == "allreduce") return 2.0 * (nd - 1) / nd;
  if (op == "allgather" || op == "reducescatter" || op == "alltoall" || op == "alltoallv" || op == "alltoallbase" ||
      op == "allgatherbase" || op == "reducescatterbase" || op == "allgatherintocoalesced" ||
      op == "reducescattertensorcoalesced")
    return (nd - 1) / nd;
  return 1.0;  // broadcast, reduce, send/recv
}

struct Sized {
  bool known = false;
  int64_t bytes = 0;
  int64_t group = 0;
};

Sized size_of(const RankView& r, uint32_t gpu_row, uint32_t launch_row) {
  const trace::EventStore& s = *r.store;
  trace::StringId in_key = s.strings.find("In msg nelems"), out_key = s.strings.find("Out msg nelems");
  trace::StringId type_key = s.strings.find("dtype"), group_key = s.strings.find("Group size");
  Sized z;
  auto read = [&](uint32_t row) {
    if (row == trace::EventStore::kNoRow || in_key == trace::StringTable::kMissing) return false;
    auto in = s.arg_int(row, in_key);
    if (!in) return false;
    int64_t n = std::max(*in, out_key == trace::StringTable::kMissing ? 0 : s.arg_int(row, out_key).value_or(0));
    std::string_view t = type_key == trace::StringTable::kMissing ? "" : s.arg_string(row, type_key).value_or("");
    z.known = true;
    z.bytes = n * dtype_bytes(t);
    if (group_key != trace::StringTable::kMissing) z.group = s.arg_int(row, group_key).value_or(0);
    return true;
  };
  if (read(gpu_row)) return z;
  // The record_param_comms op around the launch.
  for (uint32_t p = r.tree->parent(launch_row); launch_row != trace::EventStore::kNoRow && p != HostTree::kNoRow;
       p = r.tree->parent(p))
    if (read(p)) return z;
  return z;
}

// What the finding needs of one rank, and of several merged.
struct Part : FindingPart {
  int64_t kernels = 0, comm_ns = 0, exposed_ns = 0, sized = 0, small = 0, steps_total = 0;
  analysis::ExactSum busbw_weighted;  // sum of busbw * time, for a time-weighted mean
  int64_t busbw_ns = 0, beyond_wait_ns = 0;
  double link_peak = 0;  // one direction, GB/s: the last rank's with a known link
  int64_t ranks_with_comm = 0;

  void merge(const Part& o) {
    merge_common(o);
    for (auto [to, from] : {std::pair{&kernels, o.kernels}, {&comm_ns, o.comm_ns}, {&exposed_ns, o.exposed_ns},
                            {&sized, o.sized}, {&small, o.small}, {&steps_total, o.steps_total},
                            {&busbw_ns, o.busbw_ns}, {&beyond_wait_ns, o.beyond_wait_ns},
                            {&ranks_with_comm, o.ranks_with_comm}})
      add_into(*to, from);
    busbw_weighted.add(o.busbw_weighted);
    if (o.link_peak > 0) link_peak = o.link_peak;
  }
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Part, saving, examples, replay, kernels, comm_ns, exposed_ns, sized, small,
                                   steps_total, busbw_weighted, busbw_ns, beyond_wait_ns, link_peak, ranks_with_comm)

Part collect(const RankContext& rc) {
  const RankView& r = *rc.view;
  const RankAttribution& a = *r.attribution;
  Part out;
  std::vector<int64_t> saving(a.steps.size(), 0);
  out.saving = RankSaving::of(r, saving);  // none unless it communicates
  int64_t world = r.store->meta.world_size.value_or(static_cast<int64_t>(rc.ranks_in_set));
  bool any = false;
  for (const auto& act : r.timeline->activities)
    if (act.cls == analysis::KernelClass::kCommunication) { any = true; break; }
  // No collective kernel, or a world of one rank: nothing crosses a link.
  if (!any || world <= 1) return out;
  out.ranks_with_comm = 1;
  out.steps_total = static_cast<int64_t>(a.steps.size());
  if (r.peaks && r.peaks->link_gbps > 0) out.link_peak = r.peaks->link_gbps / 2;  // one direction
  const double link_peak = out.link_peak;
  IntervalSet exposed_set;
  {
    std::vector<Interval> v;
    for (const BucketSpan& s : a.spans)
      if (s.bucket == Bucket::kCommunication) {
        v.push_back({s.start_ns, s.end_ns});
        add_into(saving[s.step_index], s.end_ns - s.start_ns);
        add_into(out.exposed_ns, s.end_ns - s.start_ns);
      }
    exposed_set = IntervalSet(std::move(v));
  }
  RankRemedy fix{r.store->rank, {}};
  for (const auto& act : r.timeline->activities) {
    if (act.cls != analysis::KernelClass::kCommunication || step_index_at(a, act.start_ns) < 0) continue;
    ++out.kernels;
    add_into(out.comm_ns, act.duration_ns());
    std::string op = analysis::normalize_op(analysis::collective_op_of(r.store->strings.get(act.name)));
    Sized sz = size_of(r, act.row, act.launch_row);
    std::string detail;
    int64_t ex = exposed_set.overlap(act.start_ns, act.end_ns);
    if (ex > 0 && act.duration_ns() > 0)
      fix.remedy.gpu_scale.push_back(
          {act.row, static_cast<double>(act.duration_ns() - ex) / static_cast<double>(act.duration_ns())});
    if (sz.known && act.duration_ns() > 0) {
      ++out.sized;
      if (static_cast<double>(sz.bytes) < rc.options->small_collective_bytes) ++out.small;
      int64_t group = sz.group > 0 ? sz.group : world;
      double algbw = static_cast<double>(sz.bytes) / static_cast<double>(act.duration_ns());  // GB/s
      double busbw = algbw * bus_factor(op, group);
      out.busbw_weighted.add(busbw * static_cast<double>(act.duration_ns()));
      add_into(out.busbw_ns, act.duration_ns());
      detail = fmt::format("{} B over {} ranks: bus bandwidth {:.1f} GB/s{}; {} not hidden by compute", sz.bytes,
                           group, busbw, link_peak > 0 ? fmt::format(" ({:.0f}% of the link)", 100 * busbw / link_peak) : "",
                           human_time(static_cast<double>(ex)));
    } else {
      detail = fmt::format("{} not hidden by compute (message size not recorded)", human_time(static_cast<double>(ex)));
    }
    out.examples.add(static_cast<double>(ex), example_of_row(r, act.row, detail));
  }
  if (!fix.remedy.empty()) out.remedies.push_back(std::move(fix));
  // Hidden communication shortens a step only where the host waited for the GPU.
  out.beyond_wait_ns = cap_at_host_wait(r, saving);
  out.saving = RankSaving::of(r, saving);
  out.examples.trim();
  return out;
}

DetectorOutput finish(const Part& p, const JobContext&) {
  DetectorOutput out;
  if (p.ranks_with_comm == 0) return out;  // no collectives: never a communication finding
  if (p.sized == 0 && p.kernels > 0)
    out.not_assessed.push_back({kName, "bus bandwidth of collectives",
                                "collective kernels carry no message size (\"In msg nelems\"; PyTorch >= 2.1 "
                                "records it with record_shapes=True)"});
  if (p.exposed_ns <= 0) return out;
  const int64_t beyond_wait_ns = p.beyond_wait_ns, busbw_ns = p.busbw_ns, sized = p.sized, small = p.small;
  const double link_peak = p.link_peak;

  Finding f;
  f.category = Category::kCommunication;
  f.detector = kName;
  f.confidence = Confidence::kHigh;
  p.fill(f);
  double steps = static_cast<double>(std::max<int64_t>(1, p.steps_total));
  double mean_busbw = busbw_ns > 0 ? p.busbw_weighted.value() / static_cast<double>(busbw_ns) : 0;
  if (beyond_wait_ns == 0)
    f.title = fmt::format("Collectives exposed (no compute to hide them) for {} per step ({:.0f}% of the step)",
                          human_time(f.estimated_saving_us * 1e3), f.estimated_saving_pct);
  else
    f.title = fmt::format("Collectives exposed (no compute to hide them) for {} per step; hiding them saves at most {} "
                          "({:.0f}% of the step), the time the host waited for the GPU",
                          human_time(static_cast<double>(p.exposed_ns) / steps), human_time(f.estimated_saving_us * 1e3),
                          f.estimated_saving_pct);
  auto& m = f.evidence.metrics;
  m.push_back({"collective_kernels_per_step", static_cast<double>(p.kernels) / steps, "count"});
  m.push_back({"communication_us_per_step", static_cast<double>(p.comm_ns) / steps / 1e3, "us"});
  m.push_back({"exposed_communication_us_per_step", static_cast<double>(p.exposed_ns) / steps / 1e3, "us"});
  m.push_back({"saving_beyond_host_wait_us_per_step", static_cast<double>(beyond_wait_ns) / steps / 1e3, "us"});
  if (busbw_ns > 0) m.push_back({"mean_bus_bandwidth_gbps", mean_busbw, "GB/s"});
  if (link_peak > 0) m.push_back({"link_peak_one_direction_gbps", link_peak, "GB/s"});
  if (sized > 0) m.push_back({"small_collectives_pct", 100.0 * static_cast<double>(small) / static_cast<double>(sized), "%"});
  std::string remedy =
      "Overlap collectives with compute: keep DDP's gradient bucketing (bucket_cap_mb) and gradient_as_bucket_view="
      "True, use no_sync() for accumulation micro-steps, and for FSDP enable backward_prefetch=BACKWARD_PRE and "
      "forward_prefetch=True";
  if (sized > 0 && small * 2 >= sized)
    remedy += "; most collectives are small and latency-bound: coalesce them (larger DDP buckets, "
              "torch.distributed all_reduce_coalesced / flattened tensors)";
  if (link_peak > 0 && busbw_ns > 0 && mean_busbw < 0.25 * link_peak)
    remedy += "; bus bandwidth is far below the link peak: check the NCCL topology (NCCL_DEBUG=INFO) and that "
              "NVLink / the fast network is used";
  f.remedy = remedy + ".";
  out.findings.push_back(std::move(f));
  return out;
}

}  // namespace

Detector communication_detector() { return split_detector<Part>(kName, Category::kCommunication, collect, finish); }

}  // namespace stepscope::diagnose
