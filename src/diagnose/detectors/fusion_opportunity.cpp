// fusion_opportunity: work issued as several kernels that one kernel could do.
//   Sibling matmuls - consecutive matmul ops under one parent with the same
//     first-input shape and dtype (separate q/k/v projections of one x),
//     with nothing between them but ops that launch no kernel. One fused
//     matmul needs one host call instead of n.
//   Elementwise chains - three or more elementwise kernels back to back on a
//     stream, from different ops.
// The saving is an upper bound of what fusing removes: host-caused GPU idle
// during the extra matmul calls (all but the first of a group) and, inside
// each chain, during the launches that fusing removes, outside the idle
// earlier findings claimed. A chain's later kernel waited on the host for
// its own launch: the rest of the previous chain op after its launch, then
// the issue of the next: its op from its start (or the rank's typical
// launch interval, the median from one launch call to the next on a
// thread, when longer) to the kernel's start. The rest of a gap between two
// chain kernels is other host work
// (Python between ops, logging, a long CPU op) that one fused kernel leaves
// in place, so it is not counted however long it is. The memory traffic a fused
// elementwise kernel saves is not counted: the trace does not record which
// op consumes which tensor, so the chain's GPU time is evidence only. The
// idle is not claimed: host_overhead's remedy (torch.compile) removes it too.
// Kernels inside optimizer steps are left to unfused_optimizer.
// The remedy for the replay (docs/whatif.md, "Remedies"): a group's extra
// calls leave the host and its matmul kernels run as one of their summed
// time; a chain's kernels run as one kernel of their summed time, launched
// once.
#include <fmt/core.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "diagnose/detector_support.h"
#include "diagnose/detectors/detectors.h"
#include "diagnose/part_json.h"
#include "diagnose/op_args.h"
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;
namespace {

constexpr const char* kName = "fusion_opportunity";
constexpr size_t kMinChain = 3;  // elementwise kernels in a row

// The rank's typical host cost of one launch: the median time from one
// kernel launch call to the next on the same host thread. In eager PyTorch
// that is one op's Python binding, dispatch and launch; stretches where the
// host did other work (logging, the DataLoader, a sync) are few and leave
// the median alone. 0 when no thread launched twice.
int64_t typical_launch_interval_ns(const trace::EventStore& store, const analysis::GpuTimeline& tl) {
  std::vector<std::pair<int64_t, int64_t>> launches;  // (thread, call start)
  for (const auto& act : tl.activities)
    if (act.kind == trace::EventKind::kKernel && act.launch_row != trace::EventStore::kNoRow)
      launches.emplace_back(store.events.tid[act.launch_row], act.launch_start_ns);
  std::sort(launches.begin(), launches.end());
  launches.erase(std::unique(launches.begin(), launches.end()), launches.end());  // a graph's kernels: one call
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < launches.size(); ++i)
    if (launches[i].first == launches[i - 1].first) gaps.push_back(launches[i].second - launches[i - 1].second);
  if (gaps.empty()) return 0;
  auto mid = gaps.begin() + static_cast<std::ptrdiff_t>((gaps.size() - 1) / 2);
  std::nth_element(gaps.begin(), mid, gaps.end());
  return *mid;
}

// An elementwise chain kept as an example candidate until the heaviest are
// known.
struct ChainExample {
  double weight;
  const analysis::GpuActivity* front;
  size_t kernels;
  int64_t gpu_ns, span_ns;
  size_t order;  // found as the order-th chain of the rank
};

// What the finding needs of one rank, and of several merged.
struct Part : FindingPart {
  int64_t groups = 0, grouped_ops = 0, chains = 0, chain_kernels = 0, steps_total = 0;
  int64_t group_host_ns = 0, chain_gpu_ns = 0, group_idle_ns = 0, chain_idle_ns = 0, saving_ns = 0;
  bool any_shapes = false;

  void merge(const Part& o) {
    merge_common(o);
    for (auto [to, from] : {std::pair{&groups, o.groups}, {&grouped_ops, o.grouped_ops}, {&chains, o.chains},
                            {&chain_kernels, o.chain_kernels}, {&steps_total, o.steps_total},
                            {&group_host_ns, o.group_host_ns}, {&chain_gpu_ns, o.chain_gpu_ns},
                            {&group_idle_ns, o.group_idle_ns}, {&chain_idle_ns, o.chain_idle_ns},
                            {&saving_ns, o.saving_ns}})
      add_into(*to, from);
    any_shapes = any_shapes || o.any_shapes;
  }
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Part, saving, examples, replay, groups, grouped_ops, chains, chain_kernels, steps_total,
                                   group_host_ns, chain_gpu_ns, group_idle_ns, chain_idle_ns, saving_ns, any_shapes)

Part collect(const RankContext& rc) {
  const RankView& r = *rc.view;
  Part out;
  std::vector<int64_t> saving(r.attribution->steps.size(), 0);
  std::vector<ChainExample> chain_examples;
  const RankAttribution& a = *r.attribution;
  const auto& ev = r.store->events;
  out.steps_total = static_cast<int64_t>(a.steps.size());
  OpArgReader args(*r.store);
  std::vector<Interval> extra_calls, chain_insides;
  out.any_shapes = args.has_shapes();
  RankRemedy fix{r.store->rank, {}};

  // Ops that (directly or below them) launched GPU work.
  std::vector<bool> launches(ev.size(), false);  // by host row
  for (const auto& act : r.timeline->activities)
    for (uint32_t p = act.launch_row == HostTree::kNoRow ? HostTree::kNoRow : r.tree->parent(act.launch_row);
         p != HostTree::kNoRow && !launches[p]; p = r.tree->parent(p)) {
      launches[p] = true;
    }
  // Each matmul op's GPU work (the kernels it or its children launched),
  // for a group's fused matmul.
  std::unordered_map<uint32_t, std::vector<const analysis::GpuActivity*>> matmul_work;
  for (const auto& act : r.timeline->activities)
    for (uint32_t p = act.launch_row; p != HostTree::kNoRow; p = r.tree->parent(p))
      if (ev.kind[p] == trace::EventKind::kCpuOp && is_matmul_op(r.store->name_of(p))) matmul_work[p].push_back(&act);
  // A group's GPU work per lane, in stream order.
  auto work_of = [&](const std::vector<uint32_t>& ops) {
    std::map<uint32_t, std::vector<uint32_t>> by_lane;
    for (uint32_t op : ops)
      if (auto it = matmul_work.find(op); it != matmul_work.end())
        for (const analysis::GpuActivity* act : it->second) by_lane[act->lane].push_back(act->row);
    return by_lane;
  };

  // Sibling matmuls on the same input shape.
  std::set<uint32_t> parents;
  for (uint32_t row : r.store->cpu_op_rows) {
    if (!is_matmul_op(r.store->name_of(row))) continue;
    uint32_t p = r.tree->parent(row);
    if (p != HostTree::kNoRow && !is_matmul_op(r.store->name_of(p))) parents.insert(p);
  }
  for (uint32_t p : parents) {
    std::vector<uint32_t> group;
    std::string key;
    auto flush = [&] {
      if (group.size() >= 2) {
        int32_t si = step_index_at(a, ev.ts_ns[group.front()]);
        if (si >= 0) {
          int64_t sum = 0, longest = 0;
          for (uint32_t g : group) {
            add_into(sum, ev.dur_ns[g]);
            longest = std::max(longest, ev.dur_ns[g]);
          }
          for (size_t g = 1; g < group.size(); ++g) {
            extra_calls.push_back({ev.ts_ns[group[g]], ev.ts_ns[group[g]] + ev.dur_ns[group[g]]});
            fix.remedy.host_removed.push_back({ev.ts_ns[group[g]], ev.ts_ns[group[g]] + ev.dur_ns[group[g]]});
          }
          for (auto& [lane, rows] : work_of(group))
            if (rows.size() > 1) fix.remedy.fused_chains.push_back(std::move(rows));
          add_into(out.group_host_ns, sum - longest);
          ++out.groups;
          add_into(out.grouped_ops, static_cast<int64_t>(group.size()));
          Example e = example_of_row(r, group.front(),
                                     fmt::format("{} {} calls back to back on the same input {}; one fused call "
                                                 "saves {} of host time",
                                                 group.size(), r.store->name_of(group.front()), key.substr(0, key.find('|')),
                                                 human_time(static_cast<double>(sum - longest))));
          e.dur_ns = ev.ts_ns[group.back()] + ev.dur_ns[group.back()] - ev.ts_ns[group.front()];
          out.examples.add(static_cast<double>(sum - longest), std::move(e));
        }
      }
      group.clear();
      key.clear();
    };
    for (uint32_t c : r.tree->children(p)) {
      std::string_view cn = r.store->name_of(c);
      if (ev.kind[c] != trace::EventKind::kCpuOp) continue;
      if (!is_matmul_op(cn)) {
        if (launches[c]) flush();  // a kernel in between: not back to back
        continue;
      }
      OpArgs oa = args.read(c);
      if (oa.shapes.empty() || oa.shapes.front().list) {
        flush();
        continue;
      }
      // aten::addmm's first input is the bias; its matrix input is the second.
      const InputShape& in = (cn == "aten::addmm" && oa.shapes.size() >= 2) ? oa.shapes[1] : oa.shapes.front();
      std::string k = fmt::format("[{}]|{}|{}", fmt::join(in.dims, ", "), oa.types.empty() ? "" : oa.types.front(), cn);
      if (!group.empty() && k != key) flush();
      group.push_back(c);
      key = k;
    }
    flush();
  }

  // Elementwise chains per stream, outside optimizer steps.
  const int64_t typical_launch_ns = typical_launch_interval_ns(*r.store, *r.timeline);
  std::map<uint32_t, std::vector<const analysis::GpuActivity*>> by_lane;
  for (const auto& act : r.timeline->activities) by_lane[act.lane].push_back(&act);
  for (auto& [lane, acts] : by_lane) {
    std::vector<const analysis::GpuActivity*> chain;
    auto op_of = [&](const analysis::GpuActivity* x) {
      return x->launch_row == HostTree::kNoRow ? HostTree::kNoRow : r.tree->parent(x->launch_row);
    };
    // The GPU idle between `prev` and `x` that fusing `x` into `prev`
    // removes: while the host finished `prev`'s op after its launch, and
    // while it issued `x`: its op up to `x`'s start (the launch call when
    // no op encloses it), or the rank's typical launch interval before
    // `x`'s start when that is longer (the Python binding before an op's
    // recorded start). Host work past that, between the two ops, stays.
    auto launch_windows = [&](const analysis::GpuActivity& prev, const analysis::GpuActivity& x,
                              std::vector<Interval>& out_windows) {
      const auto op_span = [&](const analysis::GpuActivity& k, int64_t& from, int64_t& to) {
        from = k.launch_start_ns;
        to = k.launch_end_ns;
        const uint32_t op = op_of(&k);
        if (op == HostTree::kNoRow || ev.kind[op] != trace::EventKind::kCpuOp) return;
        from = std::min(from, ev.ts_ns[op]);
        to = std::max(to, ev.ts_ns[op] + ev.dur_ns[op]);
      };
      int64_t prev_from, prev_to, x_from, x_to;
      op_span(prev, prev_from, prev_to);
      op_span(x, x_from, x_to);
      const int64_t gap_start = std::max(prev.end_ns, prev.launch_end_ns), gap_end = x.start_ns;
      const Interval tail{gap_start, std::min(prev_to, gap_end)};
      const Interval issue{std::max(gap_start, std::min(x_from, gap_end - typical_launch_ns)), gap_end};
      for (const Interval& w : {tail, issue})
        if (w.end_ns > w.start_ns) out_windows.push_back(w);
    };
    auto close = [&] {
      if (chain.size() >= kMinChain) {
        int32_t si = step_index_at(a, chain.front()->start_ns);
        if (si >= 0) {
          int64_t sum = 0, longest = 0;
          for (auto* x : chain) {
            add_into(sum, x->duration_ns());
            longest = std::max(longest, x->duration_ns());
          }
          std::vector<Interval> own;
          for (size_t i = 1; i < chain.size(); ++i) launch_windows(*chain[i - 1], *chain[i], own);
          chain_insides.insert(chain_insides.end(), own.begin(), own.end());
          std::vector<uint32_t> rows;
          for (auto* x : chain) rows.push_back(x->row);
          fix.remedy.fused_chains.push_back(std::move(rows));
          const int64_t windows = IntervalSet(std::move(own)).length();
          add_into(out.chain_gpu_ns, sum);
          ++out.chains;
          add_into(out.chain_kernels, static_cast<int64_t>(chain.size()));
          chain_examples.push_back({static_cast<double>(windows), chain.front(), chain.size(), sum,
                                    chain.back()->end_ns - chain.front()->start_ns, chain_examples.size()});
        }
      }
      chain.clear();
    };
    for (const auto* x : acts) {
      bool elementwise = x->kind == trace::EventKind::kKernel && x->family == analysis::KernelFamily::kElementwise &&
                         x->has_launch() && !r.host->optimizer_steps.containing(x->launch_start_ns);
      if (!elementwise) {
        close();
        continue;
      }
      // Kernels of one op (e.g. a copy and a cast) are that op's business.
      if (!chain.empty() && op_of(chain.back()) == op_of(x) && op_of(x) != HostTree::kNoRow) continue;
      chain.push_back(x);
    }
    close();
  }
  // Host-caused idle during the removable calls and inside the chains,
  // outside what earlier findings claimed.
  IntervalSet calls(extra_calls), insides(chain_insides);
  std::vector<Interval> both = extra_calls;
  both.insert(both.end(), chain_insides.begin(), chain_insides.end());
  IntervalSet fusable(std::move(both));
  std::vector<Interval> counted;
  std::vector<int64_t> idle = unclaimed_host_idle(rc, &fusable, &counted);
  for (size_t k = 0; k < idle.size(); ++k) add_into(saving[k], idle[k]);
  for (const Interval& i : counted) {
    add_into(out.group_idle_ns, calls.overlap(i.start_ns, i.end_ns));
    add_into(out.chain_idle_ns, insides.overlap(i.start_ns, i.end_ns));
  }
  if (!fix.remedy.empty()) out.remedies.push_back(std::move(fix));
  // The heaviest chains' examples, formatted only for those (a trace can hold
  // millions of chains), in the order they were found.
  std::stable_sort(chain_examples.begin(), chain_examples.end(),
                   [](const ChainExample& x, const ChainExample& y) { return x.weight > y.weight; });
  if (chain_examples.size() > kMaxExamples) chain_examples.resize(kMaxExamples);
  std::stable_sort(chain_examples.begin(), chain_examples.end(),
                   [](const ChainExample& x, const ChainExample& y) { return x.order < y.order; });
  for (const ChainExample& c : chain_examples) {
    Example e = example_of_row(r, c.front->row,
                               fmt::format("{} elementwise kernels in a row from separate ops, {} of GPU time, {} "
                                           "from first start to last end",
                                           c.kernels, human_time(static_cast<double>(c.gpu_ns)),
                                           human_time(static_cast<double>(c.span_ns))));
    e.dur_ns = c.span_ns;
    out.examples.add(c.weight, std::move(e));
  }
  for (int64_t x : saving) add_into(out.saving_ns, x);
  out.saving = RankSaving::of(r, saving);
  out.examples.trim();
  return out;
}

DetectorOutput finish(const Part& p, const JobContext&) {
  DetectorOutput out;
  const int64_t groups = p.groups, chains = p.chains, group_idle_ns = p.group_idle_ns, chain_idle_ns = p.chain_idle_ns;
  const int64_t chain_gpu_ns = p.chain_gpu_ns;
  if (!p.any_shapes)
    out.not_assessed.push_back({kName, "matmuls that share an input (q/k/v projections)",
                                "no operator shapes (profile with record_shapes=True)"});

  if (p.saving_ns <= 0) return out;

  Finding f;
  f.category = Category::kFusionOpportunity;
  f.detector = kName;
  f.confidence = Confidence::kMedium;
  p.fill(f);
  double steps = static_cast<double>(std::max<int64_t>(1, p.steps_total));
  if (groups > 0 && group_idle_ns >= chain_idle_ns)
    f.title = fmt::format("{:.0f} groups of matmuls per step read the same input separately (e.g. q/k/v "
                          "projections); the extra calls leave the GPU idle {} per step",
                          static_cast<double>(groups) / steps, human_time(static_cast<double>(group_idle_ns) / steps));
  else
    f.title = fmt::format("{:.0f} chains of elementwise kernels per step ({} of GPU time) wait on their launches: "
                          "{} of GPU idle inside them per step",
                          static_cast<double>(chains) / steps, human_time(static_cast<double>(chain_gpu_ns) / steps),
                          human_time(static_cast<double>(chain_idle_ns) / steps));
  auto& m = f.evidence.metrics;
  m.push_back({"shared_input_matmul_groups_per_step", static_cast<double>(groups) / steps, "count"});
  m.push_back({"shared_input_matmul_ops_per_step", static_cast<double>(p.grouped_ops) / steps, "count"});
  m.push_back({"shared_input_matmul_extra_host_us_per_step", static_cast<double>(p.group_host_ns) / steps / 1e3, "us"});
  m.push_back({"elementwise_chains_per_step", static_cast<double>(chains) / steps, "count"});
  m.push_back({"elementwise_chain_kernels_per_step", static_cast<double>(p.chain_kernels) / steps, "count"});
  m.push_back({"shared_input_matmul_idle_us_per_step", static_cast<double>(group_idle_ns) / steps / 1e3, "us"});
  m.push_back({"elementwise_chain_gpu_us_per_step", static_cast<double>(chain_gpu_ns) / steps / 1e3, "us"});
  m.push_back({"elementwise_chain_inner_idle_us_per_step", static_cast<double>(chain_idle_ns) / steps / 1e3, "us"});
  std::string remedy;
  if (groups > 0)
    remedy = "Fuse projections that read the same input into one layer (qkv = nn.Linear(d, 3 * d); q, k, v = "
             "qkv(x).split(d, dim=-1)); ";
  remedy += "let torch.compile fuse chains of elementwise ops into single kernels (or use fused ops such as "
            "F.scaled_dot_product_attention and fused norm/activation kernels).";
  remedy[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(remedy[0])));
  f.remedy = remedy;
  out.findings.push_back(std::move(f));
  return out;
}

}  // namespace

Detector fusion_opportunity_detector() {
  return split_detector<Part>(kName, Category::kFusionOpportunity, collect, finish);
}

}  // namespace stepscope::diagnose
