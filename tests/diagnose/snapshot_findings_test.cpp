// Findings from memory snapshots, on the synthetic stories of
// tests/data/snapshots/make_snapshots.py (every number known) and on the
// public snapshots of healthy runs (no finding).
#include "diagnose/snapshot_findings.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "test_paths.h"
#include "trace/snapshot/snapshot_reader.h"

namespace stepscope::diagnose {
namespace {

constexpr uint64_t MiB = 1 << 20;

memory::MemoryReport report_of(const std::string& path) {
  auto r = trace::snapshot::read_memory_snapshot(path);
  EXPECT_TRUE(r.snapshot) << r.error;
  return r.snapshot ? memory::build_memory_report(*r.snapshot, path) : memory::MemoryReport{};
}
memory::MemoryReport story(const char* name) {
  return report_of(testing::test_data_dir() + "/snapshots/" + name);
}

double metric(const Finding& f, const std::string& name) {
  for (const Metric& m : f.evidence.metrics)
    if (m.name == name) return m.value;
  ADD_FAILURE() << "no metric " << name;
  return -1;
}

TEST(SnapshotFindings, FragmentationOomThatExpandableSegmentsWouldServe) {
  const memory::MemoryReport rep = story("paged_oom_p4.pickle");
  // 60 MiB of whole 20 MiB pages in the free runs [10,46) and [60,104) MiB.
  ASSERT_EQ(rep.devices.size(), 1u);
  ASSERT_EQ(rep.devices[0].ooms.size(), 1u);
  EXPECT_EQ(rep.devices[0].ooms[0].before.state.free.free_in_pages, 60 * MiB);
  EXPECT_TRUE(rep.devices[0].ooms[0].fits_with_expandable);
  const auto fs = snapshot_findings(rep, {.rank = 3});
  ASSERT_EQ(fs.size(), 1u);
  const Finding& f = fs[0];
  EXPECT_EQ(f.category, Category::kMemoryCapacity);
  EXPECT_EQ(f.detector, "memory_snapshot");
  EXPECT_FALSE(f.saves_time);
  EXPECT_EQ(f.severity, Severity::kHigh);
  EXPECT_EQ(f.saving_rank, 3);
  EXPECT_EQ(metric(f, "fragmentation_ooms"), 1);
  EXPECT_EQ(metric(f, "fragmentation_ooms_served_by_expandable_segments"), 1);
  EXPECT_EQ(metric(f, "oom_requested_bytes"), 50.0 * MiB);
  EXPECT_EQ(metric(f, "oom_free_in_segments_bytes"), 80.0 * MiB);
  EXPECT_EQ(metric(f, "oom_largest_free_block_bytes"), 44.0 * MiB);
  EXPECT_EQ(f.remedy.rfind("(1) PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: it would have served 1 of these 1", 0),
            0u)
      << f.remedy;
  // The pool remedy names the site with the most distinct large sizes.
  EXPECT_NE(f.remedy.find("(2) give the allocations of model.py:42 forward (3 sizes from 10.0 MiB to 16.0 MiB"),
            std::string::npos)
      << f.remedy;
  ASSERT_EQ(f.evidence.examples.size(), 1u);
  EXPECT_FALSE(f.evidence.examples[0].timed);  // no trace: not on any trace's clock
  EXPECT_EQ(f.evidence.examples[0].rank, 3);
}

// The real H200 run of tests/data/snapshots/h200 (a 42.5 GB limit set by
// set_per_process_memory_fraction, ~100 GB free on the device): the finding
// counts only the cache's free bytes, and expandable segments is predicted to
// serve all three requests within the limit (measured over 200 steps: 104
// OOMs with the default allocator, none with expandable segments).
TEST(SnapshotFindings, RealRunUnderAProcessLimit) {
  const memory::MemoryReport rep = report_of(testing::test_data_dir() + "/snapshots/h200/fragmentation_pool_default.pickle.gz");
  const auto fs = snapshot_findings(rep, {});
  ASSERT_EQ(fs.size(), 1u);
  const Finding& f = fs[0];
  EXPECT_EQ(f.severity, Severity::kHigh);
  EXPECT_EQ(metric(f, "fragmentation_ooms"), 3);
  EXPECT_EQ(metric(f, "oom_process_limit"), 1);
  EXPECT_EQ(metric(f, "fragmentation_ooms_served_by_expandable_segments"), 3);
  EXPECT_NE(f.title.find("248.0 MiB requested with 1828.0 MiB free"), std::string::npos) << f.title;
  EXPECT_EQ(f.remedy.rfind("(1) PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: it would have served 3 of these 3 "
                           "requests (the free whole 20 MiB pages, within the process's limit, cover them)",
                           0),
            0u)
      << f.remedy;
}

TEST(SnapshotFindings, ExpandableSegmentsListedLastWhenItServesNone) {
  // fragmented_p4: 20 MiB free in 4 MiB runs; no whole 20 MiB page is free.
  // Its ten tensors are all 4 MiB: no site of varying sizes, no pool remedy.
  memory::MemoryReport rep = story("fragmented_p4.pickle");
  EXPECT_EQ(rep.devices[0].variable_site.distinct_sizes, 1u);
  auto fs = snapshot_findings(rep, {});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(metric(fs[0], "fragmentation_ooms_served_by_expandable_segments"), 0);
  EXPECT_EQ(fs[0].remedy.find("give the allocations"), std::string::npos) << fs[0].remedy;
  // With a site of varying sizes, its pool comes first.
  rep.devices[0].variable_site = {"attn.py:7 softmax", 5, 9, 2 * MiB, 30 * MiB};
  fs = snapshot_findings(rep, {});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].remedy.rfind("(1) give the allocations of attn.py:7 softmax (5 sizes", 0), 0u) << fs[0].remedy;
  EXPECT_NE(fs[0].remedy.find("(2) PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: it would have served 0"),
            std::string::npos)
      << fs[0].remedy;
}

TEST(SnapshotFindings, NoExpandableRemedyWhenItIsAlreadyOn) {
  memory::MemoryReport rep = story("paged_oom_p4.pickle");
  rep.expandable_segments = 1;
  const auto fs = snapshot_findings(rep, {});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].remedy.find("expandable_segments"), std::string::npos) << fs[0].remedy;
  EXPECT_EQ(metric(fs[0], "expandable_segments"), 1);
}

TEST(SnapshotFindings, CapacityOomNamesTheLargestLiveSite) {
  const auto fs = snapshot_findings(story("snapshot_p4.pickle"), {});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::kHigh);
  EXPECT_NE(fs[0].title.find("for lack of memory: 12.0 MiB requested, 11.0 MiB free anywhere"), std::string::npos)
      << fs[0].title;
  EXPECT_NE(fs[0].remedy.find("The largest live site then: model.py:42 forward"), std::string::npos) << fs[0].remedy;
  EXPECT_EQ(metric(fs[0], "capacity_ooms"), 1);
}

TEST(SnapshotFindings, FragmentationRiskBySizeOfTheDevice) {
  const memory::MemoryReport rep = story("fragmented_risk_p4.pickle");
  // At the peak: 90 MiB allocated of 180 MiB reserved; the largest free run
  // is 44 MiB, the largest request 50 MiB.
  {
    const auto fs = snapshot_findings(rep, {});  // device size unknown: a low-severity note
    ASSERT_EQ(fs.size(), 1u);
    EXPECT_EQ(fs[0].severity, Severity::kLow);
    EXPECT_EQ(fs[0].confidence, Confidence::kMedium);
    EXPECT_EQ(metric(fs[0], "free_in_segments_at_peak_bytes"), 90.0 * MiB);
    EXPECT_EQ(metric(fs[0], "largest_free_block_at_peak_bytes"), 44.0 * MiB);
    EXPECT_EQ(metric(fs[0], "largest_request_bytes"), 50.0 * MiB);
    EXPECT_EQ(metric(fs[0], "free_in_whole_pages_at_peak_bytes"), 60.0 * MiB);
  }
  {
    // A 200 MiB device: 20 MiB left above the 180 MiB reserved, less than the
    // request, though the free bytes inside segments cover it: it would OOM.
    const auto fs = snapshot_findings(rep, {.device_bytes = {200 * MiB}});
    ASSERT_EQ(fs.size(), 1u);
    EXPECT_EQ(fs[0].severity, Severity::kMedium);
    EXPECT_EQ(metric(fs[0], "headroom_bytes"), 20.0 * MiB);
    EXPECT_NE(fs[0].title.find("only 20.0 MiB left on the device"), std::string::npos) << fs[0].title;
  }
  {
    // A 1 GiB device has room: low, and the headroom is offered.
    const auto fs = snapshot_findings(rep, {.device_bytes = {1024 * MiB}});
    ASSERT_EQ(fs.size(), 1u);
    EXPECT_EQ(fs[0].severity, Severity::kLow);
    EXPECT_NE(fs[0].remedy.find("the device still has 844.0 MiB above the peak reserved"), std::string::npos)
        << fs[0].remedy;
  }
}

TEST(SnapshotFindings, HealthyPublicSnapshotsHaveNone) {
  // Seven snapshots of real runs (tests/data/snapshots/public/README.md): no
  // OOM in their histories and at most 19% of reserved free at the peak.
  size_t read = 0;
  for (const auto& e : std::filesystem::directory_iterator(testing::test_data_dir() + "/snapshots/public")) {
    if (e.path().extension() != ".gz") continue;
    SCOPED_TRACE(e.path().string());
    ++read;
    EXPECT_TRUE(snapshot_findings(report_of(e.path().string()), {.device_bytes = {80ull << 30}}).empty());
  }
  EXPECT_EQ(read, 7u);
}

}  // namespace
}  // namespace stepscope::diagnose
