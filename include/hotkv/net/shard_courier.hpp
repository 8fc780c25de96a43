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
#include <memory>
#include <vector>

#include "hotkv/commands/shard_batch.hpp"
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

class ShardCourier {
 public:
  ShardCourier(Engine& engine, size_t home);
  ShardCourier(const ShardCourier&) = delete;
  ShardCourier& operator=(const ShardCourier&) = delete;

  // Owner thread. Queues a parcel for parcel.target (another shard).
  void send(Parcel parcel);

 private:
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
};

}  // namespace hotkv
