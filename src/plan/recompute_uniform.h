// Activation recomputation for a stack of identical layers under a memory
// budget: how many layers keep everything, how many recompute only the
// attention core (selective) and how many keep only their input (full), so
// that the extra backward time is smallest and the activations fit.
//
// Model (per micro-batch, per pipeline stage; docs/planner_optimisers.md):
//   memory(assignment) = copies * (L * input_bytes + sum_i kept_bytes[p_i])
//                        + max_i work_bytes[p_i]
//   time(assignment)   = sum_i recompute_seconds[p_i]
// kept_bytes[p] is what a layer stores beyond its input under policy p;
// work_bytes[p] is the transient working set of that layer's backward (the
// recomputed tensors live only while that one layer runs backward, so only
// the largest counts); copies is how many micro-batches' activations are alive
// at once (1F1B: up to the pipeline depth on the first stage).
//
// Both are symmetric functions of the per-layer policy vector (a sum and a max
// over identical layers), so every permutation of an assignment has the same
// memory and time: an optimum is fully described by the count of layers per
// policy, and enumerating the O(L^2) count triples is exact.
#pragma once

#include <array>
#include <cstdint>

#include "model/parallel_config.h"

namespace stepscope::plan {

struct UniformLayerCosts {
  int layers = 0;             // L, identical layers on this stage
  double input_bytes = 0;     // each layer's input, kept under every policy
  // Indexed by Recompute (kNone, kSelective, kFull).
  std::array<double, 3> kept_bytes{};         // stored beyond the input
  std::array<double, 3> recompute_seconds{};  // extra backward time per layer
  std::array<double, 3> work_bytes{};         // transient during that layer's backward
  double copies = 1;          // micro-batches whose activations are alive at once
};

struct UniformRecomputePlan {
  bool feasible = false;              // false: even all-full exceeds the budget
  std::array<int, 3> count{};         // layers per policy (sums to L when feasible)
  double recompute_seconds = 0;       // time(assignment)
  double memory_bytes = 0;            // memory(assignment)
};

// memory(assignment) and time(assignment) for a count triple.
double uniform_memory_bytes(const UniformLayerCosts& c, const std::array<int, 3>& count);
double uniform_recompute_seconds(const UniformLayerCosts& c, const std::array<int, 3>& count);

// The count triple of least recompute time whose memory is <= budget_bytes;
// ties go to the smaller memory, then to more layers without recomputation.
// Infeasible budgets return feasible = false with the all-full figures.
UniformRecomputePlan plan_uniform_recompute(const UniformLayerCosts& costs, double budget_bytes);

}  // namespace stepscope::plan
