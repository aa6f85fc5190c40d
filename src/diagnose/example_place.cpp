#include "diagnose/example_place.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <map>

#include <fmt/core.h>

namespace stepscope::diagnose {

namespace {

using trace::EventKind;

// Standard-library modules that appear on stacks around user code without
// being where the work is chosen: context managers, decorators, typing casts,
// threads, import machinery.
constexpr std::array<std::string_view, 16> kWrapperModules = {
    "contextlib.py", "functools.py", "typing.py",  "threading.py", "abc.py",     "enum.py",
    "weakref.py",    "copy.py",      "inspect.py", "runpy.py",     "warnings.py", "copyreg.py",
    "_weakrefset.py", "selectors.py", "queue.py",  "dataclasses.py"};

bool has_torch_component(std::string_view file) {
  // "torch/..." or ".../torch/..." (an absolute path when the file is outside sys.path).
  return file.starts_with("torch/") || file.find("/torch/") != std::string_view::npos;
}

bool is_stdlib_wrapper(std::string_view file) {
  for (std::string_view m : kWrapperModules)
    if (file == m || (file.ends_with(m) && file[file.size() - m.size() - 1] == '/')) return true;
  // Packages of the standard library that only dispatch (importlib, asyncio, concurrent).
  return file.starts_with("importlib/") || file.starts_with("asyncio/") || file.starts_with("concurrent/");
}

// A host row stands for itself; a GPU activity for its launch call.
uint32_t host_row_of(const trace::EventStore& store, uint32_t row) {
  if (is_host_row(store.events.kind[row])) return row;
  const auto& gpu = store.gpu_rows;
  auto g = std::lower_bound(gpu.begin(), gpu.end(), row);
  if (g == gpu.end() || *g != row) return trace::EventStore::kNoRow;
  const size_t k = static_cast<size_t>(g - gpu.begin());
  return k < store.launch_of_gpu.size() ? store.launch_of_gpu[k] : trace::EventStore::kNoRow;
}

// The event an example describes: the row of its name whose span is nearest
// its own (overlapping first, then by start). Detectors place an example at
// the event itself or at the idle gap it explains, so the start alone does
// not identify it.
uint32_t example_row(const trace::EventStore& store, const std::vector<uint32_t>& rows, const Example& ex) {
  if (rows.empty()) return trace::EventStore::kNoRow;
  const auto& ev = store.events;
  const int64_t lo = ex.ts_ns, hi = ex.ts_ns + std::max<int64_t>(ex.dur_ns, 0);
  // Rows start in time order; those starting after `hi` only grow farther, and
  // a search back from there reaches every row that can overlap.
  auto first_after = std::upper_bound(rows.begin(), rows.end(), hi,
                                      [&](int64_t t, uint32_t r) { return t < ev.ts_ns[r]; });
  uint32_t best = trace::EventStore::kNoRow;
  int64_t best_gap = INT64_MAX, best_shift = INT64_MAX;
  auto consider = [&](uint32_t r) {
    const int64_t start = ev.ts_ns[r], end = start + ev.dur_ns[r];
    const int64_t gap = end < lo ? lo - end : (start > hi ? start - hi : 0);
    const int64_t shift = start > lo ? start - lo : lo - start;
    if (gap < best_gap || (gap == best_gap && shift < best_shift)) best = r, best_gap = gap, best_shift = shift;
  };
  if (first_after != rows.end()) consider(*first_after);
  // Back from `hi`: stop once a row ends before the best gap could improve
  // (rows are checked at most a few thousand deep: long-running spans of one
  // name are rare, and an example near them is found in that depth).
  size_t depth = 0;
  for (auto it = first_after; it != rows.begin() && depth < 4096; ++depth) {
    --it;
    consider(*it);
    if (best_gap == 0 && ev.ts_ns[*it] < lo && best_shift <= lo - ev.ts_ns[*it]) break;
  }
  return best == trace::EventStore::kNoRow ? best : host_row_of(store, best);
}

}  // namespace

std::optional<PythonFrame> parse_python_frame(std::string_view name) {
  // "FILE(LINE): FUNCTION"; FILE itself may hold parentheses, so the line is
  // the last "(digits): " in the name.
  const size_t sep = name.rfind("): ");
  if (sep == std::string_view::npos) return std::nullopt;
  const size_t open = name.rfind('(', sep);
  if (open == std::string_view::npos || open == 0 || open + 1 == sep) return std::nullopt;
  PythonFrame f;
  const char* first = name.data() + open + 1;
  const char* last = name.data() + sep;
  auto [ptr, ec] = std::from_chars(first, last, f.line);
  if (ec != std::errc() || ptr != last || f.line < 0) return std::nullopt;
  f.file = name.substr(0, open);
  f.function = name.substr(sep + 3);
  if (f.function.empty() || f.file.starts_with('<')) return std::nullopt;
  return f;
}

bool is_user_frame(const PythonFrame& frame) {
  return !has_torch_component(frame.file) && !is_stdlib_wrapper(frame.file);
}

std::string user_source_of(const trace::EventStore& store, const HostTree& tree, uint32_t row) {
  // Parents are strictly enclosing spans on the same thread, so the walk ends.
  for (uint32_t r = tree.parent(row); r != HostTree::kNoRow; r = tree.parent(r)) {
    if (store.events.kind[r] != EventKind::kPythonFunction) continue;
    std::optional<PythonFrame> f = parse_python_frame(store.name_of(r));
    if (f && is_user_frame(*f)) return fmt::format("{}:{} in {}", f->file, f->line, f->function);
  }
  return {};
}

ExamplePlacer::ExamplePlacer(const trace::EventStore& store, const HostTree& tree, const analysis::StepsResult& steps)
    : store_(store), tree_(tree), steps_(steps) {
  const auto& kinds = store.events.kind;
  stacks_ = std::find(kinds.begin(), kinds.end(), EventKind::kPythonFunction) != kinds.end();
}

const std::vector<uint32_t>& ExamplePlacer::rows_named(std::string_view name) {
  const trace::StringId id = store_.strings.find(name);
  auto [it, fresh] = rows_by_name_.try_emplace(id);
  if (fresh && id != trace::StringTable::kMissing) {
    const auto& names = store_.events.name;
    for (uint32_t r = 0; r < names.size(); ++r)
      if (names[r] == id) it->second.push_back(r);
  }
  return it->second;
}

void ExamplePlacer::place(Example& ex) {
  place_in_step(ex, steps_);
  if (!stacks_ || !ex.source.empty()) return;
  const uint32_t row = example_row(store_, rows_named(ex.name), ex);
  if (row != trace::EventStore::kNoRow) ex.source = user_source_of(store_, tree_, row);
}

void place_in_step(Example& ex, const analysis::StepsResult& steps) {
  for (const analysis::StepSpan& s : steps.steps)
    if (s.step == ex.step) ex.step_offset_ns = ex.ts_ns - s.cpu_start_ns;
}

void place_examples(std::vector<Finding>& findings, const trace::EventStore& store, const HostTree& tree,
                    const analysis::StepsResult& steps) {
  ExamplePlacer placer(store, tree, steps);
  for (Finding& f : findings)
    for (Example& ex : f.evidence.examples)
      if (ex.rank == store.rank) placer.place(ex);
}

void place_examples_in_steps(std::vector<Finding>& findings, int64_t rank, const analysis::StepsResult& steps) {
  for (Finding& f : findings)
    for (Example& ex : f.evidence.examples)
      if (ex.rank == rank) place_in_step(ex, steps);
}

}  // namespace stepscope::diagnose
