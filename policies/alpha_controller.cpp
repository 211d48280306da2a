#include "policies/alpha_controller.hpp"

#include <algorithm>

namespace april::policies {

double AlphaController::update(std::optional<double> offpolicy_share, std::int64_t buffer_groups, std::int64_t buffer_tok,
                               std::int64_t batch_size) {
  double next = offpolicy_share ? alpha_ + p_.gain * (p_.target_offpolicy - *offpolicy_share) : alpha_;
  if (p_.max_buffer_tok > 0 && buffer_groups > 0 && buffer_tok > 0 && batch_size > 0) {
    const double tok_per_group = static_cast<double>(buffer_tok) / static_cast<double>(buffer_groups);
    next = std::min(next, 1.0 + static_cast<double>(p_.max_buffer_tok) / (tok_per_group * static_cast<double>(batch_size)));
  }
  alpha_ = std::clamp(next, p_.alpha_min, p_.alpha_max);
  return alpha_;
}

}  // namespace april::policies
