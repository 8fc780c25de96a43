// maxmemory before each command (docs/operations.md, "Memory"; shard/eviction.hpp).
//
// The client's own thread evicts from its own shard first: no message, no wait. Only when the
// policy finds nothing there (a shard holding only inventory, or no volatile keys under a
// volatile-* policy) are the other shards asked, one after the other, until one of them makes
// progress. A command that needs memory is refused only when none could, as Redis refuses
// it only when eviction fails; everything else (reads, deletions) goes ahead.
#include "hotkv/net/connection.hpp"

#include <asio/post.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>

#include "hotkv/commands/table.hpp"
#include "hotkv/shard/eviction.hpp"

namespace hotkv {

asio::awaitable<bool> Connection::memory_allows(const CommandSpec& spec) {
  Eviction& ev = engine_.eviction();
  // A replica applies its master's stream whatever its memory (Redis's mustObeyClient).
  if (session_.master_link || !ev.over_limit()) {
    ev.set_oom(false);
    co_return true;
  }
  const auto policy = static_cast<EvictionPolicy>(
      engine_.config().maxmemory_policy.load(std::memory_order_relaxed));
  EvictOutcome outcome = EvictOutcome::kFailed;
  // The shards take turns (Eviction::next_turn): writes land on every shard, and each slice
  // should lose its own oldest keys, not the slice of the thread the writer happens to be on.
  // Each turn is a quota of the deficit not yet asked of any shard.
  const size_t turn = ev.next_turn();
  const uint64_t quota = ev.turn_quota();
  const bool tracking = engine_.tracking().clients() > 0;
  if (policy != EvictionPolicy::kNoEviction && quota == 0 && !tracking) {
    outcome = EvictOutcome::kRunning;  // the turns already asked free what is over
  } else if (turn != shard_ && policy != EvictionPolicy::kNoEviction &&
             ev.may_have_candidates(turn)) {
    if (tracking) {
      // Invalidations must reach their clients before this command's reply: wait for it.
      outcome = co_await engine_.call_on(turn, [&ev, turn] { return ev.evict_here(turn); });
    } else {
      ev.request(turn, quota);  // that shard evicts between its own clients' commands
      outcome = EvictOutcome::kRunning;
    }
  }
  if (outcome == EvictOutcome::kFailed) {
    const uint64_t evicted_before = ev.evicted_keys();
    // This shard's own turn takes the same quota as the others' (the fallback when the turn's
    // shard has nothing evicts until under the limit).
    outcome = ev.evict_here(shard_, turn == shard_ && !tracking ? quota : 0);
    if (tracking && ev.evicted_keys() != evicted_before) {
      // The invalidations of keys just evicted here were posted to the clients' threads, this
      // one included: let them through before this command's reply, as Redis sends them.
      co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
    }
  }
  for (size_t i = 0; outcome == EvictOutcome::kFailed && policy != EvictionPolicy::kNoEviction &&
                     i < engine_.shard_count();
       ++i) {
    if (i == shard_ || !ev.may_have_candidates(i)) {
      continue;
    }
    outcome = co_await engine_.call_on(i, [&ev, i] { return ev.evict_here(i); });
  }
  ev.set_oom(outcome == EvictOutcome::kFailed);
  co_return outcome != EvictOutcome::kFailed || (spec.flags & kDenyOom) == 0;
}

}  // namespace hotkv
