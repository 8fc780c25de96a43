// Cross-thread messages for pipeline windows, batched per loop turn (see shard_courier.hpp).
#include "hotkv/exec/shard_courier.hpp"

#include <algorithm>
#include <atomic>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/post.hpp>

#include "hotkv/commands/blocking.hpp"
#include "hotkv/shard/durability_barrier.hpp"

namespace hotkv {

ShardCourier::ShardCourier(Engine& engine, size_t home)
    : engine_(engine), home_(home), outgoing_(engine.shard_count()) {}

void ShardCourier::send(Parcel parcel) {
  Bag& bag = outgoing_[parcel.target];
  if (bag.empty() && bag.capacity() == 0 && !spare_.empty()) {
    bag.swap(spare_.back());
    spare_.pop_back();
  }
  bag.push_back(std::move(parcel));
  if (!flush_posted_) {
    // Posted handlers run after the ready sockets the reactor has already queued, so the flush
    // comes once this turn's connections have all been read and parsed.
    flush_posted_ = true;
    asio::post(engine_.shard(home_).io(), [this] { flush(); });
  }
}

void ShardCourier::flush() {
  flush_posted_ = false;
  Shard& home = engine_.shard(home_);
  for (size_t t = 0; t < outgoing_.size(); ++t) {
    if (outgoing_[t].empty()) {
      continue;
    }
    Bag bag;
    bag.swap(outgoing_[t]);
    KeyspaceStats::bump(home.cross_thread_messages());
    size_t commands = 0;
    for (const Parcel& p : bag) {
      commands += p.batch.size();
    }
    KeyspaceStats::bump(home.cross_thread_commands(), commands);
    Engine* engine = &engine_;
    asio::post(engine_.shard(t).io(), [engine, from = this, t, bag = std::move(bag)]() mutable {
      deliver(engine, from, t, std::move(bag));
    });
  }
}

void ShardCourier::deliver(Engine* engine, ShardCourier* from, size_t target, Bag bag) {
  Shard& shard = engine->shard(target);
  for (Parcel& p : bag) {
    p.batch.run(*engine, shard, p.proto, nullptr);
  }
  // The replies leave this thread only once their log records are written (and synced with
  // appendfsync always): one group write for every parcel of the message.
  DurabilityBarrier::pass(shard);
  KeyspaceStats::bump(shard.cross_thread_messages());
  uint64_t taint = DurabilityBarrier::taint(shard);
  asio::post(engine->shard(from->home_).io(), [from, taint, bag = std::move(bag)]() mutable {
    DurabilityBarrier::absorb(from->engine_.shard(from->home_), taint);
    from->returned(std::move(bag));
  });
}

void ShardCourier::send_atomic(AtomicParcel parcel) {
  atomic_outgoing_.push_back(std::move(parcel));
  if (!atomic_flush_posted_) {
    atomic_flush_posted_ = true;
    asio::post(engine_.shard(home_).io(), [this] { flush_atomic(); });
  }
}

void ShardCourier::send_split(SplitParcel parcel) {
  split_outgoing_.push_back(std::move(parcel));
  if (!split_flush_posted_) {
    split_flush_posted_ = true;
    asio::post(engine_.shard(home_).io(), [this] { flush_split(); });
  }
}

void ShardCourier::flush_split() {
  split_flush_posted_ = false;
  // Shared by the parts: the runs, and how many shards have still to finish.
  struct Operation {
    SplitBag runs;
    std::atomic<size_t> remaining{0};
  };
  auto op = std::make_shared<Operation>();
  op->runs.swap(split_outgoing_);
  std::vector<size_t> shards;
  for (SplitParcel& p : op->runs) {
    p.run->prepare(engine_);
    shards.insert(shards.end(), p.run->shards().begin(), p.run->shards().end());
  }
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  op->remaining.store(shards.size(), std::memory_order_relaxed);
  Engine* engine = &engine_;
  Shard* home = &engine_.shard(home_);
  std::vector<Engine::ShardPart> parts;
  parts.reserve(shards.size());
  for (size_t s : shards) {
    auto run = [engine, op, s] {
      for (SplitParcel& p : op->runs) {
        const std::vector<size_t>& own = p.run->shards();
        if (std::find(own.begin(), own.end(), s) != own.end()) {
          p.run->run_shard(*engine, s, p.proto);
        }
      }
    };
    auto finish = [engine, home, op, s] {
      // The clients the parts woke are served before the replies leave, as after EXEC.
      serve_blocked_now(*engine, engine->shard(s));
      if (op->remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) {
        return;
      }
      auto resume_all = [op] {
        for (SplitParcel& p : op->runs) {
          if (--p.wait->remaining == 0) {
            p.wait->resume();
          }
        }
      };
      if (&engine->shard(s) == home) {
        resume_all();
      } else {
        KeyspaceStats::bump(engine->shard(s).cross_thread_messages());
        asio::post(home->io(), std::move(resume_all));
      }
    };
    parts.push_back(Engine::ShardPart{s, std::move(run), std::move(finish)});
  }
  engine_.schedule_parts(home_, std::move(parts));
}

void ShardCourier::flush_atomic() {
  atomic_flush_posted_ = false;
  AtomicBag bag;
  bag.swap(atomic_outgoing_);
  asio::co_spawn(engine_.shard(home_).io(), run_atomic_bag(std::move(bag)), asio::detached);
}

asio::awaitable<void> ShardCourier::run_atomic_bag(AtomicBag bag) {
  std::vector<size_t> shards;
  for (const AtomicParcel& p : bag) {
    shards.insert(shards.end(), p.shards.begin(), p.shards.end());
  }
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  std::vector<size_t> involved = shards;
  involved.push_back(home_);
  Engine* engine = &engine_;
  AtomicBag* parcels = &bag;
  // A named task, not a temporary inside co_await (GCC 12).
  auto task = [engine, parcels, &involved, home = home_]() {
    for (AtomicParcel& p : *parcels) {
      p.work();
    }
    // Every part is written (and synced with always) while the shards are still parked, so
    // no later command on any of them can be logged ahead of an incomplete operation.
    DurabilityBarrier::pass(*engine, involved, home);
    return 0;
  };
  bool refused = false;
  try {
    co_await engine_.run_atomic(home_, std::move(shards), std::move(task));
  } catch (const ShardsBusy&) {
    refused = true;
  }
  if (refused) {
    for (AtomicParcel& p : bag) {
      p.refuse();
    }
  }
  for (AtomicParcel& p : bag) {
    if (--p.wait->remaining == 0) {
      p.wait->resume();
    }
  }
}

void ShardCourier::returned(Bag bag) {
  // Every batch goes back to its slot before any connection resumes (a resumed connection
  // may run a while and send again).
  for (Parcel& p : bag) {
    *p.home_slot = std::move(p.batch);
  }
  for (Parcel& p : bag) {
    if (--p.wait->remaining == 0) {
      p.wait->resume();
    }
  }
  bag.clear();
  if (spare_.size() < outgoing_.size()) {
    spare_.push_back(std::move(bag));
  }
}

}  // namespace hotkv
