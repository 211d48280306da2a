// Whole-or-nothing writes (base/atomic_file): result files and checkpoints.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/atomic_file.hpp"

namespace april::base {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const auto dir = fs::temp_directory_path() / ("april_" + test + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t entries(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

// remove_tree: a whole nested folder goes; a link inside is removed, not
// followed; a missing path is no error.
TEST(AtomicFile, RemoveTreeRemovesNestedFoldersButNotWhatALinkPointsTo) {
  const auto dir = fresh_dir("tree");
  const auto outside = fresh_dir("outside");
  write_file_atomically((outside / "keep.txt").string(), "kept");
  fs::create_directories(dir / "a" / "b");
  write_file_atomically((dir / "a" / "b" / "x.txt").string(), "x");
  write_file_atomically((dir / "y.txt").string(), "y");
  fs::create_directory_symlink(outside, dir / "a" / "link");
  EXPECT_TRUE(remove_tree(dir.string()));
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_EQ(read(outside / "keep.txt"), "kept");
  EXPECT_TRUE(remove_tree(dir.string()));  // already gone
  write_file_atomically((dir.string() + ".file"), "z");
  EXPECT_TRUE(remove_tree(dir.string() + ".file"));  // a plain file too
  EXPECT_FALSE(fs::exists(dir.string() + ".file"));
}

TEST(AtomicFile, ReplacesTheFileAndLeavesNoTemporary) {
  const auto dir = fresh_dir("f");
  const auto path = (dir / "summary.json").string();
  write_file_atomically(path, "one");
  write_file_atomically(path, "two");
  EXPECT_EQ(read(path), "two");
  EXPECT_EQ(entries(dir), 1U);
}

TEST(AtomicFile, AFailedWriteNamesThePathAndLeavesNothing) {
  const auto dir = fresh_dir("g");
  const auto path = (dir / "missing" / "out.csv").string();
  try {
    write_file_atomically(path, "x");
    FAIL() << "wrote into a folder that does not exist";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_EQ(entries(dir), 0U);
}

TEST(AtomicDirectory, SwapsTheWholeFolderIn) {
  const auto dir = fresh_dir("d");
  const auto dest = (dir / "ckpt").string();
  fs::create_directories(dest);
  write_file_atomically(dest + "/model.pt", "v1");
  write_file_atomically(dest + "/loop.json", "v1");
  const auto staging = staging_directory_for(dest);
  write_file_atomically(staging + "/model.pt", "v2");
  // A kill here, before the swap, leaves the previous version whole.
  EXPECT_EQ(read(dest + "/model.pt"), "v1");
  EXPECT_EQ(read(dest + "/loop.json"), "v1");
  write_file_atomically(staging + "/loop.json", "v2");
  replace_directory_atomically(staging, dest);
  EXPECT_EQ(read(dest + "/model.pt"), "v2");
  EXPECT_EQ(read(dest + "/loop.json"), "v2");
  EXPECT_EQ(entries(dir), 1U);  // no staging or old version left beside it
  EXPECT_FALSE(recover_directory(dest));
}

TEST(AtomicDirectory, ANewFolderIsPutInPlace) {
  const auto dir = fresh_dir("n");
  const auto dest = (dir / "ckpt").string();
  const auto staging = staging_directory_for(dest);
  write_file_atomically(staging + "/loop.json", "v1");
  replace_directory_atomically(staging, dest);
  EXPECT_EQ(read(dest + "/loop.json"), "v1");
  EXPECT_EQ(entries(dir), 1U);
}

// Where folders cannot be swapped atomically, the old version is moved aside
// first; a kill between the two renames leaves it there, and recovery puts it
// back.
TEST(AtomicDirectory, RecoversTheVersionAnInterruptedSwapMovedAside) {
  const auto dir = fresh_dir("r");
  const auto dest = (dir / "ckpt").string();
  fs::create_directories(dest);
  write_file_atomically(dest + "/loop.json", "v1");
  fs::rename(dest, dest + ".old.tmp");  // the state a kill mid-swap leaves
  EXPECT_TRUE(recover_directory(dest));
  EXPECT_EQ(read(dest + "/loop.json"), "v1");
  EXPECT_FALSE(fs::exists(dest + ".old.tmp"));
}

}  // namespace
}  // namespace april::base
