// `stepscope memory` as a user runs it: the report of a snapshot, its JSON,
// the OOM verdicts of the synthetic stories (tests/data/snapshots/), and
// bad files refused in one line with exit status 2.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "cli_run.h"
#include "memory/join_fixtures.h"

namespace stepscope::testing {
namespace {

std::string snap(const std::string& name) { return test_data_dir() + "/snapshots/" + name; }

TEST(MemoryCommand, ReportsPeaksSitesAndTheOomCause) {
  TempDir dir;
  const CliRun r = run_cli(dir, {"memory", snap("snapshot_p5.pickle")});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("peak allocated 18.00 MiB at event 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("attn.py:7 softmax"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OOM at event 8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("capacity: 12.0 MiB requested"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err_lines.empty());
}

TEST(MemoryCommand, JsonOfAFragmentationOom) {
  TempDir dir;
  const std::string json = dir.file("m.json");
  const CliRun r = run_cli(dir, {"memory", snap("fragmented_p4.pickle"), "--json", json, "-q"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.out.empty());
  std::ifstream f(json);
  const nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_EQ(j["schema_version"], 2);
  ASSERT_EQ(j["devices"].size(), 1u);
  const auto& d = j["devices"][0];
  EXPECT_EQ(d["peak"]["allocated_bytes"], 40 << 20);
  EXPECT_EQ(d["churn"]["ooms"], 1);
  ASSERT_EQ(d["ooms"].size(), 1u);
  const auto& oom = d["ooms"][0];
  EXPECT_EQ(oom["cause"], "fragmentation");
  EXPECT_EQ(oom["requested_bytes"], 8 << 20);
  EXPECT_EQ(oom["largest_free_block_in_pool_bytes"], 4 << 20);
  EXPECT_EQ(oom["before"]["free_bytes"], 20 << 20);
  EXPECT_NEAR(oom["before"]["fragmentation"].get<double>(), 0.8, 1e-12);
  EXPECT_EQ(oom["before"]["live_by_site"][0]["site"], "model.py:42 forward");
  EXPECT_EQ(oom["before"]["freed_before"].size(), 5u);
  EXPECT_EQ(j["allocator_settings"]["expandable_segments"], false);
}

TEST(MemoryCommand, WithATraceOfTheSameRun) {
  using namespace stepscope::memory::join_fixtures;
  TempDir dir;
  const std::string trace = dir.write("rank0.json", trace_doc(trace_events(true), kHeader));
  const std::string json = dir.file("m.json");
  const CliRun r = run_cli(dir, {"memory", snap("snapshot_p4.pickle"), trace, "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("clocks aligned by 4 allocations"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("aten::mm"), std::string::npos) << r.out;
  std::ifstream f(json);
  const nlohmann::json j = nlohmann::json::parse(f);
  const auto& tj = j["devices"][0]["trace_join"];
  EXPECT_EQ(tj["offset_ns"], 2'500'000);
  EXPECT_EQ(tj["steps"].size(), 2u);
  EXPECT_EQ(tj["ops"][0]["op"], "aten::mm");
  EXPECT_EQ(j["trace"], trace);
  // A trace that cannot be read is a one-line error naming it.
  const CliRun bad = run_cli(dir, {"memory", snap("snapshot_p4.pickle"), dir.write("bad.json", "{\"traceEvents\": [")});
  EXPECT_EQ(bad.exit_code, 2);
  ASSERT_EQ(bad.err_lines.size(), 1u);
  EXPECT_NE(bad.err_lines[0].find("bad.json"), std::string::npos) << bad.err_lines[0];
}

TEST(MemoryCommand, FindingsInTheJsonAndTheTerminal) {
  TempDir dir;
  const std::string json = dir.file("m.json");
  const CliRun r = run_cli(dir, {"memory", snap("paged_oom_p4.pickle"), "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("Findings\n\n  1. [memory_capacity] 1 of 1 out-of-memory error on device 0 was fragmentation"),
            std::string::npos)
      << r.out;
  std::ifstream f(json);
  const nlohmann::json j = nlohmann::json::parse(f);
  ASSERT_EQ(j["findings"].size(), 1u);
  EXPECT_EQ(j["findings"][0]["detector"], "memory_snapshot");
  EXPECT_EQ(j["findings"][0]["saves_time"], false);
  EXPECT_TRUE(j["findings"][0]["evidence"]["examples"][0]["ts_us"].is_null());
  EXPECT_EQ(j["devices"][0]["ooms"][0]["fits_with_expandable_segments"], true);
  EXPECT_EQ(j["devices"][0]["ooms"][0]["before"]["free_in_whole_pages_bytes"], 60 << 20);
}

TEST(MemoryCommand, AnalyzeTakesTheSnapshotsFindings) {
  using namespace stepscope::memory::join_fixtures;
  TempDir dir;
  const std::string trace = dir.write("rank0.json", trace_doc(trace_events(true), kHeader));
  const std::string json = dir.file("a.json");
  const CliRun r = run_cli(dir, {"analyze", trace, "--memory-snapshot", snap("snapshot_p4.pickle"), "--json", json,
                                 "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream f(json);
  const nlohmann::json j = nlohmann::json::parse(f);
  const nlohmann::json* found = nullptr;
  for (const auto& x : j["diagnosis"]["findings"])
    if (x["detector"] == "memory_snapshot") found = &x;
  ASSERT_NE(found, nullptr) << j["diagnosis"]["findings"].dump();
  EXPECT_NE((*found)["title"].get<std::string>().find("for lack of memory"), std::string::npos);
  // The OOM (snapshot event 8, 1.008 s) lands at 10.5 ms on the trace's
  // clock once the join has aligned the clocks: inside ProfilerStep#2.
  const auto& ex = (*found)["evidence"]["examples"][0];
  EXPECT_NEAR(ex["ts_us"].get<double>(), 10'500.0, 1e-6);
  EXPECT_EQ(ex["step"], 2);
  // A rank that was not read, and a broken snapshot: one-line errors naming them.
  const CliRun no_rank = run_cli(dir, {"analyze", trace, "--memory-snapshot", "5=" + snap("snapshot_p4.pickle"), "-q"});
  EXPECT_EQ(no_rank.exit_code, 2);
  ASSERT_EQ(no_rank.err_lines.size(), 1u);
  EXPECT_NE(no_rank.err_lines[0].find("no trace of rank 5"), std::string::npos) << no_rank.err_lines[0];
  const std::string bad = dir.write("bad.pickle", "not a pickle");
  const CliRun broken = run_cli(dir, {"analyze", trace, "--memory-snapshot", bad, "-q"});
  EXPECT_EQ(broken.exit_code, 2);
  ASSERT_EQ(broken.err_lines.size(), 1u);
  EXPECT_NE(broken.err_lines[0].find("bad.pickle"), std::string::npos) << broken.err_lines[0];
}

TEST(MemoryCommand, BadFilesAreOneLineErrors) {
  TempDir dir;
  const std::string evil = dir.file("evil.pickle");
  {
    std::ofstream f(evil, std::ios::binary);
    f << std::string("\x80\x02", 2) << "cposix\nsystem\n" << std::string("q\x00.", 3);
  }
  const std::string truncated = dir.file("cut.pickle");
  {
    std::ifstream in(snap("snapshot_p4.pickle"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  for (const auto& [file, want] : {std::pair{evil, std::string("GLOBAL at offset 2")},
                                   std::pair{truncated, std::string("truncated pickle")},
                                   std::pair{dir.file("missing.pickle"), std::string("missing.pickle")}}) {
    const CliRun r = run_cli(dir, {"memory", file});
    EXPECT_EQ(r.exit_code, 2) << file;
    ASSERT_EQ(r.err_lines.size(), 1u) << file;
    EXPECT_NE(r.err_lines[0].find(want), std::string::npos) << r.err_lines[0];
    EXPECT_TRUE(r.out.empty());
  }
}

}  // namespace
}  // namespace stepscope::testing
