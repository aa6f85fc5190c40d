// One rank's critical paths, summarised for the reports: per step the time
// on the path by category, its longest segments with a name (the kernel, the
// runtime call or the innermost CPU op that covers it), and the path as runs
// of one category on one lane for drawing. Definitions: docs/whatif.md.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/gpu_timeline.h"
#include "trace/event_store.h"
#include "whatif/critical_path.h"
#include "whatif/step_graph.h"

namespace stepscope::whatif {

// The longest segments of a step's path are named, this many per step.
constexpr size_t kTopPathSegments = 5;

// A name that copies share (one string however many segments hold it): a
// merge of thousands of ranks' summaries names the same kernels in every
// rank's critical path (summary/summary_json.cpp gives equal names one copy).
class SharedName {
 public:
  SharedName() = default;
  SharedName(std::string s) : text_(std::make_shared<const std::string>(std::move(s))) {}  // NOLINT: a name is text
  SharedName(std::string_view s) : SharedName(std::string(s)) {}                          // NOLINT
  SharedName(const char* s) : SharedName(std::string(s)) {}                               // NOLINT
  const std::string& str() const {
    static const std::string kEmpty;
    return text_ ? *text_ : kEmpty;
  }
  operator const std::string&() const { return str(); }  // NOLINT: reads as the text
  bool operator==(const SharedName& o) const { return str() == o.str(); }

 private:
  std::shared_ptr<const std::string> text_;
};

struct NamedSegment {
  std::string kind;  // an edge's type ("host_order", "launch", ...), "kernel" / "memcpy" / "memset", or "residual"
  PathCategory category = PathCategory::kResidual;
  SharedName name;  // the kernel, the runtime call, the innermost CPU op, or the host marks it lies between
  int64_t start_ns = 0;  // on the rank's clock
  int64_t dur_ns = 0;
};

// Consecutive segments of one category on one lane, merged.
struct PathSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  PathCategory category = PathCategory::kResidual;
  int32_t device = -1;  // GPU work: its lane's device and stream; -1 / -1 for everything else
  int64_t stream = -1;
};

struct StepCriticalPath {
  int64_t step = -1;
  int64_t start_ns = 0;  // the step's window (the replay of the recorded run), ns
  int64_t end_ns = 0;
  std::array<int64_t, kPathCategoryCount> by_category_ns{};  // sums to wall_ns()
  std::vector<NamedSegment> top;  // longest first, at most kTopPathSegments
  std::vector<PathSpan> spans;    // time order, tiling the window
  int64_t wall_ns() const { return end_ns - start_ns; }
  double share_pct(PathCategory c) const {
    return wall_ns() > 0 ? 100.0 * static_cast<double>(by_category_ns[static_cast<size_t>(c)]) / static_cast<double>(wall_ns())
                         : 0.0;
  }
};

struct RankCriticalPath {
  int64_t rank = 0;
  std::vector<StepCriticalPath> steps;
  std::array<int64_t, kPathCategoryCount> total_ns{};  // by category over the steps
  int64_t wall_ns = 0;                                 // the steps' walls summed
  std::vector<std::string> notes;                      // why there is no path
};

// The critical path of each step of `g` replayed as recorded. `timeline` is
// the one `g` was built from; `store` gives names.
RankCriticalPath summarize_critical_path(int64_t rank, const StepGraph& g, const analysis::GpuTimeline& timeline,
                                         const trace::EventStore& store);

}  // namespace stepscope::whatif
