// recomputed_constants: tables that depend on no input, such as RoPE cos/sin
// or ALiBi slopes, rebuilt every layer and every step. A rebuild is a chain of
// sibling ops on one thread that starts at a tensor factory with only scalar
// inputs (aten::arange / linspace / logspace), continues through ops whose
// tensor inputs are at most 2-D (tables, not batched activations) and that
// are not matmuls, and contains real math (pow, exp, sin, cos, outer, ...).
// A chain whose exact ops, shapes and scalar arguments occur at least twice
// in one rank's profiled steps is a recomputed constant: caching it removes
// every occurrence. (Each rank is judged alone: a table built once on each
// of several ranks is built once per process.) Saving per step: the occurrences' GPU kernel time plus their
// host time as far as host-caused GPU idle follows them in the step (host
// time saved shortens the step only while the GPU waits on the host); that
// idle is claimed from host_overhead.
#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "diagnose/detector_support.h"
#include "diagnose/detectors/detectors.h"
#include "diagnose/part_json.h"
#include "diagnose/host_delay.h"
#include "diagnose/op_args.h"
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;
namespace {

constexpr const char* kName = "recomputed_constants";
constexpr size_t kMaxChain = 64;  // ops; longer runs are model code, not a table

bool is_factory(std::string_view n) { return n == "aten::arange" || n == "aten::linspace" || n == "aten::logspace"; }

bool is_table_math(std::string_view n) {
  return n == "aten::sin" || n == "aten::cos" || n == "aten::exp" || n == "aten::pow" || n == "aten::outer" ||
         n == "aten::polar" || n == "aten::log" || n == "aten::reciprocal" || n == "aten::rsqrt" ||
         n == "aten::sqrt" || n == "aten::einsum" || n == "aten::exp2" || n == "aten::sigmoid";
}

bool ends_chain(std::string_view n) {
  return is_matmul_op(n) || n.find("attention") != std::string_view::npos || n.find("conv") != std::string_view::npos ||
         n == "aten::embedding" || n.find("layer_norm") != std::string_view::npos;
}

bool scalar_inputs_only(const OpArgs& a) {
  for (const InputShape& s : a.shapes)
    if (s.list || !s.dims.empty()) {
      // arange.start_out's empty out tensor ([0]) is still no input data.
      if (!s.list && s.numel() == 0) continue;
      return false;
    }
  return a.has_dims;
}

bool table_sized(const OpArgs& a) {
  for (const InputShape& s : a.shapes)
    if (!s.list && s.dims.size() > 2) return false;
  return true;
}

struct Occurrence {
  uint32_t step_index = 0;
  uint32_t first_row = 0;
  int64_t start_ns = 0, end_ns = 0;
  size_t ops = 0;
  std::string first, last;
  int64_t gpu_ns = 0;
  std::vector<uint32_t> kernel_rows;  // GPU work it launched (store rows)
};

// A rebuilt table over the ranks that rebuild it: its first rebuild (the
// first such rank's) and how many times it was built.
struct Table {
  Example first;  // detail filled in at the end
  std::string first_op, last_op;
  size_t ops = 0;
  int64_t host_ns = 0;  // of the first rebuild
  int64_t rebuilds = 0;
};

// What the finding needs of one rank, and of several merged.
struct Part : FindingPart {
  bool any_shapes = false;
  int64_t host_total = 0, gpu_total = 0, idle_total = 0, occurrences = 0, steps_total = 0;
  std::map<std::string, Table> tables;  // by signature

  void merge(const Part& o) {
    merge_common(o);
    any_shapes = any_shapes || o.any_shapes;
    for (auto [to, from] : {std::pair{&host_total, o.host_total}, {&gpu_total, o.gpu_total},
                            {&idle_total, o.idle_total}, {&occurrences, o.occurrences},
                            {&steps_total, o.steps_total}})
      add_into(*to, from);
    for (const auto& [sig, t] : o.tables) {
      auto [it, fresh] = tables.try_emplace(sig, t);
      if (!fresh) add_into(it->second.rebuilds, t.rebuilds);
    }
  }
  void set_rank(int64_t rank) {
    FindingPart::set_rank(rank);
    for (auto& [sig, t] : tables) t.first.rank = rank;
  }
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Table, first, first_op, last_op, ops, host_ns, rebuilds)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Part, saving, examples, replay, any_shapes, host_total, gpu_total, idle_total,
                                   occurrences, steps_total, tables)

Part collect(const RankContext& rc) {
  const RankView& r = *rc.view;
  const RankAttribution& attribution = *r.attribution;
  Part out;
  std::vector<int64_t> saving(attribution.steps.size(), 0);
  out.saving = RankSaving::of(r, saving);  // none unless a table is rebuilt
  out.steps_total = static_cast<int64_t>(attribution.steps.size());
  const auto& ev = r.store->events;
  OpArgReader args(*r.store);
  if (!args.has_shapes()) return out;
  out.any_shapes = true;
  std::map<std::string, std::vector<Occurrence>> by_signature;
  std::map<int64_t, int64_t> chain_end_by_tid;  // a factory op inside an earlier chain starts none
  for (uint32_t row : r.store->cpu_op_rows) {
    std::string_view name = r.store->name_of(row);
    if (!is_factory(name)) continue;
    if (ev.ts_ns[row] < chain_end_by_tid[ev.tid[row]]) continue;
    uint32_t parent = r.tree->parent(row);
    if (parent != HostTree::kNoRow && is_factory(r.store->name_of(parent))) continue;  // inner overload call
    int32_t si = step_index_at(attribution, ev.ts_ns[row]);
    if (si < 0) continue;
    OpArgs fa = args.read(row);
    if (!scalar_inputs_only(fa)) continue;
    // Siblings after the factory op.
    std::span<const uint32_t> sib = r.tree->siblings(row);
    uint32_t at = r.tree->sibling_index(row);
    if (at == HostTree::kNoRow || at >= sib.size()) continue;
    auto pos = sib.begin() + at;
    std::string signature;
    Occurrence o;
    o.step_index = static_cast<uint32_t>(si);
    o.first_row = row;
    o.start_ns = ev.ts_ns[row];
    o.first = std::string(name);
    bool math = false;
    int64_t window_end = attribution.steps[static_cast<size_t>(si)].end_ns;
    for (auto it = pos; it != sib.end() && o.ops < kMaxChain; ++it) {
      uint32_t sr = *it;
      if (ev.kind[sr] != trace::EventKind::kCpuOp || ev.tid[sr] != ev.tid[row] || ev.ts_ns[sr] >= window_end) break;
      std::string_view sn = r.store->name_of(sr);
      if (!sn.starts_with("aten::") || ends_chain(sn)) break;
      OpArgs sa = it == pos ? fa : args.read(sr);
      if (!table_sized(sa)) break;
      math = math || is_table_math(sn);
      signature += fmt::format("{}{}{};", sn, sa.dims_text, sa.concrete_text);
      o.end_ns = std::max(o.end_ns, ev.ts_ns[sr] + ev.dur_ns[sr]);
      o.last = std::string(sn);
      ++o.ops;
    }
    if (!math || o.ops < 2) continue;
    chain_end_by_tid[ev.tid[row]] = o.end_ns;
    by_signature[signature].push_back(o);
  }

  // Repeated chains only; their kernels' GPU time.
  std::vector<Occurrence*> repeated;
  for (auto& [sig, occ] : by_signature)
    if (occ.size() >= 2)
      for (Occurrence& o : occ) repeated.push_back(&o);
  if (repeated.empty()) return out;
  std::sort(repeated.begin(), repeated.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
  for (const auto& act : r.timeline->activities) {
    if (!act.has_launch()) continue;
    auto it = std::upper_bound(repeated.begin(), repeated.end(), act.launch_start_ns,
                               [](int64_t t, const Occurrence* o) { return t < o->start_ns; });
    if (it == repeated.begin()) continue;
    Occurrence* o = *(it - 1);
    if (act.launch_start_ns <= o->end_ns) {
      add_into(o->gpu_ns, act.duration_ns());
      o->kernel_rows.push_back(act.row);
    }
  }

  // Per step: the rebuilds' GPU time plus their host time, the latter only as
  // far as host-caused GPU idle follows each rebuild in its step (removing
  // host work shortens the step only while the GPU waits on the host). That
  // idle is claimed, so host_overhead does not offer it again.
  std::vector<HostDelay> delays;
  // The remedy on this rank: the tables are built once before the loop, so
  // each rebuild's host time and GPU work leave the steps.
  RankRemedy fix{r.store->rank, {}};
  for (const Occurrence* o : repeated) {
    fix.remedy.host_removed.push_back({o->start_ns, o->end_ns});
    for (uint32_t row : o->kernel_rows) fix.remedy.gpu_scale.push_back({row, 0.0});
    delays.push_back({o->start_ns, o->step_index, o->end_ns - o->start_ns});
    add_into(saving[o->step_index], o->gpu_ns);
    add_into(out.host_total, o->end_ns - o->start_ns);
    add_into(out.gpu_total, o->gpu_ns);
    ++out.occurrences;
  }
  out.idle_total = claim_idle_after(rc, std::move(delays), saving, out.claims);
  if (!fix.remedy.empty()) out.remedies.push_back(std::move(fix));
  for (const auto& [sig, occ] : by_signature) {
    if (occ.size() < 2) continue;
    const Occurrence& o = occ.front();
    Table t;
    t.first = example_of_row(r, o.first_row, "");
    t.first.dur_ns = o.end_ns - o.start_ns;
    t.first_op = o.first;
    t.last_op = o.last;
    t.ops = o.ops;
    t.host_ns = o.end_ns - o.start_ns;
    t.rebuilds = static_cast<int64_t>(occ.size());
    out.tables.emplace(sig, std::move(t));
  }
  out.saving = RankSaving::of(r, saving);
  return out;
}

DetectorOutput finish(const Part& p, const JobContext&) {
  DetectorOutput out;
  if (!p.any_shapes) {
    out.not_assessed.push_back({kName, "tables rebuilt every layer or step",
                                "no operator shapes and scalar arguments (profile with record_shapes=True): identical "
                                "rebuilds cannot be recognised"});
    return out;
  }
  if (p.tables.empty()) return out;

  Finding f;
  f.category = Category::kRecomputedConstants;
  f.detector = kName;
  f.confidence = Confidence::kMedium;
  p.fill(f);
  double steps = static_cast<double>(std::max<int64_t>(1, p.steps_total));
  std::vector<WeightedExample> ex;
  for (const auto& [sig, t] : p.tables) {
    Example e = t.first;
    e.detail = fmt::format("{} -> ... -> {} ({} ops) rebuilt {} times in the profiled steps; {} of host time each",
                           t.first_op, t.last_op, t.ops, t.rebuilds, human_time(static_cast<double>(t.host_ns)));
    ex.push_back({static_cast<double>(t.rebuilds) * static_cast<double>(t.host_ns), std::move(e)});
  }
  f.title = fmt::format("{} constant table(s) rebuilt {:.0f} times per step: {} of host and {} of GPU time per step",
                        p.tables.size(), static_cast<double>(p.occurrences) / steps,
                        human_time(static_cast<double>(p.host_total) / steps),
                        human_time(static_cast<double>(p.gpu_total) / steps));
  auto& m = f.evidence.metrics;
  m.push_back({"distinct_tables", static_cast<double>(p.tables.size()), "count"});
  m.push_back({"rebuilds_per_step", static_cast<double>(p.occurrences) / steps, "count"});
  m.push_back({"rebuild_host_us_per_step", static_cast<double>(p.host_total) / steps / 1e3, "us"});
  m.push_back({"rebuild_gpu_us_per_step", static_cast<double>(p.gpu_total) / steps / 1e3, "us"});
  m.push_back({"host_idle_claimed_us_per_step", static_cast<double>(p.idle_total) / steps / 1e3, "us"});
  f.evidence.examples = top_examples(std::move(ex));
  f.remedy = "Build the table once and reuse it: compute the cos/sin (RoPE) or similar tables in __init__ with "
             "self.register_buffer('cos', ..., persistent=False), or cache them per sequence length on the module, "
             "and share one cache across layers instead of calling arange/pow/outer/cos/sin in every forward.";
  out.findings.push_back(std::move(f));
  return out;
}

}  // namespace

Detector recomputed_constants_detector() {
  return split_detector<Part>(kName, Category::kRecomputedConstants, collect, finish);
}

}  // namespace stepscope::diagnose
