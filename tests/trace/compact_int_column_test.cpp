// CompactInt64Column keeps int64 ids in 4 bytes per row: values outside the
// inline range must come back exactly, through reordering too, and a trace
// whose ids need 64 bits must join as well as one with small ids.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "trace/compact_int_column.h"
#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

TEST(CompactInt64Column, RoundTripsEveryRangeAndSurvivesReordering) {
  std::mt19937_64 rng(std::random_device{}());
  const std::vector<int64_t> edges = {0,
                                      -1,
                                      CompactInt64Column::kLowest,
                                      int64_t{CompactInt64Column::kLowest} - 1,
                                      std::numeric_limits<int32_t>::max(),
                                      int64_t{std::numeric_limits<int32_t>::max()} + 1,
                                      std::numeric_limits<int32_t>::min(),
                                      std::numeric_limits<int64_t>::max(),
                                      std::numeric_limits<int64_t>::min()};
  std::vector<int64_t> values = edges;
  for (int i = 0; i < 5000; ++i) {
    // Mostly small ids, some anywhere in int64.
    values.push_back(i % 4 == 0 ? static_cast<int64_t>(rng()) : static_cast<int64_t>(rng() % 100000) - 1);
  }
  CompactInt64Column col;
  for (int64_t v : values) col.push_back(v);
  ASSERT_EQ(col.size(), values.size());
  size_t wide = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(col[i], values[i]) << i;
    if (values[i] < CompactInt64Column::kLowest || values[i] > std::numeric_limits<int32_t>::max()) ++wide;
  }
  EXPECT_EQ(col.wide_count(), wide);
  EXPECT_GT(wide, 1000u);
  // Reverse the rows through their codes: each value travels with its row.
  std::reverse(col.codes().begin(), col.codes().end());
  for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(col[i], values[values.size() - 1 - i]) << i;
}

TEST(CompactInt64Column, JoinsWorkWithIdsBeyond32Bits) {
  // A launch and its kernel correlated by an id above 2^32, and the kernel's
  // op by an External id below -2^30 (ids are opaque numbers).
  const std::string corr = "5000000000123", ext = "-3000000000";
  std::vector<std::string> events = {
      testing::x_event("cpu_op", "aten::mm", "100", "50", "1", "1", R"("args": {"External id": )" + ext + "}"),
      testing::x_event("cuda_runtime", "cudaLaunchKernel", "110", "5", "1", "1",
                       R"("args": {"correlation": )" + corr + R"(, "External id": )" + ext + "}"),
      testing::x_event("kernel", "gemm", "130", "20", "0", "7",
                       R"("args": {"correlation": )" + corr + R"(, "stream": 7, "device": 0})"),
  };
  testing::TempDir dir;
  EventStore s;
  ASSERT_TRUE(testing::read(dir.write("t.json", testing::trace_doc(events)), s).ok);
  ASSERT_EQ(s.gpu_rows.size(), 1u);
  const uint32_t kernel = s.gpu_rows[0];
  EXPECT_EQ(s.events.correlation[kernel], 5000000000123);
  ASSERT_NE(s.launch_of_gpu[0], EventStore::kNoRow);
  EXPECT_EQ(s.name_of(s.launch_of_gpu[0]), "cudaLaunchKernel");
  ASSERT_NE(s.cpu_op_of_gpu[0], EventStore::kNoRow);
  EXPECT_EQ(s.name_of(s.cpu_op_of_gpu[0]), "aten::mm");
  EXPECT_EQ(s.events.external_id[s.cpu_op_of_gpu[0]], -3000000000);
}

}  // namespace
}  // namespace stepscope::trace
