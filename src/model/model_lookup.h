// A model named by a user: a preset ("llama3-70b") or a model JSON file,
// resolved once for every command (plan and its subcommands, monitor).
#pragma once

#include <optional>
#include <string>

#include "model/model_spec.h"

namespace stepscope::model {

// The preset of that name, else the file's model. On failure nullopt and
// `error` says why without naming an option: the file's own error (it names
// the file and field), or "\"NAME\" is neither a preset nor a file".
std::optional<ModelSpec> lookup_model(const std::string& name_or_file, std::string& error);

}  // namespace stepscope::model
