#include "plan/json_file.h"

#include <fmt/format.h>

#include <fstream>

namespace stepscope::plan {

std::optional<nlohmann::json> read_json_file(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = fmt::format("{}: cannot open", path);
    return std::nullopt;
  }
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte says where; the message's own prefix is nlohmann's, not ours.
    error = fmt::format("{}: not valid JSON (at byte {})", path, e.byte);
    return std::nullopt;
  }
}

}  // namespace stepscope::plan
