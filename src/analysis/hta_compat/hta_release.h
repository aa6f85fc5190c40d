// The HTA release whose numbers `--compat` reproduces. 0.6.1 is the release
// the conformance expectations were made with (the default, `--compat hta`);
// 0.5.0 is the release on PyPI, the one `pip install HolisticTraceAnalysis`
// gives users. On the same frames they differ in two rules
// (docs/hta_compat.md §12): 0.6.1 calls cuda_sync rows OTHER, and counts
// cuLaunchKernelEx calls in the queue length.
#pragma once

#include <optional>
#include <string_view>

namespace stepscope::analysis::hta {

enum class HtaRelease { k0_6_1, k0_5_0 };

// "0.6.1", "0.5.0"
std::string_view to_string(HtaRelease r);

// The `--compat` value naming a release: "hta" (0.6.1), "hta-0.6.1", "hta-0.5.0".
std::optional<HtaRelease> release_of_compat_mode(std::string_view mode);

}  // namespace stepscope::analysis::hta
