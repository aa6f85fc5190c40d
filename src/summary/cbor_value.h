// One CBOR item of a summary (its body, or the detectors' parts inside it)
// parsed with the limits a file from elsewhere needs: nesting bounded (the
// parser recurses once per level), the whole input one item, text UTF-8.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "summary/body_json.h"

namespace stepscope::summary {

// The summary schema nests eight levels deep; deeper input is refused.
inline constexpr size_t kMaxCborNesting = 32;

// Throws std::runtime_error with a one-line reason: "nested more than 32
// levels deep", "not a whole CBOR value", "text that is not UTF-8 (...)",
// or the parser's ("parse error at byte N: ...").
nlohmann::json parse_cbor_value(const std::vector<uint8_t>& cbor);

// The same, into the arena's tree (body_json.h): inside a BodyArenaScope.
BodyJson parse_cbor_body(const std::vector<uint8_t>& cbor);

}  // namespace stepscope::summary
