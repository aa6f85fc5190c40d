// Where a subcommand's --json (or other text output) goes: a file, or stdout
// for "-". Shared by every subcommand so "-" means the same everywhere.
#pragma once

#include <string>

namespace stepscope::cli {

// Writes `text` to `path` ("-" = stdout); false when it could not be written.
bool write_output(const std::string& path, const std::string& text);

}  // namespace stepscope::cli
