// bench_plan_search: how many parallel layouts `stepscope plan` scores per
// second, two ways:
//   BM_ConfigSearch            a small closed-form evaluator (compute split
//                              over GPUs, bubble, TP/DP traffic, memory by
//                              sharding and recompute): the cost of the
//                              enumeration, validity filter and top-k alone;
//   BM_ConfigSearchRealModels  the planner's memory and step-time models
//                              (search_evaluator.h) on GPT-3 175B, H100 SXM.
// The space: micro-batches up to 128 (divisors of the batch), virtual stages
// up to 12, cp up to 32, every recompute and sharding, SP and CPU offload.
//
//   build/bench/bench_plan_search [--benchmark_repetitions=N]
#include <benchmark/benchmark.h>

#include "plan/config_search.h"
#include "plan/search_evaluator.h"

using namespace stepscope::model;
using namespace stepscope::plan;

namespace {

Evaluation closed_form(const ParallelConfig& c, const SearchSpace& s) {
  const double m = double(s.global_batch) / (c.dp * c.micro_batch);
  const double compute = 1e3 / c.gpus() * (c.recompute == Recompute::kFull ? 1.33 : c.recompute == Recompute::kSelective ? 1.03 : 1.0);
  const double bubble = (c.pp - 1) / (m * c.vpp);
  const double comm = 0.02 * (c.tp - 1) + 0.5 / c.dp * (c.sharding >= Sharding::kZero3 ? 1.5 : 1.0) + (c.cpu_offload ? 0.3 : 0.0);
  const double weights = (c.cpu_offload ? 4e9 : 16e9) * 70 / (c.tp * c.pp) / (c.sharding >= Sharding::kZero3 ? c.dp : 1);
  const double acts = 2e9 * c.micro_batch / (c.tp * c.cp) * (c.recompute == Recompute::kFull ? 0.1 : 1.0);
  const double mem = weights + acts;
  return {mem <= 80e9, compute * (1 + bubble) + comm, mem};
}

void widen(SearchSpace& s) {
  s.micro_batches = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};
  s.vpps = {1, 2, 3, 4, 6, 8, 12};
  s.max_cp = 32;
  s.try_cpu_offload = true;
  // All three policies, as when docs/performance.md was measured: under flash
  // attention search_space_for leaves selective out (it equals none there).
  s.recomputes = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
}

SearchSpace space_for(int gpus) {
  SearchSpace s;
  s.gpus = gpus;
  s.gpus_per_node = 8;
  s.layers = 96;
  s.attention_heads = 96;
  s.sequence_length = 8192;
  s.global_batch = 6144;
  widen(s);
  return s;
}

void BM_ConfigSearch(benchmark::State& state) {
  const SearchSpace s = space_for(static_cast<int>(state.range(0)));
  int64_t candidates = 0;
  for (auto _ : state) {
    const SearchResult r = search_configs(s, [&s](const ParallelConfig& c) { return closed_form(c, s); }, 10);
    candidates = r.candidates;
    benchmark::DoNotOptimize(r.top.data());
  }
  state.counters["candidates"] = static_cast<double>(candidates);
  state.counters["candidates_per_s"] =
      benchmark::Counter(static_cast<double>(candidates), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ConfigSearch)->Arg(1536)->Arg(3072)->Arg(6144)->Arg(12288)->Unit(benchmark::kMillisecond);

void BM_ConfigSearchRealModels(benchmark::State& state) {
  const ModelSpec model = *find_model_preset("gpt3-175b");
  TrainingSettings settings;
  settings.global_batch = 6144;
  ClusterSpec cluster;
  cluster.gpu = *find_gpu("h100-sxm");
  cluster.gpus = static_cast<int>(state.range(0));
  SearchSpace s = search_space_for(model, settings, cluster);
  widen(s);
  const Evaluator evaluate = model_evaluator(model, settings, cluster);
  int64_t candidates = 0, fitting = 0;
  for (auto _ : state) {
    const SearchResult r = search_configs(s, evaluate, 10);
    candidates = r.candidates;
    fitting = r.fitting;
    benchmark::DoNotOptimize(r.top.data());
  }
  state.counters["candidates"] = static_cast<double>(candidates);
  state.counters["fitting"] = static_cast<double>(fitting);
  state.counters["candidates_per_s"] =
      benchmark::Counter(static_cast<double>(candidates), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ConfigSearchRealModels)->Arg(1536)->Arg(3072)->Arg(6144)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
