// The run without the profiler: settings read from the trace, the model's
// host cost taken off a host-bound step (and not off a GPU-bound one), and
// calibration to a measured unprofiled step; the trace key and the option
// that carry that measurement.
#include <gtest/gtest.h>

#include "whatif/built_graph.h"
#include "whatif/profiler_cost.h"

namespace stepscope::whatif {
namespace {

using analysis::testing_support::host_span;
using analysis::testing_support::kernel;
using analysis::testing_support::launch;
using analysis::testing_support::step;
using analysis::testing_support::us_text;
using diagnose::testing_support::diagnose_inline;

std::string memory_event(int64_t ts_ns) {
  return R"({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": )" +
         us_text(ts_ns) + R"(, "args": {"Bytes": 512, "Total Reserved": 2097152}})";
}

std::string shaped_op(const std::string& name, int64_t ts_ns, int64_t dur_ns) {
  return stepscope::testing::x_event("cpu_op", name, us_text(ts_ns), us_text(dur_ns), "1", "1",
                                     R"("args": {"Input Dims": [[8, 8]], "Input type": ["float"]})");
}

// Two launch-bound steps of 100 us: each holds `ops` CPU ops between its
// launches, and its kernels take 2 us.
std::vector<std::string> host_bound(int ops, bool shapes, bool memory) {
  std::vector<std::string> ev = {step(1, 0, 100'000), step(2, 100'000, 100'000)};
  for (int s = 0; s < 2; ++s)
    for (int k = 0; k < 4; ++k) {
      const int64_t t = s * 100'000 + 10'000 + 22'000 * k;
      for (int i = 0; i < ops; ++i) {
        const int64_t at = t + 1'000 + 1'000 * i;
        ev.push_back(shapes ? shaped_op("aten::add", at, 500) : host_span("cpu_op", "aten::add", at, 500));
        if (memory) ev.push_back(memory_event(at + 100));
      }
      const int64_t l = t + 18'000;
      ev.push_back(launch(l, 2'000, 10 * s + k + 1));
      ev.push_back(kernel("void at::native::vectorized_elementwise_kernel<4>", l + 3'000, 2'000, 7, 10 * s + k + 1));
    }
  return ev;
}

using Built = testing_support::BuiltGraph;
Built build(const std::vector<std::string>& events, const std::string& header = "") {
  return testing_support::build_graph(events, header);
}

TEST(ProfilerCost, SettingsComeFromWhatTheTraceHolds) {
  Built plain = build(host_bound(3, false, false));
  ProfilerSettings s = infer_profiler_settings(*plain.run->stores[0]);
  EXPECT_FALSE(s.shapes);
  EXPECT_FALSE(s.memory);
  EXPECT_FALSE(s.stack);
  EXPECT_FALSE(s.flops);
  EXPECT_EQ(s.cpu_ops, 24);
  EXPECT_EQ(s.runtime_calls, 8);

  Built rich = build(host_bound(3, true, true));
  s = infer_profiler_settings(*rich.run->stores[0]);
  EXPECT_TRUE(s.shapes);
  EXPECT_TRUE(s.memory);
  EXPECT_FALSE(s.stack);
  EXPECT_EQ(s.memory_events, 24);
}

TEST(ProfilerCost, AHostBoundStepLosesTheModelsCost) {
  Built b = build(host_bound(3, false, false));
  ASSERT_TRUE(b.graph.usable());
  const ProfilerCostModel m;
  UnprofiledBaseline u = unprofiled_baseline(b.graph, *b.run->stores[0], std::nullopt, m);
  EXPECT_FALSE(u.calibrated);
  EXPECT_EQ(u.steps, 2);
  EXPECT_EQ(u.profiled_step_ns, 100'000);
  // Per step: 12 ops and 4 launches at per_op_ns, and the step's own
  // bookkeeping, which lies just before each step: inside the windows only
  // for the second step.
  const int64_t cost = 16 * m.per_op_ns + m.per_step_ns / 2;
  EXPECT_EQ(u.model_cost_ns, cost);
  // The step is the host's: it shortens by the host cost inside it, up to
  // what the windows can show (the first step's bookkeeping lies before it).
  EXPECT_LT(u.unprofiled_step_ns, u.profiled_step_ns);
  EXPECT_GE(u.unprofiled_step_ns, u.profiled_step_ns - cost);
  EXPECT_LE(u.unprofiled_step_ns, u.profiled_step_ns - 16 * m.per_op_ns / 2);

  // Shapes and memory events cost more.
  Built rich = build(host_bound(3, true, true));
  UnprofiledBaseline ur = unprofiled_baseline(rich.graph, *rich.run->stores[0], std::nullopt, m);
  EXPECT_EQ(ur.model_cost_ns, 16 * (m.per_op_ns + m.shapes_extra_ns) + 12 * m.memory_event_ns + m.per_step_ns / 2);
  EXPECT_LT(ur.unprofiled_step_ns, u.unprofiled_step_ns);
}

std::string python_call(int64_t ts_ns, int64_t dur_ns) {
  return stepscope::testing::x_event("python_function", "<built-in function len>", us_text(ts_ns), us_text(dur_ns),
                                     "1", "1", R"("args": {"Python id": 7})");
}

// with_stack: model code (a few Python calls per op) is charged the model-code
// cost per call; a pure-Python loop (a DataLoader tokenizing, dozens of calls
// per op) only the tracer's bookkeeping, so the loop's own work is not taken
// for the profiler's.
TEST(ProfilerCost, APurePythonLoopCostsOnlyTheTracersBookkeeping) {
  const ProfilerCostModel m;
  auto with_calls = [](int per_gap) {
    std::vector<std::string> ev = host_bound(3, false, false);
    for (int s = 0; s < 2; ++s)  // in each step, calls in the 2 us before the first op
      for (int i = 0; i < per_gap; ++i) ev.push_back(python_call(s * 100'000 + 9'000 + i, 1));
    return ev;
  };
  // 2 calls per step beside 16 ops and launches: model code.
  Built few = build(with_calls(2));
  UnprofiledBaseline uf = unprofiled_baseline(few.graph, *few.run->stores[0], std::nullopt, m);
  EXPECT_TRUE(uf.settings.stack);
  EXPECT_EQ(uf.model_cost_ns, 16 * m.per_op_ns + 2 * m.python_event_ns + m.per_step_ns / 2);
  // 400 calls per step (25 per op and launch): a loop.
  Built many = build(with_calls(400));
  UnprofiledBaseline um = unprofiled_baseline(many.graph, *many.run->stores[0], std::nullopt, m);
  EXPECT_EQ(um.model_cost_ns, 16 * m.per_op_ns + 400 * m.python_loop_event_ns + m.per_step_ns / 2);
}

TEST(ProfilerCost, AGpuBoundStepKeepsItsTime) {
  // One 90 us kernel per 100 us step, launched at the step's start: the
  // host's cost is hidden behind the GPU.
  std::vector<std::string> ev = {step(1, 0, 100'000), step(2, 100'000, 100'000)};
  for (int s = 0; s < 2; ++s) {
    const int64_t t = s * 100'000 + 1'000;
    ev.push_back(host_span("cpu_op", "aten::mm", t, 3'000));
    ev.push_back(launch(t + 1'000, 1'000, s + 1));
    ev.push_back(kernel("sm90_xmma_gemm_bf16bf16_bf16f32", t + 5'000, 94'000, 7, s + 1));
    ev.push_back(launch(t + 97'000, 1'000, 100 + s, "cudaStreamSynchronize"));
  }
  Built b = build(ev);
  UnprofiledBaseline u = unprofiled_baseline(b.graph, *b.run->stores[0]);
  ASSERT_GT(u.unprofiled_step_ns, 0);
  EXPECT_GT(u.unprofiled_step_ns, u.profiled_step_ns * 95 / 100);
}

TEST(ProfilerCost, CalibrationMeetsTheMeasuredStep) {
  Built b = build(host_bound(3, false, false));
  UnprofiledBaseline u = unprofiled_baseline(b.graph, *b.run->stores[0], 90.0 / 1000.0);  // 90 us
  EXPECT_TRUE(u.calibrated);
  // The model's whole cost would take the step below 90 us: a fraction of it.
  EXPECT_GT(u.scale, 0.0);
  EXPECT_LT(u.scale, 1.0);
  EXPECT_NEAR(static_cast<double>(u.unprofiled_step_ns), 90'000.0, 90.0);  // within 0.1%

  // A measurement no host cost can reach is said, not met silently.
  UnprofiledBaseline low = unprofiled_baseline(b.graph, *b.run->stores[0], 1.0 / 1000.0);
  EXPECT_TRUE(low.calibrated);
  EXPECT_GT(low.unprofiled_step_ns, 1'000);
  ASSERT_FALSE(low.notes.empty());
  EXPECT_NE(low.notes.back().find("still leaves the step above"), std::string::npos) << low.notes.back();

  // One at or above the profiled step takes nothing off.
  UnprofiledBaseline high = unprofiled_baseline(b.graph, *b.run->stores[0], 0.2);
  EXPECT_EQ(high.scale, 0.0);
  EXPECT_EQ(high.unprofiled_step_ns, high.profiled_step_ns);
}

TEST(ProfilerCost, TheTraceKeyCalibratesTheDiagnosis) {
  auto run = diagnose_inline(host_bound(3, false, false), R"("stepscope_unprofiled_step_ms": 0.09)");
  ASSERT_EQ(run->stores[0]->meta.unprofiled_step_ms, 0.09);
  const auto& u = run->d.replay[0].unprofiled;
  EXPECT_TRUE(u.estimated);
  EXPECT_TRUE(u.calibrated);
  EXPECT_NEAR(static_cast<double>(u.unprofiled_step_ns), 90'000.0, 90.0);

  // The option overrides the trace.
  diagnose::DiagnoseOptions o;
  o.unprofiled_step_ms = 0.095;
  auto over = diagnose_inline(host_bound(3, false, false), R"("stepscope_unprofiled_step_ms": 0.09)", o);
  EXPECT_NEAR(static_cast<double>(over->d.replay[0].unprofiled.unprofiled_step_ns), 95'000.0, 95.0);
}

TEST(ProfilerCost, AKeyThatIsNoPositiveNumberIsCountedAndIgnored) {
  for (const char* bad : {R"("stepscope_unprofiled_step_ms": -3)", R"("stepscope_unprofiled_step_ms": "fast")",
                          R"("stepscope_unprofiled_step_ms": [1])", R"("stepscope_unprofiled_step_ms": 1e400)"}) {
    auto run = diagnose_inline(host_bound(1, false, false), bad);
    EXPECT_FALSE(run->stores[0]->meta.unprofiled_step_ms.has_value()) << bad;
    EXPECT_FALSE(run->d.replay[0].unprofiled.calibrated) << bad;
  }
  auto text = diagnose_inline(host_bound(1, false, false), R"("stepscope_unprofiled_step_ms": "0.5")");
  EXPECT_EQ(text->stores[0]->meta.unprofiled_step_ms, 0.5);
}

}  // namespace
}  // namespace stepscope::whatif
