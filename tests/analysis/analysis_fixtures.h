// Helpers for analysis tests: tiny inline traces with times given in ns (the
// helpers write them as the µs decimals Kineto uses), and the shared real
// traces with HTA 0.6.1's results beside them.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/rank_analysis.h"
#include "test_paths.h"
#include "trace/trace_fixtures.h"
#include "trace/trace_set.h"

namespace stepscope::analysis::testing_support {

// 1234567 ns -> "1234.567" (µs with three decimals: exact to the ns).
inline std::string us_text(int64_t ns) {
  char buf[48];
  const char* sign = ns < 0 ? "-" : "";
  int64_t a = ns < 0 ? -ns : ns;
  std::snprintf(buf, sizeof buf, "%s%lld.%03lld", sign, static_cast<long long>(a / 1000),
                static_cast<long long>(a % 1000));
  return buf;
}

// A kernel on device 0, `stream`, launched by correlation `corr` (-1: none).
inline std::string kernel(const std::string& name, int64_t ts_ns, int64_t dur_ns, int stream, int64_t corr,
                          const std::string& cat = "kernel", const std::string& extra_args = "") {
  std::string args = R"("args": {"device": 0, "stream": )" + std::to_string(stream);
  if (corr >= 0) args += R"(, "correlation": )" + std::to_string(corr);
  if (!extra_args.empty()) args += ", " + extra_args;
  args += "}";
  return stepscope::testing::x_event(cat, name, us_text(ts_ns), us_text(dur_ns), "0", std::to_string(stream), args);
}

// The runtime call that launched correlation `corr`, on host thread 1.
inline std::string launch(int64_t ts_ns, int64_t dur_ns, int64_t corr, const std::string& name = "cudaLaunchKernel") {
  return stepscope::testing::x_event("cuda_runtime", name, us_text(ts_ns), us_text(dur_ns), "1", "1",
                                     R"("args": {"correlation": )" + std::to_string(corr) + "}");
}

// A host span of category `cat` ("cpu_op", "user_annotation", ...) on host thread 1.
inline std::string host_span(const std::string& cat, const std::string& name, int64_t ts_ns, int64_t dur_ns) {
  return stepscope::testing::x_event(cat, name, us_text(ts_ns), us_text(dur_ns), "1", "1");
}

// A ProfilerStep#n host annotation.
inline std::string step(int n, int64_t ts_ns, int64_t dur_ns) {
  return stepscope::testing::x_event("user_annotation", "ProfilerStep#" + std::to_string(n), us_text(ts_ns),
                                     us_text(dur_ns), "1", "1");
}

inline std::unique_ptr<trace::EventStore> load_inline(const std::vector<std::string>& events,
                                                      const std::string& header = "") {
  stepscope::testing::TempDir dir;
  auto store = std::make_unique<trace::EventStore>();
  trace::ReadOutcome out =
      stepscope::testing::read(dir.write("rank0.json", stepscope::testing::trace_doc(events, header)), *store);
  EXPECT_TRUE(out.ok) << out.error;
  return store;
}

// Loads every rank of a ../shared folder (e.g. "conformance/param/linear").
inline trace::LoadResult load_shared(const std::string& folder) {
  trace::LoadResult r = trace::load_traces({stepscope::testing::shared_dir() + "/" + folder}, trace::ReadOptions{});
  EXPECT_TRUE(r.ok) << r.error;
  return r;
}

// What HTA 0.6.1 computed on that folder.
inline nlohmann::json hta_expected(const std::string& folder) {
  std::ifstream in(stepscope::testing::shared_dir() + "/" + folder + "/hta_expected.json");
  return nlohmann::json::parse(in);
}

// Every shared folder that holds traces.
inline std::vector<std::string> shared_trace_folders() {
  std::vector<std::string> out;
  for (const char* group : {"conformance/hta", "conformance/param", "traces/h200"}) {
    std::string base = stepscope::testing::shared_dir() + "/" + group;
    if (!std::filesystem::is_directory(base)) continue;
    for (const auto& e : std::filesystem::directory_iterator(base))
      if (e.is_directory()) out.push_back(std::string(group) + "/" + e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Calls check(folder, analysis) with the default analysis of every rank of
// every shared trace folder: the walk of the "...OnEverySharedTrace" tests.
template <typename Check>
void for_each_shared_rank(Check&& check) {
  for (const std::string& folder : shared_trace_folders()) {
    trace::LoadResult lr = load_shared(folder);
    for (const auto& store : lr.set.ranks) check(folder, analyze_rank(*store, AnalysisOptions{}));
  }
}

}  // namespace stepscope::analysis::testing_support
