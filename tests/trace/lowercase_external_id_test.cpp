// PyTorch 1.8/1.9 write the External id of runtime calls and GPU activities
// as "external id" (lower case, a space); ops keep "External id". The
// TensorBoard plugin reads "external id" first, then "External id"
// (pytorch/kineto tb_plugin/torch_tb_profiler/profiler/trace.py,
// DurationEvent); so does the reader, so a 1.8 kernel joins the op that
// launched it. Checked on a synthetic trace and on the PyTorch 1.8 excerpt
// (tests/data/wild/pytorch_1_8_resnet50).
#include <gtest/gtest.h>

#include "test_paths.h"
#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::trace_doc;
using testing::x_event;

void load(const std::vector<std::string>& events, EventStore& store) {
  const TokenizeResult r = read_trace_bytes(trace_doc(events), store, TokenizerOptions{});
  ASSERT_EQ(r.status, TokenizeStatus::kOk) << r.message;
}

TEST(LowercaseExternalId, KernelJoinsItsOpThroughTheLaunchAsPyTorch18WroteIt) {
  EventStore s;
  load({x_event("Operator", "aten::conv2d", "110", "20", "7", "7", R"("args": {"External id": 2})"),
        x_event("Runtime", "cudaLaunchKernel", "115", "5", "7", "7", R"("args": {"correlation": 9, "external id": 2})"),
        x_event("Kernel", "volta_sgemm_128x64_nn", "130", "10", "0", "\"stream 7\"",
                R"("args": {"device": 0, "stream": 7, "correlation": 9, "external id": 2})")},
       s);
  ASSERT_EQ(s.gpu_rows.size(), 1u);
  EXPECT_EQ(s.events.external_id[s.runtime_rows.at(0)], 2);
  EXPECT_EQ(s.events.external_id[s.gpu_rows[0]], 2);
  ASSERT_NE(s.cpu_op_of_gpu[0], EventStore::kNoRow);
  EXPECT_EQ(s.name_of(s.cpu_op_of_gpu[0]), "aten::conv2d");
}

TEST(LowercaseExternalId, LowercaseKeyWinsWhenBothAreWritten) {
  // The plugin's order, whichever key comes first in the record.
  EventStore s;
  load({x_event("Runtime", "cudaLaunchKernel", "115", "5", "7", "7", R"("args": {"External id": 3, "external id": 4})"),
        x_event("Runtime", "cudaLaunchKernel", "125", "5", "7", "7", R"("args": {"external id": 5, "External id": 6})")},
       s);
  ASSERT_EQ(s.runtime_rows.size(), 2u);
  EXPECT_EQ(s.events.external_id[s.runtime_rows[0]], 4);
  EXPECT_EQ(s.events.external_id[s.runtime_rows[1]], 5);
}

TEST(LowercaseExternalId, RealPyTorch18KernelsJoinTheirConvolution) {
  EventStore s;
  ReadOutcome out =
      testing::read(testing::test_data_dir() + "/wild/pytorch_1_8_resnet50/worker0.pt.trace.json", s);
  ASSERT_TRUE(out.ok) << out.error;
  // 12 kernels (two per step) launched inside aten::cudnn_convolution; the
  // copy and the memset name ops the excerpt does not hold.
  int joined = 0;
  for (size_t g = 0; g < s.gpu_rows.size(); ++g) {
    const bool kernel = s.events.kind[s.gpu_rows[g]] == EventKind::kKernel;
    if (!kernel) {
      EXPECT_EQ(s.cpu_op_of_gpu[g], EventStore::kNoRow) << s.name_of(s.gpu_rows[g]);
      continue;
    }
    ASSERT_NE(s.cpu_op_of_gpu[g], EventStore::kNoRow) << g;
    EXPECT_EQ(s.name_of(s.cpu_op_of_gpu[g]), "aten::cudnn_convolution");
    ++joined;
  }
  EXPECT_EQ(joined, 12);
}

}  // namespace
}  // namespace stepscope::trace
