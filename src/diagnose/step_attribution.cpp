#include "diagnose/step_attribution.h"

#include <algorithm>
#include <optional>
#include <queue>

#include "diagnose/matmul_path.h"
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;
namespace {

using analysis::GpuActivity;
using analysis::KernelClass;

constexpr std::array<std::string_view, kBucketCount> kBucketNames = {
    "compute_tensor_core", "compute_matmul_simt", "compute_other", "communication_exposed", "memory_copy",
    "data_pipeline_wait",  "host_sync",           "allocator",     "host_overhead",         "other_idle",
};

// GPU-busy classes in priority order: when several run at once, the lowest
// index names the instant (compute hides communication and copies).
constexpr int kBusyClasses = 6;
constexpr std::array<Bucket, kBusyClasses> kBusyBucket = {
    Bucket::kComputeTensorCore, Bucket::kComputeSimtMatmul, Bucket::kComputeOther,
    Bucket::kCommunication,     Bucket::kMemoryCopy,        Bucket::kOtherIdle,
};

int busy_class(MatmulPathCache& paths, const GpuActivity& a) {
  switch (a.cls) {
    case KernelClass::kCommunication: return 3;
    case KernelClass::kMemory: return 4;
    case KernelClass::kOther: return 5;
    case KernelClass::kComputation: break;
  }
  switch (paths.of(a.name, a.family)) {
    case MatmulPath::kTensorCore: return 0;
    case MatmulPath::kSimt: return 1;
    case MatmulPath::kNotMatmul: return 2;
  }
  return 2;
}

// A stretch of the timeline with one bucket.
struct Piece {
  int64_t start_ns;
  int64_t end_ns;
  Bucket bucket;
  uint32_t cause_row;
  bool gap = false;  // an idle gap not yet split by cause
};

struct Window {
  int64_t step;
  int64_t start_ns;
  int64_t end_ns;
};

std::vector<Window> step_windows(const analysis::StepsResult& steps, const analysis::GpuTimeline& timeline,
                                 bool& from_steps) {
  std::vector<Window> w;
  const auto& s = steps.steps;
  from_steps = !s.empty();
  for (size_t i = 0; i < s.size(); ++i) {
    int64_t start = s[i].cpu_start_ns;
    int64_t end = s[i].cpu_end_ns;
    if (i + 1 < s.size()) end = std::min(end, s[i + 1].cpu_start_ns);
    if (i + 1 == s.size() && s[i].gpu_activities > 0) end = std::max(end, s[i].gpu_end_ns);
    // Windows must not overlap: a step that starts inside the previous
    // window (overlapping annotations) starts where that one ends.
    if (!w.empty()) start = std::max(start, w.back().end_ns);
    if (end > start) w.push_back({s[i].step, start, end});
  }
  // Without steps, the whole timeline is one window; not when the steps were
  // dropped for a cut (their activities would be analysed as whole).
  if (w.empty() && steps.dropped_by_cut == 0 && !timeline.activities.empty()) {
    from_steps = false;
    int64_t lo = timeline.activities.front().start_ns, hi = lo;
    for (const auto& a : timeline.activities) hi = std::max(hi, a.end_ns);
    if (hi > lo) w.push_back({-1, lo, hi});
  }
  return w;
}

// The busy pieces of the timeline (merged by class) and, between them, the
// idle gaps, within [lo, hi), handed to `on_piece` in time order as each one
// closes. Gaps come with bucket kOtherIdle and are split by cause by the
// caller. Streaming them keeps diagnosis' memory independent of the number
// of pieces (tens of thousands per rank).
template <typename OnPiece>
void busy_and_gaps(const trace::EventStore& store, const analysis::GpuTimeline& timeline, int64_t lo, int64_t hi,
                   OnPiece&& on_piece) {
  // One sweep in start order with a heap of pending ends: memory follows how
  // many activities overlap, not how many there are (an edge list sorted by
  // time cost 32 bytes per activity at diagnosis' peak).
  using End = std::pair<int64_t, int>;  // (end, class)
  std::priority_queue<End, std::vector<End>, std::greater<End>> ends;
  MatmulPathCache paths(store.strings);
  std::optional<Piece> pending;  // the last piece, still growing while the next one matches it
  std::array<int, kBusyClasses> count{};
  int64_t prev = lo;
  auto emit = [&](int64_t a, int64_t b) {
    if (b <= a) return;
    int c = 0;
    while (c < kBusyClasses && count[c] == 0) ++c;
    bool idle = c == kBusyClasses;
    Bucket bucket = idle ? Bucket::kOtherIdle : kBusyBucket[c];
    if (pending && pending->end_ns == a && pending->bucket == bucket && pending->gap == idle) {
      pending->end_ns = b;
    } else {
      if (pending) on_piece(*pending);
      pending = Piece{a, b, bucket, trace::EventStore::kNoRow, idle};
    }
  };
  // Everything that changes at time t changes together: the piece before t
  // is emitted first, then the counts move.
  auto close_ends_until = [&](int64_t t) {
    while (!ends.empty() && ends.top().first <= t) {
      const int64_t at = ends.top().first;
      emit(prev, at);
      prev = at;
      while (!ends.empty() && ends.top().first == at) {
        --count[ends.top().second];
        ends.pop();
      }
    }
  };
  for (const auto& a : timeline.activities) {
    if (a.end_ns <= a.start_ns || a.end_ns <= lo || a.start_ns >= hi) continue;
    const int64_t start = std::max(a.start_ns, lo);
    close_ends_until(start);
    emit(prev, start);
    prev = start;
    const int c = busy_class(paths, a);
    ++count[c];
    ends.push({std::min(a.end_ns, hi), c});
  }
  close_ends_until(hi);
  std::fill(count.begin(), count.end(), 0);
  emit(prev, hi);
  if (pending) on_piece(*pending);
}

// Splits the idle gap [g0, g1) (clipped to [a, b)) by cause; see the header.
void split_gap(const analysis::GpuTimeline& timeline, const HostIndex& host, const trace::EventStore& store,
               int64_t g0, int64_t g1, int64_t a, int64_t b, bool gap_opened, std::vector<Piece>& out) {
  std::vector<Interval> dl_in, rest, alloc_in, residual;
  host.dataloader_set.split(a, b, dl_in, rest);
  for (const Interval& r : rest) host.allocator_set.split(r.start_ns, r.end_ns, alloc_in, residual);

  // What the residual is: the gap's opening decides a sync; else who had
  // submitted the work that ended it.
  Bucket residual_bucket = Bucket::kOtherIdle;
  uint32_t residual_row = trace::EventStore::kNoRow;
  const HostCall* opener = gap_opened ? host.syncs.containing(g0) : nullptr;
  const HostCall* free_opener = gap_opened ? host.allocator.containing(g0) : nullptr;
  if (free_opener && !is_synchronising_free(store.name_of(free_opener->row))) free_opener = nullptr;
  if (opener) {
    residual_bucket = Bucket::kHostSync;
    residual_row = opener->row;
  } else if (free_opener) {
    residual_bucket = Bucket::kAllocator;
    residual_row = free_opener->row;
  } else {
    // The activities that end the gap all start at g1.
    auto it = std::lower_bound(timeline.activities.begin(), timeline.activities.end(), g1,
                               [](const GpuActivity& x, int64_t t) { return x.start_ns < t; });
    bool any_launch = false, queued = false;
    uint32_t launch_row = trace::EventStore::kNoRow;
    for (; it != timeline.activities.end() && it->start_ns == g1; ++it) {
      if (!it->has_launch()) continue;
      any_launch = true;
      // Submitted (its launch call returned) before the GPU ran dry: the GPU
      // waited on something else.
      if (gap_opened && it->launch_end_ns <= g0) queued = true;
      if (launch_row == trace::EventStore::kNoRow) launch_row = it->launch_row;
    }
    if (any_launch && !queued) {
      residual_bucket = Bucket::kHostOverhead;
      residual_row = launch_row;
    }
  }
  for (const Interval& i : dl_in) {
    const HostCall* c = host.dataloader.containing(i.start_ns);
    out.push_back({i.start_ns, i.end_ns, Bucket::kDataPipeline, c ? c->row : trace::EventStore::kNoRow});
  }
  for (const Interval& i : alloc_in) {
    const HostCall* c = host.allocator.containing(i.start_ns);
    out.push_back({i.start_ns, i.end_ns, Bucket::kAllocator, c ? c->row : trace::EventStore::kNoRow});
  }
  for (const Interval& i : residual) out.push_back({i.start_ns, i.end_ns, residual_bucket, residual_row});
}

}  // namespace

std::string_view to_string(Bucket b) { return kBucketNames[static_cast<size_t>(b)]; }

int64_t StepAttribution::idle_ns() const {
  int64_t t = 0;
  for (int b = 0; b < kBucketCount; ++b)
    if (is_idle(static_cast<Bucket>(b))) add_into(t, ns[static_cast<size_t>(b)]);
  return t;
}

int64_t RankAttribution::mean_step_ns() const {
  if (steps.empty()) return 0;
  return total.wall_ns() > 0 ? total.wall_ns() / static_cast<int64_t>(steps.size()) : 0;
}

RankAttribution attribute_steps(const trace::EventStore& store, const analysis::GpuTimeline& timeline,
                                const analysis::StepsResult& steps, const HostIndex& host) {
  RankAttribution r;
  r.rank = store.rank;
  r.gpu_activity = !timeline.activities.empty();
  std::vector<Window> windows = step_windows(steps, timeline, r.from_profiler_steps);
  if (windows.empty()) return r;
  const int64_t lo = windows.front().start_ns;
  const int64_t hi = windows.back().end_ns;

  // Whole-timeline pieces over [lo, hi): busy pieces as they are, each idle
  // gap split by cause. A gap is judged on its full extent (when it opened,
  // what ended it), even where the window clips it.
  // Each piece is distributed over the windows as it comes (both in time
  // order, windows disjoint).
  r.steps.reserve(windows.size());
  for (const Window& w : windows) {
    StepAttribution s;
    s.step = w.step;
    s.start_ns = w.start_ns;
    s.end_ns = w.end_ns;
    r.steps.push_back(s);
  }
  // Non-compute spans come from the gaps between activities and the pieces
  // of those gaps: reserving about two per activity up front means the list
  // is not copied as it grows (a doubling copy held old and new capacity at
  // once, the peak of diagnosis); capacity never touched costs no memory.
  r.spans.reserve(2 * timeline.activities.size() + windows.size());
  size_t wi = 0;
  auto distribute = [&](const Piece& p) {
    while (wi < windows.size() && windows[wi].end_ns <= p.start_ns) ++wi;
    for (size_t k = wi; k < windows.size() && windows[k].start_ns < p.end_ns; ++k) {
      int64_t a = std::max(p.start_ns, windows[k].start_ns);
      int64_t b = std::min(p.end_ns, windows[k].end_ns);
      if (b <= a) continue;
      r.steps[k].ns[static_cast<size_t>(p.bucket)] += b - a;
      if (p.bucket >= Bucket::kCommunication)
        r.spans.push_back({a, b, p.bucket, p.cause_row, static_cast<uint32_t>(k)});
    }
  };
  std::vector<Piece> split;  // one gap's pieces by cause
  busy_and_gaps(store, timeline, lo, hi, [&](const Piece& p) {
    if (!p.gap) {
      distribute(p);
      return;
    }
    // The gap's true extent: previous GPU end / next GPU start beyond the clip.
    int64_t g0 = p.start_ns, g1 = p.end_ns;
    bool opened = true;
    if (g0 == lo) {
      // The gap opened at the last end of work that started before lo; a gap
      // before the first GPU work never "opened" (nothing drained).
      int64_t last_end = INT64_MIN;
      for (const auto& a : timeline.activities) {
        if (a.start_ns >= lo) break;
        last_end = std::max(last_end, a.end_ns);
      }
      opened = last_end != INT64_MIN;
      if (opened) g0 = std::min(last_end, lo);
    }
    if (g1 == hi) {
      auto it = std::lower_bound(timeline.activities.begin(), timeline.activities.end(), hi,
                                 [](const GpuActivity& x, int64_t t) { return x.start_ns < t; });
      g1 = it == timeline.activities.end() ? INT64_MAX : it->start_ns;
    }
    split.clear();
    split_gap(timeline, host, store, g0, g1, p.start_ns, p.end_ns, opened, split);
    std::sort(split.begin(), split.end(), [](const Piece& x, const Piece& y) { return x.start_ns < y.start_ns; });
    for (const Piece& q : split) distribute(q);
  });

  // The total's wall is the sum of the windows (they may not be contiguous).
  r.total.start_ns = r.steps.front().start_ns;
  r.total.end_ns = r.steps.front().start_ns;
  for (const StepAttribution& s : r.steps) {
    for (int b = 0; b < kBucketCount; ++b) add_into(r.total.ns[static_cast<size_t>(b)], s.ns[static_cast<size_t>(b)]);
    add_into(r.total.end_ns, s.wall_ns());
  }
  return r;
}

}  // namespace stepscope::diagnose
