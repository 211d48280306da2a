// The running set's closed-form counts against the token-by-token bookkeeping
// they replace: tokens by version across version changes, per-token prefill,
// finishes in admission order, and preemption of the newest.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "sim/running_set.hpp"

namespace april::sim {
namespace {

RunningSet::Request request(std::uint64_t key, std::int32_t generated, std::int32_t stop_at, std::int32_t feed = 0) {
  RunningSet::Request r;
  r.req.key = key;
  r.req.prompt_tok = 10;
  r.req.generated_tok = generated;
  r.req.stop_at_tok = stop_at;
  r.submitted_tok = generated;
  r.feed_tok = feed;
  r.held_kv_tok = feed > 0 ? 0 : 10 + generated;
  return r;
}

TEST(RunningSet, TokensByVersionFollowTheClockAcrossVersionChanges) {
  RunningSet s;
  s.set_version(0);
  s.admit(request(1, 0, 100));
  s.advance(5);
  s.set_version(1);
  s.admit(request(2, 3, 100));
  s.advance(4);
  s.set_version(1);  // same version: no new stretch
  s.advance(2);
  s.set_version(2);
  s.set_version(3);  // nothing ran under 2
  s.advance(1);
  std::vector<RunningSet::Request> all = s.take_all();
  ASSERT_EQ(all.size(), 2U);
  EXPECT_EQ(all[0].req.key, 1U);
  EXPECT_EQ(all[0].req.generated_tok, 12);
  EXPECT_EQ(all[0].held_kv_tok, 10 + 12);
  EXPECT_EQ(all[0].by_version, (base::TokensByVersion{{0, 5}, {1, 6}, {3, 1}}));
  EXPECT_EQ(all[1].req.generated_tok, 3 + 7);
  EXPECT_EQ(all[1].by_version, (base::TokensByVersion{{1, 6}, {3, 1}}));
  EXPECT_TRUE(s.empty());
}

TEST(RunningSet, PerTokenPrefillFeedsBeforeItGenerates) {
  RunningSet s;
  s.set_version(7);
  s.admit(request(1, 0, 4, /*feed=*/3));
  EXPECT_EQ(s.iterations_to_next_finish(), 3 + 4);
  s.advance(2);
  std::int64_t feed = -1, generated = -1;
  s.for_each_live([&](const RunningRequest& r) {
    feed = s.feed_now(r);
    generated = s.generated_now(r);
  });
  EXPECT_EQ(feed, 1);
  EXPECT_EQ(generated, 0);
  s.advance(3);  // 1 more fed, 2 generated
  auto all = s.take_all();
  EXPECT_EQ(all[0].req.generated_tok, 2);
  EXPECT_EQ(all[0].feed_tok, 0);
  EXPECT_EQ(all[0].held_kv_tok, 5);
  EXPECT_EQ(all[0].by_version, (base::TokensByVersion{{7, 2}}));
}

TEST(RunningSet, FinishesLeaveInAdmissionOrderAndPreemptionTakesTheNewest) {
  RunningSet s;
  s.set_version(0);
  s.admit(request(1, 0, 6));
  s.admit(request(2, 0, 4));
  s.admit(request(3, 2, 6));  // finishes with key 2
  s.admit(request(4, 0, 9));
  EXPECT_EQ(s.iterations_to_next_finish(), 4);
  s.advance(4);
  std::vector<RunningSet::Request> done;
  s.take_finished(done);
  ASSERT_EQ(done.size(), 2U);
  EXPECT_EQ(done[0].req.key, 2U);
  EXPECT_EQ(done[1].req.key, 3U);
  EXPECT_EQ(s.live(), 2U);
  const auto newest = s.take_newest();
  EXPECT_EQ(newest.req.key, 4U);
  EXPECT_EQ(newest.req.generated_tok, 4);
  // The preempted request's finish is gone with it; key 1 finishes next.
  EXPECT_EQ(s.iterations_to_next_finish(), 2);
  s.advance(2);
  done.clear();
  s.take_finished(done);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(done[0].req.key, 1U);
  EXPECT_TRUE(s.empty());
}

TEST(RunningSet, APreemptedRequestKeepsItsTokensByVersionWhenReadmitted) {
  // The set keeps a readmitted request's earlier tokens apart from its own
  // line (a pool): they must come back whole, with the ones since, and a
  // freed entry must not leak into the next request that had none.
  RunningSet s;
  s.set_version(0);
  s.admit(request(1, 0, 20));
  s.advance(3);
  RunningSet::Request preempted = s.take_newest();
  EXPECT_EQ(preempted.req.generated_tok, 3);
  EXPECT_EQ(preempted.by_version, (base::TokensByVersion{{0, 3}}));
  s.set_version(1);
  s.admit(std::move(preempted));
  s.admit(request(2, 0, 30));
  s.advance(17);
  std::vector<RunningSet::Request> done;
  s.take_finished(done);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(done[0].req.key, 1U);
  EXPECT_EQ(done[0].req.generated_tok, 20);
  EXPECT_EQ(done[0].by_version, (base::TokensByVersion{{0, 3}, {1, 17}}));
  s.admit(request(3, 0, 5));  // reuses nothing: it had no earlier tokens
  s.advance(5);
  done.clear();
  s.take_finished(done);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(done[0].req.key, 3U);
  EXPECT_EQ(done[0].by_version, (base::TokensByVersion{{1, 5}}));
  auto rest = s.take_all();
  ASSERT_EQ(rest.size(), 1U);
  EXPECT_EQ(rest[0].by_version, (base::TokensByVersion{{1, 22}}));
}

TEST(RunningSet, AStaleFinishEqualToALiveOneTakesTheRequestOnce) {
  // A heap entry is (finish clock, slot): a preempted request's entry stays
  // in the heap, and a later admission to its slot with the same finish clock
  // makes an equal one. The request must leave once, and the stale entry go.
  RunningSet s;
  s.set_version(0);
  s.admit(request(1, 0, 10));              // slot 0, finishes at clock 10
  s.admit(request(2, 0, 10));              // slot 1, finishes at clock 10
  EXPECT_EQ(s.take_newest().req.key, 2U);  // its entry (10, slot 1) is stale
  s.admit(request(3, 0, 10));              // slot 1 again, finishing at 10: an equal entry
  s.admit(request(4, 0, 12));              // slot 2
  EXPECT_EQ(s.iterations_to_next_finish(), 10);
  s.advance(10);
  std::vector<RunningSet::Request> done;
  s.take_finished(done);
  ASSERT_EQ(done.size(), 2U);
  EXPECT_EQ(done[0].req.key, 1U);
  EXPECT_EQ(done[1].req.key, 3U);
  EXPECT_EQ(done[1].req.generated_tok, 10);
  EXPECT_EQ(s.live(), 1U);
  EXPECT_EQ(s.iterations_to_next_finish(), 2);
  s.advance(2);
  done.clear();
  s.take_finished(done);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(done[0].req.key, 4U);
  EXPECT_TRUE(s.empty());
}

TEST(RunningSet, HintsTheNextRequestToFinishAndItsSubmittersRecords) {
  // The engine hands these to the event that ends its segment, so that the
  // request and the loop's records are in the cache when it runs: they must
  // name the request that finishes next, also after a preemption.
  RunningSet s;
  s.set_version(0);
  EXPECT_EQ(s.next_finish_addresses(), (std::array<std::uintptr_t, 5>{}));
  auto a = request(1, 0, 30);
  a.req.touched_on_finish = {0x1000, 0x1100};
  auto b = request(2, 0, 10);
  b.req.touched_on_finish = {0x2000, 0x2100};
  auto c = request(3, 0, 5);
  c.req.touched_on_finish = {0x3000, 0x3100};
  s.admit(a);
  s.admit(b);
  EXPECT_EQ(s.iterations_to_next_finish(), 10);
  EXPECT_EQ(s.next_finish_addresses()[3], 0x2000U);
  EXPECT_EQ(s.next_finish_addresses()[4], 0x2100U);
  s.admit(c);
  EXPECT_EQ(s.iterations_to_next_finish(), 5);
  EXPECT_EQ(s.next_finish_addresses()[3], 0x3000U);
  EXPECT_NE(s.next_finish_addresses()[0], 0U);
  EXPECT_NE(s.next_finish_addresses()[1], 0U);
  EXPECT_NE(s.next_finish_addresses()[2], 0U);
  (void)s.take_newest();  // c leaves; b is next again
  EXPECT_EQ(s.iterations_to_next_finish(), 10);
  EXPECT_EQ(s.next_finish_addresses()[3], 0x2000U);
}

}  // namespace
}  // namespace april::sim
