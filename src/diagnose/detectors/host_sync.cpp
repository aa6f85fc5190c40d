// host_sync: the host blocks until the GPU has drained (cudaStreamSynchronize
// from .item(), cudaDeviceSynchronize, blocking copies), so the GPU then sits
// idle until the host has launched new work. The cost of a sync is the idle
// gap that opened while the host was blocked in it (the host_sync bucket);
// each sync is traced back to the op that asked for it.
//
// One sync per step is tolerated: the step's last sync, when the step
// launches no GPU work after it (the loop reading its loss for logging, as
// nearly every training loop does). Its idle stays in the host_sync bucket of
// the attribution but is not offered as a saving; a note reports it.
#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "diagnose/detector_support.h"
#include "diagnose/detectors/detectors.h"
#include "diagnose/part_json.h"
#include "diagnose/host_delay.h"
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;
namespace {

constexpr const char* kName = "host_sync";

// The op that caused a runtime call: the outermost aten:: op of the chain of
// enclosing CPU ops (aten::_local_scalar_dense sits under aten::item), or the
// innermost enclosing span when no aten op encloses it; kNoRow when called
// directly.
uint32_t trigger_row_of(const RankView& r, uint32_t call_row) {
  uint32_t best = HostTree::kNoRow, first = HostTree::kNoRow;
  for (uint32_t p = r.tree->parent(call_row); p != HostTree::kNoRow; p = r.tree->parent(p)) {
    if (r.store->events.kind[p] == trace::EventKind::kPythonFunction) continue;
    std::string_view name = r.store->name_of(p);
    if (first == HostTree::kNoRow) first = p;
    if (name.starts_with("aten::")) best = p;
    else if (best != HostTree::kNoRow) break;
  }
  return best != HostTree::kNoRow ? best : first;
}

// Ops that exist only to read a GPU value on the host: the remedy (keep the
// value on the GPU, read it every N steps) removes the whole op, not just
// its wait.
bool is_read_op(std::string_view name) {
  return name == "aten::item" || name == "aten::_local_scalar_dense" || name == "aten::is_nonzero";
}

std::string remedy_for(const std::map<std::string, int64_t>& idle_by_trigger) {
  std::vector<std::pair<int64_t, std::string>> order;
  for (const auto& [name, ns] : idle_by_trigger) order.push_back({ns, name});
  std::sort(order.rbegin(), order.rend());
  std::vector<std::string> parts;
  auto add = [&](const std::string& s) {
    if (std::find(parts.begin(), parts.end(), s) == parts.end()) parts.push_back(s);
  };
  for (const auto& [ns, name] : order) {
    if (name == "aten::item" || name == "aten::_local_scalar_dense" || name == "aten::is_nonzero")
      add("stop calling .item() / float(t) / print(t) / `if tensor:` inside the step: keep metrics on the GPU "
          "(e.g. torch.stack the norms, or accumulate into a device tensor) and read them once every N steps");
    else if (name == "aten::nonzero" || name == "aten::masked_select" || name == "aten::unique" ||
             name == "aten::_unique2" || name == "aten::repeat_interleave" || name == "aten::index")
      add("avoid ops with data-dependent output shapes (boolean-mask indexing, torch.nonzero, torch.unique): use "
          "fixed-shape forms such as torch.where or masked arithmetic");
    else if (name == "aten::to" || name == "aten::_to_copy" || name == "aten::copy_" || name == "aten::cpu")
      add("replace blocking device-to-host copies (.cpu(), .tolist(), .numpy()) with "
          "t.to('cpu', non_blocking=True) into pinned memory, read after a CUDA event, or do it every N steps");
    else if (name == "(called directly)")
      add("remove torch.cuda.synchronize() / stream or event synchronize() calls from the loop (they are only "
          "needed for timing)");
  }
  if (parts.empty())
    add("find what reads GPU results on the host inside the step (.item(), .cpu(), printing, Python conditionals "
        "on tensors) and defer or batch it");
  std::string r;
  for (size_t i = 0; i < parts.size() && i < 3; ++i) {
    if (i) r += "; ";
    r += parts[i];
  }
  r[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(r[0])));
  return r + ".";
}

// What the finding needs of one rank, and of several merged.
struct Part : FindingPart {
  int64_t syncs = 0, sync_host_ns = 0, idle_ns = 0, dtoh = 0, steps_total = 0;
  int64_t tolerated_ns = 0, tolerated_calls = 0, lead_lost_ns = 0, later_idle_ns = 0;
  std::map<std::string, int64_t> idle_by_trigger, count_by_trigger, count_by_call;

  void merge(const Part& o) {
    merge_common(o);
    for (auto [to, from] : {std::pair{&syncs, o.syncs}, {&sync_host_ns, o.sync_host_ns}, {&idle_ns, o.idle_ns},
                            {&dtoh, o.dtoh}, {&steps_total, o.steps_total}, {&tolerated_ns, o.tolerated_ns},
                            {&tolerated_calls, o.tolerated_calls}, {&lead_lost_ns, o.lead_lost_ns},
                            {&later_idle_ns, o.later_idle_ns}})
      add_into(*to, from);
    add_counts(idle_by_trigger, o.idle_by_trigger);
    add_counts(count_by_trigger, o.count_by_trigger);
    add_counts(count_by_call, o.count_by_call);
  }
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Part, saving, examples, replay, syncs, sync_host_ns, idle_ns, dtoh, steps_total,
                                   tolerated_ns, tolerated_calls, lead_lost_ns, later_idle_ns, idle_by_trigger,
                                   count_by_trigger, count_by_call)

Part collect(const RankContext& rc) {
  const RankView& r = *rc.view;
  const RankAttribution& a = *r.attribution;
  Part out;
  std::vector<int64_t> saving(a.steps.size(), 0);
  out.steps_total = static_cast<int64_t>(a.steps.size());
  // The step-closing sync of each step: its last sync, with no launch after it.
  std::vector<int64_t> launches;
  for (const auto& act : r.timeline->activities)
    if (act.has_launch()) launches.push_back(act.launch_start_ns);
  std::sort(launches.begin(), launches.end());
  std::vector<uint32_t> closing(a.steps.size(), trace::EventStore::kNoRow);
  std::vector<int64_t> closing_end(a.steps.size(), 0);
  for (const HostCall& c : r.host->syncs.calls()) {
    int32_t si = step_index_at(a, c.start_ns);
    if (si < 0) continue;
    closing[static_cast<size_t>(si)] = c.row;  // calls are in start order: the last one wins
    closing_end[static_cast<size_t>(si)] = c.end_ns;
  }
  for (size_t k = 0; k < a.steps.size(); ++k) {
    if (closing[k] == trace::EventStore::kNoRow) continue;
    auto it = std::lower_bound(launches.begin(), launches.end(), closing_end[k]);
    if (it != launches.end() && *it < a.steps[k].end_ns) closing[k] = trace::EventStore::kNoRow;
  }
  std::sort(closing.begin(), closing.end());
  std::map<uint32_t, int64_t> idle_by_call;
  for (const BucketSpan& s : a.spans) {
    if (s.bucket != Bucket::kHostSync) continue;
    if (std::binary_search(closing.begin(), closing.end(), s.cause_row)) {
      add_into(out.tolerated_ns, s.end_ns - s.start_ns);
      continue;
    }
    add_into(saving[s.step_index], s.end_ns - s.start_ns);
    add_into(idle_by_call[s.cause_row], s.end_ns - s.start_ns);
    add_into(out.idle_ns, s.end_ns - s.start_ns);
  }
  std::vector<HostDelay> delays;
  // The remedy on this rank: these syncs no longer wait, and the read ops
  // that asked for them are gone.
  RankRemedy fix{r.store->rank, {}};
  for (const HostCall& c : r.host->syncs.calls()) {
    const int32_t si = step_index_at(a, c.start_ns);
    if (si < 0) continue;
    if (std::binary_search(closing.begin(), closing.end(), c.row)) {
      ++out.tolerated_calls;
      continue;
    }
    ++out.syncs;
    add_into(out.sync_host_ns, c.end_ns - c.start_ns);
    const uint32_t trigger_row = trigger_row_of(r, c.row);
    std::string trigger =
        trigger_row == HostTree::kNoRow ? "(called directly)" : std::string(r.store->name_of(trigger_row));
    // The host time the remedy removes: the read op's, else the call's.
    int64_t from = c.start_ns, to = c.end_ns;
    if (trigger_row != HostTree::kNoRow && is_read_op(trigger)) {
      from = std::min(from, r.store->events.ts_ns[trigger_row]);
      to = std::max(to, r.store->events.ts_ns[trigger_row] + r.store->events.dur_ns[trigger_row]);
    }
    fix.remedy.unblock_rows.push_back(c.row);
    fix.remedy.host_removed.push_back({from, to});
    const int64_t lead = gpu_busy_within(a, from, to);
    add_into(out.lead_lost_ns, lead);
    delays.push_back({from, static_cast<uint32_t>(si), lead});
    std::string call(r.store->name_of(c.row));
    int64_t idle = idle_by_call.count(c.row) ? idle_by_call[c.row] : 0;
    add_into(out.idle_by_trigger[trigger], idle);
    ++out.count_by_trigger[trigger];
    ++out.count_by_call[call];
    Example e = example_of_row(r, c.row,
                               fmt::format("called from {}; host blocked {}, then the GPU sat idle {} until new "
                                           "work arrived",
                                           trigger, human_time(static_cast<double>(c.end_ns - c.start_ns)),
                                           human_time(static_cast<double>(idle))));
    e.name = trigger + " -> " + call;
    out.examples.add(static_cast<double>(idle), std::move(e));
  }
  out.later_idle_ns = claim_idle_after(rc, std::move(delays), saving, out.claims);
  if (!fix.remedy.empty()) out.remedies.push_back(std::move(fix));
  for (const auto& act : r.timeline->activities)
    if (act.kind == trace::EventKind::kMemcpy && r.store->strings.get(act.name).starts_with("Memcpy DtoH") &&
        step_index_at(a, act.start_ns) >= 0)
      ++out.dtoh;
  out.saving = RankSaving::of(r, saving);
  out.examples.trim();
  return out;
}

DetectorOutput finish(const Part& p, const JobContext&) {
  DetectorOutput out;
  double steps = static_cast<double>(std::max<int64_t>(1, p.steps_total));
  if (p.tolerated_calls > 0)
    out.not_assessed.push_back(
        {kName, "the step-closing sync",
         fmt::format("{} step(s) end with one sync and no GPU work after it (the loop reading its loss); the GPU idle "
                     "it causes ({} per step) is tolerated as the loop's per-step read and not offered as a saving",
                     p.tolerated_calls, human_time(static_cast<double>(p.tolerated_ns) / steps))});
  if (analysis::saturating_add(p.idle_ns, p.later_idle_ns) <= 0) return out;

  Finding f;
  f.category = Category::kHostSync;
  f.detector = kName;
  f.confidence = Confidence::kHigh;
  p.fill(f);
  std::string top_trigger;
  int64_t top_idle = -1;
  for (const auto& [name, ns] : p.idle_by_trigger)
    if (ns > top_idle) top_idle = ns, top_trigger = name;
  f.title = fmt::format("{:.0f} host syncs per step leave the GPU idle {} per step ({:.0f}%); most from {}",
                        static_cast<double>(p.syncs) / steps, human_time(f.estimated_saving_us * 1e3),
                        f.estimated_saving_pct, top_trigger);
  auto& m = f.evidence.metrics;
  m.push_back({"syncs_per_step", static_cast<double>(p.syncs) / steps, "count"});
  m.push_back({"host_blocked_in_sync_us_per_step", static_cast<double>(p.sync_host_ns) / steps / 1e3, "us"});
  m.push_back({"gpu_idle_after_sync_us_per_step", static_cast<double>(p.idle_ns) / steps / 1e3, "us"});
  m.push_back({"host_time_while_gpu_busy_us_per_step", static_cast<double>(p.lead_lost_ns) / steps / 1e3, "us"});
  m.push_back({"later_host_idle_claimed_us_per_step", static_cast<double>(p.later_idle_ns) / steps / 1e3, "us"});
  m.push_back({"dtoh_copies_per_step", static_cast<double>(p.dtoh) / steps, "count"});
  m.push_back({"tolerated_step_closing_sync_idle_us_per_step", static_cast<double>(p.tolerated_ns) / steps / 1e3, "us"});
  for (const auto& [call, n] : p.count_by_call)
    m.push_back({metric_key(call) + "_per_step", static_cast<double>(n) / steps, "count"});
  for (const auto& [trigger, n] : p.count_by_trigger)
    m.push_back({"syncs_from_" + metric_key(trigger) + "_per_step", static_cast<double>(n) / steps, "count"});
  f.remedy = remedy_for(p.idle_by_trigger);
  out.findings.push_back(std::move(f));
  return out;
}

}  // namespace

Detector host_sync_detector() { return split_detector<Part>(kName, Category::kHostSync, collect, finish); }

}  // namespace stepscope::diagnose
