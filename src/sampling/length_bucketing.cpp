#include "sampling/length_bucketing.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace stepscope::sampling {
namespace {

// SplitMix64: a small, well-mixed generator whose output depends only on the
// seed, so shuffles are identical across platforms and standard libraries
// (std::shuffle's use of the engine is implementation-defined).
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) by rejection (no modulo bias).
  uint64_t below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = next(); while (x >= limit);
    return x % n;
  }
};

template <typename T>
void shuffle(std::vector<T>& v, SplitMix64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

// The stream of one (seed, epoch, purpose): independent shuffles for the
// samples and for the batch order.
SplitMix64 stream(uint64_t seed, int64_t epoch, uint64_t purpose) {
  SplitMix64 mix{seed ^ (static_cast<uint64_t>(epoch) * 0xD1B54A32D192ED03ull) ^ (purpose * 0x8CB92BA72F3D8DD7ull)};
  return SplitMix64{mix.next()};
}

std::vector<uint32_t> shuffled_indices(size_t n, uint64_t seed, int64_t epoch) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  SplitMix64 rng = stream(seed, epoch, 1);
  shuffle(order, rng);
  return order;
}

// Cuts `order` (already in the sequence to pack) into batches greedily.
void cut(std::span<const uint32_t> order, std::span<const int32_t> lengths, int64_t max_tokens, int64_t max_batch,
         std::vector<Batch>& out, int64_t* oversize) {
  Batch cur;
  for (uint32_t i : order) {
    const int64_t len = lengths[i];
    const int64_t longest = std::max(cur.longest, len);
    const int64_t count = static_cast<int64_t>(cur.indices.size()) + 1;
    const bool full = longest * count > max_tokens || (max_batch > 0 && count > max_batch);
    if (full && !cur.indices.empty()) {
      out.push_back(std::move(cur));
      cur = Batch{};
    }
    if (len > max_tokens && oversize) ++*oversize;
    cur.indices.push_back(i);
    cur.longest = std::max(cur.longest, len);
    cur.tokens += len;
  }
  if (!cur.indices.empty()) out.push_back(std::move(cur));
}

}  // namespace

std::string check_options(const BucketingOptions& o, size_t samples) {
  if (o.max_tokens <= 0) return fmt::format("max_tokens must be positive (got {})", o.max_tokens);
  if (o.max_batch_size < 0) return fmt::format("max_batch_size must be >= 0 (got {})", o.max_batch_size);
  if (o.window_batches <= 0) return fmt::format("window_batches must be positive (got {})", o.window_batches);
  if (o.world_size <= 0) return fmt::format("world_size must be positive (got {})", o.world_size);
  if (o.rank < 0 || o.rank >= o.world_size)
    return fmt::format("rank {} out of range for world_size {}", o.rank, o.world_size);
  if (o.num_workers <= 0) return fmt::format("num_workers must be positive (got {})", o.num_workers);
  if (o.worker < 0 || o.worker >= o.num_workers)
    return fmt::format("worker {} out of range for num_workers {}", o.worker, o.num_workers);
  if (samples > UINT32_MAX) return fmt::format("{} samples: at most {} are supported", samples, UINT32_MAX);
  return "";
}

BatchPlan make_batches(std::span<const int32_t> lengths, const BucketingOptions& o) {
  if (std::string why = check_options(o, lengths.size()); !why.empty()) throw std::invalid_argument(why);
  for (size_t i = 0; i < lengths.size(); ++i)
    if (lengths[i] <= 0) throw std::invalid_argument(fmt::format("sample {} has length {}: lengths must be positive", i, lengths[i]));

  BatchPlan plan;
  std::vector<uint32_t> order = shuffled_indices(lengths.size(), o.seed, o.epoch);
  // Window size in samples: about window_batches batches of the mean length.
  const double mean = lengths.empty() ? 1.0
                                      : static_cast<double>(std::accumulate(lengths.begin(), lengths.end(), int64_t{0})) /
                                            static_cast<double>(lengths.size());
  const double per_batch = std::max(1.0, static_cast<double>(o.max_tokens) / mean);
  const size_t window = static_cast<size_t>(std::max(1.0, per_batch * static_cast<double>(o.window_batches)));

  std::vector<Batch> all;
  for (size_t begin = 0; begin < order.size(); begin += window) {
    const size_t end = std::min(order.size(), begin + window);
    // Sort by length, ties by index, so the result does not depend on the sort algorithm.
    std::sort(order.begin() + static_cast<std::ptrdiff_t>(begin), order.begin() + static_cast<std::ptrdiff_t>(end),
              [&](uint32_t a, uint32_t b) { return lengths[a] != lengths[b] ? lengths[a] < lengths[b] : a < b; });
    cut(std::span<const uint32_t>(order).subspan(begin, end - begin), lengths, o.max_tokens, o.max_batch_size, all,
        &plan.oversize_samples);
  }
  SplitMix64 rng = stream(o.seed, o.epoch, 2);
  shuffle(all, rng);
  plan.total_batches = static_cast<int64_t>(all.size());

  // Shard: batch b goes to rank b % world_size, then within the rank to
  // worker (b / world_size) % num_workers. With even_ranks the tail that
  // cannot be split evenly across ranks is dropped.
  size_t usable = all.size();
  if (o.even_ranks) usable -= all.size() % static_cast<size_t>(o.world_size);
  plan.dropped_batches = static_cast<int64_t>(all.size() - usable);
  for (size_t b = static_cast<size_t>(o.rank); b < usable; b += static_cast<size_t>(o.world_size)) {
    const size_t within = b / static_cast<size_t>(o.world_size);
    if (within % static_cast<size_t>(o.num_workers) == static_cast<size_t>(o.worker)) plan.batches.push_back(std::move(all[b]));
  }
  return plan;
}

std::vector<Batch> random_batches(std::span<const int32_t> lengths, int64_t max_tokens, uint64_t seed, int64_t epoch) {
  if (max_tokens <= 0) throw std::invalid_argument(fmt::format("max_tokens must be positive (got {})", max_tokens));
  std::vector<uint32_t> order = shuffled_indices(lengths.size(), seed, epoch);
  std::vector<Batch> out;
  cut(order, lengths, max_tokens, 0, out, nullptr);
  return out;
}

PaddingStats padding_of(const std::vector<Batch>& batches) {
  PaddingStats s;
  for (const Batch& b : batches) {
    s.tokens += b.tokens;
    s.padded_tokens += b.longest * static_cast<int64_t>(b.indices.size());
  }
  return s;
}

}  // namespace stepscope::sampling
