// The CUPTI range-profiler counters stepscope interprets, named as Kineto
// writes them in a "cuda_profiler_range" event's args. The reader interns
// them before anything else (their ids fit the 2-byte argument key column);
// analysis/hardware_counters derives FLOPs, tensor-core instructions and
// DRAM bytes from them.
#pragma once

#include <array>
#include <string_view>

namespace stepscope::trace::cupti {

// SASS thread-instruction counts of floating-point math (Kineto's
// kineto__cuda_core_flops alias expands to these nine).
inline constexpr std::string_view kFadd = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum";
inline constexpr std::string_view kFmul = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum";
inline constexpr std::string_view kFfma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
inline constexpr std::string_view kHadd = "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum";
inline constexpr std::string_view kHmul = "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum";
inline constexpr std::string_view kHfma = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum";
inline constexpr std::string_view kDadd = "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum";
inline constexpr std::string_view kDmul = "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum";
inline constexpr std::string_view kDfma = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum";
// Warp-level tensor-core instructions (kineto__tensor_core_insts).
inline constexpr std::string_view kTensorInsts = "sm__inst_executed_pipe_tensor.sum";
inline constexpr std::string_view kDramRead = "dram__bytes_read.sum";
inline constexpr std::string_view kDramWrite = "dram__bytes_write.sum";

inline constexpr std::array kInterpreted = {kFadd, kFmul, kFfma, kHadd, kHmul, kHfma, kDadd,
                                            kDmul, kDfma, kTensorInsts, kDramRead, kDramWrite};

}  // namespace stepscope::trace::cupti
