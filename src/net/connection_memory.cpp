// maxmemory before each command (docs/operations.md, "Memory"; shard/eviction.hpp).
//
// Each over-limit command is one turn (Eviction::next_turn): the turn's shard gives a quota,
// the share of the deficit no shard has been asked for yet, between its own clients' commands
// (with one shard, or clients that track keys, at once). A large deficit is asked of every
// shard at once. Only when the policy finds nothing (a shard holding only inventory, or no
// volatile keys under a volatile-* policy) are the shards called, the client's own first, until
// one of them makes progress. A command that needs memory is refused only when none could, as
// Redis refuses it only when eviction fails; everything else (reads, deletions) goes ahead.
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
  // Several shards and no tracking: every turn is posted, the client's own shard's too, so
  // each shard weighs its quota at the same point (between its clients' commands). Taken at
  // once here, the own shard's turns would see this connection's transient buffers still
  // counted and give more keys than the others, which weigh theirs after they are freed.
  const bool posted = policy != EvictionPolicy::kNoEviction && !tracking &&
                      engine_.shard_count() > 1;
  if (policy != EvictionPolicy::kNoEviction && quota == 0 && !tracking) {
    outcome = EvictOutcome::kRunning;  // the turns already asked free what is over
  } else if (posted) {
    // A large deficit is asked of every shard at once (Eviction::kSpreadQuotaBytes).
    const bool spread = quota >= Eviction::kSpreadQuotaBytes;
    for (size_t i = 0; i < engine_.shard_count(); ++i) {
      if ((spread || i == turn) && ev.may_have_candidates(i)) {
        ev.request(i, quota);
        outcome = EvictOutcome::kRunning;
      }
    }
  } else if (turn != shard_ && policy != EvictionPolicy::kNoEviction &&
             ev.may_have_candidates(turn)) {
    // Invalidations must reach their clients before this command's reply: wait for it.
    outcome = co_await engine_.call_on(shard_, turn, [&ev, turn] { return ev.evict_here(turn); });
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
    outcome = co_await engine_.call_on(shard_, i, [&ev, i] { return ev.evict_here(i); });
  }
  ev.set_oom(outcome == EvictOutcome::kFailed);
  co_return outcome != EvictOutcome::kFailed || (spec.flags & kDenyOom) == 0;
}

}  // namespace hotkv
