// Runs every benchmark, then prints the ratios taken from this one run:
// fast-forward vs per-iteration stepping, and sweep runs/s with 2 vs 1 jobs.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <map>
#include <string>

namespace {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs) {
      if (r.run_type == Run::RT_Iteration) seconds_[r.report_label] = r.GetAdjustedRealTime();
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nfast-forward vs per-iteration stepping, 20 default steps, same run:\n");
    for (const char* p : {"sync", "april", "sorted"}) {
      const auto ff = seconds_.find(fmt::format("{} fast-forward 20 steps", p));
      const auto it = seconds_.find(fmt::format("{} per-iteration 20 steps", p));
      if (ff == seconds_.end() || it == seconds_.end()) continue;
      std::printf("  %-7s %.1fx faster\n", p, it->second / ff->second);
    }
    const auto j1 = seconds_.find("sweep 1 jobs");
    const auto j2 = seconds_.find("sweep 2 jobs");
    if (j1 != seconds_.end() && j2 != seconds_.end()) {
      std::printf("sweep with 2 jobs vs 1 job (same runs, into SQLite): %.2fx the runs per second\n", j1->second / j2->second);
    }
  }

 private:
  std::map<std::string, double> seconds_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
