#pragma once
// The over-provisioning controller of `april_adaptive`: B' = ceil(alpha x B)
// chosen each step from what the last step showed, no knowledge of lengths.
//
// Why a controller on the constraints, not on throughput: rollout throughput
// rises with alpha with diminishing returns (notebooks/sensitivity.ipynb:
// 1.22x sync at alpha 1.25 to 1.68x at 3 on the default scenario), and so do
// the costs, the off-policy share of the trained tokens (41% to 88%) and the
// partial buffer. The best alpha is therefore the largest one whose costs stay
// within the user's targets, which is where this controller settles: it
// raises alpha while the last batch's off-policy share is below the target
// and lowers it when above (integral control), and never past the alpha whose
// buffer would outgrow the memory target.
//
// Why it is stable: the off-policy share s(alpha) rises monotonically with
// alpha, with slope about 0.27 per unit of alpha near alpha 2 in the default
// scenario. The update alpha += gain x (target - s) then moves the error by
// a factor (1 - gain x slope) per step: with the default gain 1, about 0.73,
// so it converges without overshoot, and the integral averages the per-step
// noise of s. A gain above 2 / slope (about 7) would oscillate.
//
// The memory target is a ceiling, not a second integrator: at a step's start
// the buffer holds about the B' - B groups the last step aborted, so with the
// tokens a buffered group holds on average (observed now), the buffer stays
// near max_buffer_tok while B' - B <= max_buffer_tok / tokens per group. It
// runs somewhat above (about 11% on average in the default scenario): a
// resumed group grows before it is aborted again. Alpha is clamped to that
// ceiling and to [alpha_min, alpha_max] before it is stored, so it cannot
// wind up while a target is out of reach.
#include <cstdint>
#include <optional>

namespace april::policies {

struct AlphaControllerParams {
  double alpha = 2.0;  // the first step's alpha
  double alpha_min = 1.0, alpha_max = 4.0;
  double target_offpolicy = 0.5;    // off-policy share of the trained tokens to settle at
  double gain = 1.0;                // alpha per unit of share error, per step
  std::int64_t max_buffer_tok = 0;  // partial-buffer tokens at a step's start; 0 = no target
};

class AlphaController {
 public:
  explicit AlphaController(AlphaControllerParams p) : p_(p), alpha_(p.alpha) {}

  [[nodiscard]] double alpha() const { return alpha_; }
  // After a step: its batch's off-policy token share (none where the step
  // says nothing about alpha), and what the partial buffer holds now (groups
  // and tokens), for batches of `batch_size` groups. Returns the next alpha.
  double update(std::optional<double> offpolicy_share, std::int64_t buffer_groups, std::int64_t buffer_tok, std::int64_t batch_size);

 private:
  AlphaControllerParams p_;
  double alpha_;
};

}  // namespace april::policies
