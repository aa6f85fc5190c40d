#include "memory/snapshot_state.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string_view>
#include <unordered_map>

namespace stepscope::memory {

using trace::snapshot::BlockState;
using trace::snapshot::MemorySnapshot;
using trace::snapshot::TraceAction;

double FreeSpace::fragmentation() const {
  return free_bytes == 0 ? 0.0 : 1.0 - static_cast<double>(largest_free) / static_cast<double>(free_bytes);
}

namespace {

constexpr uint64_t kSmallSegment = 2ull << 20;  // the small pool's segment size (c10 kSmallBuffer)

bool is_framework_or_native(std::string_view path) {
  // Windows paths too: compare with '/' for '\\'.
  std::string file(path);
  for (char& c : file)
    if (c == '\\') c = '/';
  auto ends = [&](std::string_view suffix) {
    return file.size() >= suffix.size() && file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  auto has = [&](std::string_view part) { return file.find(part) != std::string::npos; };
  return file == "??" || file.empty() || has("/torch/") || file.rfind("torch/", 0) == 0 || has("site-packages/") ||
         has("dist-packages/") || ends(".c") || ends(".cpp") || ends(".cc") || ends(".h") || ends(".hpp") ||
         ends(".cu") || ends(".cuh") || ends(".so");
}

struct Block {
  uint64_t size;
  uint32_t stack;  // where it was allocated (0: unknown)
  bool pending;    // freed by its tensor, still in use by a stream
};
struct Range {
  uint64_t size;
  bool large;
};

// The live state while events are taken back one by one.
class Unwinder {
 public:
  Unwinder(const MemorySnapshot& s, int32_t device) : s_(s) {
    for (size_t g = 0; g < s.segments.rows(); ++g) {
      if ((s.segments.device[g] < 0 ? 0 : s.segments.device[g]) != device) continue;
      add_range(s.segments.address[g], s.segments.total_size[g], s.segments.is_large[g] != 0);
    }
    for (size_t b = 0; b < s.blocks.rows(); ++b) {
      const uint32_t g = s.blocks.segment[b];
      if ((s.segments.device[g] < 0 ? 0 : s.segments.device[g]) != device) continue;
      const BlockState st = s.blocks.state[b];
      if (st != BlockState::kActiveAllocated && st != BlockState::kActivePendingFree) continue;
      add_block(s.blocks.address[b], {s.blocks.size[b], s.blocks.stack[b], st == BlockState::kActivePendingFree});
    }
  }

  // Takes back event e; alloc_stack: the stack of the alloc that made the block e frees.
  void undo(size_t e, uint32_t alloc_stack) {
    const uint64_t addr = s_.trace.addr[e], size = s_.trace.size[e];
    switch (s_.trace.action[e]) {
      case TraceAction::kAlloc: {
        auto it = blocks_.find(addr);
        if (it == blocks_.end()) {
          ++inconsistent_;
          return;
        }
        remove_block(it);
        return;
      }
      case TraceAction::kFreeRequested: {
        auto it = blocks_.find(addr);
        if (it == blocks_.end() || !it->second.pending) {
          ++inconsistent_;
          return;
        }
        it->second.pending = false;
        allocated_ += it->second.size;
        return;
      }
      case TraceAction::kFreeCompleted:
        if (blocks_.count(addr)) {
          ++inconsistent_;
          return;
        }
        add_block(addr, {size, alloc_stack, true});
        return;
      case TraceAction::kSegmentAlloc:
      case TraceAction::kSegmentMap:
        if (!remove_range(addr, size)) ++inconsistent_;
        return;
      case TraceAction::kSegmentFree:
      case TraceAction::kSegmentUnmap:
        add_range(addr, size, size != kSmallSegment);
        return;
      default:
        return;
    }
  }

  MemoryLevels levels() const { return {allocated_, active_, reserved_}; }
  uint64_t inconsistent() const { return inconsistent_; }

  FreeSpace free_space() const {
    FreeSpace f;
    f.free_bytes = reserved_ > active_ ? reserved_ - active_ : 0;
    for (const auto& [start, r] : ranges_) {
      ++f.segments;
      uint64_t cursor = start, largest = 0;
      bool any = false;
      const uint64_t page = r.large ? kExpandablePageLarge : kExpandablePageSmall;
      const uint64_t base = start;  // a structured binding cannot be captured before C++20 in clang 14
      auto gap = [&](uint64_t from, uint64_t to) {  // a free run [from, to)
        largest = std::max(largest, to - from);
        const uint64_t first = base + (from - base + page - 1) / page * page, last = base + (to - base) / page * page;
        if (last > first) f.free_in_pages += last - first;
      };
      for (auto it = blocks_.lower_bound(start); it != blocks_.end() && it->first < start + r.size; ++it) {
        any = true;
        if (it->first > cursor) gap(cursor, it->first);
        cursor = std::max(cursor, it->first + it->second.size);
      }
      if (start + r.size > cursor) gap(cursor, start + r.size);
      if (!any) ++f.empty_segments;
      f.largest_free = std::max(f.largest_free, largest);
      (r.large ? f.largest_free_large : f.largest_free_small) =
          std::max(r.large ? f.largest_free_large : f.largest_free_small, largest);
    }
    return f;
  }

  const std::map<uint64_t, Block>& blocks() const { return blocks_; }

 private:
  void add_block(uint64_t addr, Block b) {
    active_ += b.size;
    if (!b.pending) allocated_ += b.size;
    blocks_[addr] = b;
  }
  void remove_block(std::map<uint64_t, Block>::iterator it) {
    active_ -= it->second.size;
    if (!it->second.pending) allocated_ -= it->second.size;
    blocks_.erase(it);
  }
  // Reserved ranges, merged with their neighbours so a free run across two
  // mapped pieces of an expandable segment counts as one.
  void add_range(uint64_t addr, uint64_t size, bool large) {
    if (size == 0) return;
    reserved_ += size;
    auto next = ranges_.lower_bound(addr);
    if (next != ranges_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second.size == addr && prev->second.large == large) {
        prev->second.size += size;
        if (next != ranges_.end() && addr + size == next->first && next->second.large == large) {
          prev->second.size += next->second.size;
          ranges_.erase(next);
        }
        return;
      }
    }
    if (next != ranges_.end() && addr + size == next->first && next->second.large == large) {
      const Range merged{size + next->second.size, large};
      ranges_.erase(next);
      ranges_[addr] = merged;
      return;
    }
    ranges_[addr] = {size, large};
  }
  bool remove_range(uint64_t addr, uint64_t size) {
    auto it = ranges_.upper_bound(addr);
    if (it == ranges_.begin()) return false;
    --it;
    const uint64_t start = it->first, end = start + it->second.size;
    if (addr + size > end || size == 0) return false;
    const bool large = it->second.large;
    ranges_.erase(it);
    if (addr > start) ranges_[start] = {addr - start, large};
    if (addr + size < end) ranges_[addr + size] = {end - addr - size, large};
    reserved_ -= size;
    return true;
  }

  const MemorySnapshot& s_;
  std::map<uint64_t, Block> blocks_;
  std::map<uint64_t, Range> ranges_;
  uint64_t allocated_ = 0, active_ = 0, reserved_ = 0, inconsistent_ = 0;
};

}  // namespace

uint32_t allocation_site(const MemorySnapshot& s, uint32_t stack) {
  const uint32_t begin = s.stacks.offsets[stack], end = s.stacks.offsets[stack + 1];
  if (begin == end) return UINT32_MAX;
  for (uint32_t i = begin; i < end; ++i) {
    const uint32_t f = s.stacks.frames[i];
    if (!is_framework_or_native(s.strings.get(s.frames.filename[f]))) return f;
  }
  // Only PyTorch's own and native frames: the autograd engine's threads run
  // the backward without a Python frame, and a C++ stack starts with the
  // capture itself (torch::unwind::unwind, CapturedTraceback::gather), the
  // caching allocator, the empty-tensor helpers and the dispatcher. The
  // innermost frame that names an operation stands for the site: a
  // derivative formula of the backward (torch::autograd::generated::...),
  // else the innermost ATen operator entry (at::_ops::<op>::call or
  // ::redispatch), else the innermost frame.
  auto first_named = [&](std::string_view prefix) -> uint32_t {
    for (uint32_t i = begin; i < end; ++i) {
      const uint32_t f = s.stacks.frames[i];
      const std::string_view name = s.strings.get(s.frames.name[f]);
      // A prefix, or after a return type ("at::Tensor torch::autograd::...").
      const size_t at = name.find(prefix);
      if (at == 0 || (at != std::string_view::npos && name[at - 1] == ' ')) return f;
    }
    return UINT32_MAX;
  };
  if (const uint32_t f = first_named("torch::autograd::generated::"); f != UINT32_MAX) return f;
  if (const uint32_t f = first_named("at::_ops::"); f != UINT32_MAX) return f;
  return s.stacks.frames[begin];
}

std::vector<uint32_t> allocation_sites(const MemorySnapshot& s) {
  std::vector<uint32_t> sites(s.stacks.rows());
  for (uint32_t st = 0; st < sites.size(); ++st) sites[st] = allocation_site(s, st);
  return sites;
}

std::vector<MemoryState> memory_states_after(const MemorySnapshot& s, int32_t device,
                                             const std::vector<size_t>& applied, size_t top_sites,
                                             size_t recent_frees) {
  // This device's rows.
  size_t first = SIZE_MAX, last = 0;
  for (size_t e = 0; e < s.trace.rows(); ++e)
    if (s.trace.device[e] == device) first = std::min(first, e), last = e + 1;
  if (first == SIZE_MAX) first = last = 0;
  // Which alloc made the block each free_completed gives back (forward
  // pass), by row - first: 0 where unknown (allocated before the history).
  std::vector<uint32_t> alloc_stack_of_free(last - first, 0);
  {
    std::unordered_map<uint64_t, uint32_t> live;
    for (size_t e = first; e < last; ++e) {
      if (s.trace.action[e] == TraceAction::kAlloc) live[s.trace.addr[e]] = s.trace.stack[e];
      if (s.trace.action[e] == TraceAction::kFreeCompleted) {
        const auto it = live.find(s.trace.addr[e]);
        if (it == live.end()) continue;
        alloc_stack_of_free[e - first] = it->second;
        live.erase(it);
      }
    }
  }
  const std::vector<uint32_t> site_of_stack = allocation_sites(s);
  // Visit the asked points from the latest to the earliest while taking events back.
  std::vector<size_t> order(applied.size());
  std::iota(order.begin(), order.end(), 0);
  // The state "after row point(i) - 1": first + applied events, at most all of them.
  auto point = [&](size_t i) { return first + std::min(applied[i], last - first); };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return point(a) > point(b); });
  std::vector<MemoryState> out(applied.size());
  Unwinder u(s, device);
  size_t cursor = last;  // the state is "after row cursor - 1"
  for (size_t i : order) {
    const size_t target = point(i);
    while (cursor > target) {
      --cursor;
      u.undo(cursor, alloc_stack_of_free[cursor - first]);
    }
    MemoryState& st = out[i];
    st.applied = target - first;
    if (target > first) st.event = target - 1, st.time_us = s.trace.time_us[target - 1];
    st.levels = u.levels();
    st.free = u.free_space();
    st.inconsistent_events = u.inconsistent();
    std::unordered_map<uint32_t, AllocationSite> sites;
    std::unordered_map<uint32_t, uint64_t> largest;
    for (const auto& [addr, b] : u.blocks()) {
      const uint32_t f = site_of_stack[b.stack];
      AllocationSite& site = sites[f];
      site.frame = f;
      site.bytes += b.size;
      ++site.blocks;
      if (b.size >= largest[f]) largest[f] = b.size, site.stack = b.stack;
    }
    for (auto& [f, site] : sites) st.sites.push_back(site);
    std::sort(st.sites.begin(), st.sites.end(), [](const AllocationSite& a, const AllocationSite& b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes : a.frame < b.frame;
    });
    if (st.sites.size() > top_sites) st.sites.resize(top_sites);
    for (size_t e = target; e > first && st.freed_before.size() < recent_frees; --e)
      if (s.trace.action[e - 1] == TraceAction::kFreeCompleted) {
        st.freed_before.push_back(e - 1);
        st.freed_alloc_stack.push_back(alloc_stack_of_free[e - 1 - first]);
      }
  }
  return out;
}

}  // namespace stepscope::memory
