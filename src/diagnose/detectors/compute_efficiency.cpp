// compute_efficiency: kernels that run slower than the GPU allows. Four
// disjoint parts, each an upper bound from kernel time and the peak table:
//   SIMT matmuls    - GEMM/conv kernels on the FFMA path (TF32 off, FP32):
//                     their exposed time times (1 - fp32 peak / bf16 peak);
//   FP32 on TF32    - tensor-core matmul, attention and convolution kernels
//                     launched by ops computing in float32: kernel time times
//                     (1 - tf32 peak / bf16 peak), what bf16 offers;
//   FP32 model, the rest - when most matmul time is FP32 (the model itself
//                     computes in FP32), its other computation kernels of
//                     float32 ops outside the optimizer: half their time, as
//                     bf16 moves half the bytes of these memory-bound kernels;
//   slow matmuls    - bf16/fp16/fp8 matmuls whose achieved TFLOP/s (FLOPs
//                     from the recorded shapes) is below
//                     options.matmul_efficient_fraction of the dense peak:
//                     time above running at that fraction.
// Each step's sum is then capped at the time the host waited for the GPU in
// it (host_wait.h): in a host-bound step faster kernels save nothing.
// Low-occupancy kernels are listed as evidence only: occupancy bounds no time.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "diagnose/detector_support.h"
#include "diagnose/detectors/detectors.h"
#include "diagnose/part_json.h"
#include "diagnose/host_wait.h"
#include "diagnose/launch_precision.h"
#include "diagnose/matmul_path.h"
#include "diagnose/op_args.h"
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using model::GpuPeaks;
using model::matmul_peak_tflops;

using analysis::add_into;
namespace {

constexpr const char* kName = "compute_efficiency";
// bf16 holds a value in half the bytes of float32, so a memory-bound kernel
// moved to bf16 takes at most this fraction of its time less.
constexpr double kBf16ByteSaving = 0.5;

// Innermost matmul op enclosing a launch on its thread, or kNoRow.
uint32_t matmul_op_of_launch(const RankView& r, uint32_t launch_row) {
  if (launch_row == HostTree::kNoRow) return HostTree::kNoRow;
  for (uint32_t p = r.tree->parent(launch_row); p != HostTree::kNoRow; p = r.tree->parent(p))
    if (r.store->events.kind[p] == trace::EventKind::kCpuOp && is_matmul_op(r.store->name_of(p))) return p;
  return HostTree::kNoRow;
}

bool is_float32(std::string_view t) { return t == "float" || t == "float32"; }

// Exact sums of FLOPs (integers up to ~1e15 per matmul, beyond int64 over
// a run), so merging ranks in any grouping gives the same total.
using FlopSum = Count128;
FlopSum as_flops(double f) { return {static_cast<__int128>(std::llround(f))}; }

struct KernelTotal {
  int64_t ns = 0;
  int64_t calls = 0;
  uint32_t row = 0;  // the last launch seen on the rank (while collecting)
  Example where;     // the last launch seen, for the example
};

struct MatmulGroup {  // one (op, shapes, dtype) signature
  std::string op, dims, dtype;
  FlopSum flops;
  int64_t ns = 0;
  int64_t calls = 0;
  double peak = 0;
  Example where;  // its first op (the first rank's)
};

// What the finding needs of one rank, and of several merged.
struct Part : FindingPart {
  int64_t simt_ns = 0, float_tc_ns = 0, float_other_ns = 0, slow_ns_saved = 0, steps_total = 0, matmul_ns = 0;
  // The parts' savings, summed from each step's (whole ns, as the saving).
  int64_t simt_saving_ns = 0, float_saving_ns = 0, float_other_saving_ns = 0;
  int64_t beyond_wait_ns = 0, compute_ns = 0, low_occ_ns = 0, all_flop_ns = 0;
  FlopSum all_flops;
  bool fp32_model = false, any_dims = false, any_types = false, any_occupancy = false, unknown_peaks = false;
  // Every rank's GPU is known and its tensor cores take FP16 only (Volta,
  // Turing: no TF32, no bf16): the remedy is FP16 autocast, not TF32 / bf16.
  bool fp16_only_tensor_cores = true;
  std::map<std::string, KernelTotal> simt_kernels, low_occ_kernels;
  std::map<std::string, MatmulGroup> groups;

  static void add_kernels(std::map<std::string, KernelTotal>& to, const std::map<std::string, KernelTotal>& from) {
    for (const auto& [name, t] : from) {
      KernelTotal& m = to[name];
      add_into(m.ns, t.ns);
      m.calls += t.calls;
      m.where = t.where;  // the later rank's launch, as one pass over the ranks keeps the last
    }
  }
  void set_rank(int64_t rank) {
    FindingPart::set_rank(rank);
    for (auto* kernels : {&simt_kernels, &low_occ_kernels})
      for (auto& [name, t] : *kernels) t.where.rank = rank;
    for (auto& [key, g] : groups) g.where.rank = rank;
  }
  void merge(const Part& o) {
    merge_common(o);
    for (auto [to, from] :
         {std::pair{&simt_ns, o.simt_ns}, {&float_tc_ns, o.float_tc_ns}, {&float_other_ns, o.float_other_ns},
          {&slow_ns_saved, o.slow_ns_saved}, {&steps_total, o.steps_total}, {&matmul_ns, o.matmul_ns},
          {&simt_saving_ns, o.simt_saving_ns}, {&float_saving_ns, o.float_saving_ns},
          {&float_other_saving_ns, o.float_other_saving_ns}, {&beyond_wait_ns, o.beyond_wait_ns},
          {&compute_ns, o.compute_ns}, {&low_occ_ns, o.low_occ_ns}, {&all_flop_ns, o.all_flop_ns}})
      add_into(*to, from);
    all_flops += o.all_flops;
    fp32_model = fp32_model || o.fp32_model;
    any_dims = any_dims || o.any_dims;
    any_types = any_types || o.any_types;
    any_occupancy = any_occupancy || o.any_occupancy;
    unknown_peaks = unknown_peaks || o.unknown_peaks;
    fp16_only_tensor_cores = fp16_only_tensor_cores && o.fp16_only_tensor_cores;
    add_kernels(simt_kernels, o.simt_kernels);
    add_kernels(low_occ_kernels, o.low_occ_kernels);
    for (const auto& [key, g] : o.groups) {
      auto [it, fresh] = groups.try_emplace(key, g);
      if (fresh) continue;
      it->second.flops += g.flops;
      add_into(it->second.ns, g.ns);
      it->second.calls += g.calls;
    }
  }
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(KernelTotal, ns, calls, where)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MatmulGroup, op, dims, dtype, flops, ns, calls, peak, where)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Part, saving, examples, replay, simt_ns, float_tc_ns, float_other_ns, slow_ns_saved,
                                   steps_total, matmul_ns, simt_saving_ns, float_saving_ns, float_other_saving_ns,
                                   beyond_wait_ns, compute_ns, low_occ_ns, all_flop_ns, all_flops, fp32_model,
                                   any_dims, any_types, any_occupancy, unknown_peaks, fp16_only_tensor_cores,
                                   simt_kernels, low_occ_kernels, groups)

Part collect(const RankContext& rc) {
  const RankView& r = *rc.view;
  const DiagnoseOptions& opt = *rc.options;
  const RankAttribution& a = *r.attribution;
  Part out;
  std::vector<int64_t> saving(a.steps.size(), 0);
  out.steps_total = static_cast<int64_t>(a.steps.size());
  const GpuPeaks* peaks = r.peaks;
  if (!peaks) out.unknown_peaks = true;
  if (!peaks || peaks->tf32_tflops > 0 || peaks->bf16_tflops > 0 || peaks->fp16_tflops <= 0)
    out.fp16_only_tensor_cores = false;
  OpArgReader args(*r.store);
  MatmulPathCache paths(r.store->strings);
  LaunchPrecisionReader precision(*r.store, *r.tree, args);
  out.any_dims = args.has_shapes();
  const trace::StringId occ_key = r.store->strings.find("est. achieved occupancy %");
  // Target rate for a matmul fixed to tensor cores: bf16 where the chip has it.
  double target = peaks ? std::max({peaks->bf16_tflops, peaks->fp16_tflops, peaks->tf32_tflops}) : 0;
  auto count_kernel = [&](std::map<std::string, KernelTotal>& m, std::string_view name, const analysis::GpuActivity& act) {
    KernelTotal& t = m[std::string(name)];
    add_into(t.ns, act.duration_ns());
    ++t.calls;
    t.row = act.row;
  };

  // SIMT: the exposed (attributed) SIMT time of each step.
  if (peaks && target > peaks->fp32_tflops)
    for (size_t k = 0; k < a.steps.size(); ++k) {
      const auto s = static_cast<int64_t>(static_cast<double>(a.steps[k].of(Bucket::kComputeSimtMatmul)) *
                                          (1.0 - peaks->fp32_tflops / target));
      add_into(saving[k], s);
      add_into(out.simt_saving_ns, s);
    }

  struct OpTime {
    int64_t ns = 0;      // matmul kernel time launched by the op
    int32_t step = 0;    // attribution step index
    bool simt = false;   // any of its kernels on the SIMT path (covered by the SIMT part)
    std::vector<uint32_t> rows;  // its kernels (store rows)
  };
  // The remedy on this rank: each priced kernel runs at the rate its
  // saving assumes (docs/whatif.md, "Remedies").
  RankRemedy fix{r.store->rank, {}};
  const bool tf32_below_bf16 = peaks && peaks->tf32_tflops > 0 && peaks->bf16_tflops > peaks->tf32_tflops;
  std::unordered_map<uint32_t, OpTime> op_ns;  // matmul op row -> its kernels
  std::vector<int64_t> float_tc_step(a.steps.size(), 0);
  int64_t rank_matmul_ns = 0, rank_fp32_matmul_ns = 0;
  for (const auto& act : r.timeline->activities) {
    if (act.kind != trace::EventKind::kKernel) continue;
    int32_t si = step_index_at(a, act.start_ns);
    if (si < 0) continue;
    std::string_view name = r.store->strings.get(act.name);
    if (act.cls == analysis::KernelClass::kComputation) {
      add_into(out.compute_ns, act.duration_ns());
      if (occ_key != trace::StringTable::kMissing) {
        if (auto occ = r.store->arg_number(act.row, occ_key)) {
          out.any_occupancy = true;
          if (*occ < opt.low_occupancy_pct) {
            add_into(out.low_occ_ns, act.duration_ns());
            count_kernel(out.low_occ_kernels, name, act);
          }
        }
      }
    }
    MatmulPath path = paths.of(act.name, act.family);
    if (path == MatmulPath::kNotMatmul) continue;
    add_into(out.matmul_ns, act.duration_ns());
    add_into(rank_matmul_ns, act.duration_ns());
    if (path == MatmulPath::kSimt) add_into(rank_fp32_matmul_ns, act.duration_ns());
    if (path == MatmulPath::kTensorCore && precision.of_matmul(act.name, act.launch_row) == OpFloat::kFloat32) {
      if (tf32_below_bf16) fix.remedy.gpu_scale.push_back({act.row, peaks->tf32_tflops / peaks->bf16_tflops});
      add_into(float_tc_step[static_cast<size_t>(si)], act.duration_ns());
      add_into(rank_fp32_matmul_ns, act.duration_ns());
    }
    if (path == MatmulPath::kSimt) {
      if (peaks && target > peaks->fp32_tflops) fix.remedy.gpu_scale.push_back({act.row, peaks->fp32_tflops / target});
      add_into(out.simt_ns, act.duration_ns());
      count_kernel(out.simt_kernels, name, act);
    }
    uint32_t op = matmul_op_of_launch(r, act.launch_row);
    if (op == HostTree::kNoRow) continue;
    OpTime& slot = op_ns[op];
    add_into(slot.ns, act.duration_ns());
    slot.step = si;
    slot.simt = slot.simt || path == MatmulPath::kSimt;
    slot.rows.push_back(act.row);
  }

  for (const auto& [op, entry] : op_ns) {
    if (entry.simt) continue;
    const int64_t ns = entry.ns;
    const int32_t si = entry.step;
    OpArgs oa = args.read(op);
    if (!oa.types.empty()) out.any_types = true;
    std::string dtype = oa.types.empty() ? std::string() : oa.types.front();
    std::string_view op_name = r.store->name_of(op);
    auto flops = matmul_flops(op_name, oa.shapes);
    if (!flops || *flops <= 0 || ns <= 0) continue;
    out.all_flops += as_flops(*flops);
    add_into(out.all_flop_ns, ns);
    double peak = peaks ? matmul_peak_tflops(*peaks, dtype, true) : 0;
    std::string key = fmt::format("{}|{}|{}", op_name, oa.dims_text, dtype);
    MatmulGroup& g = out.groups[key];
    if (g.calls == 0) {
      g.op = std::string(op_name);
      g.dims = oa.dims_text;
      g.dtype = dtype;
      g.peak = peak;
      g.where = example_of_row(r, op, "");
    }
    g.flops += as_flops(*flops);
    add_into(g.ns, ns);
    ++g.calls;
    // Shape-limited matmuls of low-precision types (FP32 is covered above).
    if (peak > 0 && !is_float32(dtype)) {
      double floor_ns = *flops / (opt.matmul_efficient_fraction * peak * 1e3);
      if (static_cast<double>(ns) > floor_ns) {
        int64_t s = static_cast<int64_t>(static_cast<double>(ns) - floor_ns);
        for (uint32_t row : entry.rows) fix.remedy.gpu_scale.push_back({row, floor_ns / static_cast<double>(ns)});
        add_into(saving[static_cast<size_t>(si)], s);
        add_into(out.slow_ns_saved, s);
      }
    }
  }

  // FP32 on tensor cores, and the rest of an FP32 model's work.
  const bool rank_fp32_model =
      rank_matmul_ns > 0 &&
      static_cast<double>(rank_fp32_matmul_ns) >= opt.fp32_model_matmul_share * static_cast<double>(rank_matmul_ns);
  out.fp32_model = rank_fp32_model;
  // An FP32 model's other computation kernels, read only for such a model:
  // resolving every kernel's launching op costs a lookup per kernel.
  std::vector<int64_t> float_other_step(a.steps.size(), 0);
  if (rank_fp32_model)
    for (const auto& act : r.timeline->activities) {
      if (act.kind != trace::EventKind::kKernel || act.cls != analysis::KernelClass::kComputation) continue;
      if (paths.of(act.name, act.family) != MatmulPath::kNotMatmul) continue;
      int32_t si = step_index_at(a, act.start_ns);
      if (si < 0) continue;
      LaunchPrecision p = precision.of_launch(act.launch_row);
      // The optimizer keeps FP32 master weights under mixed precision.
      if (p.type == OpFloat::kFloat32 && !p.in_optimizer) {
        add_into(float_other_step[static_cast<size_t>(si)], act.duration_ns());
        if (peaks && peaks->bf16_tflops > 0) fix.remedy.gpu_scale.push_back({act.row, 1.0 - kBf16ByteSaving});
      }
    }
  for (size_t k = 0; k < a.steps.size(); ++k) {
    add_into(out.float_tc_ns, float_tc_step[k]);
    if (tf32_below_bf16) {
      const auto s = static_cast<int64_t>(static_cast<double>(float_tc_step[k]) *
                                          (1.0 - peaks->tf32_tflops / peaks->bf16_tflops));
      add_into(saving[k], s);
      add_into(out.float_saving_ns, s);
    }
    if (!rank_fp32_model) continue;
    add_into(out.float_other_ns, float_other_step[k]);
    if (peaks && peaks->bf16_tflops > 0) {  // a GPU with bf16 at all
      const auto s = static_cast<int64_t>(static_cast<double>(float_other_step[k]) * kBf16ByteSaving);
      add_into(saving[k], s);
      add_into(out.float_other_saving_ns, s);
    }
  }
  if (!fix.remedy.empty()) out.remedies.push_back(std::move(fix));
  for (auto* kernels : {&out.simt_kernels, &out.low_occ_kernels})
    for (auto& [name, t] : *kernels) t.where = example_of_row(r, t.row, "");
  // Faster kernels shorten a step only where the host waited for them.
  out.beyond_wait_ns = cap_at_host_wait(r, saving);
  out.saving = RankSaving::of(r, saving);
  return out;
}

DetectorOutput finish(const Part& p, const JobContext& job) {
  DetectorOutput out;
  const DiagnoseOptions& opt = *job.options;
  const double steps = static_cast<double>(std::max<int64_t>(1, p.steps_total));
  const int64_t simt_ns = p.simt_ns, float_tc_ns = p.float_tc_ns, float_other_ns = p.float_other_ns;
  const int64_t slow_ns_saved = p.slow_ns_saved;
  const auto simt_saving_ns = static_cast<double>(p.simt_saving_ns);
  const auto float_saving_ns = static_cast<double>(p.float_saving_ns);
  const auto float_other_saving_ns = static_cast<double>(p.float_other_saving_ns);
  if (!p.any_dims)
    out.not_assessed.push_back({kName, "achieved TFLOP/s of matmuls",
                                "no operator shapes in the trace (profile with record_shapes=True)"});
  else if (!p.any_types)
    out.not_assessed.push_back({kName, "matmul dtypes (fp32 where bf16 would do)", "no \"Input type\" on operators"});
  if (p.unknown_peaks && (simt_ns > 0 || p.matmul_ns > 0))
    out.not_assessed.push_back({kName, "savings of slow matmuls",
                                "the GPU is not in the hardware table, so no peak bounds the achievable rate"});
  if (!p.any_occupancy && p.compute_ns > 0)
    out.not_assessed.push_back({kName, "kernel occupancy", "kernels carry no \"est. achieved occupancy %\""});

  double total_saving = simt_saving_ns + float_saving_ns + float_other_saving_ns + static_cast<double>(slow_ns_saved);
  if (total_saving <= 0 && simt_ns == 0) return out;

  Finding f;
  f.category = Category::kComputeEfficiency;
  f.detector = kName;
  p.fill(f);
  auto& m = f.evidence.metrics;
  m.push_back({"matmul_kernel_us_per_step", static_cast<double>(p.matmul_ns) / steps / 1e3, "us"});
  m.push_back({"simt_matmul_us_per_step", static_cast<double>(simt_ns) / steps / 1e3, "us"});
  m.push_back({"fp32_tensor_core_matmul_us_per_step", static_cast<double>(float_tc_ns) / steps / 1e3, "us"});
  if (p.fp32_model)
    m.push_back({"fp32_other_kernel_us_per_step", static_cast<double>(float_other_ns) / steps / 1e3, "us"});
  if (p.all_flop_ns > 0)
    m.push_back({"matmul_achieved_tflops", p.all_flops.as_double() / static_cast<double>(p.all_flop_ns) / 1e3,
                 "TFLOP/s"});
  m.push_back({"slow_matmul_excess_us_per_step", static_cast<double>(slow_ns_saved) / steps / 1e3, "us"});
  m.push_back({"saving_beyond_host_wait_us_per_step", static_cast<double>(p.beyond_wait_ns) / steps / 1e3, "us"});
  if (p.compute_ns > 0)
    m.push_back({"low_occupancy_kernel_time_pct",
                 100.0 * static_cast<double>(p.low_occ_ns) / static_cast<double>(p.compute_ns), "%"});

  auto example = [](const Example& where, std::string detail) {
    Example e = where;
    e.detail = std::move(detail);
    return e;
  };
  std::vector<WeightedExample> ex;
  for (const auto& [name, t] : p.simt_kernels)
    ex.push_back({static_cast<double>(t.ns) * 4,  // SIMT kernels first: they are the cause named in the title
                  example(t.where, fmt::format("SIMT/FFMA matmul: {} calls, {} per step", t.calls,
                                               human_time(static_cast<double>(t.ns) / steps)))});
  for (const auto& [key, g] : p.groups) {
    if (g.peak <= 0) continue;
    double achieved = g.flops.as_double() / static_cast<double>(g.ns) / 1e3;
    if (achieved >= opt.matmul_efficient_fraction * g.peak && !is_float32(g.dtype)) continue;
    ex.push_back({static_cast<double>(g.ns) * (1.0 - achieved / g.peak),
                  example(g.where, fmt::format("{} {}: {:.0f} TFLOP/s = {:.0f}% of the {:.0f} TFLOP/s peak, {} calls",
                                               g.dtype, g.dims, achieved, 100.0 * achieved / g.peak, g.peak,
                                               g.calls))});
  }
  for (const auto& [name, t] : p.low_occ_kernels)
    if (ex.size() < kMaxExamples)
      ex.push_back({0, example(t.where, fmt::format("occupancy below {:.0f}%: {} calls, {} per step",
                                                    opt.low_occupancy_pct, t.calls,
                                                    human_time(static_cast<double>(t.ns) / steps)))});
  f.evidence.examples = top_examples(std::move(ex));

  std::vector<std::string> remedies;
  if (simt_saving_ns >= float_saving_ns && simt_saving_ns >= static_cast<double>(slow_ns_saved) && simt_ns > 0) {
    f.title = fmt::format("Matmuls run on the FP32 SIMT path without tensor cores: {} per step",
                          human_time(static_cast<double>(simt_ns) / steps));
    f.confidence = Confidence::kHigh;
  } else if (float_saving_ns + float_other_saving_ns >= static_cast<double>(slow_ns_saved)) {
    if (float_other_ns > 0)
      f.title = fmt::format("The model computes in FP32: TF32 matmuls {} and other FP32 kernels {} per step, "
                            "which bf16 runs at twice the matmul peak and with half the bytes",
                            human_time(static_cast<double>(float_tc_ns) / steps),
                            human_time(static_cast<double>(float_other_ns) / steps));
    else
      f.title = fmt::format("FP32 matmuls on TF32 tensor cores ({} per step): bf16 doubles the peak",
                            human_time(static_cast<double>(float_tc_ns) / steps));
    f.confidence = Confidence::kMedium;
  } else {
    f.title = fmt::format("Matmuls below {:.0f}% of the GPU's peak: {} per step above that rate",
                          100 * opt.matmul_efficient_fraction, human_time(static_cast<double>(slow_ns_saved) / steps));
    f.confidence = Confidence::kMedium;
  }
  if (p.fp16_only_tensor_cores && (float_tc_ns > 0 || simt_ns > 0 || float_other_ns > 0))
    remedies.push_back("this GPU's tensor cores take FP16 only (no TF32 or bf16): run the model in mixed precision "
                       "with torch.autocast(device_type='cuda', dtype=torch.float16) and torch.amp.GradScaler so "
                       "matmuls and convolutions use the tensor cores");
  else {
    if (simt_ns > 0)
      remedies.push_back("enable TF32 for FP32 matmuls and convolutions (torch.set_float32_matmul_precision('high'), "
                         "torch.backends.cudnn.allow_tf32 = True) or, better, train in bf16");
    if (float_tc_ns > 0 || simt_ns > 0 || float_other_ns > 0)
      remedies.push_back("run the model in bf16 with torch.autocast(device_type='cuda', dtype=torch.bfloat16) (or "
                         "bf16 parameters) so matmuls use the full tensor-core rate");
  }
  if (slow_ns_saved > 0)
    remedies.push_back("make matmul dimensions multiples of 64 (128 on Hopper) and large enough to fill every SM "
                       "(larger batch, fused projections), and try torch.compile(mode='max-autotune') for better "
                       "kernels");
  std::string r;
  for (size_t i = 0; i < remedies.size(); ++i) r += (i ? "; " : "") + remedies[i];
  r[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(r[0])));
  f.remedy = r + ".";
  out.findings.push_back(std::move(f));
  return out;
}

}  // namespace

Detector compute_efficiency_detector() {
  return split_detector<Part>(kName, Category::kComputeEfficiency, collect, finish);
}

}  // namespace stepscope::diagnose
