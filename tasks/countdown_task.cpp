#include "tasks/countdown_task.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "base/rng.hpp"

namespace april::live {

CountdownTask::CountdownTask(CountdownParams params, std::uint64_t seed) : p_(params), seed_(seed) {
  if (p_.max_len < 1 || p_.median_len < 1) throw std::invalid_argument("countdown task: bad parameters");
}

CountdownTask::Example CountdownTask::example(std::int64_t index) const {
  base::Rng rng(seed_ ^ (static_cast<std::uint64_t>(index) * 0x9E3779B97F4A7C15ULL), "countdown-task");
  const double len = rng.lognormal(std::log(p_.median_len), p_.sigma);
  const auto n = std::clamp<std::int64_t>(std::llround(len), 1, p_.max_len);
  Example ex;
  ex.prompt = {kBos, static_cast<std::int32_t>(kOne + n - 1), kSep};
  for (std::int64_t k = n; k >= 1; --k) ex.answer.push_back(static_cast<std::int32_t>(kOne + k - 1));
  ex.answer.push_back(kEos);
  return ex;
}

std::string CountdownTask::prompt_id(std::int64_t index) { return fmt::format("countdown-{}", index); }

std::int64_t CountdownTask::index_of(const std::string& id) {
  const std::string prefix = "countdown-";
  if (id.rfind(prefix, 0) != 0) throw std::invalid_argument(fmt::format("'{}' is not a countdown-task prompt id", id));
  std::size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(id.substr(prefix.size()), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != id.size() - prefix.size() || v < 0)
    throw std::invalid_argument(fmt::format("'{}' is not a countdown-task prompt id", id));
  return v;
}

double CountdownTask::reward(const Example& ex, const std::vector<std::int32_t>& response) { return response == ex.answer ? 1.0 : 0.0; }

std::string CountdownTask::render(const std::vector<std::int32_t>& tokens) {
  std::string out;
  for (auto t : tokens) {
    if (t == kPad)
      out += "<pad>";
    else if (t == kBos)
      out += "<bos>";
    else if (t == kSep)
      out += "<sep>";
    else if (t == kEos)
      out += "<eos>";
    else
      out += fmt::format(" {} ", t - kOne + 1);
  }
  return out;
}

CountdownWorkload::CountdownWorkload(const CountdownTask& task, std::int64_t samples_per_group, std::int64_t first_index)
    : task_(task), n_(samples_per_group), next_(first_index) {}

base::GroupSpec CountdownWorkload::next_group(std::int64_t /*step*/) {
  const std::int64_t k = task_.params().dataset_prompts;
  const std::int64_t index = k > 0 ? next_ % k : next_;
  ++next_;
  const auto ex = task_.example(index);
  base::GroupSpec g;
  g.prompt_id = CountdownTask::prompt_id(index);
  g.prompt_tok = static_cast<std::int32_t>(ex.prompt.size());
  g.response_tok.assign(static_cast<std::size_t>(n_), static_cast<std::int32_t>(ex.answer.size()));
  return g;
}

std::string CountdownTask::describe() const {
  return fmt::format("countdown task, median N {}, sigma {}, largest N {}", p_.median_len, p_.sigma, p_.max_len);
}

std::unique_ptr<TaskWorkload> CountdownTask::workload(std::int64_t samples_per_group, std::int64_t first_index) const {
  return std::make_unique<CountdownWorkload>(*this, samples_per_group, first_index);
}

std::string CountdownWorkload::describe() const { return fmt::format("countdown task, {} samples per prompt", n_); }

}  // namespace april::live
