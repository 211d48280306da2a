#pragma once
// How both programs end: a command's exit code stands only if everything it
// printed reached standard output (`april db export ... > /dev/full` must not
// exit 0), and an error message is printed without ever throwing (an
// unwritable stderr must not abort the process).
#include <string>

namespace april::cli {

// Flushes standard output; returns `rc`, or 1 after saying so on stderr when
// the output could not be written.
int finish_output(const std::string& program, int rc);
// Writes one line to stderr; never throws, whatever state stderr is in.
void print_error(const std::string& line) noexcept;

}  // namespace april::cli
