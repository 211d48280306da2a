#pragma once
// Progress of a batch of runs on stderr: a bar with ETA on a terminal;
// nothing otherwise (logs, CI), where the command's summary says what ran.
#include "studies/run_batch.hpp"

namespace april::cli {

class ProgressPrinter {
 public:
  ProgressPrinter();
  void operator()(const studies::BatchProgress& p);
  void finish();

 private:
  bool tty_;
  bool drawn_ = false;
};

}  // namespace april::cli
