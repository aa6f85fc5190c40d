// Traces as Kineto's CuptiRangeProfiler writes them (torch.profiler with
// profiler_metrics and profiler_measure_per_kernel): one "cuda_profiler_range"
// event per kernel, pid = device, the counters in args, times spread evenly
// over the session, and no kernel events. For the hardware-counter tests of
// the analysis and CLI layers.
#pragma once

#include <string>
#include <vector>

#include "analysis/analysis_fixtures.h"

namespace stepscope::analysis::testing_support {

// Counter names written out here, not taken from trace/cupti_counter_names.h:
// a misspelt name there must make the tests fail.
constexpr const char* kFfma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
constexpr const char* kFadd = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum";
constexpr const char* kHfma = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum";
constexpr const char* kDmul = "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum";

inline std::string op(const std::string& name, int64_t ts_ns, int64_t dur_ns, const std::string& tid = "1") {
  return stepscope::testing::x_event("cpu_op", name, us_text(ts_ns), us_text(dur_ns), "100", tid);
}
inline std::string call(const std::string& name, int64_t ts_ns, const std::string& tid = "1", int64_t corr = 1) {
  return stepscope::testing::x_event("cuda_runtime", name, us_text(ts_ns), us_text(2000), "100", tid,
                 R"("args": {"correlation": )" + std::to_string(corr) + "}");
}
inline std::string range(const std::string& name, int index, const std::string& counters, int device = 0) {
  return stepscope::testing::x_event("cuda_profiler_range", name, us_text(1'000'000 + index * 50'000), us_text(50'000),
                 std::to_string(device), "0", R"("args": {)" + counters + "}");
}
inline std::string counter(const char* key, const std::string& value) {
  std::string s = "\"";
  s.append(key).append("\": ").append(value);
  return s;
}

// Two operators on thread 1 (conv2d > cudnn_convolution, linear > addmm), a
// third on thread 2 launched through the driver API, and three ranges.
inline std::vector<std::string> three_kernels(std::vector<std::string> extra = {}) {
  std::vector<std::string> v = {
      op("aten::conv2d", 100'000, 50'000),
      op("aten::cudnn_convolution", 110'000, 30'000),
      call("cudaLaunchKernel", 120'000, "1", 1),
      op("aten::linear", 200'000, 50'000),
      op("aten::addmm", 205'000, 40'000),
      call("cudaLaunchKernelExC", 210'000, "1", 2),
      // The driver launch on thread 2 lies inside aten::linear's time, but
      // on another thread: its op is triton_op on thread 2.
      op("triton_op", 215'000, 10'000, "2"),
      call("cuLaunchKernelEx", 216'000, "2", 3),
      // Not a kernel launch: no range for it.
      call("cudaMemcpyAsync", 230'000, "1", 4),
      range("void fft2d_r2c_32x32<float, false, 1u, false>(int, int)", 0,
            counter(kFfma, "1000") + ", " + counter(kFadd, "86114304") + ", " + counter(kHfma, "0.0") + ", " +
                counter("sm__inst_executed_pipe_tensor.sum", "0") + ", " + counter("dram__bytes_read.sum", "4096") +
                ", " + counter("dram__bytes_write.sum", "1024.5") + ", " + counter("l1tex__t_bytes.sum", "77")),
      range("sm90_xmma_gemm_bf16bf16_bf16f32", 1,
            counter(kFfma, "10") + ", " + counter(kHfma, "3") + ", " + counter("sm__inst_executed_pipe_tensor.sum", "2.5e6") +
                ", " + counter("dram__bytes_read.sum", "1e9") + R"(, "note": "text is not a counter")"),
      range("triton_poi_fused_add_0", 2, counter(kDmul, "7")),
  };
  for (auto& e : extra) v.push_back(std::move(e));
  return v;
}

}  // namespace stepscope::analysis::testing_support
