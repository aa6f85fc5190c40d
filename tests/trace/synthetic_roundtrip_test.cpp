// The synthetic trace generator (tools/synthetic) and the reader agree: a set
// written by the generator reads back with exactly the records, kinds,
// durations and step ranges the generator tallied while writing it. The
// generator writes times as exact decimal text from integer nanoseconds, so
// every sum must match to the nanosecond, for plain and gzip files.
#include <gtest/gtest.h>

#ifdef STEPSCOPE_HAVE_SYNTH

#include <unistd.h>

#include <filesystem>
#include <map>

#include "synthetic/rank_writer.h"
#include "synthetic/step_model.h"
#include "trace/trace_set.h"

namespace stepscope::trace {
namespace {

namespace fs = std::filesystem;

// Which store kind each category the generator writes must become.
EventKind expected_kind(const std::string& category) {
  static const std::map<std::string, EventKind> kinds = {
      {"cpu_op", EventKind::kCpuOp},
      {"user_annotation", EventKind::kUserAnnotation},
      {"gpu_user_annotation", EventKind::kGpuUserAnnotation},
      {"cuda_runtime", EventKind::kRuntime},
      {"cuda_driver", EventKind::kRuntime},
      {"kernel", EventKind::kKernel},
      {"gpu_memcpy", EventKind::kMemcpy},
      {"gpu_memset", EventKind::kMemset},
      {"Trace", EventKind::kTraceSpan},
  };
  auto it = kinds.find(category);
  EXPECT_NE(it, kinds.end()) << "generator wrote an unexpected category " << category;
  return it == kinds.end() ? EventKind::kOther : it->second;
}

class SyntheticRoundTrip : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("stepscope_synth_" + std::to_string(::getpid()) + "_" + std::to_string(GetParam()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_P(SyntheticRoundTrip, ReaderReadsBackExactlyWhatWasWritten) {
  synth::SyntheticSpec spec;
  spec.ranks = 3;
  spec.layers = 2;
  spec.steps = 3;
  spec.seed = 42;
  spec.gzip_level = GetParam();
  std::vector<synth::RankFile> files;
  for (int r = 0; r < spec.ranks; ++r) {
    files.push_back(synth::write_rank(spec, r, spec.steps, dir_.string()));
    ASSERT_TRUE(files.back().error.empty()) << files.back().error;
  }

  LoadResult loaded = load_traces({dir_.string()}, ReadOptions{}, 2);
  ASSERT_TRUE(loaded.ok) << loaded.error;
  ASSERT_EQ(loaded.set.ranks.size(), 3u);
  uint64_t total_bytes = 0;
  for (const auto& f : files) total_bytes += f.tally.bytes;
  EXPECT_EQ(loaded.set.uncompressed_bytes, total_bytes);

  for (int r = 0; r < spec.ranks; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r) + (spec.gzip_level ? " (gzip)" : " (plain)"));
    const EventStore& s = *loaded.set.ranks[static_cast<size_t>(r)];
    const synth::RankTally& t = files[static_cast<size_t>(r)].tally;
    EXPECT_EQ(s.rank, r);
    EXPECT_EQ(s.rank_source, "distributedInfo");
    EXPECT_EQ(s.meta.world_size, spec.ranks);
    EXPECT_EQ(s.meta.base_time_ns, 1790857026000000000ll);
    EXPECT_EQ(s.meta.devices.size(), 8u);
    EXPECT_EQ(s.stats.skipped_records(), 0u);

    // Every record, by kind, with its summed duration to the nanosecond.
    std::map<EventKind, std::pair<uint64_t, int64_t>> want, got;
    for (const auto& [cat, b] : t.complete) {
      auto& w = want[expected_kind(cat)];
      w.first += b.count;
      w.second += b.dur_ns;
    }
    for (const auto& [name, n] : t.instants)
      want[name == "[memory]" ? EventKind::kMemory : EventKind::kInstant].first += n;
    for (size_t i = 0; i < s.events.size(); ++i) {
      auto& g = got[s.events.kind[i]];
      ++g.first;
      g.second += s.events.dur_ns[i];
    }
    EXPECT_EQ(s.events.size(), t.events());
    EXPECT_EQ(got, want);

    uint64_t flows = 0;
    for (const auto& [cat, n] : t.flow_starts) flows += n;
    for (const auto& [cat, n] : t.flow_ends) flows += n;
    EXPECT_EQ(s.flows.size(), flows);

    // Time range and the host step ranges, in order.
    ASSERT_GT(s.events.size(), 0u);
    int64_t min_ts = INT64_MAX, max_end = INT64_MIN;
    for (size_t i = 0; i < s.events.size(); ++i) {
      min_ts = std::min(min_ts, s.events.ts_ns[i]);
      max_end = std::max(max_end, s.events.ts_ns[i] + s.events.dur_ns[i]);
    }
    EXPECT_EQ(min_ts, t.min_ts_ns);
    EXPECT_EQ(max_end, t.max_end_ns);
    ASSERT_EQ(s.step_rows.size(), t.steps.size());
    for (size_t k = 0; k < s.step_rows.size(); ++k) {
      EXPECT_EQ(s.events.ts_ns[s.step_rows[k]], t.steps[k].first) << "step " << k;
      EXPECT_EQ(s.events.dur_ns[s.step_rows[k]], t.steps[k].second) << "step " << k;
    }

    // Every GPU activity was launched by a runtime call the reader joined to it,
    // and NCCL kernels keep their collective arguments on their own stream.
    ASSERT_EQ(s.launch_of_gpu.size(), s.gpu_rows.size());
    size_t unjoined = 0, nccl = 0;
    StringId coll_key = s.strings.find("Collective name");
    StringId nelems_key = s.strings.find("In msg nelems");
    for (size_t g = 0; g < s.gpu_rows.size(); ++g) {
      if (s.launch_of_gpu[g] == EventStore::kNoRow) ++unjoined;
      uint32_t row = s.gpu_rows[g];
      if (!s.name_of(row).starts_with("ncclDevKernel_AllReduce_Sum_bf16_RING_LL")) continue;
      ++nccl;
      EXPECT_EQ(s.arg_string(row, coll_key), std::optional<std::string_view>("allreduce"));
      EXPECT_GT(s.arg_int(row, nelems_key).value_or(0), 0);
      EXPECT_EQ(s.events.stream[row], synth::StepModel::kNcclStream);
    }
    EXPECT_EQ(unjoined, 0u);
    EXPECT_GT(nccl, 0u);
    EXPECT_EQ(s.meta.thread_names.size(), 4u);   // main, autograd, two streams
    EXPECT_EQ(s.meta.process_names.size(), 2u);  // host process, GPU
  }
}

INSTANTIATE_TEST_SUITE_P(PlainAndGzip, SyntheticRoundTrip, ::testing::Values(0, 1),
                         [](const auto& info) { return info.param ? "gzip" : "plain"; });

}  // namespace
}  // namespace stepscope::trace

#else

TEST(SyntheticRoundTrip, NeedsTheGenerator) {
  GTEST_SKIP() << "tools/ not configured (STEPSCOPE_BENCH=OFF): the generator round trip is skipped";
}

#endif
