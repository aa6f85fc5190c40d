// Pieces of JSON text for writers that stream (the Perfetto trace is too large
// to build as a DOM first): string escaping and exact time formatting.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stepscope::report {

// Appends `s` as a JSON string literal, quotes included. Control characters
// are escaped; invalid UTF-8 is passed through unchanged (traces carry names
// as their producers wrote them).
void append_json_string(std::string& out, std::string_view s);

// Appends a ns time as µs with exactly three decimals ("1234.567"), from the
// integer, so the value is exact at any magnitude (no double on the way).
void append_us_from_ns(std::string& out, int64_t ns);

// Appends an integer in decimal.
void append_int(std::string& out, int64_t v);

// Appends a double as the shortest text that reads back to the same value;
// NaN and infinities (which JSON cannot hold) become null.
void append_json_number(std::string& out, double v);

}  // namespace stepscope::report
