// Reads a JSON input of the planner (a model description, a hardware
// profile) from a file or from memory, with one-line errors that name the
// file and, where the parser knows it, the field.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace stepscope::model {

// Nesting deeper than this is refused: no input of the planner nests past 4.
inline constexpr int kMaxJsonDepth = 64;

// The parsed document of `text`, or nullopt with `error` =
//   "<where>: not valid JSON (at byte N)",
//   "<where>: field \"gemm[0].tflops\" holds a number out of range (1e309)"
//   (a number a double cannot hold), or
//   "<where>: nesting deeper than 64 levels".
// Never throws on any input.
std::optional<nlohmann::json> parse_json_text(std::string_view text, const std::string& where, std::string& error);

// Inputs of the planner are small (a bench profile: ~50 KB); a larger file
// (or an endless one such as /dev/zero) is refused before it fills memory.
inline constexpr size_t kMaxInputBytes = size_t{64} << 20;

// The whole file, at most kMaxInputBytes; nullopt with `error` =
// "<path>: cannot open", "<path>: cannot read" or
// "<path>: larger than 64 MiB, not a planner input".
std::optional<std::string> read_input_file(const std::string& path, std::string& error);

// The same for a file; errors of read_input_file and parse_json_text.
std::optional<nlohmann::json> read_json_file(const std::string& path, std::string& error);

// Text from the input (a member name, a string value) as an error quotes it:
// JSON can escape any character into a key or a string, and a newline would
// split the one-line error (found by fuzz_plan_model). Control characters
// become \xNN, '"' and '\\' get a backslash; everything else is kept.
std::string text_for_message(std::string_view text);

// "<where>: field \"<field>\" <what>": the one-line form every reader on top
// of these uses.
std::string field_error(const std::string& where, const std::string& field, const std::string& what);

}  // namespace stepscope::model
