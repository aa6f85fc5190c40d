// The host span tree, checked against the plain definition it implements:
// host rows sorted by (pid, tid, start, longer first, op before runtime call,
// row), then a stack pass (pop spans that end before the row ends; the top is
// the parent). HostTree gets that order from the store's time order with a
// counting sort; this reference sorts every row by the full key.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <tuple>

#include "diagnose/host_tree.h"
#include "diagnose_fixtures.h"

namespace stepscope::diagnose {
namespace {

using testing_support::examples_dir;

struct ReferenceTree {
  std::vector<uint32_t> parent;
  std::vector<uint32_t> roots;
  std::vector<std::vector<uint32_t>> children;
};

ReferenceTree reference_tree(const trace::EventColumns& ev) {
  auto end_of = [&](uint32_t r) { return ev.ts_ns[r] + std::max<int64_t>(ev.dur_ns[r], 0); };
  auto key = [&](uint32_t r) {
    return std::tuple(ev.pid[r], ev.tid[r], ev.ts_ns[r], -end_of(r), ev.kind[r] == trace::EventKind::kRuntime, r);
  };
  std::vector<uint32_t> rows;
  for (uint32_t r = 0; r < ev.size(); ++r)
    if (is_host_row(ev.kind[r])) rows.push_back(r);
  std::sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  ReferenceTree t;
  t.parent.assign(ev.size(), HostTree::kNoRow);
  t.children.resize(ev.size());
  std::vector<uint32_t> stack;
  for (uint32_t r : rows) {
    if (!stack.empty() && (ev.pid[stack.back()] != ev.pid[r] || ev.tid[stack.back()] != ev.tid[r])) stack.clear();
    while (!stack.empty() && end_of(stack.back()) < end_of(r)) stack.pop_back();
    if (stack.empty()) {
      t.roots.push_back(r);
    } else {
      t.parent[r] = stack.back();
      t.children[stack.back()].push_back(r);
    }
    if (ev.kind[r] != trace::EventKind::kRuntime) stack.push_back(r);
  }
  return t;
}

void expect_same_tree(const trace::EventStore& store) {
  const HostTree tree(store);
  const ReferenceTree ref = reference_tree(store.events);
  ASSERT_EQ(tree.roots(), ref.roots);
  size_t with_parent = 0;
  for (uint32_t r = 0; r < store.events.size(); ++r) {
    ASSERT_EQ(tree.parent(r), ref.parent[r]) << "row " << r << " " << store.name_of(r);
    const auto kids = tree.children(r);
    ASSERT_TRUE(std::equal(kids.begin(), kids.end(), ref.children[r].begin(), ref.children[r].end())) << r;
    if (ref.parent[r] != HostTree::kNoRow) {
      ++with_parent;
      EXPECT_EQ(tree.siblings(r)[tree.sibling_index(r)], r);
    }
  }
  EXPECT_GT(with_parent, 0u) << "a tree without nesting proves nothing";
}

TEST(HostTree, MatchesTheSortedStackDefinitionOnTheExamples) {
  for (const char* scenario : {"baseline_compiled", "item_sync", "cuda_graph"}) {
    SCOPED_TRACE(scenario);
    auto loaded = trace::load_traces({examples_dir() + "/" + scenario}, trace::ReadOptions{});
    ASSERT_TRUE(loaded.ok) << loaded.error;
    expect_same_tree(*loaded.set.ranks.front());
  }
}

TEST(HostTree, MatchesTheSortedStackDefinitionOnSharedTraces) {
  SKIP_WITHOUT_SHARED();
  // Many threads (dlrm), ROCm runtime rows (amd_trace), 2021 categories (resnet).
  for (const char* folder : {"conformance/param/dlrm_8rank", "conformance/hta/amd_trace", "conformance/param/resnet"}) {
    SCOPED_TRACE(folder);
    auto loaded = analysis::testing_support::load_shared(folder);
    ASSERT_TRUE(loaded.ok) << loaded.error;
    expect_same_tree(*loaded.set.ranks.front());
  }
}

// Ties: same start (the longer span encloses), an op and a runtime call of
// equal extent (the op holds the call), and a partial overlap (siblings).
TEST(HostTree, TiesAndPartialOverlaps) {
  auto store = analysis::testing_support::load_inline({
      R"({"ph": "X", "cat": "cpu_op", "name": "inner", "pid": 1, "tid": 1, "ts": 10, "dur": 5})",
      R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 20})",
      R"({"ph": "X", "cat": "cpu_op", "name": "outer", "pid": 1, "tid": 1, "ts": 10, "dur": 20})",
      R"({"ph": "X", "cat": "cpu_op", "name": "overlapping", "pid": 1, "tid": 1, "ts": 25, "dur": 20})",
      R"({"ph": "X", "cat": "cpu_op", "name": "other thread", "pid": 1, "tid": 2, "ts": 11, "dur": 1})",
  });
  expect_same_tree(*store);
  const HostTree tree(*store);
  auto row = [&](std::string_view name) {
    for (uint32_t r = 0; r < store->events.size(); ++r)
      if (store->name_of(r) == name) return r;
    return HostTree::kNoRow;
  };
  EXPECT_EQ(tree.parent(row("inner")), row("outer"));
  EXPECT_EQ(tree.parent(row("cudaLaunchKernel")), row("outer"));
  EXPECT_EQ(tree.parent(row("overlapping")), HostTree::kNoRow);
  EXPECT_EQ(tree.parent(row("other thread")), HostTree::kNoRow);
}

// A store whose rows are not in time order (built without the final sort)
// still gets the tree of the definition.
TEST(HostTree, RowsOutOfTimeOrder) {
  auto loaded = trace::load_traces({examples_dir() + "/item_sync"}, trace::ReadOptions{});
  ASSERT_TRUE(loaded.ok) << loaded.error;
  const trace::EventStore& sorted = *loaded.set.ranks.front();
  trace::EventStore reversed;
  auto rev = [&](const auto& col) { return std::decay_t<decltype(col)>(col.rbegin(), col.rend()); };
  auto rev_compact = [&](const trace::CompactInt64Column& col, trace::CompactInt64Column& out) {
    for (size_t i = col.size(); i-- > 0;) out.push_back(col[i]);
  };
  reversed.events.ts_ns = rev(sorted.events.ts_ns);
  rev_compact(sorted.events.dur_ns, reversed.events.dur_ns);
  reversed.events.kind = rev(sorted.events.kind);
  reversed.events.pid = rev(sorted.events.pid);
  rev_compact(sorted.events.tid, reversed.events.tid);
  reversed.events.name = rev(sorted.events.name);
  ASSERT_FALSE(std::is_sorted(reversed.events.ts_ns.begin(), reversed.events.ts_ns.end()));
  expect_same_tree(reversed);
}

}  // namespace
}  // namespace stepscope::diagnose
