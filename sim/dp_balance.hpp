#pragma once
// How unevenly a train batch's work falls on the trainer's data-parallel
// groups. FSDP's collectives (and Megatron's) make every group wait for the
// slowest at each layer, so a mini-batch takes as long as its busiest group.
//
// verl's layout (volcengine/verl at 1fc52bb5, the fully-async recipe's runs):
// before the update, ray_trainer.py `_balance_batch` splits each update call's
// rows into one equal-count partition per trainer GPU, balanced by token count
// (seqlen_balancing.py `get_seqlen_balanced_partitions`: Karmarkar-Karp's
// largest differencing), indices kept in order; GPU i takes partition i and an
// Ulysses group its GPUs' partitions, one after another (fsdp_ulysses.py);
// dp_actor.py `update_policy` then cuts that into the call's mini-batches in
// order, without shuffling. So when a call holds one mini-batch per partition
// (the fully-async trainer: 4 calls of 128 prompts, 4 mini-batches each) every
// mini-batch is a balanced partition; when it holds more (the colocated
// trainer: one call, 16 mini-batches, 4 per partition) each is a quarter of
// one, and those are not balanced against each other.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace april::sim {

// Karmarkar-Karp largest differencing into `k` partitions of equal count (the
// rows padded with zeros to a multiple of k, as empty rows): each partition's
// row indices, ascending. Ties go by index, so the result is deterministic.
std::vector<std::vector<std::size_t>> balanced_partitions(const std::vector<std::int64_t>& tokens, std::size_t k);

struct DpLayout {
  std::int64_t partitions = 1;    // GPUs that hold distinct rows (verl: the trainer's world size)
  std::int64_t group_gpus = 1;    // GPUs that split one sequence (Ulysses / context parallel); a group takes theirs in order
  std::int64_t update_calls = 1;  // the batch's rows go to the update in this many calls, each balanced alone
  std::int64_t mini_batches = 1;  // optimizer steps per epoch, over all calls
};

// Work of the batch's busiest group over its mean, summed over mini-batches
// (update) and over the whole batch (a forward: its pace is the partition's).
struct DpImbalance {
  double update = 1.0;   // sum over mini-batches of the busiest group's work / sum of the mean group's
  double forward = 1.0;  // busiest group's work over the whole batch / the mean group's
};

// `tokens`: each row's prompt + response tokens, in batch order; a row's work
// is work_per_token x L + work_per_pair x L (L + 1) / 2 (linear layers and
// causal attention); rows are balanced by tokens, as verl does.
DpImbalance verl_dp_imbalance(const std::vector<std::int64_t>& tokens, const DpLayout& layout, double work_per_token, double work_per_pair);

}  // namespace april::sim
