#pragma once
// Output destinations, checked before the first run rather than after the
// last: a sweep of an hour must not end in "cannot write". A folder output
// (--out DIR) is assembled beside DIR and put in place whole, so a kill never
// leaves new files beside an old summary.json.
#include <string>
#include <utility>
#include <vector>

namespace april::cli {

// Throws std::invalid_argument naming `option` and `path` unless a file can be
// written there: `-` (standard output), a pipe or a device that is writable,
// or a regular file (a symbolic link is followed to one) whose folder exists
// and is writable. A folder is refused.
void check_output_file(const std::string& path, const std::string& option);

// One command's single-file outputs, (option, path): two at the same file
// (after following links) are refused before the run.
void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);

// One command's outputs, files and folders, (option, path; empty: not
// given): refused before the run where one would land in another, since a
// folder output is replaced whole. Two folders at one place or one inside
// the other, or a file inside a folder, are named with their options.
struct OutputSpec {
  std::string option, path;
  bool folder = false;
};
void check_outputs_apart(const std::vector<OutputSpec>& outputs);

// Writes a single-file output checked by check_output_file: `-` to standard
// output and a pipe or a device as a stream; a regular file (or the target of
// a symbolic link, which stays a link) atomically, through a temporary beside it.
void write_output_file(const std::string& path, const std::string& contents);

// The file april puts in every folder it writes whole (--out, --checkpoint),
// so that a later run may replace that folder and no other.
inline constexpr const char* kOutputMarker = ".april-output";

// A folder output may be written at `path` when nothing is there, or an empty
// folder, or a folder april wrote (it holds kOutputMarker). Anything else is
// refused before any work, naming the option, the path and a few of the
// names it holds: replacing it would delete files april did not write.
void check_output_folder(const std::string& path, const std::string& option);

class OutputFolder {
 public:
  // Checks `dest` (check_output_folder), then creates the folder the outputs
  // are assembled in (beside `dest`, whose parent is created if missing);
  // throws naming `option` if it cannot.
  OutputFolder(std::string dest, const std::string& option);
  ~OutputFolder();  // removes the staging folder unless committed
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  // Where to write the files now (the staging folder).
  [[nodiscard]] const std::string& path() const { return staging_; }
  // Marks the assembled folder as april's and puts it in place of the destination.
  void commit();

 private:
  std::string dest_, staging_;
  bool committed_ = false;
};

}  // namespace april::cli
