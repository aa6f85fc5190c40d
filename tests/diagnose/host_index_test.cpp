// The host index finds record_function ranges in the category each PyTorch
// release wrote them: user_annotation since 1.10, "Operator" (cpu_op) in 1.8
// and 1.9 (the TensorBoard plugin takes both: pytorch/kineto tb_plugin
// torch_tb_profiler/profiler/event_parser.py, _parse_step). Checked on a
// synthetic trace and on the PyTorch 1.8 excerpt
// (tests/data/wild/pytorch_1_8_resnet50).
#include <gtest/gtest.h>

#include "diagnose/diagnose_fixtures.h"
#include "diagnose/host_index.h"

namespace stepscope::diagnose {
namespace {

using analysis::testing_support::host_span;
using analysis::testing_support::load_inline;
using analysis::testing_support::step;

std::vector<int64_t> durations_us(const HostCalls& calls) {
  std::vector<int64_t> out;
  for (const HostCall& c : calls.calls()) out.push_back((c.end_ns - c.start_ns) / 1000);
  return out;
}

TEST(HostIndex, OptimizerStepInEitherRecordFunctionCategory) {
  auto store = load_inline({
      step(1, 0, 100'000),
      host_span("Operator", "Optimizer.step#SGD.step", 10'000, 20'000),          // PyTorch 1.8/1.9
      host_span("user_annotation", "Optimizer.step#AdamW.step", 50'000, 30'000),  // PyTorch >= 1.10
      host_span("python_function", "Optimizer.step#AdamW.step", 90'000, 5'000),   // not a record_function range
  });
  const HostIndex h = build_host_index(*store);
  EXPECT_EQ(durations_us(h.optimizer_steps), (std::vector<int64_t>{20, 30}));
  EXPECT_TRUE(is_record_function_kind(trace::EventKind::kCpuOp));
  EXPECT_TRUE(is_record_function_kind(trace::EventKind::kUserAnnotation));
  EXPECT_FALSE(is_record_function_kind(trace::EventKind::kPythonFunction));
  EXPECT_FALSE(is_record_function_kind(trace::EventKind::kGpuUserAnnotation));
}

const std::string& pytorch18_dir() {
  static const std::string dir = stepscope::testing::test_data_dir() + "/wild/pytorch_1_8_resnet50";
  return dir;
}

TEST(HostIndex, RealPyTorch18DataLoaderAndOptimizerSpans) {
  trace::LoadResult r = trace::load_traces({pytorch18_dir()}, trace::ReadOptions{});
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.set.ranks.size(), 1u);
  const HostIndex h = build_host_index(*r.set.ranks[0]);
  // "dur" of each range as written (µs), one per step.
  EXPECT_EQ(durations_us(h.dataloader), (std::vector<int64_t>{68694, 68777, 73418, 71425, 70844, 62633}));
  EXPECT_EQ(durations_us(h.optimizer_steps), (std::vector<int64_t>{20384, 18936, 17822, 20491, 17897, 17457}));
}

TEST(HostIndex, RealPyTorch18OptimizerIsAssessed) {
  auto run = testing_support::diagnose_folder(pytorch18_dir());
  for (const NotAssessed& n : run->d.not_assessed)
    EXPECT_NE(n.detector, "unfused_optimizer") << n.reason;
}

}  // namespace
}  // namespace stepscope::diagnose
