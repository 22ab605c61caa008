#pragma once
// Text from outside (a server's error message, a job name, a file's content)
// made safe to print on a terminal: escape sequences in it could otherwise
// move the cursor, rewrite earlier lines, change the title or hide text.

#include <string>
#include <string_view>

namespace pai::util {

// Escapes what a terminal would interpret: C0 control characters but tab
// (and newline when `keep_newlines`), DEL, C1 controls (U+0080-U+009F), the
// bidirectional overrides (U+202A-U+202E, U+2066-U+2069) and bytes that are not
// valid UTF-8. Escapes are visible: "\x1b", "\u009b", "\u202e". Everything
// else, printable UTF-8 included, is kept as is.
std::string printable(std::string_view s, bool keep_newlines = false);

// Whether printable(s) would change anything.
bool needs_escaping(std::string_view s, bool keep_newlines = false);

}  // namespace pai::util
