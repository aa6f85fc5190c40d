// The tree a summary body is decoded into before its structs are filled:
// nlohmann's JSON value with its objects, arrays and boxes in the reading
// thread's arena (body_arena.h), so building and dropping it costs no
// malloc/free a node. Strings keep std::string (short ones, most keys, sit in
// it without an allocation). Lives only inside a BodyArenaScope.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "summary/body_arena.h"

namespace stepscope::summary {

using BodyJson = nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t, std::uint64_t, double,
                                      BodyArenaAllocator>;

}  // namespace stepscope::summary
