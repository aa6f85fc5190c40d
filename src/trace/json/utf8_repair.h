// Invalid UTF-8 inside a trace record. Profilers copy kernel and operator
// names byte for byte, and a name cut at a byte limit ends in half a
// character; a strict JSON parser then rejects the whole event. The reader
// repairs such a record instead of losing it (and its GPU time).
#pragma once

#include <string>
#include <string_view>

namespace stepscope::trace {

// Copies `text` to `out`, each ill-formed sequence replaced by U+FFFD. A
// replacement covers one maximal subpart (Unicode 15, section 3.9, "U+FFFD
// Substitution of Maximal Subparts"; what Python's errors="replace" and the
// WHATWG decoder do): the longest prefix of a valid sequence, or one byte.
// Returns how many replacements were made (0: `text` was valid).
size_t replace_invalid_utf8(std::string_view text, std::string& out);

}  // namespace stepscope::trace
