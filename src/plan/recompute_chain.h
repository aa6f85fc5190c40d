// Optimal checkpointing of a heterogeneous chain under a memory budget, by
// dynamic programming in the style of rotor (Beaumont, Eyraud-Dubois,
// Herrmann, Joly, Shilova, "Optimal checkpointing for heterogeneous chains:
// how to train deep neural networks with limited memory", 2019/2021).
//
// The chain and its memory model (docs/planner_optimisers.md has the proofs):
//   stages 1..n; stage i reads x[i-1] and writes x[i] (x[0] is the input,
//   x[n] the loss output). Run so that its backward can follow, stage i keeps
//   a[i] bytes: everything autograd saves for B(i), its output x[i] included
//   (rotor's x-bar), so a[i] >= x[i]. B(i) needs a[i] and the output gradient
//   d[i] (same size as x[i]; the loss seed d[n] lives inside a[n]) and
//   writes d[i-1]. x[i] is available while x[i] or a[i] is held.
// Operations and the memory they need (S = bytes held before the operation):
//   ForwardDrop(i)  needs x[i-1]; peak S + x[i];  then x[i] is held
//   ForwardKeep(i)  needs x[i-1]; peak S + a[i];  then a[i] is held
//   Backward(i)     needs a[i] and d[i] (i < n); peak S + x[i-1]; then a[i]
//                   and d[i] (for i = n, a held x[n] too) are released and
//                   d[i-1] is held
//   FreeX(i) / FreeA(i)  releases x[i] / a[i]; no time
// Start: only x[0] held. End: d[0] held. A schedule is valid when every
// operation's needs are held and every peak is <= the budget; its time is
// the sum of forward_seconds / backward_seconds of its operations.
//
// The DP is exact for sizes in whole memory units (sizes are rounded up and
// the budget down to `unit` bytes, so a schedule it returns always fits the
// real budget); it costs O(n^3 * budget/unit) time and O(n^2 * budget/unit)
// memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stepscope::plan {

struct ChainStage {
  double forward_seconds = 0;
  double backward_seconds = 0;
  int64_t output_bytes = 0;  // x[i] (and d[i])
  int64_t saved_bytes = 0;   // a[i]: all that B(i) needs, x[i] included
};

struct Chain {
  int64_t input_bytes = 0;         // x[0]
  std::vector<ChainStage> stages;  // stage i is stages[i-1]
  int64_t x(int i) const { return i == 0 ? input_bytes : stages[static_cast<size_t>(i) - 1].output_bytes; }
  int64_t a(int i) const { return stages[static_cast<size_t>(i) - 1].saved_bytes; }
};

enum class ChainOpKind : uint8_t { kForwardDrop, kForwardKeep, kBackward, kFreeX, kFreeA };

struct ChainOp {
  ChainOpKind kind;
  int index;  // stage for forward/backward, value index for frees
  bool operator==(const ChainOp&) const = default;
};

struct ChainPlan {
  bool feasible = false;  // false: no schedule fits the budget
  double seconds = 0;     // total time of the schedule (forward + backward + recomputation)
  std::vector<ChainOp> schedule;
};

struct ChainPlanOptions {
  // Memory unit; 0 picks ceil(budget / 1000) so the table has ~1000 columns.
  int64_t unit_bytes = 0;
};

ChainPlan plan_chain_checkpointing(const Chain& chain, int64_t budget_bytes, ChainPlanOptions options = {});

// Executes a schedule under the model above.
struct ChainSimulation {
  bool valid = false;
  std::string error;      // the first broken rule, with the operation's position
  double seconds = 0;
  int64_t peak_bytes = 0;
};
ChainSimulation simulate_chain_schedule(const Chain& chain, const std::vector<ChainOp>& schedule);

std::string to_string(const ChainOp& op);

}  // namespace stepscope::plan
