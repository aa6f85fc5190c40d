// Reads a JSON input file of the planner (a model description, a hardware
// profile) with one-line errors that name the file.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace stepscope::plan {

// The parsed document, or nullopt with `error` = "<path>: cannot open" or
// "<path>: not valid JSON (<parser message>)".
std::optional<nlohmann::json> read_json_file(const std::string& path, std::string& error);

}  // namespace stepscope::plan
