#pragma once
// Writes a whole file or nothing: a temporary next to it, then rename.
#include <string>

namespace april::cli {

void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace april::cli
