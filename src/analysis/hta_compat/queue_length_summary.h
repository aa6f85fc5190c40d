// HTA's queue length summary for one rank (docs/hta_compat.md §8): how many
// launched operations are waiting or running on each stream, sampled at every
// launch and every completion start.
#pragma once

#include <vector>

#include "analysis/hta_compat/hta_frame.h"
#include "analysis/hta_compat/hta_result.h"

namespace stepscope::analysis::hta {

inline constexpr const char* kHtaNoneTypeError = "AttributeError: 'NoneType' object has no attribute 'reset_index'";

// Runtime rows: launch/memcpy/memset calls (CUDA, cuLaunchKernelEx from 0.6.1
// on, MTIA, HIP names) with index_correlation > 0, each +1 on the stream of every stream row
// with its correlation (a row per match; none: no stream, ignored); every
// stream row whose correlation is a runtime row's is -1. Runtime rows first,
// then stream rows, sorted by ts with numpy's unstable sort; per stream
// (ascending) the running sum is the queue length; describe() of it.
std::vector<HtaQueueLengthRow> hta_queue_length_summary(const HtaRankFrame& frame);

}  // namespace stepscope::analysis::hta
