// Where a finding's example happened: its offset into the step, and the
// user's Python line it ran under (python_function frames of with_stack).
#include <gtest/gtest.h>

#include <string>

#include "analysis/analysis_fixtures.h"
#include "diagnose/diagnose_fixtures.h"
#include "diagnose/example_place.h"
#include "diagnose/host_tree.h"

namespace stepscope::diagnose {
namespace {

using analysis::testing_support::host_span;
using analysis::testing_support::kernel;
using analysis::testing_support::launch;
using analysis::testing_support::step;

TEST(PythonFrame, ParsesTheProfilersFrameNames) {
  auto f = parse_python_frame("train_gpt.py(139): apply_rope");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->file, "train_gpt.py");
  EXPECT_EQ(f->line, 139);
  EXPECT_EQ(f->function, "apply_rope");
  // Parentheses in the path: the line is the last "(digits): ".
  f = parse_python_frame("/home/u/exp (2)/run.py(7): <module>");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->file, "/home/u/exp (2)/run.py");
  EXPECT_EQ(f->function, "<module>");
  EXPECT_FALSE(parse_python_frame("<built-in method append of list object at 0x7fe1bb3c3240>"));
  EXPECT_FALSE(parse_python_frame("x.py(1a): f"));
  EXPECT_FALSE(parse_python_frame("x.py(12): "));
  EXPECT_FALSE(parse_python_frame("aten::mm"));
}

TEST(PythonFrame, UserCodeIsOutsideTorchAndTheStandardLibrarysWrappers) {
  auto user = [](const char* name) { return is_user_frame(*parse_python_frame(name)); };
  EXPECT_TRUE(user("train_gpt.py(160): forward"));
  EXPECT_TRUE(user("transformers/models/gpt2/modeling_gpt2.py(330): forward"));
  EXPECT_FALSE(user("torch/nn/modules/module.py(1783): _call_impl"));
  EXPECT_FALSE(user("/opt/conda/lib/python3.11/site-packages/torch/optim/adam.py(214): step"));
  EXPECT_FALSE(user("contextlib.py(81): inner"));
  EXPECT_FALSE(user("/usr/lib/python3.11/functools.py(12): wrapper"));
  EXPECT_FALSE(user("importlib/__init__.py(126): import_module"));
  EXPECT_TRUE(user("mytorchutils.py(3): f"));  // "torch" must be a path component
}

// A kernel's example is placed through its launch: the launch call sits in
// user code (run.py:10) under a torch frame; the kernel is on the GPU.
TEST(ExamplePlace, AGpuExampleNamesTheUserLineOfItsLaunch) {
  const int64_t ms = 1'000'000;
  auto d = testing_support::diagnose_inline({
      step(1, 0, 10 * ms),
      host_span("python_function", "run.py(10): train_step", 1 * ms, 5 * ms),
      host_span("python_function", "torch/nn/functional.py(2): relu", 2 * ms, 2 * ms),
      host_span("cpu_op", "aten::relu", 2 * ms + 1000, 1 * ms),
      launch(2 * ms + 2000, 5000, 7),
      kernel("relu_kernel", 3 * ms, 100'000, 7, 7),
  });
  Finding f;
  f.evidence.examples.push_back({.rank = d->stores[0]->rank, .step = 1, .ts_ns = 3 * ms, .dur_ns = 100'000,
                                 .name = "relu_kernel"});
  f.evidence.examples.push_back({.rank = d->stores[0]->rank, .step = 1, .ts_ns = 2 * ms + 1000, .dur_ns = ms,
                                 .name = "aten::relu"});
  f.evidence.examples.push_back({.rank = d->stores[0]->rank, .step = -1, .ts_ns = 9 * ms, .name = "nothing"});
  std::vector<Finding> fs{f};
  HostTree tree(*d->stores[0]);
  place_examples(fs, *d->stores[0], tree, d->ranks[0].steps);
  const auto& ex = fs[0].evidence.examples;
  EXPECT_EQ(ex[0].source, "run.py:10 in train_step");
  EXPECT_EQ(ex[0].step_offset_ns, 3 * ms);
  EXPECT_EQ(ex[1].source, "run.py:10 in train_step");
  EXPECT_EQ(ex[2].source, "");
  EXPECT_EQ(ex[2].step_offset_ns, -1);
}

// A real with_stack trace (PyTorch 2.11, H200): the examples the detectors
// chose on the main thread name the workload's own files; backward kernels
// (autograd's thread, no Python frames) name none.
TEST(ExamplePlace, WithStackTraceNamesTheWorkloadsFiles) {
  auto d = testing_support::diagnose_folder(stepscope::testing::source_dir() + "/tests/data/parity/with_stack");
  int named = 0, examples = 0;
  for (const auto* list : {&d->d.findings, &d->d.minor})
    for (const Finding& f : *list)
      for (const Example& ex : f.evidence.examples) {
        ++examples;
        if (ex.step >= 0) EXPECT_GE(ex.step_offset_ns, 0) << ex.name;
        if (ex.source.empty()) continue;
        ++named;
        EXPECT_TRUE(ex.source.starts_with("train_gpt.py:") || ex.source.starts_with("parity_traces.py:")) << ex.source;
      }
  EXPECT_GE(examples, 10);
  EXPECT_GE(named, 5);
}

}  // namespace
}  // namespace stepscope::diagnose
