// The durability barrier: the one place a reply that answers a write passes before it leaves
// (docs/architecture.md, "The durability barrier"). Today's rule is the log's: the records of
// the writes a reply answers are written, and synced under appendfsync always, so no client
// hears of a write a crash could take back. Replica acknowledgements and WAITAOF belong here
// and nowhere else.
//
// The variants differ only in where the reply leaves from; each ends in the same flush of the
// shards' logs, and the pushes held for those records (keyspace events, invalidations, a
// PUBLISH after a write: Shard::after_log) leave with it.
//
// It lives in shard/ because the code that hands replies across threads (a hop's batch, a
// woken waiter's reply, WAIT) is in net/ and commands/ today; it moves up with them when
// they move to the executor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <asio/awaitable.hpp>

#include "hotkv/shard/shard.hpp"

namespace hotkv {

class Engine;

class DurabilityBarrier {
 public:
  // Whether a reply on `shard`'s thread would have to wait: records appended and not yet
  // written (or not synced under always). A load or two; callers on the reply path test it
  // before awaiting pass_grouped, which would cost a coroutine frame.
  // So do replies that may reveal a split part whose operation is not yet written on every
  // shard (split_seals.hpp).
  static bool pending(Shard& shard) {
    return shard.log().needs_flush() || shard.seal_gate().pending();
  }

  // Owner thread: a connection's own replies. Every connection of the thread that passes in
  // one event-loop turn shares one write and one fsync (the group commit, Shard::log_barrier).
  static asio::awaitable<void> pass_grouped(Shard& shard);
  // Owner thread: the group's write now, for the end-of-batch reply pass that holds the
  // replies itself; the connections waiting in pass_grouped are released too. The replies
  // leave only if sealed(); else when_sealed runs what sends them.
  static void pass_group_now(Shard& shard);
  static bool sealed(Shard& shard) { return !shard.seal_gate().pending(); }
  static void when_sealed(Shard& shard, std::function<void()> send) {
    shard.seal_gate().when_sealed(std::move(send));
  }

  // The taint a result made on `shard` carries to the thread that answers it, and taking it
  // in there (split_seals.hpp): a hop's batch, call_on, a woken client's reply.
  static uint64_t taint(Shard& shard) { return shard.seal_gate().taint(); }
  static void absorb(Shard& home, uint64_t taint) { home.seal_gate().absorb(taint); }

  // Owner thread, or a coordinator with the shard parked: now, for replies handed to another
  // thread (a hop's batch, a woken waiter's reply) and for writes no reply will cover (expiry,
  // eviction, the hold sweeper), whose pushes would otherwise wait for the next client.
  static void pass(Shard& shard);
  // A multi-shard operation's parts, written while its shards are parked, passed before any
  // of them is released (so no later command on one of them is logged ahead of an
  // incomplete operation); `home`, the thread running it, then sends the pushes its commands
  // held for these writes.
  static void pass(Engine& engine, const std::vector<size_t>& shards, size_t home);
  // Every shard, with all of them parked: everything written before this instant (a replica's
  // stream starts after it; a parked blocking command's reply).
  static void pass_all(Engine& engine);
};

}  // namespace hotkv
