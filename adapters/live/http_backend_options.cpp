// The one place the HTTP backend's sampling options come from a scenario, so
// that `april live --engines` and `april validate --engines` sample alike.
#include "adapters/live/http_backend.hpp"
#include "adapters/live/live_config.hpp"
#include "base/config.hpp"
#include "base/run_keys.hpp"

namespace april::live {

HttpBackendOptions http_backend_options(const base::Config& c) {
  HttpBackendOptions o;
  o.temperature = c.get(keys::kLiveTemperature);
  o.top_p = c.get(keys::kLiveTopP);
  o.seed = static_cast<std::uint64_t>(c.get(base::keys::kSeed));
  return o;
}

}  // namespace april::live
