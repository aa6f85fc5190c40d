#include "analysis/hta_compat/hta_release.h"

namespace stepscope::analysis::hta {

std::string_view to_string(HtaRelease r) { return r == HtaRelease::k0_5_0 ? "0.5.0" : "0.6.1"; }

std::optional<HtaRelease> release_of_compat_mode(std::string_view mode) {
  if (mode == "hta" || mode == "hta-0.6.1") return HtaRelease::k0_6_1;
  if (mode == "hta-0.5.0") return HtaRelease::k0_5_0;
  return std::nullopt;
}

}  // namespace stepscope::analysis::hta
