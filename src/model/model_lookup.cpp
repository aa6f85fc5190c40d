#include "model/model_lookup.h"

#include <fmt/core.h>

#include <filesystem>
#include <system_error>

namespace stepscope::model {

std::optional<ModelSpec> lookup_model(const std::string& name_or_file, std::string& error) {
  if (const ModelSpec* preset = find_model_preset(name_or_file)) return *preset;
  if (std::error_code ec; !name_or_file.empty() && std::filesystem::exists(name_or_file, ec))
    return load_model_json(name_or_file, error);
  error = fmt::format("\"{}\" is neither a preset nor a file", name_or_file);
  return std::nullopt;
}

}  // namespace stepscope::model
