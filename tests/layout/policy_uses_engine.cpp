// A "policy" that reaches into the simulator. Every header is on the include
// path, so this compiles; linked against april::policies alone it must fail
// to link (tests/layout/link_rule_check.cmake), because policies never link
// the simulator. Linked with april::sim as well, it builds: the control.
#include "policies/policy.hpp"
#include "sim/simulator.hpp"

int main() {
  april::sim::Simulator sim;
  sim.schedule_in(april::sim::TimeNs(1), 0, [] {});
  sim.run_until(april::sim::TimeNs(2));
  return sim.fingerprint() == 0 ? 1 : 0;
}
