// Text that came from a trace or the file system (kernel and op names, file
// names, field names), made safe to print on a terminal. A trace can hold
// any bytes: ESC sequences that clear the screen or set the window title, a
// newline that splits a one-line error in two. Every such name goes through
// printable_text() before it reaches the terminal report or stderr; the JSON
// reports keep the exact bytes (JSON escapes them itself).
#pragma once

#include <string>
#include <string_view>

namespace stepscope::report {

// `text` with every control character escaped and valid UTF-8 kept:
// C0 controls as \n \r \t or \xNN (ESC is \x1b), DEL as \x7f, C1 controls
// (U+0080..U+009F) as \u0080..\u009f, and each byte that is not part of a
// valid UTF-8 sequence as \xNN (a stray 0x9b is CSI on 8-bit terminals).
std::string printable_text(std::string_view text);

// The same for a rendered multi-line report: '\n' is kept, everything else
// is escaped as above. A last line of defence for text already laid out in
// lines; names inside it should have gone through printable_text().
std::string printable_lines(std::string_view text);

}  // namespace stepscope::report
