// The messages one thread sends to the other shards for its connections' pipeline windows,
// batched per turn of the event loop. Every connection served in one turn hands its batch for
// shard S to this thread's courier; the first parcel of the turn posts a flush behind the
// handlers already queued, and the flush sends each shard one message with every parcel for
// it. The shard runs them all, writes its log once for the lot, and sends one message back,
// whose parcels return to their connections. With 25 clients per thread at -P 1 a turn
// carries several requests per message instead of one, and the other thread is woken once
// for them.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include <asio/awaitable.hpp>

#include "hotkv/exec/shard_batch.hpp"
#include "hotkv/exec/split_run.hpp"
#include "hotkv/shard/engine.hpp"

namespace hotkv {

// A connection waiting for its window's batches; resume() is called on the connection's
// thread when the last one is back.
struct WindowWait {
  virtual ~WindowWait() = default;
  virtual void resume() = 0;
  int remaining = 0;
};

// One connection's batch for one shard.
struct Parcel {
  ShardBatch batch;
  int proto = 2;
  size_t target = 0;
  // Where the batch goes back to (the connection's batch slot for `target`): the connection
  // keeps itself alive until `wait` resumes, and only its own thread touches either.
  ShardBatch* home_slot = nullptr;
  std::shared_ptr<WindowWait> wait;
};

// One connection's cross-shard work (a run of commands, a transaction): `work` runs on this
// thread inside run_atomic with `shards` parked, and must write nothing but its own replies
// (the courier writes the shards' logs after every parcel of the bag has run).
struct AtomicParcel {
  std::function<void()> work;
  // Runs instead of work when a shard is held by a busy script (run_atomic threw ShardsBusy):
  // writes the -BUSY replies.
  std::function<void()> refuse;
  std::vector<size_t> shards;  // sorted, unique
  std::shared_ptr<WindowWait> wait;
};

// One connection's split run (split_run.hpp): its parts run on their shards without parking
// any thread; `wait` resumes once every part of it ran.
struct SplitParcel {
  SplitRun* run = nullptr;
  int proto = 2;
  std::shared_ptr<WindowWait> wait;
};

class ShardCourier {
 public:
  ShardCourier(Engine& engine, size_t home);
  ShardCourier(const ShardCourier&) = delete;
  ShardCourier& operator=(const ShardCourier&) = delete;

  // Owner thread. Queues a parcel for parcel.target (another shard).
  void send(Parcel parcel);
  // Owner thread. Queues a run of cross-shard commands: every run handed over in one loop
  // turn, by any connection of this thread, executes in one run_atomic over the union of
  // their shards, one after the other in arrival order; one rendezvous for all of them.
  void send_atomic(AtomicParcel parcel);
  // Owner thread. Queues a split run: every run handed over in one loop turn is scheduled as
  // one operation (Engine::schedule_parts), a part per shard holding each run's commands for
  // it in arrival order; one wake-up per shard and one message back for all of them.
  void send_split(SplitParcel parcel);

 private:
  using AtomicBag = std::vector<AtomicParcel>;
  void flush_atomic();
  asio::awaitable<void> run_atomic_bag(AtomicBag bag);

  using SplitBag = std::vector<SplitParcel>;
  void flush_split();

  using Bag = std::vector<Parcel>;
  void flush();
  // On the target's thread: runs every parcel, writes the log once, sends the bag back.
  static void deliver(Engine* engine, ShardCourier* from, size_t target, Bag bag);
  // On the owner thread: every batch back to its connection.
  void returned(Bag bag);

  Engine& engine_;
  size_t home_;
  std::vector<Bag> outgoing_;  // per target shard
  std::vector<Bag> spare_;     // bags that came back, reused so steady state allocates nothing
  bool flush_posted_ = false;
  AtomicBag atomic_outgoing_;
  bool atomic_flush_posted_ = false;
  SplitBag split_outgoing_;
  bool split_flush_posted_ = false;
};

}  // namespace hotkv
