// Length-bucketing batch sampler (issue #6 item 4, C++ core): batches of
// variable-length sequences packed to a token budget with little padding.
//
// Random batching pads every sequence to the longest in its batch; on a
// long-tailed length distribution most of each batch is padding. Here the
// dataset is shuffled, cut into windows of `window_batches` batches' worth of
// samples, each window sorted by length and cut greedily into batches whose
// padded size (count x longest) fits `max_tokens`; the batch order is then
// shuffled again, so the model still sees lengths in random order across
// steps. Everything is a pure function of (lengths, options): the same seed,
// epoch, rank and worker give the same batches on every machine.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace stepscope::sampling {

struct BucketingOptions {
  int64_t max_tokens = 0;       // padded tokens per batch (count x longest), > 0
  int64_t max_batch_size = 0;   // sequences per batch at most; 0 = no limit
  int64_t window_batches = 400; // samples sorted together: about this many batches' worth
  uint64_t seed = 0;
  int64_t epoch = 0;            // a new shuffle per epoch
  int rank = 0, world_size = 1;         // data-parallel shard
  int worker = 0, num_workers = 1;      // DataLoader worker within the rank
  // Every rank gets the same number of batches (DDP steps in lockstep): the
  // batches left over after an even split are dropped and counted.
  bool even_ranks = true;
};

struct Batch {
  std::vector<uint32_t> indices;  // into the lengths given, in window (length) order
  int64_t longest = 0;            // padded length of the batch
  int64_t tokens = 0;             // sum of the real lengths
};

struct BatchPlan {
  std::vector<Batch> batches;     // this (rank, worker)'s batches, in the order to run them
  int64_t total_batches = 0;      // over all ranks and workers, before the even split
  int64_t dropped_batches = 0;    // left over by the even split (0 when even_ranks is off)
  int64_t oversize_samples = 0;   // samples longer than max_tokens: each alone in a batch
};

// Padding of a set of batches: padded = sum over batches of count x longest.
struct PaddingStats {
  int64_t tokens = 0;
  int64_t padded_tokens = 0;
  double waste_pct() const {
    return padded_tokens > 0 ? 100.0 * static_cast<double>(padded_tokens - tokens) / static_cast<double>(padded_tokens)
                             : 0.0;
  }
};

// "" when the options can be used with `samples` sequences, else a one-line
// reason naming the option (e.g. "rank 3 out of range for world_size 2").
std::string check_options(const BucketingOptions& o, size_t samples);

// The batches of this (rank, worker). Lengths must be > 0 (checked by
// check_options' caller: make_batches throws std::invalid_argument with the
// same one-line reasons, naming the first bad sample).
BatchPlan make_batches(std::span<const int32_t> lengths, const BucketingOptions& o);

// The baseline the bucketing is measured against: the same shuffle and token
// budget, but batches cut in shuffled order without sorting.
std::vector<Batch> random_batches(std::span<const int32_t> lengths, int64_t max_tokens, uint64_t seed, int64_t epoch);

PaddingStats padding_of(const std::vector<Batch>& batches);

}  // namespace stepscope::sampling
