#include "plan/config_search.h"

#include <algorithm>

namespace stepscope::plan {

using model::ParallelConfig;
using model::Recompute;
using model::Sharding;

namespace {

const std::vector<int> kDefaultMicroBatches = {1, 2, 4, 8, 16};
const std::vector<int> kDefaultVpps = {1, 2, 4};
const std::vector<Recompute> kDefaultRecomputes = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
const std::vector<Sharding> kDefaultShardings = {Sharding::kDdp, Sharding::kZero1, Sharding::kZero2,
                                                 Sharding::kZero3, Sharding::kFsdpHybrid};

template <typename T>
const std::vector<T>& or_default(const std::vector<T>& v, const std::vector<T>& d) {
  return v.empty() ? d : v;
}

}  // namespace

const char* invalid_reason(const SearchSpace& s, const ParallelConfig& c) {
  if (c.tp < 1 || c.pp < 1 || c.dp < 1 || c.cp < 1 || c.vpp < 1 || c.micro_batch < 1) return "a size below 1";
  if (c.gpus() != s.gpus) return "tp*pp*dp*cp differs from the GPU count";
  if (s.gpus_per_node % c.tp != 0) return "tp does not divide the GPUs per node";
  if (s.attention_heads % c.tp != 0) return "tp does not divide the attention heads";
  if (s.layers % (c.pp * c.vpp) != 0) return "pp*vpp does not divide the layers";
  if (s.global_batch % (c.dp * c.micro_batch) != 0) return "dp*micro_batch does not divide the global batch";
  if (c.vpp > 1 && c.pp == 1) return "virtual stages need pp > 1";
  if (c.vpp > 1 && (s.global_batch / (c.dp * c.micro_batch)) % c.pp != 0)
    return "interleaved 1F1B needs the micro-batch count divisible by pp";
  if (c.cp > 1 && s.sequence_length % (2 * c.cp) != 0) return "cp > 1 needs the sequence divisible by 2*cp";
  if (c.sequence_parallel && c.tp == 1) return "sequence parallelism needs tp > 1";
  if (c.sharding != Sharding::kDdp && c.dp == 1) return "sharding needs dp > 1";
  if (c.pp > 1 && c.sharding != Sharding::kDdp && c.sharding != Sharding::kZero1)
    return "ZeRO-2/3 and FSDP do not combine with pipeline parallelism";
  if (c.sharding == Sharding::kFsdpHybrid && c.tp * c.cp * c.dp <= s.gpus_per_node)
    return "hybrid shard needs the data-parallel group to span nodes";
  if (c.cpu_offload && c.sharding == Sharding::kDdp) return "CPU offload needs a ZeRO stage";
  return nullptr;
}

int64_t for_each_config(const SearchSpace& s, const std::function<void(const ParallelConfig&)>& visit) {
  int64_t count = 0;
  const auto& mbs = or_default(s.micro_batches, kDefaultMicroBatches);
  const auto& vpps = or_default(s.vpps, kDefaultVpps);
  const auto& recs = or_default(s.recomputes, kDefaultRecomputes);
  const auto& shards = or_default(s.shardings, kDefaultShardings);
  ParallelConfig c;
  for (c.tp = 1; c.tp <= s.gpus_per_node && c.tp <= s.gpus; ++c.tp) {
    if (s.gpus_per_node % c.tp || s.gpus % c.tp || s.attention_heads % c.tp) continue;
    for (c.cp = 1; c.cp <= s.max_cp; c.cp *= 2) {
      if ((s.gpus / c.tp) % c.cp) break;
      for (c.pp = 1; c.pp <= s.gpus / (c.tp * c.cp); ++c.pp) {
        if ((s.gpus / (c.tp * c.cp)) % c.pp || s.layers % c.pp) continue;
        c.dp = s.gpus / (c.tp * c.cp * c.pp);
        for (int vpp : vpps) {
          c.vpp = vpp;
          for (int mb : mbs) {
            c.micro_batch = mb;
            for (int sp = 0; sp <= (s.try_sequence_parallel && c.tp > 1 ? 1 : 0); ++sp) {
              c.sequence_parallel = sp != 0;
              for (Recompute r : recs) {
                c.recompute = r;
                for (Sharding sh : shards) {
                  c.sharding = sh;
                  for (int off = 0; off <= (s.try_cpu_offload ? 1 : 0); ++off) {
                    c.cpu_offload = off != 0;
                    if (invalid_reason(s, c)) continue;
                    ++count;
                    visit(c);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return count;
}

SearchResult search_configs(const SearchSpace& space, const Evaluator& evaluate, int k) {
  SearchResult result;
  k = std::max(k, 0);
  const double tokens_per_step = static_cast<double>(space.global_batch) * space.sequence_length;
  struct Entry {
    RankedConfig ranked;
    int64_t order;
  };
  // "a ranks before b": faster, then less memory, then enumerated first.
  auto better = [](const Entry& a, const Entry& b) {
    if (a.ranked.tokens_per_second != b.ranked.tokens_per_second)
      return a.ranked.tokens_per_second > b.ranked.tokens_per_second;
    if (a.ranked.evaluation.memory_bytes != b.ranked.evaluation.memory_bytes)
      return a.ranked.evaluation.memory_bytes < b.ranked.evaluation.memory_bytes;
    return a.order < b.order;
  };
  // A heap of the k best so far with the worst on top: each candidate costs
  // O(log k) and no allocation after the reserve.
  std::vector<Entry> heap;
  heap.reserve(static_cast<size_t>(k) + 1);
  result.candidates = for_each_config(space, [&](const ParallelConfig& c) {
    const Evaluation e = evaluate(c);
    if (!e.fits || !(e.step_seconds > 0)) return;
    const int64_t order = result.fitting++;
    if (k == 0) return;
    Entry entry{{c, e, tokens_per_step / e.step_seconds}, order};
    if (static_cast<int>(heap.size()) < k) {
      heap.push_back(entry);
      std::push_heap(heap.begin(), heap.end(), better);
    } else if (better(entry, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = entry;
      std::push_heap(heap.begin(), heap.end(), better);
    }
  });
  std::sort_heap(heap.begin(), heap.end(), better);
  result.top.reserve(heap.size());
  for (const Entry& e : heap) result.top.push_back(e.ranked);
  return result;
}

}  // namespace stepscope::plan
