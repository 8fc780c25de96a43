// The engine's cross-shard machinery (see engine.hpp for the deadlock argument).
#include "hotkv/shard/engine.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "hotkv/shard/durability_barrier.hpp"
#include "hotkv/shard/eviction.hpp"
#include "hotkv/shard/rdb_saver.hpp"
#include "hotkv/shard/slot.hpp"
#include "hotkv/util/clock.hpp"
#include "hotkv/util/notify.hpp"

namespace hotkv {

Engine::Engine(Config& config, const Table& table, size_t command_count,
               std::vector<asio::io_context*> contexts)
    : config_(config),
      table_(table),
      latency_(config.latency_monitor_threshold),
      slowlog_(config.slowlog_log_slower_than, config.slowlog_max_len, contexts.size()),
      tracking_(std::make_unique<Tracking>(*this)),
      start_unix_ms_(unix_ms()) {
  rdb_saver_ = std::make_unique<RdbSaver>(*this);
  replication_feed_ = std::make_unique<ReplicationFeed>(replication_, contexts.size());
  // Ids of cross-shard log records must not repeat across restarts: start from the clock.
  next_txn_.store(static_cast<uint64_t>(unix_us()) << 8);
  for (size_t i = 0; i < contexts.size(); ++i) {
    auto databases = static_cast<size_t>(config.databases.load());
    shards_.push_back(
        std::make_unique<Shard>(i, *contexts[i], command_count, start_unix_ms_, databases, seals_));
    shards_.back()->set_latency_monitor(&latency_);
    shards_.back()->log().set_tap(replication_feed_.get(), i);
    shards_.back()->set_expiry_gate([this] { return !replication_.is_replica(); });
    // "expired" events come from the deletion itself (the timing wheel's, or a lookup's),
    // so they follow the deadline closely.
    for (uint32_t db = 0; db < databases; ++db) {
      shards_.back()->keyspace(db).set_expired_hook([this, i](uint32_t at, std::string_view key) {
        notify_keyspace_event(at, kNotifyExpired, "expired", key);
        // The deletion is an effect like any other, so replicas (which do not expire keys
        // themselves) and the log see the key go at the moment it went here, as Redis
        // propagates a DEL. It joins the record open on the shard: the command that found the
        // key expired, or the expiry round's own (closed by Shard::run_expiry).
        ShardLog& log = shards_[i]->log();
        if (log.enabled() && !loading()) {
          log.record().select(at);
          log.record().add_del(key);
        }
      });
      shards_.back()->keyspace(db).set_created_hook([this](uint32_t at, std::string_view key) {
        // Announced only: the command creating the key notifies its own event, which is
        // what WATCH and client-side caching follow.
        publish_keyspace_event(at, kNotifyNew, "new", key);
      });
    }
  }
  eviction_ = std::make_unique<Eviction>(*this);
}

void Engine::set_replication_feed_on(bool on) {
  for (auto& s : shards_) {
    s->log().set_tap_on(on);
  }
}

int Engine::persistence_errno() {
  for (auto& s : shards_) {
    if (int e = s->log().last_errno()) {
      return e;
    }
  }
  return 0;
}

size_t Engine::shard_of(std::string_view key) const { return key_shard(key, shards_.size()); }

void Engine::add_shards_of(std::span<const std::string_view> keys,
                           std::vector<size_t>& shards) const {
  for (std::string_view key : keys) {
    shards.push_back(shard_of(key));
  }
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
}

std::vector<size_t> Engine::all_shards() const {
  std::vector<size_t> out(shards_.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = i;
  }
  return out;
}

std::vector<size_t> Engine::lock_order(size_t home, std::vector<size_t> shards) {
  shards.push_back(home);
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  return shards;
}

asio::awaitable<void> Engine::wait_for_lock(size_t s) {
  ShardLock* lock = &shard(s).lock();
  auto initiation = [lock](auto handler) {
    auto ex = asio::get_associated_executor(handler);
    // std::function needs a copyable callable; the handler is move-only.
    auto shared = std::make_shared<decltype(handler)>(std::move(handler));
    lock->acquire_or_wait(
        [ex, shared] { asio::post(ex, [shared]() mutable { std::move(*shared)(); }); });
  };
  co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(std::move(initiation),
                                                                        asio::use_awaitable);
}

std::shared_ptr<Engine::ParkState> Engine::park(size_t home, const std::vector<size_t>& order) {
  auto st = std::make_shared<ParkState>();
  int expected = 0;
  for (size_t s : order) {
    if (s == home) {
      continue;
    }
    ++expected;
    KeyspaceStats::bump(shard(home).cross_thread_messages());
    Shard* target = &shard(s);
    asio::post(target->io(), [this, st, target] {
      if (target->serving_while_busy()) {
        // This thread is inside a busy script (or parked for one): it cannot park for
        // another coordinator, who answers -BUSY instead of waiting.
        st->refused.fetch_add(1, std::memory_order_acq_rel);
        st->arrived.fetch_add(1, std::memory_order_acq_rel);
        st->arrived.notify_all();
        return;
      }
      // The split operations scheduled before the coordinator's cut run here first; their
      // finishes once this thread is back from the park.
      drain_parts(target->id(), false);
      st->arrived.fetch_add(1, std::memory_order_acq_rel);
      st->arrived.notify_all();
      for (;;) {
        uint32_t seen = st->signal.load(std::memory_order_acquire);
        if (st->released.load(std::memory_order_acquire)) {
          break;
        }
        if (target->script_busy()) {
          // The coordinator runs a script past busy-reply-threshold: this thread's clients
          // get their -BUSY replies (or are served elsewhere) while it stays parked.
          target->serve_while_busy();
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          continue;
        }
        st->signal.wait(seen, std::memory_order_acquire);
      }
      target->release_deferred();
    });
  }
  for (;;) {
    int now = st->arrived.load(std::memory_order_acquire);
    if (now >= expected) {
      break;
    }
    st->arrived.wait(now, std::memory_order_acquire);
  }
  return st;
}

void Engine::unpark(const std::shared_ptr<ParkState>& st) {
  st->released.store(true, std::memory_order_release);
  st->signal.fetch_add(1, std::memory_order_acq_rel);
  st->signal.notify_all();
}

namespace {
thread_local void* running_park = nullptr;
thread_local const std::vector<size_t>* running_held = nullptr;
}  // namespace

Engine::ParkScope::ParkScope(ParkState* st, const std::vector<size_t>* held)
    : outer(static_cast<ParkState*>(running_park)), outer_held(running_held) {
  running_park = st;
  running_held = held;
}

Engine::ParkScope::~ParkScope() {
  running_park = outer;
  running_held = outer_held;
}

const std::vector<size_t>* Engine::held_shards() { return running_held; }

Engine::HeldShards::HeldShards(const std::vector<size_t>* held) : outer(running_held) {
  running_held = held;
}

Engine::HeldShards::~HeldShards() { running_held = outer; }

void Engine::wake_parked_for_busy() {
  auto* st = static_cast<ParkState*>(running_park);
  if (st != nullptr) {
    st->signal.fetch_add(1, std::memory_order_acq_rel);
    st->signal.notify_all();
  }
}

bool Engine::any_script_busy(size_t home, const std::vector<size_t>& order) {
  if (shard(home).serving_while_busy()) {
    return true;
  }
  for (size_t s : order) {
    if (shard(s).script_busy()) {
      return true;
    }
  }
  return false;
}

void Engine::unlock(const std::vector<size_t>& order) {
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    shard(*it).lock().release();
  }
}

void Engine::schedule_parts(size_t home, std::vector<ShardPart> parts) {
  // While the shards log to files the operation is numbered, and its replies (and every
  // reply after one of its parts) wait until each part is written (split_seals.hpp).
  struct Seal {
    uint64_t seq = 0;  // set under the schedule lock, before any part can run
    std::atomic<size_t> unwritten{0};
  };
  std::shared_ptr<Seal> seal;
  if (shard(home).log().has_file()) {
    seal = std::make_shared<Seal>();
    seal->unwritten.store(parts.size(), std::memory_order_relaxed);
    for (ShardPart& p : parts) {
      SealGate* gate = &shard(p.shard).seal_gate();
      p.run = [run = std::move(p.run), gate, seal] {
        run();
        gate->absorb(seal->seq);
      };
      p.finish = [this, finish = std::move(p.finish), seal] {
        if (seal->unwritten.fetch_sub(1, std::memory_order_acq_rel) == 1) {
          seal_closed(seal->seq);
        }
        finish();
      };
    }
  }
  {
    std::lock_guard<std::mutex> g(schedule_mu_);
    const uint64_t order = ++schedule_order_;
    if (seal) {
      seal->seq = seals_.open();
    }
    for (ShardPart& p : parts) {
      shard(p.shard).parts().push(
          PartQueue::Part{order, std::move(p.run), std::move(p.finish)});
    }
  }
  if (seal) {
    // The client's reply leaves from here: it waits for the whole operation.
    shard(home).seal_gate().absorb(seal->seq);
  }
  bool here = false;
  for (const ShardPart& p : parts) {
    if (p.shard == home) {
      here = true;
    } else {
      wake_parts(p.shard);
    }
  }
  if (here) {
    drain_parts(home, true);
  }
}

void Engine::spread_taint(const std::vector<size_t>& order) {
  uint64_t taint = 0;
  for (size_t s : order) {
    taint = std::max(taint, shard(s).seal_gate().taint());
  }
  if (taint == 0) {
    return;
  }
  for (size_t s : order) {
    shard(s).seal_gate().absorb(taint);
  }
}

void Engine::seal_closed(uint64_t seq) {
  if (!seals_.close(seq)) {
    return;
  }
  const uint64_t below = seals_.sealed_below();
  for (auto& s : shards_) {
    s->seal_gate().advanced(below);
  }
}

void Engine::wake_parts(size_t s) {
  Shard& target = shard(s);
  if (!target.parts().claim_wake()) {
    return;  // one is on its way and will find these parts too
  }
  KeyspaceStats::bump(target.cross_thread_messages());
  asio::post(target.io(), [this, s] {
    shard(s).parts().wake_arrived();
    drain_parts(s, true);
  });
}

namespace {
thread_local bool draining_parts = false;
}  // namespace

void Engine::drain_parts(size_t s, bool finish_now) {
  Shard& sh = shard(s);
  if (!sh.parts().pending() || draining_parts) {
    return;
  }
  if (sh.serving_while_busy() || sh.log().record_open()) {
    // Inside a busy script (or the record of a command that has not ended): the parts would
    // see or add to changes that are not whole yet. They run once it is over.
    if (sh.serving_while_busy()) {
      sh.defer_until_idle([this, s] { drain_parts(s, true); });
    } else {
      asio::post(sh.io(), [this, s] { drain_parts(s, true); });
    }
    return;
  }
  std::vector<PartQueue::Part> ready;
  sh.parts().take(ready);
  if (ready.empty()) {
    return;
  }
  draining_parts = true;
  struct Done {
    ~Done() { draining_parts = false; }
  } done;
  for (PartQueue::Part& p : ready) {
    p.run();
  }
  if (finish_now) {
    DurabilityBarrier::pass(sh);
    for (PartQueue::Part& p : ready) {
      p.finish();
    }
    return;
  }
  auto finishes = std::make_shared<std::vector<PartQueue::Part>>(std::move(ready));
  asio::post(sh.io(), [&sh, finishes] {
    DurabilityBarrier::pass(sh);
    for (PartQueue::Part& p : *finishes) {
      p.finish();
    }
  });
}

void Engine::hold_parts(const std::vector<size_t>& order) {
  std::lock_guard<std::mutex> g(schedule_mu_);
  for (size_t s : order) {
    shard(s).parts().hold(schedule_order_ + 1);
  }
}

void Engine::release_parts(const std::vector<size_t>& order) {
  {
    std::lock_guard<std::mutex> g(schedule_mu_);
    for (size_t s : order) {
      shard(s).parts().release();
    }
  }
  for (size_t s : order) {
    if (shard(s).parts().pending()) {
      wake_parts(s);
    }
  }
}

Engine::~Engine() = default;

namespace {
uint64_t sum_key_changes(Engine& e) {
  uint64_t total = 0;
  for (size_t i = 0; i < e.shard_count(); ++i) {
    total += e.shard(i).key_changes().load(std::memory_order_relaxed);
  }
  return total;
}
}  // namespace

uint64_t Engine::key_changes_since_save() {
  return sum_key_changes(*this) - stats_.key_changes_at_save.load(std::memory_order_relaxed);
}

void Engine::mark_key_changes_saved() {
  stats_.key_changes_at_save.store(sum_key_changes(*this), std::memory_order_relaxed);
}

void Engine::notify_keyspace_event(uint32_t db, uint32_t type_flag, std::string_view event,
                                   std::string_view key) {
  // Every change to a key is announced here (expiry included), so this is also where WATCH
  // and client-side caching learn of it; the caller runs on the key's shard (or with it
  // parked). One shard: no hash of the key needed to find its registry.
  Shard& owner = shards_.size() == 1 ? *shards_[0] : shard(shard_of(key));
  owner.watches().touch(db, key);
  tracking_->key_changed(owner, key, type_flag == kNotifyExpired || event == "evicted");
  publish_keyspace_event(db, type_flag, event, key);
}

void Engine::publish_keyspace_event(uint32_t db, uint32_t type_flag, std::string_view event,
                                    std::string_view key) {
  uint32_t flags = config_.notify_keyspace_events.load(std::memory_order_relaxed);
  if ((flags & type_flag) == 0 || pubsub_.idle()) {
    return;
  }
  std::string channel;
  std::string at = std::to_string(db);
  // The caller writes the key's shard (see notify_keyspace_event): the event waits there
  // for the write's record to be durable.
  Shard& owner = shards_.size() == 1 ? *shards_[0] : shard(shard_of(key));
  if ((flags & kNotifyKeyspace) != 0) {
    channel.append("__keyspace@").append(at).append("__:").append(key);
    owner.publish_after_log(pubsub_, channel, event);
  }
  if ((flags & kNotifyKeyevent) != 0) {
    channel.assign("__keyevent@").append(at).append("__:").append(event);
    owner.publish_after_log(pubsub_, channel, key);
  }
}

}  // namespace hotkv
