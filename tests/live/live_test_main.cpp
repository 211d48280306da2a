// The live tests' main: the allocator is set up before any test starts a
// thread, as april-live's main does, so that a test of the trainer's thread
// sees the allocator a live run has whatever ran before it in the process.
#include <gtest/gtest.h>

#include "adapters/live/cpu_runtime.hpp"

int main(int argc, char** argv) {
  april::live::configure_allocator();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
