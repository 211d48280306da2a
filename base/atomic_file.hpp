#pragma once
// Writes that are whole or absent: the project's one way to write a result
// file or a checkpoint, so a kill or a full disk never leaves a half-written
// output beside an old one.
#include <string>

namespace april::base {

// Writes `contents` to a temporary file beside `path` (same folder, so the
// rename cannot cross file systems), flushes it to disk, then renames it over
// `path`. On any failure the temporary is removed and a std::runtime_error
// names the file. A `path` that is a symbolic link, a FIFO, a device or a
// folder is refused: the rename would replace it with a regular file.
void write_file_atomically(const std::string& path, const std::string& contents);

// A folder beside `dest` to assemble a new version of it in (created empty).
std::string staging_directory_for(const std::string& dest);
// Puts the folder `staging` in the place of `dest` in one step where the file
// system can swap folders atomically (Linux renameat2 RENAME_EXCHANGE), then
// removes the old version. Elsewhere the old version is moved aside first, and
// recover_directory() puts it back if a kill came between the two renames.
void replace_directory_atomically(const std::string& staging, const std::string& dest);
// If `dest` is missing but an old version moved aside by an interrupted
// replace_directory_atomically() exists, restores it. Returns true if it did.
bool recover_directory(const std::string& dest);

// Removes `path` and everything under it, like std::filesystem::remove_all,
// through the C library. PyTorch's pip wheels export a broken copy of
// std::filesystem::remove_all from libtorch that a program may bind to
// (pytorch/pytorch#133437; it crashed here with torch 2.11). Returns false,
// with errno set, where something could not be removed; a missing path is
// not an error.
bool remove_tree(const std::string& path) noexcept;

}  // namespace april::base
