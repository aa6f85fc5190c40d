// Where a finding's example happened, in the user's terms: how far into its
// step it started, and the line of the user's Python code it ran under. With
// `with_stack=True` the profiler records each Python call as a
// python_function span named "FILE(LINE): FUNCTION" (paths shortened to the
// sys.path entry they are under: "torch/nn/modules/module.py(1783):
// _call_impl", "train_gpt.py(139): apply_rope"). The example's innermost
// enclosing frame that is not torch's own code, a built-in or one of the
// standard library's wrappers (contextlib, functools, ...) is the line the
// user can change (docs/findings.md, "Evidence").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/finding.h"
#include "analysis/steps.h"
#include "diagnose/host_tree.h"
#include "trace/event_store.h"

namespace stepscope::diagnose {

struct PythonFrame {
  std::string_view file;      // as recorded, e.g. "train_gpt.py" or "torch/nn/functional.py"
  int64_t line = 0;
  std::string_view function;  // e.g. "forward", "<genexpr>"
};

// The frame a python_function name describes, or nullopt ("<built-in ...>",
// or any other shape).
std::optional<PythonFrame> parse_python_frame(std::string_view name);

// False for torch's own files (a "torch" path component), and for the
// standard-library modules that only wrap calls.
bool is_user_frame(const PythonFrame& frame);

// "FILE:LINE in FUNCTION" of the innermost user frame enclosing `row` on its
// thread (a GPU row: its launch call's), or "" when there is none.
std::string user_source_of(const trace::EventStore& store, const HostTree& tree, uint32_t row);

// For each example of `findings` on this store's rank: Example::step_offset_ns
// from its step's start (the ProfilerStep#N span on the host), and
// Example::source where the trace has python_function spans (the example's
// event found by its start and name; a GPU activity through its launch).
void place_examples(std::vector<Finding>& findings, const trace::EventStore& store, const HostTree& tree,
                    const analysis::StepsResult& steps);

// Example::step_offset_ns from the start of the example's step in `steps`
// (left as it is when the step is not there).
void place_in_step(Example& ex, const analysis::StepsResult& steps);

// place_examples for findings merged from summaries: the step offsets of the
// examples on `rank`, from its steps. Their sources were found when the
// rank's parts were collected (diagnose/rank_parts.h), where the store was.
void place_examples_in_steps(std::vector<Finding>& findings, int64_t rank, const analysis::StepsResult& steps);

// Places examples of one rank one at a time, as place_examples does (the
// rows of a name are found once per name).
class ExamplePlacer {
 public:
  ExamplePlacer(const trace::EventStore& store, const HostTree& tree, const analysis::StepsResult& steps);
  // An example on this store's rank: its step offset, and its source where
  // the trace has stacks and it has none yet.
  void place(Example& ex);

 private:
  const std::vector<uint32_t>& rows_named(std::string_view name);
  const trace::EventStore& store_;
  const HostTree& tree_;
  const analysis::StepsResult& steps_;
  bool stacks_ = false;
  std::map<trace::StringId, std::vector<uint32_t>> rows_by_name_;
};

}  // namespace stepscope::diagnose
