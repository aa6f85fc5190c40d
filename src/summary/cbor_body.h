// A summary body's CBOR read straight into its tree (body_json.h), in one
// pass: the depth bounded, the whole input one item, every text checked for
// UTF-8. nlohmann's CBOR reader, which did this through its SAX interface,
// copied strings a byte at a time and walked the finished tree again for the
// UTF-8 check: about a third of the merge's reading time.
#pragma once

#include <cstdint>
#include <vector>

#include "summary/body_json.h"

namespace stepscope::summary {

// Reads what stepscope writes (nlohmann's to_cbor): integers, floats of 16,
// 32 and 64 bits, true/false/null, text and byte strings, arrays and maps
// with text keys, all of definite length. Throws std::runtime_error with a
// one-line reason: "parse error at byte N: ...", "nested more than 32 levels
// deep", "not a whole CBOR value", or "text that is not UTF-8 (...)" (the
// first such text in the file, checked once the item has parsed). Inside a
// BodyArenaScope.
BodyJson read_cbor_body(const std::vector<uint8_t>& cbor);

}  // namespace stepscope::summary
