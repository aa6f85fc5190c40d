// End to end: a trace whose numbers push int64 (an end ts + dur past 2^63,
// durations and byte counts whose sums pass 2^63) analysed by the CLI, exact
// and --compat hta. Before the limits this printed a negative idle time and
// an idle share of about -9e15 %, exit 0. Now the event whose end does not
// fit is skipped and counted, sums saturate, and no share leaves [0, 100].
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::x_event;

std::string overflow_trace() {
  std::vector<std::string> ev;
  // One step as long as the time limit allows: 2^61 ns.
  ev.push_back(x_event("user_annotation", "ProfilerStep#1", "0", "2305843009213693.952"));
  for (int k = 0; k < 8; ++k) {
    const std::string corr = std::to_string(k + 1), stream = std::to_string(7 + k);
    ev.push_back(x_event("cuda_runtime", "cudaLaunchKernel", std::to_string(10 + k), "1", "1", "1",
                         R"("args": {"correlation": )" + corr + "}"));
    // Eight kernels of ~2^61 ns each on their own streams: their sum is 2^64.
    ev.push_back(x_event("kernel", "big_kernel", std::to_string(100 + k), "2305843009213000", "0", stream,
                         R"("args": {"device": 0, "stream": )" + stream + R"(, "correlation": )" + corr + "}"));
  }
  // Copies whose byte counts sum past 2^63, one after the other on their stream.
  for (int k = 0; k < 3; ++k)
    ev.push_back(x_event("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", std::to_string(200 + 2000 * k), "1000", "0", "20",
                         R"("args": {"device": 0, "stream": 20, "bytes": 9000000000000000000})"));
  // The adversarial case: dur fits int64 ns, ts + dur does not.
  ev.push_back(x_event("kernel", "end_does_not_fit", "1400", "9223372036854000", "0", "7",
                       R"("args": {"device": 0, "stream": 7})"));
  return testing::trace_doc(ev);
}

// Every number under a key that names a share (…pct…) is in [0, 100]; every
// idle time, total and byte count is >= 0.
void check_numbers(const nlohmann::json& j, const std::string& key, const std::string& where) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) check_numbers(it.value(), it.key(), where + "." + it.key());
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) check_numbers(j[i], key, where + "[" + std::to_string(i) + "]");
  } else if (j.is_number()) {
    const double v = j.get<double>();
    if (key.find("pct") != std::string::npos) {
      EXPECT_GE(v, 0.0) << where;
      EXPECT_LE(v, 100.0 + 1e-9) << where;
    }
    if (key.find("idle") != std::string::npos || key.find("total") != std::string::npos ||
        key.find("bytes") != std::string::npos) {
      EXPECT_GE(v, 0.0) << where;
    }
  }
}

TEST(OverflowCli, NoNegativeIdleOrShareOutsideRangeExactAndHta) {
  testing::TempDir dir;
  const std::string path = dir.write("overflow.json", overflow_trace());
  for (const std::vector<std::string>& mode : {std::vector<std::string>{}, std::vector<std::string>{"--compat", "hta"}}) {
    SCOPED_TRACE(mode.empty() ? "exact" : "hta");
    std::vector<std::string> args = {"analyze", path, "--json", "-"};
    args.insert(args.end(), mode.begin(), mode.end());
    testing::CliRun r = testing::run_cli(dir, args);
    ASSERT_EQ(r.exit_code, 0) << (r.err_lines.empty() ? "" : r.err_lines[0]);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    const nlohmann::json& imp = j["ranks"][0]["import"];
    EXPECT_EQ(imp["counters"]["time_out_of_range"], 1) << imp.dump();
    EXPECT_EQ(imp["skipped_records"], 1);
    check_numbers(j, "", "");
    // The warning line names the skip.
    ASSERT_FALSE(r.err_lines.empty());
    EXPECT_NE(r.err_lines[0].find("1 with ts or dur out of range"), std::string::npos) << r.err_lines[0];
  }
}

}  // namespace
}  // namespace stepscope::trace
