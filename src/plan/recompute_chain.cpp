// Dynamic programme over segments [s, t] of the chain and a memory budget m
// (in units): Opt(s, t, m, owned) is the least time to turn "x[s-1] and d[t]
// available" into "d[s-1] held" with at most m units held at any instant.
// m counts d[t] and, when `owned`, x[s-1] (released once no longer needed);
// otherwise x[s-1] lives inside the caller's a[s-1], which the caller counts
// and which stays until B(s-1). Three ways to start a segment (the docs give
// the argument that they cover every schedule that matters):
//   single stage (s == t):  ForwardKeep(s), release x[s-1], Backward(s)
//   keep-all  (s < t):      ForwardKeep(s), release x[s-1], solve [s+1, t]
//                           with m - a[s] (its input x[s] inside a[s]), then
//                           Backward(s)                          (rotor's F_all)
//   checkpoint at j:        ForwardDrop(s..j) keeping only x[s-1] and x[j],
//                           solve [j+1, t] owning x[j] with m - x[s-1] (m when
//                           x[s-1] is not owned), then [s, j] with m
#include "plan/recompute_chain.h"

#include <fmt/core.h>

#include <algorithm>
#include <limits>

namespace stepscope::plan {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kChoiceNone = -3, kChoiceSingle = -2, kChoiceKeepAll = -1;

class ChainDp {
 public:
  ChainDp(const Chain& chain, int64_t unit, int64_t budget_units)
      : chain_(chain), n_(static_cast<int>(chain.stages.size())), m_(budget_units) {
    x_.resize(static_cast<size_t>(n_) + 1);
    a_.resize(static_cast<size_t>(n_) + 1, 0);
    for (int i = 0; i <= n_; ++i) x_[i] = ceil_div(chain.x(i), unit);
    for (int i = 1; i <= n_; ++i) a_[i] = ceil_div(chain.a(i), unit);
    const size_t cells = 2 * static_cast<size_t>(n_) * static_cast<size_t>(n_) * static_cast<size_t>(m_ + 1);
    cost_.assign(cells, -1.0);
    choice_.assign(cells, kChoiceNone);
  }

  double solve(int s, int t, int64_t m, bool owned) {
    if (m < 0) return kInf;
    const size_t at = cell(s, t, m, owned);
    if (cost_[at] >= 0) return cost_[at];
    double best = kInf;
    int choice = kChoiceNone;
    const int64_t in = owned ? x_[s - 1] : 0;  // what x[s-1] costs this segment
    const double fs = chain_.stages[s - 1].forward_seconds, bs = chain_.stages[s - 1].backward_seconds;
    const bool keep_fits = in + hold(t) + a_[s] <= m;
    // Backward(s) holds a[s] and d[s] and writes d[s-1] (the size of x[s-1]).
    const bool backward_fits = a_[s] + hold(s) + x_[s - 1] <= m;
    if (s == t) {
      if (keep_fits && backward_fits) best = fs + bs, choice = kChoiceSingle;
    } else {
      if (keep_fits && backward_fits) {
        const double total = fs + solve(s + 1, t, m - a_[s], false) + bs;
        if (total < best) best = total, choice = kChoiceKeepAll;
      }
      double sweep = 0;
      int64_t sweep_peak = 0;
      for (int j = s; j < t; ++j) {
        sweep += chain_.stages[j - 1].forward_seconds;
        sweep_peak = std::max(sweep_peak, in + hold(t) + (j > s ? x_[j - 1] : 0) + x_[j]);
        if (sweep_peak > m) break;  // a longer sweep passes through this peak too
        const double right = solve(j + 1, t, m - in, true);
        if (sweep + right >= best) continue;
        const double total = sweep + right + solve(s, j, m, owned);
        if (total < best) best = total, choice = j;
      }
    }
    cost_[at] = best;
    choice_[at] = choice;
    return best;
  }

  void emit(int s, int t, int64_t m, bool owned, std::vector<ChainOp>& out) const {
    const int choice = choice_[cell(s, t, m, owned)];
    if (choice == kChoiceSingle || choice == kChoiceKeepAll) {
      out.push_back({ChainOpKind::kForwardKeep, s});
      if (owned) out.push_back({ChainOpKind::kFreeX, s - 1});
      if (choice == kChoiceKeepAll) emit(s + 1, t, m - a_[s], false, out);
      out.push_back({ChainOpKind::kBackward, s});
    } else {
      const int j = choice;
      for (int k = s; k <= j; ++k) {
        out.push_back({ChainOpKind::kForwardDrop, k});
        if (k > s) out.push_back({ChainOpKind::kFreeX, k - 1});
      }
      emit(j + 1, t, m - (owned ? x_[s - 1] : 0), true, out);
      emit(s, j, m, owned, out);
    }
  }

 private:
  static int64_t ceil_div(int64_t v, int64_t unit) { return v <= 0 ? 0 : (v + unit - 1) / unit; }
  // The gradient held while segment [., t] runs: d[t]; the loss seed d[n]
  // lives inside a[n] and costs nothing extra.
  int64_t hold(int t) const { return t < n_ ? x_[t] : 0; }
  size_t cell(int s, int t, int64_t m, bool owned) const {
    const size_t seg = (static_cast<size_t>(s - 1) * static_cast<size_t>(n_) + static_cast<size_t>(t - 1)) * 2 +
                       (owned ? 1 : 0);
    return seg * static_cast<size_t>(m_ + 1) + static_cast<size_t>(m);
  }

  const Chain& chain_;
  int n_;
  int64_t m_;
  std::vector<int64_t> x_, a_;
  std::vector<double> cost_;
  std::vector<int> choice_;
};

}  // namespace

ChainPlan plan_chain_checkpointing(const Chain& chain, int64_t budget_bytes, ChainPlanOptions options) {
  ChainPlan plan;
  if (chain.stages.empty() || budget_bytes < 0) return plan;
  const int64_t unit = options.unit_bytes > 0 ? options.unit_bytes : std::max<int64_t>(1, (budget_bytes + 999) / 1000);
  const int64_t budget_units = budget_bytes / unit;
  ChainDp dp(chain, unit, budget_units);
  const int n = static_cast<int>(chain.stages.size());
  const double cost = dp.solve(1, n, budget_units, true);
  if (cost == kInf) return plan;
  plan.feasible = true;
  plan.seconds = cost;
  dp.emit(1, n, budget_units, true, plan.schedule);
  return plan;
}

ChainSimulation simulate_chain_schedule(const Chain& chain, const std::vector<ChainOp>& schedule) {
  ChainSimulation sim;
  const int n = static_cast<int>(chain.stages.size());
  std::vector<char> has_x(static_cast<size_t>(n) + 1, 0), has_a(static_cast<size_t>(n) + 1, 0);
  has_x[0] = 1;
  int grad = -1;  // index of the held gradient d[grad]; -1 before B(n)
  int64_t held = chain.x(0);
  sim.peak_bytes = held;
  auto fail = [&](size_t pos, const std::string& why) {
    sim.error = fmt::format("operation {} ({}): {}", pos, to_string(schedule[pos]), why);
    return sim;
  };
  for (size_t pos = 0; pos < schedule.size(); ++pos) {
    const ChainOp& op = schedule[pos];
    const int i = op.index;
    const bool is_stage = op.kind == ChainOpKind::kForwardDrop || op.kind == ChainOpKind::kForwardKeep ||
                          op.kind == ChainOpKind::kBackward;
    if (is_stage ? (i < 1 || i > n) : (i < (op.kind == ChainOpKind::kFreeA ? 1 : 0) || i > n))
      return fail(pos, "index out of range");
    switch (op.kind) {
      case ChainOpKind::kForwardDrop:
      case ChainOpKind::kForwardKeep: {
        if (!has_x[i - 1] && !(i > 1 && has_a[i - 1])) return fail(pos, fmt::format("x[{}] is not held", i - 1));
        const bool keep = op.kind == ChainOpKind::kForwardKeep;
        const int64_t out = keep ? chain.a(i) : chain.x(i);
        sim.peak_bytes = std::max(sim.peak_bytes, held + out);
        char& flag = keep ? has_a[i] : has_x[i];
        if (!flag) held += out, flag = 1;  // a recomputed copy replaces the held one
        sim.seconds += chain.stages[i - 1].forward_seconds;
        break;
      }
      case ChainOpKind::kBackward: {
        if (!has_a[i]) return fail(pos, fmt::format("a[{}] is not held", i));
        if (i < n ? grad != i : grad != -1) return fail(pos, fmt::format("the gradient of x[{}] is not held", i));
        sim.peak_bytes = std::max(sim.peak_bytes, held + chain.x(i - 1));
        held += chain.x(i - 1) - chain.a(i) - (i < n ? chain.x(i) : 0);
        has_a[i] = 0;
        if (i == n && has_x[n]) held -= chain.x(n), has_x[n] = 0;
        grad = i - 1;
        sim.seconds += chain.stages[i - 1].backward_seconds;
        break;
      }
      case ChainOpKind::kFreeX:
        if (!has_x[i]) return fail(pos, fmt::format("x[{}] is not held", i));
        has_x[i] = 0, held -= chain.x(i);
        break;
      case ChainOpKind::kFreeA:
        if (!has_a[i]) return fail(pos, fmt::format("a[{}] is not held", i));
        has_a[i] = 0, held -= chain.a(i);
        break;
    }
  }
  if (grad != 0) {
    sim.error = "the schedule ends before d[0] is computed";
    return sim;
  }
  sim.valid = true;
  return sim;
}

std::string to_string(const ChainOp& op) {
  switch (op.kind) {
    case ChainOpKind::kForwardDrop: return fmt::format("F{}", op.index);
    case ChainOpKind::kForwardKeep: return fmt::format("Fall{}", op.index);
    case ChainOpKind::kBackward: return fmt::format("B{}", op.index);
    case ChainOpKind::kFreeX: return fmt::format("free x{}", op.index);
    case ChainOpKind::kFreeA: return fmt::format("free a{}", op.index);
  }
  return "?";
}

}  // namespace stepscope::plan
