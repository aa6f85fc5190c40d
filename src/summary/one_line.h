// Text from a summary file, quoted in an error message: control characters
// as \xNN, so a message stays one line whatever a damaged or hostile summary
// holds, and optionally cut (before a UTF-8 character, never inside one).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace stepscope::summary {

std::string one_line(std::string_view text, size_t max_bytes = std::string_view::npos);

}  // namespace stepscope::summary
