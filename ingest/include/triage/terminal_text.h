// Text for a person's terminal. Logs, file names and what the store holds are untrusted: a log
// line with a carriage return or backspaces could overwrite what a report shows, and an escape
// sequence could set the window title, clear the screen or move the cursor. Everything such a
// value holds is printed through TerminalText (the text report, every table, every error
// message), always, not only when the output is a terminal: a report piped to a file and
// `cat`-ed later is read on a terminal too. JSON output keeps the raw text, escaped as JSON is.
//
// What is made visible (everything else is copied as it is, valid UTF-8 only):
//   ESC                                  \x1b
//   the other C0 controls but tab        caret notation: ^M (CR), ^J (LF), ^H, ^G, ^@, ...
//   DEL                                  ^?
//   C1 controls U+0080..U+009F           \u009b, \u009d, ...
//   bidirectional overrides and isolates \u202e, \u2066, ... (they reorder what follows)
//   a byte that is not valid UTF-8       \xNN (a lone 0x9b is CSI to an 8-bit terminal)
// The result is valid UTF-8 and holds no byte below 0x20 but tab, and no DEL. Pure function,
// thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace triage {

// Appends `text`, made safe as above, to `out`.
void AppendTerminalText(std::string& out, std::string_view text);
// `text` made safe as above.
std::string TerminalText(std::string_view text);

}  // namespace triage
