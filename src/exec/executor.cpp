// A connection's executor (see executor.hpp): the window, the atomic and split runs, and
// their flush.
#include "hotkv/exec/executor.hpp"

#include <algorithm>

#include <asio/async_result.hpp>
#include <asio/use_awaitable.hpp>

#include "hotkv/commands/blocking.hpp"
#include "hotkv/commands/errors_scripting.hpp"
#include "hotkv/commands/script_store.hpp"

namespace hotkv {

Executor::Executor(Engine& engine, size_t home, ShardCourier& courier, ClientSession& session)
    : engine_(engine), home_(home), courier_(courier), session_(session) {}

bool Executor::full() const {
  return window_.size() >= kWindowCommands || window_bytes_ >= kWindowBytes ||
         atomic_run_.size() >= kWindowCommands || atomic_run_.arg_bytes() >= kWindowBytes ||
         split_run_.size() >= kWindowCommands || split_run_.arg_bytes() >= kWindowBytes;
}

Executor::Take Executor::take(const Plan& plan, std::span<const std::string_view> argv,
                             const TrackingCaller& caller) {
  const CommandSpec& spec = *plan.spec;
  if (plan.keyed && plan.mode != RunMode::kAtomic) {
    const size_t target = plan.shard;
    if (cross_shard_pending() || !window_takes(target, spec)) {
      return Take::kFlushFirst;
    }
    if (plan.mode == RunMode::kLocal && window_.empty()) {
      return Take::kRunNow;  // here, with nothing before it
    }
    // Squashed: this shard's part of the pipeline travels (or runs) with the others.
    add_to_window(target, spec, argv, plan.db, caller);
    return Take::kTaken;
  }
  if (plan.mode == RunMode::kAtomic) {
    // A call that splits by key and one that needs its shards parked do not share a run.
    if (!window_.empty() || (plan.splits ? !atomic_run_.empty() : !split_run_.empty())) {
      return Take::kFlushFirst;
    }
    if (plan.splits) {
      split_run_.add_split(spec, argv, plan.key_shards, plan.db, caller, engine_);
    } else {
      add_to_atomic_run(spec, argv, plan.db, caller, plan.shards);
    }
    return Take::kTaken;
  }
  return Take::kRunNow;
}

void Executor::add_to_window(size_t shard, const CommandSpec& spec,
                             std::span<const std::string_view> argv, uint32_t db,
                             const TrackingCaller& caller) {
  if (batches_.empty()) {
    batches_.resize(engine_.shard_count());
  }
  if (!window_.empty() && window_.front() != shard) {
    window_one_shard_ = false;
  }
  window_script_ = window_script_ || (spec.flags & kRunsScript) != 0;
  size_t before = batches_[shard].arg_bytes();
  batches_[shard].add(spec, argv, db, caller);
  window_bytes_ += batches_[shard].arg_bytes() - before;
  window_.push_back(static_cast<uint16_t>(shard));
  if (shard != home_) {
    ++window_remote_;
  }
}

bool Executor::window_takes(size_t shard, const CommandSpec& spec) const {
  if (window_.empty() || (!window_script_ && (spec.flags & kRunsScript) == 0)) {
    return true;
  }
  return window_one_shard_ && window_.front() == shard;
}

asio::awaitable<void> Executor::finish_stopped_batch(ShardBatch& stopped) {
  rerun_.add_unrun_of(stopped);
  co_await run_batch_parked(rerun_, engine_.all_shards());
  if (rerun_.stopped()) {
    rerun_.refuse(err::kScriptRerunFailed);
  }
  stopped.append_replies_of(rerun_);
  rerun_.clear();
}

void Executor::add_to_atomic_run(const CommandSpec& spec, std::span<const std::string_view> argv,
                                 uint32_t db, const TrackingCaller& caller,
                                 const std::vector<size_t>& shards) {
  atomic_run_.add(spec, argv, db, caller);
  for (size_t sh : shards) {
    auto at = std::lower_bound(atomic_shards_.begin(), atomic_shards_.end(), sh);
    if (at == atomic_shards_.end() || *at != sh) {
      atomic_shards_.insert(at, sh);
    }
  }
}

namespace {

// The coroutine waiting in flush_window, resumed by the courier when its last batch is back.
template <class Handler>
struct WindowWaitFor : WindowWait {
  explicit WindowWaitFor(Handler h) : handler(std::move(h)) {}
  void resume() override {
    Handler h = std::move(handler);
    std::move(h)();
  }
  Handler handler;
};

}  // namespace

asio::awaitable<void> Executor::run_atomic_batched(std::vector<size_t> shards,
                                                   std::function<void()> work,
                                                   std::function<void()> refuse) {
  // The work joins every other connection's handed over in this loop turn: one run_atomic
  // for all of them (ShardCourier::send_atomic).
  auto initiation = [this, &shards, &work, &refuse](auto handler) {
    auto wait = std::make_shared<WindowWaitFor<decltype(handler)>>(std::move(handler));
    wait->remaining = 1;
    AtomicParcel p;
    p.work = std::move(work);
    p.refuse = std::move(refuse);
    p.shards = std::move(shards);
    p.wait = wait;
    courier_.send_atomic(std::move(p));
  };
  co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(std::move(initiation),
                                                                       asio::use_awaitable);
}

asio::awaitable<void> Executor::run_batch_parked(ShardBatch& batch, std::vector<size_t> shards) {
  Engine* engine = &engine_;
  ShardBatch* run = &batch;
  ClientSession* session = &session_;
  size_t home = home_;
  int proto = session_.resp;
  co_await run_atomic_batched(
      std::move(shards),
      [engine, run, session, home, proto] {
        run->run(*engine, engine->shard(home), proto, session, true);
      },
      [engine, run] { run->refuse(engine->scripts().busy_error()); });
}

asio::awaitable<void> Executor::flush_atomic_run(std::string& out) {
  if (atomic_run_.empty()) {
    co_return;
  }
  std::vector<size_t> shards;
  shards.swap(atomic_shards_);
  co_await run_batch_parked(atomic_run_, std::move(shards));
  if (atomic_run_.stopped()) {
    co_await finish_stopped_batch(atomic_run_);
  }
  // Clients the run woke on this thread's shard first, as after EXEC (connection_multi.cpp).
  serve_blocked_now(engine_, engine_.shard(home_));
  for (size_t i = 0; i < atomic_run_.size(); ++i) {
    out += atomic_run_.reply(i);
  }
  atomic_run_.clear();
}

asio::awaitable<void> Executor::run_split(SplitRun& run) {
  // With the other split runs of this thread's connections in the same loop turn: one
  // schedule step, one wake-up per shard and one message back for all of them.
  auto initiation = [this, &run](auto handler) {
    auto wait = std::make_shared<WindowWaitFor<decltype(handler)>>(std::move(handler));
    wait->remaining = 1;
    courier_.send_split(SplitParcel{&run, session_.resp, wait});
  };
  co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(std::move(initiation),
                                                                       asio::use_awaitable);
}

asio::awaitable<void> Executor::flush_split_run(std::string& out) {
  if (split_run_.empty()) {
    co_return;
  }
  co_await run_split(split_run_);
  // Clients the run woke on this thread's shard first, as after EXEC (connection_multi.cpp).
  serve_blocked_now(engine_, engine_.shard(home_));
  for (size_t i = 0; i < split_run_.size(); ++i) {
    split_run_.append_reply(i, out);
  }
  split_run_.clear();
}

asio::awaitable<void> Executor::flush(std::string& out) {
  if (!split_run_.empty()) {
    co_await flush_split_run(out);
  }
  if (!atomic_run_.empty()) {
    co_await flush_atomic_run(out);
  }
  if (!window_.empty()) {
    co_await flush_window(out);
  }
}

asio::awaitable<void> Executor::flush_window(std::string& out) {
  if (window_remote_ > 0) {
    // Named initiation object: GCC 12 mishandles lambda temporaries across co_await.
    auto initiation = [this](auto handler) {
      auto wait = std::make_shared<WindowWaitFor<decltype(handler)>>(std::move(handler));
      int proto = session_.resp;
      for (size_t t = 0; t < batches_.size(); ++t) {
        if (t == home_ || batches_[t].empty()) {
          continue;
        }
        ++wait->remaining;
        // The batch travels by move and comes back to its slot; the coroutine (which keeps
        // this connection alive) waits for every batch before it touches batches_ again.
        Parcel p;
        p.batch = std::move(batches_[t]);
        p.proto = proto;
        p.target = t;
        p.home_slot = &batches_[t];
        p.wait = wait;
        courier_.send(std::move(p));
      }
      // The own shard's part runs while the others run theirs.
      if (!batches_[home_].empty()) {
        batches_[home_].run(engine_, engine_.shard(home_), proto, &session_);
      }
    };
    co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(std::move(initiation),
                                                                         asio::use_awaitable);
  } else {
    batches_[home_].run(engine_, engine_.shard(home_), session_.resp, &session_);
  }
  for (ShardBatch& b : batches_) {
    if (b.stopped()) {
      co_await finish_stopped_batch(b);
    }
  }
  // Replies in request order: the k-th windowed command of shard s is reply k of batch s.
  thread_local std::vector<uint32_t> next;
  next.assign(batches_.size(), 0);
  for (uint16_t s : window_) {
    out += batches_[s].reply(next[s]++);
  }
  for (ShardBatch& b : batches_) {
    b.clear();
  }
  window_.clear();
  window_remote_ = 0;
  window_bytes_ = 0;
  window_script_ = false;
  window_one_shard_ = true;
}

}  // namespace hotkv
